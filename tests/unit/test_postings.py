"""`Postings`: packed from a snapshot or grown note by note, a key reads the same either way."""

import numpy as np
from hypothesis import given, settings, strategies as st

from taggraph._infra.postings import Postings

NOTES = st.lists(st.lists(st.tuples(st.integers(0, 6), st.integers(1, 4)), max_size=5), max_size=12)


def grown(notes, postings=None, first=0):
    postings = postings if postings is not None else Postings()
    for doc, pairs in enumerate(notes, first):
        for key, tf in dict(pairs).items():
            postings.append(key, doc, tf)
    return postings


def as_dict(postings):
    return {k: tuple(a.tolist() for a in postings.get(k)) for k in postings.keys()}


@given(NOTES, NOTES)
@settings(max_examples=200, deadline=None)
def test_packed_then_grown_reads_as_grown_from_the_start(before, after):
    built = grown(before)
    keys = list(built.keys())
    runs = [built.get(k) for k in keys]
    counts = np.array([len(d) for d, _ in runs], np.int64)
    docs = np.concatenate([d for d, _ in runs] or [np.zeros(0, np.int32)]).astype(np.int32)
    tfs = np.concatenate([t for _, t in runs] or [np.zeros(0, np.int32)]).astype(np.int32)
    packed = Postings.packed(keys, counts, docs.copy(), tfs.copy())
    assert as_dict(packed) == as_dict(built) and list(packed.keys()) == keys
    frozen = docs.copy()
    grown(after, packed, len(before))
    whole = grown(before + after)
    assert as_dict(packed) == as_dict(whole) and list(packed.keys()) == list(whole.keys())  # first-seen order
    assert packed.get("absent") is None and len(packed) == len(whole)
    np.testing.assert_array_equal(packed._docs, frozen)  # the snapshot's arrays are never written into
