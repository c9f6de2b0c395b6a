import pandas as pd
import pytest

from taggraph._infra.config import DEMO_DATA
from taggraph.datasets import load_dataset
from taggraph.runs.bench import run_bench

METHODS = ["BM25", "TagGraph-Basic", "TagGraph-TFIDF", "AdaptiveGraph"]
RESULT_COLUMNS = ["question_id", "method", "ranked_session_ids", "ranked_note_ids", "RR", "Success@5"]


def test_results_do_not_depend_on_workers():
    cases = load_dataset(DEMO_DATA, limit=6)
    one = run_bench(cases, METHODS, workers=1)
    two = run_bench(cases, METHODS, workers=2)
    pd.testing.assert_frame_equal(one.rankings[RESULT_COLUMNS], two.rankings[RESULT_COLUMNS])
    pd.testing.assert_frame_equal(one.summary, two.summary)


def test_summary_is_mean_over_judged_questions():
    cases = load_dataset(DEMO_DATA)
    res = run_bench(cases, ["BM25"])
    judged = res.rankings[~res.rankings.abstention]
    assert res.summary.loc[0, "n"] == len(judged) == 12
    assert res.summary.loc[0, "MRR"] == pytest.approx(judged.RR.mean())  # the sums run in another order
    assert res.rankings[res.rankings.abstention].RR.isna().all()
    assert res.config["n_abstention"] == 1


def test_shared_memories_rank_as_memories_built_per_question():
    from pathlib import Path
    fixtures = Path(__file__).parents[1] / "fixtures"
    cases = load_dataset(fixtures / "locomo" / "locomo_tiny.json") + load_dataset(fixtures / "atant" / "core")
    methods = ["BM25", "TagGraph-TFIDF", "AdaptiveGraph"]
    shared = run_bench(cases, methods, extractor="offline")
    alone = run_bench(cases, methods, extractor="offline", share_memories=False)
    assert shared.config["n_memories"] < alone.config["n_memories"] == len(cases)
    cols = ["question_id", "method", "ranked_note_ids", "ranked_session_ids", "RR"]
    pd.testing.assert_frame_equal(shared.rankings[cols], alone.rankings[cols])
