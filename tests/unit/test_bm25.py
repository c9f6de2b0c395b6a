import numpy as np
from hypothesis import HealthCheck, given, settings, strategies as st
import pytest
from rank_bm25 import BM25Okapi

from taggraph.methods import make_retriever
from taggraph.core.text import tokenize

from tests.helpers.stores import HAND_ROWS, make_store

QUERIES = ["what breed is my dog", "yoga morning sleep", "pasta recipe sauce", "the a is", "zzz unknown", "dog dog cat"]


def reference_scores(store, query):
    bm = BM25Okapi([tokenize(n.to_markdown()) for n in store])
    return bm.get_scores(tokenize(query))


@pytest.mark.parametrize("query", QUERIES)
def test_parity_with_rank_bm25(hand_store, query):
    ours = make_retriever("BM25", hand_store).score(query)
    ref = reference_scores(hand_store, query)
    got = np.array([ours.get(i, 0.0) for i in range(len(hand_store))])
    np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-12)


def test_incremental_equals_rebuild():
    grown = make_store(HAND_ROWS[:1])
    bm = make_retriever("BM25", grown)
    from taggraph.extractors.base import Extraction
    from taggraph.core.store import Interaction
    for sid, u, a, tags in HAND_ROWS[1:]:
        grown.remember(Interaction(sid, u, a), Extraction(**tags))
    rebuilt = make_retriever("BM25", make_store(HAND_ROWS))
    for q in QUERIES:
        assert [i for i, _ in bm.rank(q)] == [i for i, _ in rebuilt.rank(q)]
        np.testing.assert_allclose([bm.score(q).get(i, 0) for i in range(5)], reference_scores(grown, q), atol=1e-12)


def test_explain_lists_term_contributions(hand_store):
    bm = make_retriever("BM25", hand_store)
    exp = bm.explain("beagle dog", "s2#0")
    assert exp.retrieved and exp.rank == 1
    assert set(exp.details["matched_terms"]) == {"beagle", "dog"}
    assert sum(exp.details["matched_terms"].values()) == pytest.approx(exp.score, abs=1e-3)
    miss = bm.explain("beagle dog", "s4#0")
    assert not miss.retrieved and "no query term" in miss.reason


@pytest.mark.parametrize("query", ["", "   ", "🙂🙂", "東京 日本", "x" * 20_000, "\x00"])
def test_hostile_queries(hand_store, query):
    assert isinstance(make_retriever("BM25", hand_store).query(query), list)


def test_empty_store_answers_nothing():
    from taggraph.core.store import MemoryStore
    assert make_retriever("BM25", MemoryStore()).query("anything") == []


def test_a_negative_mean_idf_is_named_when_the_floor_stays_negative():
    store = make_store([("s0", "I started yoga in the morning to sleep better.", "Nice!", {}),
                        ("s1", "I adopted my dog Miso, a Shiba Inu.", "Congratulations!", {}),
                        ("s2", "Can you suggest a pasta recipe for dinner?", "Try carbonara.", {})])
    bm = make_retriever("BM25", store)
    ref = BM25Okapi([tokenize(n.to_markdown()) for n in store])
    assert ref.average_idf < 0 and bm.idf("what") == pytest.approx(ref.idf["what"]) and bm.idf("what") < 0
    e = bm.explain("what breed is my dog?", "s1#0")
    assert e.details["matched_terms"]["what"] < 0
    assert "the mean idf is itself negative here" in e.reason and "floored" not in e.reason
    assert f"(0.25 x {ref.average_idf:.3g} = {0.25 * ref.average_idf:.3g})" in e.reason
    big_store = make_store(HAND_ROWS + [(f"x{i}", "and so on", "ok", {}) for i in range(6)])
    big = make_retriever("BM25", big_store)
    mean = BM25Okapi([tokenize(n.to_markdown()) for n in big_store]).average_idf
    assert mean > 0 and 0.25 * mean != pytest.approx(mean)
    # the mean is printed as the mean, and the floor as 0.25 x it (was: "the mean idf (<the floor>)")
    assert f"floored at 0.25 x the mean idf {mean:.3g} = {0.25 * mean:.3g}" in big.explain("and dog", "x0#0").reason


def test_notes_without_a_query_term_rank_above_negative_scores():
    """Scores below 0 (a tiny memory, the floor negative): a note sharing no term scores 0 and ranks above them,
    the order of rank-bm25's scores, not dropped from the ranking."""
    store = make_store([("s0", "I started yoga in the morning to sleep better.", "Nice!", {}),
                        ("s1", "I adopted my dog Miso, a Shiba Inu.", "Congratulations!", {}),
                        ("s2", "Can you suggest a pasta recipe for dinner?", "Try carbonara.", {})])
    query = "did I sleep"
    ref = reference_scores(store, query)
    assert (ref < 0).any() and (ref == 0).any()
    ranked = make_retriever("BM25", store).query(query, k=3)
    assert [r.score for r in ranked] == pytest.approx(sorted(ref, reverse=True), rel=1e-12, abs=1e-12)
    assert [r.note_id for r in ranked] == [store.notes[i].note_id for i in np.argsort(-ref, kind="stable")]


def test_the_terms_per_df_follow_every_add_and_a_loaded_snapshot(hand_store):
    from taggraph.methods.index import TermIndex
    terms = make_retriever("BM25", hand_store).terms
    counted = np.bincount(list(terms.df.values()))
    assert counted[1:].sum() == len(terms.df) > 0
    np.testing.assert_array_equal(terms.terms_with_df[1:len(counted)], counted[1:])
    assert not terms.terms_with_df[len(counted):].any()
    loaded = TermIndex()
    loaded.load_state(terms.state(), len(hand_store))
    np.testing.assert_array_equal(loaded.terms_with_df[1:len(counted)], counted[1:])
    from taggraph.methods.bm25 import BM25
    assert BM25(hand_store, terms=loaded)._average_idf() == BM25(hand_store)._average_idf()


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(order=st.permutations(range(len(HAND_ROWS))), asked=st.lists(st.sampled_from(QUERIES), min_size=1, max_size=3))
def test_memoized_scores_after_each_remember_equal_a_fresh_index(order, asked):
    """A warm BM25 queried between remembers (its memo of term contributions then stale) scores bitwise as a BM25
    built fresh on the same notes, and its explanation names exactly the query terms the note holds."""
    from taggraph.extractors.base import Extraction
    from taggraph.core.store import Interaction
    rows = [HAND_ROWS[i] for i in order]
    grown = make_store(rows[:1])
    warm = make_retriever("BM25", grown)
    for sid, u, a, tags in rows[1:]:
        for q in asked:
            warm.score(q)
        grown.remember(Interaction(sid, u, a), Extraction(**tags))
        fresh = make_retriever("BM25", grown)
        for q in asked:
            got, want = warm.score(q), fresh.score(q)
            assert np.array_equal(got.index, want.index) and np.array_equal(got.value, want.value)
            for note in grown:
                matched = warm.evidence(q, note).detail["matched_terms"]
                assert set(matched) == set(tokenize(q)) & set(tokenize(note.to_markdown()))
