"""`NoteRows` (taggraph.embedders.rows), the growing matrix of notes' vectors TagGraph-Fusion and OpenClaw keep: each
note's cosines bit for bit those of its own ``rows @ q``, whatever order notes were embedded in; and Fusion's pool
helper `_top`, the first m of a stable sort."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from taggraph.embedders.rows import NoteRows
from taggraph.methods.fusion.features import top_notes as _top

DIM = 384  # MiniLM's: OpenBLAS rounds a row by where it falls in its blocks, so a small dim would hide that


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(1, 4), min_size=1, max_size=30), st.randoms(use_true_random=False), st.integers(1, 4))
def test_each_notes_dots_are_its_own_products_in_any_embedding_order(counts, rnd, batches):
    rng = np.random.default_rng(rnd.randrange(2 ** 32))
    counts[-1] = counts[0]
    vectors = [rng.standard_normal((k, DIM)).astype(np.float32) for k in counts]
    vectors[-1] = vectors[0].copy()  # a note whose texts equal the first's: their cosines must stay ties
    order = list(range(len(counts)))
    rnd.shuffle(order)
    rows = NoteRows()
    for part in np.array_split(np.array(order), batches):  # notes embedded a few at a time, out of order
        if len(part):
            assert rows.missing(part).tolist() == part.tolist()
            rows.put(part, np.concatenate([vectors[i] for i in part]), [counts[i] for i in part], labels=[
                10 * i + j for i in part for j in range(counts[i])])
    assert not len(rows.missing(np.arange(len(counts))))
    q = rng.standard_normal(DIM).astype(np.float32)
    ask = rng.permutation(len(counts))
    values, first = rows.dots(ask, q)
    for i, at in zip(ask, first):
        assert np.array_equal(values[at:at + counts[i]], vectors[i] @ q)  # the bits of the per-note product
        assert np.array_equal(rows.rows(i), vectors[i])
    assert rows.labels[rows.row_ids(ask)].tolist() == [10 * i + j for i in ask for j in range(counts[i])]
    at = dict(zip(ask.tolist(), first.tolist()))
    assert np.array_equal(values[at[0]:at[0] + counts[0]], values[at[len(counts) - 1]:at[len(counts) - 1] + counts[0]])


def test_rows_read_in_place_when_every_note_was_embedded_in_order():
    rng = np.random.default_rng(0)
    vectors = rng.standard_normal((1001, DIM)).astype(np.float32)
    rows = NoteRows()
    rows.put(np.arange(1001), vectors, np.ones(1001, dtype=int))
    q = rng.standard_normal(DIM).astype(np.float32)
    values, _ = rows.dots(np.arange(1001), q)
    assert np.array_equal(values, np.array([v @ q for v in vectors]))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from([0.0, 0.5, 1.0, 2.0, 3.0]), max_size=40), st.integers(1, 45))
def test_the_pool_takes_the_first_m_positive_entries_of_a_stable_sort(values, m):
    v = np.array(values, dtype=np.float64)
    want = [i for i in np.argsort(-v, kind="stable")[:m] if v[i] > 0]
    assert _top(v, m).tolist() == want
