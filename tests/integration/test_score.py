"""`taggraph score` over our own run folders and rankings.csv, runs that lack questions, clashing names,
malformed run files, and questions without gold."""

import dataclasses
import json
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from taggraph.cli import app
from taggraph._infra.config import DEMO_DATA
from taggraph.datasets import load_dataset
from taggraph.errors import InputError
from taggraph.evaluation.metrics import score_rankings, summarize
from taggraph.evaluation.score import MissingQuestionsWarning, read_runs
from taggraph.runs.bench import run_bench, score_external
from taggraph.runs.folders import data_record, save_bench

runner = CliRunner()


@pytest.fixture(scope="module")
def cases():
    return load_dataset(DEMO_DATA)


@pytest.fixture(scope="module")
def limited_run(cases, tmp_path_factory):
    """A BM25 run folder over the demo's first 5 questions, and its result."""
    result = run_bench(cases[:5], ["BM25", "TagGraph-Basic"], extractor="none", backend=None)
    return save_bench(result, tmp_path_factory.mktemp("runs") / "first5", data_record(DEMO_DATA)), result


def test_a_limited_run_folder_scores_as_it_ran_with_the_missing_questions_named(cases, limited_run):
    folder, result = limited_run
    own = result.summary.set_index("method")
    for source in (folder, folder / "rankings.csv"):
        with pytest.warns(MissingQuestionsWarning, match=r"ranks 5 of the dataset's 13 questions; the 7 judged ones it lacks "
                                                         r"\(first: demo_q06, demo_q07.*left out of its n"):
            scored = score_external([source], cases)
        summary = scored.summary.set_index("method")
        assert list(summary.index) == ["BM25", "TagGraph-Basic"]
        # missing questions left out, not counted as RR 0: the run's own numbers come back
        # demo_q10 abstains: never judged, so never missing
        assert summary.loc["BM25", "n"] == own.loc["BM25", "n"] == 5 and summary.loc["BM25", "missing"] == 7
        assert summary.loc["BM25", "MRR"] == pytest.approx(own.loc["BM25", "MRR"])
        assert summary.loc["TagGraph-Basic", "MRR"] == pytest.approx(own.loc["TagGraph-Basic", "MRR"])
        recorded = scored.config["external_runs"]["BM25"]
        assert recorded["missing"] == 7 and recorded["first_missing"][0] == "demo_q06"


def test_a_run_named_like_ours_stays_a_row_of_its_own(cases, limited_run, tmp_path):
    folder, _ = limited_run
    base = run_bench(cases, ["BM25"], extractor="none", backend=None)
    with pytest.warns(MissingQuestionsWarning):
        scored = score_external([folder], cases, base=base)
    summary = scored.summary.set_index("method")
    assert list(summary.index) == ["BM25", "BM25 [first5]", "TagGraph-Basic"]
    assert summary.loc["BM25", "n"] == base.summary.set_index("method").loc["BM25", "n"] == 12  # not 12 + 5
    assert summary.loc["BM25 [first5]", "n"] == 5 and summary.loc["BM25", "missing"] == 0
    # two files whose runs share a name are both labelled by file
    for name in ("a", "b"):
        (tmp_path / f"{name}.jsonl").write_text(
            "".join(json.dumps({"question_id": c.case_id, "method": "X", "ranked_session_ids": [c.gold_session_ids[0]]
                                if c.gold_session_ids and name == "a" else []}) + "\n" for c in cases))
    summary = score_external([tmp_path / "a.jsonl", tmp_path / "b.jsonl"], cases).summary.set_index("method")
    assert summary["MRR"].to_dict() == {"X [a.jsonl]": 1.0, "X [b.jsonl]": 0.0}


def test_malformed_runs_are_one_line_errors(tmp_path, limited_run):
    repeated = tmp_path / "rep.jsonl"
    repeated.write_text('{"question_id": "demo_q01", "ranked_session_ids": ["a"]}\n\n'
                        '{"question_id": "demo_q01", "ranked_session_ids": ["b"]}\n')
    with pytest.raises(InputError, match=r"rep.jsonl:3: question 'demo_q01' of run 'rep' repeats line 1"):
        read_runs(repeated)
    with pytest.raises(InputError, match="not a run folder"):
        read_runs(tmp_path)
    folder, _ = limited_run
    sweep = pd.concat([pd.read_csv(folder / "rankings.csv").assign(depth=d) for d in (20, 40)])
    sweep.to_csv(tmp_path / "rankings.csv", index=False)
    with pytest.raises(InputError, match="10 repeated .question, method. rows, first 'demo_q01' of 'BM25'"):
        read_runs(tmp_path / "rankings.csv")
    for text in ("", "\n\n"):
        empty = tmp_path / "empty.trec"
        empty.write_text(text)
        res = runner.invoke(app, ["score", str(empty), "--out", str(tmp_path / "out")])
        assert res.exit_code == 2 and "Traceback" not in res.output and "KeyError" not in res.output
        assert res.output.strip() == f"error: {empty}: no rankings in it (empty run file)"


def test_the_cli_warns_in_one_line_and_records_the_missing_questions(limited_run, tmp_path):
    folder, _ = limited_run
    out = tmp_path / "scored"
    res = runner.invoke(app, ["score", str(folder), "--data", str(DEMO_DATA), "--out", str(out)])
    assert res.exit_code == 0, res.output
    warned = [line for line in res.stderr.splitlines() if "demo_q06" in line]
    assert len(warned) == 2 and all(line.startswith("warning: ") and "left out of its n" in line for line in warned)
    summary = pd.read_csv(out / "summary.csv").set_index("method")
    assert summary.loc["BM25", "missing"] == 7 and summary.loc["BM25", "n"] == 5
    assert json.loads((out / "run.json").read_text())["config"]["external_runs"]["BM25"]["missing"] == 7
    # without --data: the data run.json records, and the questions the folder ranks (nothing missing)
    res = runner.invoke(app, ["score", str(folder), "--out", str(tmp_path / "own")])
    assert res.exit_code == 0 and "left out of its n" not in res.output, res.output
    summary = pd.read_csv(tmp_path / "own" / "summary.csv").set_index("method")
    assert summary.loc["BM25", "missing"] == 0 and summary.loc["BM25", "n"] == 5


def test_a_question_without_gold_is_scored_as_the_miss_the_warning_announces(cases):
    rows = pd.DataFrame({"question_id": ["q1", "q2", "q3_abs"], "method": "m",
                         "ranked_session_ids": [["s1"], ["s1"], ["s1"]], "gold_session_ids": [["s1"], [], []],
                         "abstention": [False, False, True]})
    scored = score_rankings(rows)
    assert scored["RR"].tolist()[:2] == [1.0, 0.0] and pd.isna(scored["RR"].iloc[2])
    assert scored.loc[1, "recall_all@5"] == 0.0  # not the vacuous "every gold session found"
    summary = summarize(scored).iloc[0]
    assert summary["n"] == 2 and summary["MRR"] == 0.5
    # through the bench: the question stays in n
    no_gold = [dataclasses.replace(cases[0], gold_session_ids=[]), *cases[1:3]]
    result = run_bench(no_gold, ["BM25"], extractor="none", backend=None)
    assert result.summary.loc[0, "n"] == 3 and result.rankings.loc[0, "RR"] == 0.0


def test_a_run_folder_records_its_data_so_that_it_is_found_from_anywhere(tmp_path, monkeypatch):
    """bench with a relative --data, then score of its folder (no --data) from another directory."""
    fixtures = Path(__file__).parents[1] / "fixtures"
    monkeypatch.chdir(fixtures)
    out = tmp_path / "run"
    res = runner.invoke(app, ["bench", "--data", "locomo/locomo_tiny.json", "--methods", "BM25", "--extractor",
                              "none", "--miss-pages", "0", "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert json.loads((out / "run.json").read_text())["data"]["path"] == str(fixtures / "locomo" / "locomo_tiny.json")
    monkeypatch.chdir(tmp_path)
    res = runner.invoke(app, ["score", "run", "--out", "scored"])
    assert res.exit_code == 0, res.output
    assert pd.read_csv(tmp_path / "scored" / "summary.csv")["n"].tolist() == [8]


@pytest.mark.parametrize("field, ids", [
    ("ranked_note_ids", 5), ("ranked_note_ids", "demo_s07#0"), ("ranked_note_ids", [1]),
    ("ranked_note_ids", [{"id": "demo_s07#0"}]), ("ranked_note_ids", [""]), ("ranked_note_ids", ["demo_s07 #0"]),
    ("ranked_session_ids", ["demo s07", "demo_s07"]), ("ranked_session_ids", [""]),
    ("ranked_session_ids", ["demo_s07\t"]),
])
def test_a_jsonl_ranked_id_that_is_no_id_is_one_line(tmp_path, field, ids):
    """Ids are non-empty strings without whitespace (rankings.csv and TREC runs part ids by whitespace)."""
    run = tmp_path / "run.jsonl"
    record = {"question_id": "demo_q01", "ranked_session_ids": ["demo_s07"], field: ids}
    run.write_text('{"question_id": "demo_q02", "ranked_session_ids": []}\n' + json.dumps(record) + "\n")
    with pytest.raises(InputError, match=rf"^{run}:2: {field} must be a list of ids"):
        read_runs(run)
    res = runner.invoke(app, ["score", str(run), "--out", str(tmp_path / "out")])
    assert res.exit_code == 2 and res.output.startswith(f"error: {run}:2: {field}") and "\n" not in res.output.strip()


def test_a_run_file_that_starts_with_a_byte_order_mark_reads_as_without(tmp_path, limited_run):
    folder, _ = limited_run
    texts = {"rankings.csv": (folder / "rankings.csv").read_text(encoding="utf-8"),
             "run.jsonl": '{"question_id": "demo_q01", "ranked_session_ids": ["demo_s07"]}\n',
             "run.trec": "demo_q01 Q0 demo_s07 1 1.0 t\n"}
    for name, text in texts.items():
        plain, marked = tmp_path / "plain" / name, tmp_path / "marked" / name
        for path, encoding in ((plain, "utf-8"), (marked, "utf-8-sig")):
            path.parent.mkdir(exist_ok=True)
            path.write_text(text, encoding=encoding)
        assert marked.read_bytes().startswith(b"\xef\xbb\xbf")
        assert read_runs(marked) == read_runs(plain)


def test_a_difference_over_fewer_questions_than_the_method_s_n_says_over_how_many(limited_run, tmp_path):
    """score --methods BM25 --baseline BM25 beside a run of the first 5 questions: its ΔMRR is paired over those 5,
    while BM25's MRR is over 12; the summary and the terminal say n = 5 for the difference (they did not)."""
    folder, _ = limited_run
    out = tmp_path / "scored"
    res = runner.invoke(app, ["score", str(folder), "--data", str(DEMO_DATA), "--methods", "BM25",
                              "--baseline", "BM25", "--extractor", "none", "--out", str(out)])
    assert res.exit_code == 0, res.output
    summary = pd.read_csv(out / "summary.csv").set_index("method")
    assert summary.loc["BM25 [first5]", "ΔMRR n"] == 5 and summary.loc["BM25", "n"] == 12
    header = next(line for line in res.stdout.splitlines() if line.lstrip().startswith("method"))
    assert "ΔMRR n" in header
    # every method over all its questions: no such column
    res = runner.invoke(app, ["score", str(folder), "--methods", "BM25", "--baseline", "BM25", "--extractor", "none",
                              "--out", str(tmp_path / "own")])
    assert res.exit_code == 0 and "ΔMRR n" not in pd.read_csv(tmp_path / "own" / "summary.csv").columns
