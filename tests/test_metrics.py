import pytest
from hypothesis import given, settings, strategies as st

from taggraph.evaluation import dedupe_sessions, session_metrics


def test_dedupe_through_depth():
    assert dedupe_sessions(["a", "a", "b", "a", "c", "d"], depth=5) == ["a", "b", "c"]


def test_mrr_matches_hand_computation():
    runs = {"q1": ["x", "g", "y"], "q2": ["g2", "z"], "q3": ["z", "y", "x", "w", "g3"], "q4": []}
    golds = {"q1": ["g"], "q2": ["g2", "h"], "q3": ["g3"], "q4": ["g4"]}
    m = session_metrics(runs, golds)
    hand = [1 / 2, 1 / 1, 1 / 5, 0.0]
    assert [m[q]["RR"] for q in ["q1", "q2", "q3", "q4"]] == pytest.approx(hand)
    assert sum(v["RR"] for v in m.values()) / 4 == pytest.approx(sum(hand) / 4)
    assert m["q3"]["R@3"] == 0 and m["q3"]["R@5"] == 1 and m["q1"]["R@1"] == 0 and m["q1"]["R@3"] == 1
    assert m["q2"]["recall_all@5"] == 0  # h never retrieved
    assert m["q2"]["ndcg_any@5"] == pytest.approx(1 / (1 + 1 / 1.5849625007211563))


@settings(max_examples=100, deadline=None)
@given(ranked=st.lists(st.sampled_from("abcdefgh"), unique=True, max_size=8),
       gold=st.lists(st.sampled_from("abcdefgh"), unique=True, min_size=1, max_size=3))
def test_metric_properties(ranked, gold):
    m = session_metrics({"q": ranked}, {"q": gold})["q"]
    first = next((i for i, s in enumerate(ranked, 1) if s in gold), None)
    assert m["RR"] == pytest.approx(1 / first if first else 0.0)
    assert m["R@1"] <= m["R@3"] <= m["R@5"]
    assert m["recall_all@5"] <= m["R@5"] and 0 <= m["ndcg_any@5"] <= 1
