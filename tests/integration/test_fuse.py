"""`taggraph fuse` and `tg.fuse_runs`: fused scores as ranx gives them, MRR as a hand computation gives it,
inputs never outputs, runs over other data or qrels refused, and the fused folder read by `score` and `compare`."""

import json
import re
import shlex
import shutil
import sys

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

import taggraph as tg
from taggraph.cli import app
from taggraph._infra.config import DEMO_DATA
from taggraph.errors import ConfigError, InputError
from taggraph.evaluation.rank_fusion import FUSION_METHODS, RUN_NORMALIZATIONS, fuse_rankings
from taggraph.evaluation.score import trec_order, trec_scores_of
from taggraph.runs.bench import score_external
from taggraph.runs.fuse_runs import TiedGoldWarning

runner = CliRunner()

# Written by hand over the demo's questions q01 (gold demo_s07) and q02 (gold demo_s11).
RUN_A = """\
demo_q01 Q0 demo_s01 1 3.0 a
demo_q01 Q0 demo_s07 2 2.0 a
demo_q01 Q0 demo_s03 3 1.0 a
demo_q02 Q0 demo_s11 1 5.0 a
demo_q02 Q0 demo_s05 2 4.0 a
"""
RUN_B = """\
demo_q01 Q0 demo_s03 1 9.0 b
demo_q01 Q0 demo_s07 2 8.0 b
demo_q02 Q0 demo_s05 1 1.0 b
demo_q02 Q0 demo_s08 2 0.5 b
demo_q02 Q0 demo_s11 3 0.2 b
"""


@pytest.fixture
def hand_runs(tmp_path):
    (tmp_path / "a.run").write_text(RUN_A)
    (tmp_path / "b.run").write_text(RUN_B)
    return [str(tmp_path / "a.run"), str(tmp_path / "b.run")]


def mrr(result, method):
    return result.summary.set_index("method").loc[method, "MRR"]


def test_fused_mrr_of_hand_written_runs_is_the_hand_computation(hand_runs):
    # RRF (k=60), q01: s03 1/63+1/61 > s07 2/62 > s01 1/61, so gold s07 ranks 2; q02: s05 1/62+1/61 > s11
    # 1/61+1/63: gold s11 ranks 2. MRR 0.5.
    rrf = tg.fuse_runs(hand_runs, data=DEMO_DATA)
    assert mrr(rrf, "fused-rrf") == pytest.approx(0.5)
    # CombSUM of min-max scores, q01: s01 1+0, s03 0+1, s07 0.5+0: s03 and s01 tie, trec_eval's larger docid
    # first, gold s07 ranks 3; q02: s11 1+0 ties s05 0+1, s11 first. MRR (1/3 + 1) / 2.
    combsum = tg.fuse_runs(hand_runs, method="combsum", norm="min-max", data=DEMO_DATA)
    assert mrr(combsum, "fused-combsum-min-max") == pytest.approx((1 / 3 + 1) / 2)
    assert combsum.summary["n"].tolist() == [2, 2, 2]


def test_fuse_counts_the_judged_questions_no_run_ranks_as_score_does(hand_runs):
    """The runs rank q01 and q02 of the demo's 13 questions, one of which (demo_q10) abstains: 10 judged questions
    missing for every run, fused or not, in fuse as in score."""
    with pytest.warns(UserWarning, match="ranks 2 of the dataset's 13 questions; the 10 judged ones it lacks"):
        fused = tg.fuse_runs(hand_runs, data=DEMO_DATA)
        scored = score_external(hand_runs[:1], tg.load(DEMO_DATA).cases)
    assert fused.summary["missing"].tolist() == [10, 10, 10] and scored.summary["missing"].tolist() == [10]


def test_rrf_reads_tied_input_scores_in_trec_eval_order(hand_runs, tmp_path):
    # q01 of run a: s01 and s07 tie at 3.0; trec_eval ranks the larger docid, s07, first (the file lists s01
    # first). RRF: s07 1/61+1/62 > s03 1/63+1/61, gold s07 ranks 1; q02 as above (rank 2). MRR 0.75.
    tied = tmp_path / "tied.run"
    tied.write_text(RUN_A.replace("demo_s07 2 2.0", "demo_s07 2 3.0"))
    assert mrr(tg.fuse_runs([str(tied), hand_runs[1]], data=DEMO_DATA), "fused-rrf") == pytest.approx(0.75)


def random_runs(gaps=0.0, n_runs=3, n_questions=250, seed=7):
    """Runs of 250 questions over ~50-300 docids each, scores rounded so that ties occur, some negative; a
    share `gaps` of each run's questions missing (an empty ranking there)."""
    rng = np.random.default_rng(seed)
    runs = [{} for _ in range(n_runs)]
    for q in range(n_questions):
        pool = [f"d{i:04d}" for i in range(rng.integers(50, 300))]
        for run in runs:
            if rng.random() < gaps:
                continue
            docs = rng.choice(pool, size=rng.integers(1, len(pool)), replace=False)
            run[f"q{q:03d}"] = {str(d): float(np.round(rng.normal(2, 3), 1)) for d in docs}
    return runs


def ranx_inputs(runs):
    """`runs` (the same questions in each) as ranx Runs, built once for every case: with their scores, and with
    each question's ranks in trec_eval's order counted down, which RRF reads (ranx reads the order it is given)."""
    from ranx import Run as RanxRun
    questions = list(dict.fromkeys(q for run in runs for q in run))
    ranks = [{q: {d: float(len(s) - i) for i, d in enumerate(trec_order(s))} for q, s in run.items()} for run in runs]
    return {kind: [RanxRun.from_dict({q: run[q] for q in questions}) for run in those]
            for kind, those in (("scores", runs), ("ranks", ranks))}


def ranx_fused(inputs, method, norm, weights, k=60):
    """``ranx.fuse`` over `ranx_inputs`: RRF over the ranks, the other methods over the scores."""
    from ranx import fuse as ranx_fuse
    if method == "rrf":
        norm = "none"
    params = {"k": k} if method == "rrf" else {"weights": weights} if method == "wsum" else {}
    names = {"combsum": "sum", "combmnz": "mnz", "zscore": "zmuv", "none": None}
    fused = ranx_fuse(inputs["ranks" if method == "rrf" else "scores"], norm=names.get(norm, norm),
                      method=names.get(method, method), params=params)
    return {q: dict(scored.items()) for q, scored in fused.run.items()}


def test_every_method_and_normalization_fuses_as_ranx_does():
    """One test, so that one worker pays for ranx's numba compilation (our code is the one under test). ranx's
    inputs are built once for all 17 cases, and every score is compared at once, as pytest.approx(rel=1e-9,
    abs=1e-12) would one by one (which took most of the test's minute)."""
    runs = random_runs()
    inputs = ranx_inputs(runs)
    cases = [("rrf", "none", None, 60), ("rrf", "none", None, 0)]
    cases += [(m, n, [0.7, -0.2, 1.5] if m == "wsum" else None, 60)
              for m in FUSION_METHODS if m != "rrf" for n in RUN_NORMALIZATIONS]
    for method, norm, weights, k in cases:
        ours, theirs = fuse_rankings(runs, method, norm, weights, k), ranx_fused(inputs, method, norm, weights, k)
        assert list(ours) == list(theirs), (method, norm)
        for q in theirs:
            assert ours[q].keys() == theirs[q].keys(), (method, norm, q)
        where = [(q, d) for q in ours for d in ours[q]]
        got = np.array([ours[q][d] for q, d in where])
        want = np.array([theirs[q][d] for q, d in where])
        off = np.flatnonzero(~(np.abs(got - want) <= np.maximum(1e-9 * np.abs(want), 1e-12)))
        assert not off.size, (method, norm, [(*where[i], got[i], want[i]) for i in off[:5]])


def test_a_question_a_run_lacks_counts_as_an_empty_ranking_and_fuses_as_if_alone():
    """ranx 0.3.21 gets this wrong: under zmuv, every question after an empty ranking loses that run's scores."""
    runs = random_runs(gaps=0.2)
    lacking = [q for q in runs[0] if any(q not in run for run in runs)][:5]
    assert lacking
    for method in FUSION_METHODS:
        for norm in RUN_NORMALIZATIONS:
            weights = [0.7, -0.2, 1.5] if method == "wsum" else None
            fused = fuse_rankings(runs, method, norm, weights)
            for q in lacking:
                alone = fuse_rankings([{q: run[q]} if q in run else {} for run in runs], method, norm, weights)
                assert fused[q] == alone[q], (method, norm, q)
    a, b = {"q": {"x": 2.0, "y": 1.0}}, {}
    assert fuse_rankings([a, b], "combsum", "max") == {"q": {"x": 1.0, "y": 0.5}}
    assert fuse_rankings([a, b], "combmnz", "min-max") == {"q": {"x": 1.0, "y": 0.0}}
    assert fuse_rankings([a, b], "rrf", k=0) == {"q": {"x": 1.0, "y": 0.5}}


def test_fusion_needs_neither_ranx_nor_numba(hand_runs, monkeypatch, tmp_path):
    for module in ("ranx", "numba"):
        monkeypatch.setitem(sys.modules, module, None)  # as if not installed
    res = runner.invoke(app, ["fuse", *hand_runs, "--data", str(DEMO_DATA), "--out", str(tmp_path / "f")])
    assert res.exit_code == 0, res.output


@pytest.mark.parametrize("options, message", [
    (["--method", "borda"], "fusion method 'borda' unknown; choose one of rrf, combsum, combmnz, wsum"),
    (["--norm", "rank"], "normalization 'rank' unknown"),
    (["--method", "wsum"], "wsum needs one finite weight per run (2), got []"),
    (["--method", "wsum", "--weights", "1,x"], "--weights: comma-separated numbers"),
    (["--weights", "1,1"], "weights are for wsum only, not rrf"),
])
def test_bad_fusion_options_get_one_line(hand_runs, options, message):
    res = runner.invoke(app, ["fuse", *hand_runs, *options])
    assert res.exit_code == 2 and message in res.output and res.output.count("\n") == 1, res.output


@pytest.fixture(scope="module")
def demo_runs(tmp_path_factory):
    """A demo run of BM25 and TagGraph-TFIDF; BM25 on 3 questions (other qrels); BM25 on 3 questions of a
    copy of the demo data with one more newline (other sha256)."""
    root = tmp_path_factory.mktemp("runs")
    other = root / "demo_copy.json"
    other.write_text(DEMO_DATA.read_text() + "\n")
    for name, extra in [("full", ["--methods", "BM25,TagGraph-TFIDF"]),
                        ("three", ["--methods", "BM25", "--limit", "3"]),
                        ("other_data", ["--methods", "BM25", "--limit", "3", "--data", str(other)])]:
        res = runner.invoke(app, ["bench", "--miss-pages", "0", "--out", str(root / name), *extra])
        assert res.exit_code == 0, res.output
    return root / "full", root / "three", root / "other_data"


def test_out_that_is_an_input_is_refused(demo_runs):
    first, _, _ = demo_runs
    before = sorted(first.rglob("*"))
    for out in (first, first / "trec", first.parent):
        with pytest.raises(ConfigError, match="inputs are never outputs"):
            tg.fuse_runs([f"{first}:BM25", f"{first}:TagGraph-TFIDF"], out, force=True)
    assert sorted(first.rglob("*")) == before


@pytest.mark.parametrize("which, message", [(1, "judge different questions"), (2, "ran on different data")])
def test_runs_over_other_qrels_or_data_are_refused_in_one_line(demo_runs, tmp_path, which, message):
    first, other = demo_runs[0], demo_runs[which]
    res = runner.invoke(app, ["fuse", f"{first}:TagGraph-TFIDF", f"{other}:BM25", "--out", str(tmp_path / "f")])
    assert res.exit_code == 2
    assert message in res.output and res.output.count("\n") == 1
    with pytest.raises(InputError, match=message):
        tg.fuse_runs([f"{first}:TagGraph-TFIDF", f"{other}:BM25"])


def test_fuse_end_to_end_writes_a_folder_score_and_compare_read(demo_runs, tmp_path):
    first, _, _ = demo_runs
    out = tmp_path / "fused"
    res = runner.invoke(app, ["fuse", f"{first}:BM25", f"{first}:TagGraph-TFIDF", "--method", "combsum",
                              "--norm", "zscore", "--out", str(out)])
    assert res.exit_code == 0, res.output
    summary = pd.read_csv(out / "summary.csv").set_index("method")
    bench = pd.read_csv(first / "summary.csv").set_index("method")
    assert summary.index.tolist() == ["BM25", "TagGraph-TFIDF", "fused-combsum-zscore"]
    for method in ("BM25", "TagGraph-TFIDF"):  # each input scores as its own report says
        assert summary.loc[method, "MRR"] == pytest.approx(bench.loc[method, "MRR"])
        assert method in res.output
    assert f"{summary.loc['fused-combsum-zscore', 'MRR']:.3f}" in res.output
    assert (out / "report.html").is_file() and (out / "trec" / "fused-combsum-zscore.run").is_file()
    fusion = json.loads((out / "run.json").read_text())["config"]["fusion"]
    assert (fusion["method"], fusion["norm"]) == ("combsum", "zscore")
    assert (out / "trec" / "qrels.sessions.txt").read_text() == (first / "trec" / "qrels.sessions.txt").read_text()
    rescored = runner.invoke(app, ["score", str(out / "trec" / "fused-combsum-zscore.run"),
                                   "--out", str(tmp_path / "score")])
    assert rescored.exit_code == 0, rescored.output
    again = pd.read_csv(tmp_path / "score" / "summary.csv").set_index("method")
    assert again.loc["fused-combsum-zscore", "MRR"] == pytest.approx(summary.loc["fused-combsum-zscore", "MRR"])
    compared = runner.invoke(app, ["compare", str(first), str(out), "--out", str(tmp_path / "cmp")])
    assert compared.exit_code == 0, compared.output
    assert len(pd.read_csv(tmp_path / "cmp" / "pairs.csv")) == 2  # BM25 and TagGraph-TFIDF, paired by name


def test_a_folder_without_trec_runs_gets_a_score_command_that_runs_as_printed(demo_runs, tmp_path):
    old = tmp_path / "old"
    shutil.copytree(demo_runs[0], old)
    shutil.rmtree(old / "trec")  # as an older taggraph wrote it
    refused = runner.invoke(app, ["fuse", f"{old}:BM25", f"{old}:TagGraph-TFIDF", "--out", str(tmp_path / "f")])
    assert refused.exit_code == 2
    command = shlex.split(re.search(r"`(taggraph score [^`]+)`", refused.output).group(1))
    assert command[command.index("--data") + 1] == json.loads((old / "run.json").read_text())["data"]["path"]
    assert runner.invoke(app, command[1:]).exit_code == 0
    again = tmp_path / "old-trec"
    fused = runner.invoke(app, ["fuse", f"{again}:BM25", f"{again}:TagGraph-TFIDF", "--out", str(tmp_path / "f")])
    assert fused.exit_code == 0, fused.output


def test_note_level_fusion_writes_the_fused_notes_in_trec_eval_order(demo_runs, tmp_path):
    first, _, _ = demo_runs
    out = tmp_path / "fused_notes"
    res = runner.invoke(app, ["fuse", f"{first}:BM25", f"{first}:TagGraph-TFIDF", "--level", "notes",
                              "--out", str(out)])
    assert res.exit_code == 0, res.output
    record = json.loads((out / "run.json").read_text())["config"]
    assert record["fusion"]["level"] == "notes"
    assert [i["file"].endswith(".notes.run") for i in record["fusion"]["inputs"]] == [True, True]
    paths = [first / "trec" / f"{m}.notes.run" for m in ("BM25", "TagGraph-TFIDF")]
    fused = fuse_rankings([run for p in paths for run in trec_scores_of(p, p.read_text().splitlines()).values()], "rrf")
    rankings = pd.read_csv(out / "rankings.csv").set_index("method").loc["fused-rrf"]
    for qid, notes in zip(rankings["question_id"], rankings["ranked_note_ids"]):  # the fused notes, in trec order
        by_docid = sorted(fused[qid].items(), reverse=True)  # trec_eval: equal scores, larger docid first
        expected = sorted(by_docid, key=lambda kv: -np.float32(kv[1]))
        assert str(notes).split()[:5] == [n for n, _ in expected][:5], qid
    res = runner.invoke(app, ["fuse", f"{first}:BM25", f"{first}:TagGraph-TFIDF", "--level", "turns"])
    assert res.exit_code == 2 and "fusion level 'turns' unknown" in res.output


@pytest.mark.parametrize("norm", ["zscore", "min-max", "sum", "max"])
def test_a_huge_finite_score_normalizes_as_its_scaled_copy(norm):
    """A score of 1e308 is finite, so no loader refuses it, but 1e308 squared (zscore's variance) is inf: the
    z-scores came out nan and a wrong document first (demo_q01 of `fuse --norm zscore`, MRR 1.000 for 0.833)."""
    huge = {"q": {"a": 1e308, "b": 5e307, "c": 1e307}}
    scaled = {"q": {"a": 1.0, "b": 0.5, "c": 0.1}}
    other = {"q": {"a": 0.0, "b": 3.0, "c": 1.0}}
    got, want = fuse_rankings([huge, other], "combsum", norm), fuse_rankings([scaled, other], "combsum", norm)
    assert got["q"] == pytest.approx(want["q"])


def test_fused_scores_that_overflow_are_refused():
    with pytest.raises(ConfigError, match="the fused scores overflow .*choose a normalization"):
        fuse_rankings([{"q": {"a": 1e308}}, {"q": {"a": 1e308}}], "combsum", "none")


def test_fusing_again_from_a_fused_folder_fuses_its_inputs_scores(demo_runs, tmp_path):
    """A fused folder's trec/ holds each input's scores, not ranks counted down (12.0, 11.0, ...): CombSUM from
    it is CombSUM from the bench folder (MRR 0.768 for 0.705 when it held the ranks)."""
    first, _, _ = demo_runs
    fused = tmp_path / "rrf"
    tg.fuse_runs([f"{first}:BM25", f"{first}:TagGraph-TFIDF"], fused)
    for method in ("BM25", "TagGraph-TFIDF"):
        assert (fused / "trec" / f"{method}.run").read_text() == (first / "trec" / f"{method}.run").read_text()
    again, direct = (tg.fuse_runs([f"{folder}:BM25", f"{folder}:TagGraph-TFIDF"], method="combsum")
                     for folder in (fused, first))
    assert mrr(again, "fused-combsum-min-max") == mrr(direct, "fused-combsum-min-max")
    assert again.rankings.equals(direct.rankings)


def test_score_based_fusion_of_a_run_of_ranks_only_is_refused_in_one_line(demo_runs, tmp_path):
    """A run scored from JSONL (ids, no scores) holds ranks counted down in its folder's trec/: RRF fuses it,
    CombSUM would take the ranks for scores."""
    first, _, _ = demo_runs
    rows = pd.read_csv(first / "rankings.csv", dtype=str, keep_default_na=False).query("method == 'BM25'")
    ranks = tmp_path / "ranks.jsonl"
    ranks.write_text("".join(json.dumps({"question_id": q, "ranked_session_ids": ids.split()}) + "\n"
                             for q, ids in zip(rows["question_id"], rows["ranked_session_ids"])))
    scored = tmp_path / "scored"
    assert runner.invoke(app, ["score", str(ranks), "--out", str(scored)]).exit_code == 0
    inputs = [f"{scored}:ranks", f"{first}:TagGraph-TFIDF"]
    res = runner.invoke(app, ["fuse", *inputs, "--method", "combsum", "--out", str(tmp_path / "f")])
    assert res.exit_code == 2 and res.output.count("\n") == 1, res.output
    assert res.output.startswith(f"error: {scored}:ranks: {scored / 'trec' / 'ranks.run'} holds ranks, not scores")
    rrf = runner.invoke(app, ["fuse", *inputs, "--out", str(tmp_path / "rrf")])
    assert rrf.exit_code == 0, rrf.output


def test_an_input_s_error_names_the_input_not_a_scratch_file(hand_runs, tmp_path):
    bad = tmp_path / "bad.run"
    bad.write_text(RUN_A + "demo_q99 Q0 demo_s01 1 1.0 a\n")
    res = runner.invoke(app, ["fuse", str(bad), hand_runs[1], "--data", str(DEMO_DATA), "--out", str(tmp_path / "f")])
    assert res.exit_code == 2
    assert res.output == f"error: {bad}: run 'a' ranks question(s) not in the dataset: ['demo_q99']\n"


@pytest.mark.parametrize("other, trec_mrr", [("demo_s09", 0.5), ("demo_s01", 1.0)])
def test_a_fused_tie_with_the_gold_is_scored_tie_aware_and_warned_of(tmp_path, other, trec_mrr):
    """Two runs that swap the gold and another session fuse to a tie, which trec_eval breaks by docid: the MRR
    follows how the other session is spelled; the tie-aware MRR is 0.75 either way."""
    (tmp_path / "a.run").write_text(f"demo_q01 Q0 demo_s07 1 2.0 a\ndemo_q01 Q0 {other} 2 1.0 a\n")
    (tmp_path / "b.run").write_text(f"demo_q01 Q0 {other} 1 2.0 b\ndemo_q01 Q0 demo_s07 2 1.0 b\n")
    with pytest.warns(TiedGoldWarning, match=f"fused-rrf: in 1 of 1 questions the first gold session ties with "
                                             f"another session.*MRR {trec_mrr:.3f}.*MRR_tieavg, over all orders, "
                                             f"is 0.750"):
        fused = tg.fuse_runs([str(tmp_path / "a.run"), str(tmp_path / "b.run")], data=DEMO_DATA,
                             out=tmp_path / "out")
    summary = fused.summary.set_index("method")
    assert summary.loc["fused-rrf", "MRR"] == trec_mrr and summary.loc["fused-rrf", "MRR_tieavg"] == 0.75
    assert summary.loc[["a", "b"], "MRR_tieavg"].tolist() == summary.loc[["a", "b"], "MRR"].tolist()  # no ties
    assert fused.config["fusion"]["first_gold_tied"] == {"a": 0, "b": 0, "fused-rrf": 1}
    written = pd.read_csv(tmp_path / "out" / "rankings.csv").set_index("method")
    assert written.loc["fused-rrf", "RR_tieavg"] == 0.75 and bool(written.loc["fused-rrf", "first_gold_tied"])
    per_type = pd.read_csv(tmp_path / "out" / "per_type.csv").set_index("method")
    assert per_type.loc["fused-rrf", "MRR_tieavg"] == 0.75
