"""TREC in and out: `score` reads a TREC run as trec_eval does (checked against ir-measures on a
run written by hand), note ids stand for their sessions, unknown ids are counted and said; every run folder
holds TREC runs and qrels that ir-measures scores to the report's numbers."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import ir_measures
import pandas as pd
import pytest
from ir_measures import RR, Success, nDCG
from typer.testing import CliRunner

import taggraph as tg
from taggraph.cli import app
from taggraph._infra.config import DEMO_DATA
from taggraph.datasets import load_dataset
from taggraph.errors import InputError
from taggraph.evaluation.score import UnknownIdsWarning, read_runs
from taggraph.runs.bench import score_external
from taggraph.methods import registry

FIXTURES = Path(__file__).parents[1] / "fixtures"

runner = CliRunner()

# Written by hand. q01: the rank column contradicts the scores (trec_eval reads the scores: demo_s07, the gold
# session, comes first). q02: a tie at 2.0 between the gold demo_s11 and demo_s15; trec_eval puts the larger
# docid first. q03: demo_s99 is no session of the demo and ranks as a non-relevant item. q05: the scores differ
# in double precision only; trec_eval holds single-precision scores, so they tie and the larger docid wins.
HAND_RUN = """\
demo_q01 Q0 demo_s01 1 0.5 hand
demo_q01 Q0 demo_s07 2 0.9 hand
demo_q01 Q0 demo_s03 3 0.1 hand
demo_q02 Q0 demo_s11 1 2.0 hand
demo_q02 Q0 demo_s15 2 2.0 hand
demo_q02 Q0 demo_s02 3 1.0 hand
demo_q03 Q0 demo_s99 1 3.0 hand
demo_q03 Q0 demo_s19 2 2.5 hand
demo_q05 Q0 demo_s15 1 1.00000001 hand
demo_q05 Q0 demo_s16 2 1.0 hand
"""


@pytest.fixture(scope="module")
def cases():
    return load_dataset(DEMO_DATA)


def scored(path, cases):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = score_external([path], cases)
    return result.rankings.set_index("question_id"), [w for w in caught if w.category is UnknownIdsWarning]


def test_a_hand_written_trec_run_scores_as_ir_measures_scores_it(tmp_path, cases):
    run = tmp_path / "hand.run"
    run.write_text(HAND_RUN)
    ours, unknown = scored(run, cases)
    asked = ("demo_q01", "demo_q02", "demo_q03", "demo_q05")
    qrels = [ir_measures.Qrel(c.case_id, s, 1) for c in cases if c.case_id in asked for s in c.gold_session_ids]
    theirs = {(m.query_id, str(m.measure)): m.value
              for m in ir_measures.iter_calc([RR, Success @ 1, nDCG @ 10], qrels, ir_measures.read_trec_run(str(run)))}
    assert {q: ours.loc[q, "RR"] for q in asked} == {"demo_q01": 1.0, "demo_q02": 0.5, "demo_q03": 0.5, "demo_q05": 0.5}
    assert len(theirs) == 12
    for (q, measure), value in theirs.items():
        assert ours.loc[q, measure] == pytest.approx(value), (q, measure)
    assert ours.loc["demo_q02", "ranked_session_ids"] == ["demo_s15", "demo_s11", "demo_s02"]
    assert [str(w.message) for w in unknown] == [
        f"{run}: run 'hand' ranks 1 ids that are neither a session nor a note of their question's history (first: "
        f"demo_q03 demo_s99); each ranks as a non-relevant item, as trec_eval counts it"]


def test_a_note_id_stands_for_its_session_and_ranks_as_a_note(tmp_path, cases):
    notes, sessions = tmp_path / "notes.run", tmp_path / "sessions.run"
    notes.write_text("demo_q04 Q0 demo_s01#1 1 4.0 n\ndemo_q04 Q0 demo_s02#1 2 3.0 n\n"
                     "demo_q04 Q0 demo_s01#0 3 2.0 n\n")
    sessions.write_text("demo_q04 Q0 demo_s01 1 4.0 s\ndemo_q04 Q0 demo_s02 2 3.0 s\n")
    by_notes, unknown = scored(notes, cases)
    qrels = [ir_measures.Qrel("demo_q04", "demo_s02", 1)]
    (theirs,) = ir_measures.iter_calc([RR], qrels, ir_measures.read_trec_run(str(sessions)))
    assert by_notes.loc["demo_q04", "RR"] == theirs.value == 0.5
    assert by_notes.loc["demo_q04", "ranked_session_ids"] == ["demo_s01", "demo_s02"]
    assert by_notes.loc["demo_q04", "ranked_note_ids"] == ["demo_s01#1", "demo_s02#1", "demo_s01#0"]
    assert not unknown


def test_the_cli_warns_about_unknown_ids_in_one_line_and_records_them(tmp_path):
    run = tmp_path / "hand.run"
    run.write_text(HAND_RUN)
    res = runner.invoke(app, ["score", str(run), "--out", str(tmp_path / "scored")])
    assert res.exit_code == 0, res.output
    lines = [x for x in res.output.splitlines() if "neither a session nor a note" in x]
    assert len(lines) == 1 and lines[0].startswith("warning: ") and "demo_q03 demo_s99" in lines[0]
    assert '"unknown_ids": 1' in (tmp_path / "scored" / "run.json").read_text()


def test_the_cli_says_how_many_note_ids_a_run_ranks_and_records_them(tmp_path):
    """A note id stands for its session, where trec_eval, judging sessions, counts it non-relevant (demo_q04:
    RR 0.5 here, 0 from trec_eval): not silently."""
    run = tmp_path / "notes.run"
    run.write_text("demo_q04 Q0 demo_s01#1 1 4.0 hand\ndemo_q04 Q0 demo_s02#1 2 3.0 hand\n"
                   "demo_q04 Q0 demo_s01 3 2.0 hand\n")
    res = runner.invoke(app, ["score", str(run), "--out", str(tmp_path / "scored")])
    assert res.exit_code == 0, res.output
    assert [x for x in res.output.splitlines() if "note ids" in x] == [
        f"warning: {run}: run 'hand' ranks 2 note ids (first: demo_q04 demo_s01#1, demo_q04 demo_s02#1); each stands "
        f"for its session, ranked at its first note (trec_eval, judging sessions, counts a note id as a non-relevant "
        f"item)"]
    record = json.loads((tmp_path / "scored" / "run.json").read_text())
    assert record["config"]["external_runs"]["hand"]["note_ids"] == 2


def test_scores_beyond_single_precision_tie_as_in_trec_eval_and_are_said_in_one_line(tmp_path):
    """2e40 and 1e40 are both +inf in single precision: trec_eval (ir-measures) ties them, the larger docid first."""
    run = tmp_path / "big.run"
    run.write_text("demo_q01 Q0 demo_s01 1 2e40 big\ndemo_q01 Q0 demo_s07 2 1e40 big\ndemo_q01 Q0 demo_s03 3 1.0 big\n")
    res = runner.invoke(app, ["score", str(run), "--out", str(tmp_path / "scored")])
    assert res.exit_code == 0, res.output
    assert "overflow" not in res.output
    assert [x for x in res.output.splitlines() if "single precision" in x] == [
        f"warning: {run}: 2 score(s) beyond single precision (|score| > 3.4e+38; first: line 1, 2e40) read as +-inf, "
        f"as trec_eval reads them, so they tie and rank by docid: scale the run's scores to keep their order"]
    (theirs,) = ir_measures.iter_calc([RR], [ir_measures.Qrel("demo_q01", "demo_s07", 1)],
                                      ir_measures.read_trec_run(str(run)))
    rr = pd.read_csv(tmp_path / "scored" / "rankings.csv").set_index("question_id").loc["demo_q01", "RR"]
    assert rr == theirs.value == 1.0


@pytest.mark.parametrize("line, said", [
    ("demo_q01 Q0 demo_s01 2 0.3 hand", r"hand.run:2: run 'hand' ranks 'demo_s01' for question 'demo_q01' again "
                                        r"\(line 1\); trec_eval refuses a docid ranked twice"),
    ("demo_q01 Q0 demo_s03 2 nan hand", r"hand.run:2: score 'nan' is not a finite number"),
])
def test_a_run_trec_eval_would_refuse_is_one_line(tmp_path, line, said):
    run = tmp_path / "hand.run"
    run.write_text("demo_q01 Q0 demo_s01 1 0.5 hand\n" + line + "\n")
    with pytest.raises(InputError, match=said):
        read_runs(run)


class Flat(tg.Retriever):
    """Every note ties at 1.0: the bench's order (earlier notes first) is not trec_eval's (larger docid first)."""

    def add(self, note):
        pass

    def score(self, text, *, asked_on=None):
        return dict.fromkeys(range(len(self.store)), 1.0)


@pytest.fixture
def flat(monkeypatch):
    monkeypatch.setattr(registry.METHODS, "_registered", dict(registry.METHODS._registered))
    tg.register_method("Flat", Flat)


def trec_scores_of(out, method, level="sessions"):
    """The aggregate RR, Success@1 and nDCG@10 ir-measures gives a run folder's TREC run of `method`."""
    suffix = ".run" if level == "sessions" else ".notes.run"
    qrels = list(ir_measures.read_trec_qrels(str(out / "trec" / f"qrels.{level}.txt")))
    run = list(ir_measures.read_trec_run(str(out / "trec" / f"{method}{suffix}")))
    return ir_measures.calc_aggregate([RR, Success @ 1, nDCG @ 10], qrels, run)


def test_a_run_folder_holds_trec_runs_and_qrels_that_score_to_the_report(tmp_path, flat):
    """Session level, at the bench's depth (40 notes, their sessions de-duplicated): ir-measures over each
    method's run and the qrels gives the summary's MRR, Success@1 and nDCG@10; a question without gold (the
    demo's abstention) is left out of both."""
    out = tmp_path / "run"
    res = runner.invoke(app, ["bench", "--methods", "BM25,TagGraph-Basic,Flat", "--extractor", "none",
                              "--miss-pages", "0", "--out", str(out)])
    assert res.exit_code == 0, res.output
    summary = pd.read_csv(out / "summary.csv").set_index("method")
    record = json.loads((out / "run.json").read_text())
    assert record["trec"]["depth"] == 40 and "trec/Flat.run" in record["trec"]["files"]
    for method in ["BM25", "TagGraph-Basic", "Flat"]:
        theirs = trec_scores_of(out, method)
        assert theirs[RR] == pytest.approx(summary.loc[method, "MRR"], abs=1e-12), method
        assert theirs[Success @ 1] == pytest.approx(summary.loc[method, "Success@1"], abs=1e-12), method
        assert theirs[nDCG @ 10] == pytest.approx(summary.loc[method, "nDCG@10"], abs=1e-12), method


@pytest.mark.parametrize("data", ["locomo/locomo_tiny.json", "generic"])
def test_the_note_level_files_score_to_the_note_metrics(tmp_path, data):
    """LoCoMo's evidence and your own data's `gold_notes` are judged at note level; a question whose data names no
    gold note (4 of the generic fixture's 6) is in neither the note metrics nor qrels.notes.txt."""
    out = tmp_path / "run"
    res = runner.invoke(app, ["bench", "--data", str(FIXTURES / data), "--methods",
                              "BM25,TagGraph-TFIDF", "--extractor", "offline", "--miss-pages", "0", "--out", str(out)])
    assert res.exit_code == 0, res.output
    notes = pd.read_csv(out / "benchmark_metrics.csv")
    notes = notes[(notes["level"] == "note") & (notes["category"] == "all")].set_index("method")
    for method in ["BM25", "TagGraph-TFIDF"]:
        theirs = trec_scores_of(out, method, "notes")
        assert theirs[RR] == pytest.approx(notes.loc[method, "MRR"], abs=1e-12), method
        assert theirs[Success @ 1] == pytest.approx(notes.loc[method, "Success@1"], abs=1e-12), method
    judged = {q.query_id for q in ir_measures.read_trec_qrels(str(out / "trec" / "qrels.notes.txt"))}
    assert len(judged) == notes.loc["BM25", "n"]


def test_a_run_read_from_session_files_has_no_note_level_and_score_reads_the_folder_s_own_data(tmp_path):
    """LoCoMo's note metrics judge ranked notes: a session-level TREC run has none, so its note columns are
    empty ("–"), not RR 0 (as for a fused session run); `score` of a LoCoMo run folder without --data reads
    the data its run.json records."""
    out, scored = tmp_path / "run", tmp_path / "scored"
    res = runner.invoke(app, ["bench", "--data", str(FIXTURES / "locomo" / "locomo_tiny.json"), "--methods",
                              "BM25,TagGraph-TFIDF", "--extractor", "none", "--miss-pages", "0", "--out", str(out)])
    assert res.exit_code == 0, res.output
    res = runner.invoke(app, ["score", str(out), str(out / "trec" / "BM25.run"), "--out", str(scored)])
    assert res.exit_code == 0, res.output
    summary = pd.read_csv(scored / "summary.csv").set_index("method")
    assert summary.loc["BM25 [run]", "note_MRR"] == pytest.approx(
        pd.read_csv(out / "summary.csv").set_index("method").loc["BM25", "note_MRR"], abs=1e-12)
    assert pd.isna(summary.loc["BM25 [BM25.run]", "note_MRR"])
    printed = next(line for line in res.output.splitlines() if line.lstrip().startswith("BM25 [BM25.run]"))
    assert "nan" not in printed.lower()  # the terminal's compact table has no note-level column: summary.csv does


def test_score_reads_a_run_folder_s_trec_run_back_to_the_same_numbers(tmp_path, flat):
    out = tmp_path / "run"
    assert runner.invoke(app, ["bench", "--methods", "BM25,Flat", "--extractor", "none", "--miss-pages", "0",
                               "--out", str(out)]).exit_code == 0
    again = tmp_path / "again"
    res = runner.invoke(app, ["score", str(out / "trec" / "BM25.run"), str(out / "trec" / "Flat.run"),
                              "--out", str(again)])
    assert res.exit_code == 0, res.output
    first = pd.read_csv(out / "summary.csv").set_index("method")
    second = pd.read_csv(again / "summary.csv").set_index("method")
    for method in ["BM25", "Flat"]:
        assert second.loc[method, "MRR"] == pytest.approx(first.loc[method, "MRR"], abs=1e-12), method
        # the scores read, written again (not ranks counted down)
        assert (again / "trec" / f"{method}.run").read_text() == (out / "trec" / f"{method}.run").read_text()
