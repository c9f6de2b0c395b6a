"""`taggraph compare` never writes where it reads, recomputes every number from the rankings, and answers
bad run folders in one line."""

import json
import os
import shutil

import pandas as pd
import pytest
from typer.testing import CliRunner

from taggraph.cli import app
from taggraph._infra.config import DEMO_DATA
from taggraph.datasets import load_dataset
from taggraph.runs.bench import run_bench
from taggraph.runs.folders import data_record, save_bench

runner = CliRunner()


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Two demo runs of BM25 (the second with k1 = 5)."""
    root = tmp_path_factory.mktemp("input_runs")
    cases = load_dataset(DEMO_DATA)
    a = save_bench(run_bench(cases, ["BM25"], extractor="none", backend=None), root / "a", data_record(DEMO_DATA))
    b = save_bench(run_bench(cases, ["BM25"], extractor="none", backend=None, method_params={"BM25": {"k1": 5.0}}),
                   root / "b", data_record(DEMO_DATA))
    return a, b


def snapshot(folder):
    return {p.relative_to(folder): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def one_line_error(res, *words):
    assert res.exit_code == 2, res.output
    assert res.exception is None or isinstance(res.exception, SystemExit)
    line = res.output.strip()
    assert "\n" not in line and "Traceback" not in line and line.startswith("error: "), line
    for word in words:
        assert word in line, line


@pytest.mark.parametrize("force", [[], ["--force"]])
def test_an_input_folder_is_never_the_output(runs, force):
    a, b = runs
    before = snapshot(a), snapshot(b)
    for out in (a, b, a / "cmp", b / "misses" / "cmp"):
        res = runner.invoke(app, ["compare", str(a), str(b), "--out", str(out), *force])
        one_line_error(res, "--out", "input")
    assert (snapshot(a), snapshot(b)) == before
    assert not (a / "cmp").exists()


def mrr_a(a, b, tmp_path, name="cmp"):
    out = tmp_path / name
    res = runner.invoke(app, ["compare", str(a), str(b), "--out", str(out)])
    assert res.exit_code == 0, res.output
    return pd.read_csv(out / "pairs.csv").iloc[0]["MRR_a"], res.output


def test_a_tampered_rr_column_changes_nothing(runs, tmp_path):
    a, b = runs
    honest, _ = mrr_a(a, b, tmp_path, "honest")
    tampered = tmp_path / "tampered"
    shutil.copytree(a, tampered)
    rankings = pd.read_csv(tampered / "rankings.csv")
    rankings.loc[0, "RR"] = 7
    rankings.to_csv(tampered / "rankings.csv", index=False)
    mrr, output = mrr_a(tampered, b, tmp_path)
    assert mrr == pytest.approx(honest)
    assert "warning:" in output and "RR" in output and rankings.loc[0, "question_id"] in output
    assert "RR 7 recorded" in output and "np." not in output


def test_reordered_sessions_with_a_stale_rr_agree_with_score(runs, tmp_path):
    a, b = runs
    reordered = tmp_path / "reordered"
    shutil.copytree(a, reordered)
    rankings = pd.read_csv(reordered / "rankings.csv")
    rankings["ranked_session_ids"] = rankings["ranked_session_ids"].fillna("").str.split().map(
        lambda ids: " ".join(reversed(ids)))
    rankings.to_csv(reordered / "rankings.csv", index=False)
    res = runner.invoke(app, ["score", str(reordered), "--out", str(tmp_path / "scored")])
    assert res.exit_code == 0, res.output
    scored = pd.read_csv(tmp_path / "scored" / "summary.csv").iloc[0]["MRR"]
    mrr, _ = mrr_a(reordered, b, tmp_path)
    assert mrr == pytest.approx(scored)
    assert mrr != pytest.approx(pd.read_csv(a / "summary.csv").iloc[0]["MRR"])  # the reordering mattered


def test_a_text_rr_is_recomputed_not_read(runs, tmp_path):
    a, b = runs
    honest, _ = mrr_a(a, b, tmp_path, "honest")
    text = tmp_path / "text"
    shutil.copytree(a, text)
    rankings = pd.read_csv(text / "rankings.csv")
    rankings["RR"] = rankings["RR"].astype(object)
    rankings.loc[1, "RR"] = "high"
    rankings.to_csv(text / "rankings.csv", index=False)
    mrr, output = mrr_a(text, b, tmp_path)
    assert mrr == pytest.approx(honest) and "Traceback" not in output


def test_bad_run_folders_are_one_line_errors(runs, tmp_path):
    a, b = runs
    listed = tmp_path / "listed"
    shutil.copytree(a, listed)
    (listed / "run.json").write_text(json.dumps([1, 2]))
    one_line_error(runner.invoke(app, ["compare", str(listed), str(b), "--out", str(tmp_path / "o1")]),
                   "run.json", str(listed))
    loop = tmp_path / "loop"
    os.symlink(loop, loop)
    one_line_error(runner.invoke(app, ["compare", str(loop), str(b), "--out", str(tmp_path / "o2")]), str(loop))
    looped = tmp_path / "looped"
    shutil.copytree(a, looped)
    (looped / "rankings.csv").unlink()
    os.symlink(looped / "rankings.csv", looped / "rankings.csv")
    one_line_error(runner.invoke(app, ["compare", str(looped), str(b), "--out", str(tmp_path / "o3")]), str(looped))
    scores = tmp_path / "scores"
    shutil.copytree(a, scores)
    rankings = pd.read_csv(scores / "rankings.csv")
    rankings.loc[2, "ranked_session_scores"] = "1.0 two"
    rankings.to_csv(scores / "rankings.csv", index=False)
    one_line_error(runner.invoke(app, ["compare", str(scores), str(b), "--out", str(tmp_path / "o4")]),
                   "ranked_session_scores", rankings.loc[2, "question_id"])


def test_a_run_json_of_the_wrong_shape_is_one_line(runs, tmp_path):
    a, b = runs
    for i, change in enumerate([{"config": []}, {"config": {"methods": ["BM25"]}}, {"data": "demo"},
                                {"config": {"depth": "forty"}}]):
        odd = tmp_path / f"odd{i}"
        shutil.copytree(a, odd)
        record = json.loads((odd / "run.json").read_text())
        record.update(change)
        (odd / "run.json").write_text(json.dumps(record))
        one_line_error(runner.invoke(app, ["compare", str(odd), str(b), "--out", str(tmp_path / f"o{i}")]),
                       f"{odd}/run.json")
    deep = tmp_path / "deep"
    shutil.copytree(a, deep)
    (deep / "run.json").write_text("[" * 100_000 + "]" * 100_000)
    one_line_error(runner.invoke(app, ["compare", str(deep), str(b), "--out", str(tmp_path / "o9")]), "run.json")


def edited(run, tmp_path, name, edit):
    """A copy of `run` whose rankings.csv (every cell read as text) is replaced by `edit(rankings)`."""
    folder = tmp_path / name
    shutil.copytree(run, folder)
    rankings = pd.read_csv(folder / "rankings.csv", dtype=str, keep_default_na=False)
    edit(rankings).to_csv(folder / "rankings.csv", index=False)
    return folder


def test_runs_that_share_no_judged_question_are_one_line(runs, tmp_path):
    a, b = runs
    abstaining = edited(b, tmp_path, "abstaining", lambda rankings: rankings.assign(abstention="True"))
    res = runner.invoke(app, ["compare", str(a), str(abstaining), "--out", str(tmp_path / "cmp")])
    one_line_error(res, "share no judged question", "a", "abstaining")


def test_a_header_only_rankings_csv_or_an_empty_question_id_is_one_line_in_compare_and_score(runs, tmp_path):
    a, b = runs
    header_only = edited(a, tmp_path, "header_only", lambda rankings: rankings.iloc[:0])
    no_id = edited(a, tmp_path, "no_id", lambda rankings: rankings.assign(
        question_id=rankings["question_id"].where(rankings.index != 1, "")))
    for i, command in enumerate((["compare", str(b)], ["score"])):
        res = runner.invoke(app, [*command, str(header_only), "--out", str(tmp_path / f"h{i}")])
        one_line_error(res, f"{header_only / 'rankings.csv'}: no rankings")
        res = runner.invoke(app, [*command, str(no_id), "--out", str(tmp_path / f"q{i}")])
        one_line_error(res, f"{no_id / 'rankings.csv'}: row 2", "question_id", "empty")


@pytest.mark.parametrize("cell", ["nan", "0.5 inf", "1.0 NaN 0.5", "-Infinity"])
def test_a_score_that_is_not_finite_is_one_line_in_compare_and_score(runs, tmp_path, cell):
    a, b = runs
    odd = edited(a, tmp_path, "odd", lambda rankings: rankings.assign(
        ranked_scores=rankings["ranked_scores"].where(rankings.index != 1, cell)))
    question, method = pd.read_csv(a / "rankings.csv").loc[1, ["question_id", "method"]]
    for i, command in enumerate((["compare", str(b)], ["score"])):
        res = runner.invoke(app, [*command, str(odd), "--out", str(tmp_path / f"o{i}")])
        one_line_error(res, f"{odd / 'rankings.csv'}: question {question!r} of {method!r}: ranked_scores must be "
                            f"finite numbers", repr(cell))


def test_results_in_memory_are_checked_for_their_data_like_run_folders(tmp_path):
    """tg.compare on two tg.bench results over different gold gave a p-value without a word, and refused a
    result and a run folder over the same file ("sha256 (?)", "pass --force")."""
    import taggraph as tg
    from taggraph.errors import ConfigError
    from taggraph.runs.compare import RunMismatchWarning

    generic = tmp_path / "g"
    shutil.copytree(os.path.join(os.path.dirname(__file__), os.pardir, "fixtures", "generic"), generic)
    data = tg.load(generic)
    first = tg.bench(data, ["BM25"], extractor="none")
    saved = save_bench(first, tmp_path / "run", data.record())
    assert tg.compare([first, saved]).pairs["n"].iloc[0] > 0  # the same data: compared
    lines = (generic / "questions.jsonl").read_text().splitlines()
    (generic / "questions.jsonl").write_text("\n".join(lines[:-1]) + "\n")  # other data now
    other = tg.bench(tg.load(generic), ["BM25"], extractor="none")
    with pytest.raises(ConfigError, match=r"ran on different data: .*pass --other-data \(in Python other_data=True\)"):
        tg.compare([first, other])
    plain = run_bench(list(data), ["BM25"], extractor="none", backend=None)
    with pytest.warns(RunMismatchWarning, match="result2: no data recorded"):
        tg.compare([first, plain])


def test_a_method_without_a_partner_is_named_not_dropped(runs, tmp_path):
    """compare lc1 lc2: lc1's BM25-stem and TagGraph-TFIDF, absent from lc2, vanished without a line."""
    from taggraph.runs.compare import RunMismatchWarning, compare_runs

    cases = load_dataset(DEMO_DATA, limit=4)
    both = save_bench(run_bench(cases, ["BM25", "BM25-stem"], extractor="none", backend=None), tmp_path / "both",
                      data_record(DEMO_DATA))
    one = save_bench(run_bench(cases, ["BM25", "TagGraph-Basic"], extractor="none", backend=None), tmp_path / "one",
                     data_record(DEMO_DATA))
    with pytest.warns(RunMismatchWarning) as caught:
        comparison = compare_runs([both, one])
    assert list(comparison.pairs["method_a"]) == ["BM25"]
    said = [str(w.message) for w in caught]
    assert any(m.startswith("both: BM25-stem not in one, so not compared") for m in said), said
    assert any(m.startswith("one: TagGraph-Basic not in both, so not compared") for m in said), said


def test_a_gold_edited_in_one_row_or_one_run_is_refused_not_scored(runs, tmp_path):
    """compare judges each row by the gold its rankings.csv holds: emptying one method's gold (with RR 0) made a
    hit a loss (OpenClaw 0.833 -> 0.667, rc 0, no warning) while `score` of the folder said 0.833."""
    a, b = runs
    two = tmp_path / "two"
    cases = load_dataset(DEMO_DATA)
    save_bench(run_bench(cases, ["BM25", "TagGraph-Basic"], extractor="none", backend=None), two,
               data_record(DEMO_DATA))
    rows = pd.read_csv(two / "rankings.csv", dtype=str, keep_default_na=False)
    first = rows.index[(rows["method"] == "TagGraph-Basic") & (rows["gold_session_ids"] != "")][0]
    rows.loc[first, ["gold_session_ids", "RR"]] = ["", "0"]
    rows.to_csv(two / "rankings.csv", index=False)
    res = runner.invoke(app, ["compare", str(a), str(two), "--out", str(tmp_path / "c1")])
    one_line_error(res, "different gold_session_ids", rows.loc[first, "question_id"], "TagGraph-Basic: none")
    # every row of run b's question edited alike: the two runs disagree, and say so unless --other-data
    edited = tmp_path / "b-edited"
    shutil.copytree(b, edited)
    rows = pd.read_csv(edited / "rankings.csv", dtype=str, keep_default_na=False)
    question = rows.loc[rows["gold_session_ids"] != "", "question_id"].iloc[0]
    rows.loc[rows["question_id"] == question, "gold_session_ids"] = "demo_s99"
    rows.to_csv(edited / "rankings.csv", index=False)
    res = runner.invoke(app, ["compare", str(a), str(edited), "--out", str(tmp_path / "c2")])
    assert res.exit_code == 2 and "Traceback" not in res.output  # after the warning of the RR the edit changed
    last = res.output.strip().splitlines()[-1]
    assert last.startswith("error: ")
    assert all(w in last for w in (f"question {question!r} different gold", "--other-data"))
    res = runner.invoke(app, ["compare", str(a), str(edited), "--other-data", "--out", str(tmp_path / "c3")])
    assert res.exit_code == 0, res.output


@pytest.mark.parametrize("column", ["ranked_session_scores", "ranked_scores"])
def test_scores_of_another_length_than_their_ids_are_refused_by_score_and_compare_alike(runs, tmp_path, column):
    """compare refused one score for 12 sessions; score took it (rc 0): the same file read two ways."""
    a, _ = runs
    edited = tmp_path / "edited"
    shutil.copytree(a, edited)
    rows = pd.read_csv(edited / "rankings.csv", dtype=str, keep_default_na=False)
    rows.loc[0, column] = "1"
    rows.to_csv(edited / "rankings.csv", index=False)
    for args in (["score", str(edited), "--out", str(tmp_path / "s")],
                 ["compare", str(a), str(edited), "--out", str(tmp_path / "c")]):
        res = runner.invoke(app, args)
        one_line_error(res, f"1 {column} for", "question 'demo_q01'")
