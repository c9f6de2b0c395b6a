"""`Scores`, the array form of a method's scores: its top k is the full sort's first k, ties by earlier note
first; its checks refuse what the dict contract refuses; `Retriever.rank`, `ranking` and `explain` read it."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import taggraph as tg
from taggraph.methods.base import MethodError, checked_scores
from taggraph.methods.scores import Scores


def sorted_pairs(index, value):
    return sorted(zip(index, value), key=lambda kv: (-kv[1], kv[0]))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from([0.0, -0.0, 1.0, 2.5, -3.0, 1e-300, 7.0]), max_size=40), st.integers(1, 50))
def test_top_k_is_the_first_k_of_the_full_sort_ties_by_earlier_note(values, k):
    """Few distinct values, so most notes tie, and at the cut-off k too."""
    index = np.arange(len(values)) * 3  # gaps: indexes are note indexes, not positions
    scores = Scores(index, np.array(values, dtype=np.float64))
    want = sorted_pairs(index.tolist(), values)
    assert scores.top(k) == want[:k]
    assert scores.top() == want
    for rank, (idx, _) in enumerate(want, 1):
        assert scores.place(idx) == rank
    assert scores.place(1) is None and dict(scores.items()) == dict(zip(index.tolist(), values))


def test_it_reads_as_the_mapping_it_stands_for():
    scores = Scores.of_dense(np.array([0.0, 2.0, 0.0, -1.0]))
    assert list(scores) == [1, 3] and scores[3] == -1.0 and scores.get(0) is None and len(scores) == 2
    assert scores.dense(5).tolist() == [0.0, 2.0, 0.0, -1.0, 0.0]
    assert Scores.of_dense(np.array([0.0, 2.0]), np.array([True, True])).top() == [(1, 2.0), (0, 0.0)]


@pytest.mark.parametrize("scores, problem", [
    (Scores(np.array([2, 1]), np.array([1.0, 2.0])), "not strictly ascending"),
    (Scores(np.array([1, 1]), np.array([1.0, 2.0])), "not strictly ascending"),
    (Scores(np.array([0, 5]), np.array([1.0, 2.0])), "holds 3 notes"),
    (Scores(np.array([-1, 0]), np.array([1.0, 2.0])), "not strictly ascending"),
    (Scores(np.array([0.0, 1.0]), np.array([1.0, 2.0])), "float64 indexes"),
    (Scores(np.array([0, 1]), np.array([1.0])), "one value per note index"),
    (Scores(np.array([0, 1]), np.array([1.0, np.inf])), r"1 note a score that is not finite \(first: note 1, inf\)"),
    (Scores(np.array([0, 1]), np.array(["a", "b"])), "values; scores are numbers"),
])
def test_a_breach_of_the_contract_is_refused_in_one_line(scores, problem):
    with pytest.raises(MethodError, match=problem):
        checked_scores("M", scores, 3)


class ArrayMethod(tg.Retriever):
    """Scores every note by a fixed vector over its index, in array form: ties everywhere."""

    def add(self, note):
        pass

    def score(self, text, *, asked_on=None):
        values = np.array([(i * 7) % 3 for i in range(len(self.store))], dtype=np.float64)
        return Scores.of_dense(values)


class DictMethod(ArrayMethod):
    def score(self, text, *, asked_on=None):
        return dict(super().score(text).items())


def test_a_method_returning_scores_ranks_and_explains_as_the_same_dict_would():
    store = tg.MemoryStore("c")
    for i in range(30):
        store.remember(tg.Interaction(f"s{i}", f"turn {i}"))
    array, plain = ArrayMethod(store), DictMethod(store)
    array.name, plain.name = "M", "M"
    assert array.rank("q", 7) == plain.rank("q", 7) and array.ranking("q") == plain.ranking("q")
    for note in (store.notes[0], store.notes[4], store.notes[29]):  # unreached, within k, below k
        got, want = array.explain("q", note.note_id, k=5), plain.explain("q", note.note_id, k=5)
        assert (got.rank, got.reason, got.outranked_by) == (want.rank, want.reason, want.outranked_by)
    assert [r.note_id for r in array.query("q", 4, explain=True)] == [r.note_id for r in plain.query("q", 4)]
