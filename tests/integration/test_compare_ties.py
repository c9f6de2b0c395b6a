"""`taggraph compare` is tie-aware: a place that rests on tie order is named, beside the plain numbers."""

import json
from html.parser import HTMLParser

import pandas as pd
import pytest
from typer.testing import CliRunner

from taggraph.cli import app
from taggraph._infra.config import DEMO_DATA
from taggraph.datasets import load_dataset
from taggraph.runs.bench import run_bench
from taggraph.runs.compare import compare_runs
from taggraph.runs.folders import data_record, save_bench

runner = CliRunner()


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    """The demo run by BM25 alone and by TagGraph-TFIDF alone, each its own run folder."""
    root = tmp_path_factory.mktemp("tie_runs")
    cases = load_dataset(DEMO_DATA)
    return [save_bench(run_bench(cases, [m], extractor="none", backend=None), root / m, data_record(DEMO_DATA))
            for m in ("BM25", "TagGraph-TFIDF")]


def recorded(folder, method: str) -> pd.DataFrame:
    rows = pd.read_csv(folder / "rankings.csv", dtype={"question_id": str})
    return rows[(rows["method"] == method) & ~rows["abstention"]].set_index("question_id")


class TieCells(HTMLParser):
    """The text of every table cell of class `tie`."""

    def __init__(self):
        super().__init__()
        self.cells, self.depth = [], 0

    def handle_starttag(self, tag, attrs):
        if self.depth:
            self.depth += 1
        elif tag == "td" and "tie" in (dict(attrs).get("class") or "").split():
            self.cells.append("")
            self.depth = 1

    def handle_endtag(self, tag):
        if self.depth:
            self.depth -= 1

    def handle_data(self, data):
        if self.depth:
            self.cells[-1] += data


def test_bm25_against_tfidf_marks_demo_q12_as_a_tie_order_place(two_runs, tmp_path):
    bm25, tfidf = two_runs
    out = tmp_path / "cmp"
    res = runner.invoke(app, ["compare", str(bm25), str(tfidf), "--pair", "BM25=TagGraph-TFIDF", "--out", str(out)])
    assert res.exit_code == 0, res.output
    questions = pd.read_csv(out / "questions.csv", dtype={"question_id": str}).set_index("question_id")
    q12 = questions.loc["demo_q12"]
    tfidf_rows = recorded(tfidf, "TagGraph-TFIDF")
    assert (q12["RR_a"], q12["RR_b"], q12["change"]) == (pytest.approx(1 / 6), pytest.approx(1 / 3), "better")
    assert q12["RR_tieavg_a"] == pytest.approx(1 / 6)  # BM25 ranks it 6th by its own score
    assert q12["RR_tieavg_b"] == pytest.approx(tfidf_rows.loc["demo_q12", "RR_tieavg"]) and q12["RR_tieavg_b"] < 1 / 3
    assert q12["delta_tieavg"] == pytest.approx(q12["RR_tieavg_b"] - 1 / 6)
    assert not q12["tie_order_a"] and q12["tie_order_b"]
    assert "TagGraph-TFIDF rank 3 only by tie order (score 0" in q12["verdict"]
    untied = questions[~questions["tie_order_a"] & ~questions["tie_order_b"]]
    assert (untied["verdict"] == untied["change"]).all()  # a plain verdict where no place rests on ties
    pair = pd.read_csv(out / "pairs.csv").iloc[0]
    summary = pd.read_csv(tfidf / "summary.csv").set_index("method").loc["TagGraph-TFIDF"]
    assert pair["MRR_tieavg_b"] == pytest.approx(summary["MRR_tieavg"])
    assert pair["diff_tieavg"] == pytest.approx(questions["delta_tieavg"].mean())
    assert 0 < pair["p_value_tieavg"] <= 1 and pair["ci_low_tieavg"] <= pair["diff_tieavg"] <= pair["ci_high_tieavg"]
    assert pair["tie_order"] == int((questions["tie_order_a"] | questions["tie_order_b"]).sum()) >= 1
    cells = TieCells()
    cells.feed((out / "compare.html").read_text())
    assert any("TagGraph-TFIDF rank 3 only by tie order (score 0" in c for c in cells.cells)


def test_one_run_folder_compares_two_of_its_methods(two_runs, tmp_path):
    bm25, tfidf = two_runs
    both = tmp_path / "both"
    cases = load_dataset(DEMO_DATA)
    save_bench(run_bench(cases, ["BM25", "TagGraph-TFIDF"], extractor="none", backend=None), both,
               data_record(DEMO_DATA))
    out = tmp_path / "cmp"
    res = runner.invoke(app, ["compare", str(both), "--pair", "BM25=TagGraph-TFIDF", "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert pd.read_csv(out / "questions.csv").set_index("question_id").loc["demo_q12", "tie_order_b"]
    res = runner.invoke(app, ["compare", str(both), "--out", str(tmp_path / "cmp2")])
    assert res.exit_code == 2 and "--pair" in res.output
    assert json.loads((out / "run.json").read_text())["config"]["runs"][0]["path"] == str(both)


def test_a_gold_session_cut_by_the_depth_among_tied_ones_is_not_retrieved_only_by_tie_order(tmp_path):
    """A hand-made run: depth 2; Tied ranks s1 (score 1) and s2 (score 0), and s9 (gold) and s3 hold notes of
    score 0 beyond the depth, so in another order of the ties s9 would be retrieved."""
    run = tmp_path / "hand"
    run.mkdir()
    (run / "run.json").write_text(json.dumps({"created": "2026-01-01", "git_commit": "x", "data": {"sha256": "0"},
                                              "config": {"depth": 2, "methods": {}}}))
    row = "q1,single-session-user,{},{},s9,{},{},{},False\n"
    (run / "rankings.csv").write_text(
        "question_id,question_type,method,ranked_session_ids,gold_session_ids,ranked_scores,ranked_session_scores,"
        "tied_beyond_depth,abstention\n" + row.format("Plain", "s9 s1", "2 1", "2 1", "")
        + row.format("Tied", "s1 s2", "1 0", "1 0", "s9 s3"))
    comparison = compare_runs([run], ["Plain=Tied"])
    q1 = comparison.questions.iloc[0]
    assert (q1["RR_a"], q1["RR_b"], q1["RR_tieavg_a"]) == (1, 0, 1) and 0 < q1["RR_tieavg_b"] < 1 / 2
    assert not q1["tie_order_a"] and q1["tie_order_b"]
    assert q1["verdict"].endswith("Tied not retrieved only by tie order (score 0, tied with 2 other session(s))")


def test_a_side_without_scores_to_tie_is_said_not_left_blank(two_runs, tmp_path):
    """A run read back from its TREC file (`score`) has no ties to average (taggraph's TREC files break them
    in their scores): compare warns, naming the run and method, and its tie-aware cells stay empty."""
    from taggraph.runs.compare import NoTieScoresWarning

    _, tfidf = two_runs
    scored = tmp_path / "scored"
    res = runner.invoke(app, ["score", str(tfidf / "trec" / "TagGraph-TFIDF.run"), "--out", str(scored)])
    assert res.exit_code == 0, res.output
    with pytest.warns(NoTieScoresWarning, match=rf"^{scored}: 'TagGraph-TFIDF' has no scores to tie") as caught:
        comparison = compare_runs([tfidf, scored])
    assert len([w for w in caught if w.category is NoTieScoresWarning]) == 1  # the bench run has its ties
    pair = comparison.pairs.iloc[0]
    summary = pd.read_csv(tfidf / "summary.csv").set_index("method").loc["TagGraph-TFIDF"]
    assert pair["MRR_tieavg_a"] == pytest.approx(summary["MRR_tieavg"]) != pair["MRR_a"]
    assert pd.isna(pair["MRR_tieavg_b"])


def test_an_empty_ranking_has_tie_aware_rr_0_as_in_the_bench(tmp_path):
    """TagGraph-Stopwords without rank_all_files ranks nothing for some questions (an empty scores cell in
    rankings.csv): their tie-aware RR is 0, so compare's MRR_tieavg is the bench's."""
    cases = load_dataset(DEMO_DATA)
    result = run_bench(cases, ["TagGraph-Stopwords"], extractor="offline-v2", backend=None,
                       method_params={"TagGraph-Stopwords": {"rank_all_files": False}})
    assert 0 < (result.rankings["ranked_session_ids"].map(len) == 0).sum() < len(cases)
    folders = [save_bench(result, tmp_path / name, data_record(DEMO_DATA)) for name in ("a", "b")]
    pair = compare_runs(folders).pairs.iloc[0]
    bench = result.summary.iloc[0]["MRR_tieavg"]
    assert pair["MRR_tieavg_a"] == pytest.approx(bench) and pair["MRR_tieavg_b"] == pytest.approx(bench)
    assert pair["diff_tieavg"] == 0


def test_a_side_that_scored_every_session_alike_has_no_evidence_and_no_win_or_loss(tmp_path):
    """With the default extractor, TagGraph-TFIDF scores every session 0 on demo_q07, q08, q11, q12 and q13: its
    places there are note order alone. Their tie-aware RR stays (0.167 -> 0.245 on q11), but the verdict says so
    and the wins, losses and ties leave them out (they counted q12 a win and the other four losses)."""
    both = save_bench(run_bench(load_dataset(DEMO_DATA), ["BM25", "TagGraph-TFIDF"], backend=None),
                      tmp_path / "both", data_record(DEMO_DATA))
    out = tmp_path / "cmp"
    res = runner.invoke(app, ["compare", str(both), "--pair", "BM25=TagGraph-TFIDF", "--out", str(out)])
    assert res.exit_code == 0, res.output
    questions = pd.read_csv(out / "questions.csv", dtype={"question_id": str}).set_index("question_id")
    assert questions.index[questions["no_evidence"]].tolist() == ["demo_q07", "demo_q08", "demo_q11", "demo_q12",
                                                                  "demo_q13"]
    q11 = questions.loc["demo_q11"]
    assert q11["verdict"].startswith("no evidence: all scores 0 for TagGraph-TFIDF (no win, loss or tie); worse by RR")
    assert q11["RR_tieavg_b"] > q11["RR_tieavg_a"] == pytest.approx(1 / 6)
    pair = pd.read_csv(out / "pairs.csv").iloc[0]
    assert (pair["wins"], pair["losses"], pair["ties"], pair["no_evidence"], pair["n"]) == (0, 0, 7, 5, 12)
    assert "no_evidence" in res.output.splitlines()[0]
