import pytest
from hypothesis import given, settings, strategies as st

from taggraph.evaluation import dedupe_sessions, question_metrics
from taggraph.evaluation.metrics import ndcg_any


def test_dedupe_through_depth():
    assert dedupe_sessions(["a", "a", "b", "a", "c", "d"], depth=5) == ["a", "b", "c"]


def test_mrr_matches_hand_computation():
    runs = {"q1": ["x", "g", "y"], "q2": ["g2", "z"], "q3": ["z", "y", "x", "w", "g3"], "q4": []}
    golds = {"q1": ["g"], "q2": ["g2", "h"], "q3": ["g3"], "q4": ["g4"]}
    m = question_metrics(runs, golds)
    hand = [1 / 2, 1 / 1, 1 / 5, 0.0]
    assert [m[q]["RR"] for q in ["q1", "q2", "q3", "q4"]] == pytest.approx(hand)
    assert sum(v["RR"] for v in m.values()) / 4 == pytest.approx(sum(hand) / 4)
    assert m["q3"]["Success@3"] == 0 and m["q3"]["Success@5"] == 1
    assert m["q1"]["Success@1"] == 0 and m["q1"]["Success@3"] == 1
    assert m["q2"]["recall_all@5"] == 0 and m["q2"]["R@5"] == 0.5  # h never retrieved
    # ir-measures nDCG: ideal (2 gold) = 1 + 1/log2(3); LongMemEval: ranks 1 and 2 both weigh 1, ideal = 2
    assert m["q2"]["nDCG@5"] == pytest.approx(1 / (1 + 1 / 1.5849625007211563))
    assert m["q2"]["ndcg_any@5"] == pytest.approx(0.5)


def test_ndcg_any_is_longmemevals_formula():
    # LongMemEval eval_utils: dcg = rel[0] + sum(rel[1:] / log2(arange(2, n + 1))), worked out by hand
    assert ndcg_any(["x", "g"], ["g"], 10) == pytest.approx(1.0)  # rank 2 has full weight
    assert ndcg_any(["x", "y", "g"], ["g"], 10) == pytest.approx(1 / 1.5849625007211563)
    assert ndcg_any(["g", "x", "x2", "h"], ["g", "h"], 10) == pytest.approx((1 + 1 / 2) / 2)
    assert ndcg_any(["x"] * 5 + ["g"], ["g"], 5) == 0.0
    m = question_metrics({"q": ["x", "g"]}, {"q": ["g"]})["q"]
    assert m["ndcg_any@5"] == pytest.approx(1.0) and m["nDCG@5"] == pytest.approx(1 / 1.5849625007211563)


@settings(max_examples=100, deadline=None)
@given(ranked=st.lists(st.sampled_from("abcdefgh"), unique=True, max_size=8),
       gold=st.lists(st.sampled_from("abcdefgh"), unique=True, min_size=1, max_size=3))
def test_metric_properties(ranked, gold):
    m = question_metrics({"q": ranked}, {"q": gold})["q"]
    first = next((i for i, s in enumerate(ranked, 1) if s in gold), None)
    assert m["RR"] == pytest.approx(1 / first if first else 0.0)
    assert m["Success@1"] <= m["Success@3"] <= m["Success@5"] <= m["Success@10"] == float(first is not None)
    assert m["recall_all@5"] <= m["R@5"] <= m["Success@5"] and 0 <= m["ndcg_any@5"] <= 1


def test_an_abstention_row_gets_no_metric_even_with_gold_sessions():
    """LongMemEval's _abs questions name gold sessions; every metric leaves them out, rankings.csv's columns too,
    so the mean of its RR column is the summary's MRR."""
    import pandas as pd

    from taggraph.evaluation.metrics import score_rankings, summarize

    rankings = pd.DataFrame({"question_id": ["q1", "q1_abs", "q2"], "method": "M", "abstention": [False, True, False],
                             "ranked_session_ids": [["g1"], ["x", "g2"], ["y", "g3"]],
                             "gold_session_ids": [["g1"], ["g2"], ["g3"]]})
    scored = score_rankings(rankings)
    assert scored["RR"].isna().tolist() == [False, True, False]
    assert scored["RR"].mean() == summarize(scored)["MRR"].iloc[0] == pytest.approx(0.75)


def test_n_judged_counts_the_questions_with_gold_and_n_also_the_misses_without():
    """A question without gold that is no abstention question counts in n as a miss; n_judged leaves it out."""
    import pandas as pd

    from taggraph.evaluation.metrics import score_rankings, summarize

    rankings = pd.DataFrame({"question_id": ["q1", "q2", "q3_abs", "q4"], "method": "M",
                             "abstention": [False, False, True, False],
                             "ranked_session_ids": [["g1"], ["y", "g2"], ["g3"], ["z"]],
                             "gold_session_ids": [["g1"], ["g2"], ["g3"], []]})
    row = summarize(score_rankings(rankings)).iloc[0]
    assert (row["n"], row["n_judged"]) == (3, 2) and row["MRR"] == pytest.approx(1.5 / 3)
    assert list(summarize(score_rankings(rankings)).columns[:3]) == ["method", "n", "n_judged"]


def test_the_docs_name_every_cache_folder_and_zscore_as_ranx_zmuv():
    from pathlib import Path

    docs = Path(__file__).parents[2] / "docs"
    running, metrics = ((docs / name).read_text(encoding="utf-8") for name in ("running.md", "metrics.md"))
    for folder in ("~/.cache/taggraph", "TAGGRAPH_CACHE", "embeddings/", "offline_extractions/", "extractions/",
                   "models/"):
        assert f"`{folder}`" in running, folder
    assert "`--norm zscore` is what ranx calls `zmuv`" in metrics
    assert "`--other-data`" in metrics
