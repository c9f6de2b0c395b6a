"""`taggraph compare`: pairs across run folders, the data check, explicit pairs, and the page."""

import json
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from taggraph.cli import app
from taggraph._infra.config import DEMO_DATA
from taggraph.errors import ConfigError
from taggraph.evaluation.significance import adjusted_p_values, paired_test
from taggraph.runs.compare import RunMismatchWarning, compare_runs
from taggraph.viz.compare_page import explain_command
from tests.helpers.runs import METHODS, two_demo_runs

runner = CliRunner()


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """`two_demo_runs`: `base` and `tuned`."""
    return two_demo_runs(tmp_path_factory.mktemp("runs"))


def judged_rr(folder: Path, method: str) -> pd.Series:
    rows = pd.read_csv(folder / "rankings.csv")
    rows = rows[(rows["method"] == method) & ~rows["abstention"]]
    return rows.set_index("question_id")["RR"]


def test_same_name_pairs_carry_the_runs_numbers_and_the_paired_test(runs):
    base, tuned = runs
    comparison = compare_runs([base, tuned])
    pairs = comparison.pairs.set_index("method_a")
    assert list(pairs.index) == METHODS and (pairs["method_b"] == pairs.index).all()
    for method in METHODS:
        a, b = judged_rr(base, method), judged_rr(tuned, method)
        row = pairs.loc[method]
        summary_a = pd.read_csv(base / "summary.csv").set_index("method").loc[method]
        assert row["n"] == len(a) == summary_a["n"] == 12 and row["MRR_a"] == pytest.approx(summary_a["MRR"])
        assert row["diff"] == pytest.approx(b.mean() - a.mean())
        test = paired_test(b[a.index].to_numpy(), a.to_numpy())
        assert (row["ci_low"], row["ci_high"], row["p_value"]) == pytest.approx(test[1:])
        # a question where a side scores every session alike (TagGraph-Basic without tags) counts no win or loss
        blind = comparison.questions.query("method_a == @method").set_index("question_id")["no_evidence"][a.index]
        better, worse = int(((b[a.index] > a) & ~blind).sum()), int(((b[a.index] < a) & ~blind).sum())
        assert (row["wins"], row["losses"], row["no_evidence"]) == (better, worse, blind.sum())
        assert row["ties"] == 12 - better - worse - blind.sum()
    moved = comparison.questions.query("method_a == 'BM25' and change != 'same'")
    a, b = judged_rr(base, "BM25"), judged_rr(tuned, "BM25")
    assert set(moved["question_id"]) == set(a.index[~np.isclose(a, b[a.index])]) == {"demo_q07", "demo_q08",
                                                                                       "demo_q11", "demo_q13"}
    assert set(comparison.questions["change"]) <= {"better", "worse", "same"}
    assert len(comparison.questions) == 2 * 12  # tidy: one row per pair and judged question


def over_other_data(run: Path, tmp_path: Path) -> Path:
    """A copy of `run` whose run.json records another data sha256."""
    other = tmp_path / "other"
    shutil.copytree(run, other)
    record = json.loads((other / "run.json").read_text())
    record["data"]["sha256"] = "f" * 64
    (other / "run.json").write_text(json.dumps(record))
    return other


def test_runs_over_other_data_are_refused_unless_asked_for(runs, tmp_path):
    base, tuned = runs
    other = over_other_data(tuned, tmp_path)
    with pytest.raises(ConfigError) as err:
        compare_runs([base, other])
    message = str(err.value)
    assert "\n" not in message and "different data" in message and "--other-data" in message
    assert json.loads((base / "run.json").read_text())["data"]["sha256"][:12] in message and "f" * 12 in message
    with pytest.warns(RunMismatchWarning, match="compared anyway"):
        assert len(compare_runs([base, other], other_data=True).pairs) == 2


def test_force_replaces_the_output_and_other_data_allows_other_data_each_alone(runs, tmp_path):
    base, tuned = runs
    other = over_other_data(tuned, tmp_path)
    out = tmp_path / "cmp"
    res = runner.invoke(app, ["compare", str(base), str(other), "--out", str(out), "--force"])
    assert res.exit_code != 0 and "--other-data" in res.output
    assert runner.invoke(app, ["compare", str(base), str(other), "--out", str(out), "--other-data"]).exit_code == 0
    res = runner.invoke(app, ["compare", str(base), str(other), "--out", str(out), "--other-data"])
    assert res.exit_code == 2 and "not empty" in res.output
    assert runner.invoke(app, ["compare", str(base), str(other), "--out", str(out), "--other-data",
                               "--force"]).exit_code == 0


def test_explicit_pairs_and_a_run_that_lacks_questions(runs, tmp_path):
    base, tuned = runs
    comparison = compare_runs([base, tuned], ["1:BM25=2:TagGraph-Basic", "TagGraph-Basic=BM25"])
    pairs = comparison.pairs[["run_a", "method_a", "run_b", "method_b"]].values.tolist()
    assert pairs == [["base", "BM25", "tuned", "TagGraph-Basic"], ["base", "TagGraph-Basic", "tuned", "BM25"]]
    with pytest.raises(ConfigError, match="run tuned has no method 'Nope'; its methods: BM25, TagGraph-Basic"):
        compare_runs([base, tuned], ["BM25=2:Nope"])
    with pytest.raises(ConfigError, match="expects RUN:METHOD=RUN:METHOD"):
        compare_runs([base, tuned], ["BM25"])
    short = tmp_path / "short"
    shutil.copytree(tuned, short)
    rankings = pd.read_csv(short / "rankings.csv")
    rankings[rankings["question_id"] <= "demo_q05"].to_csv(short / "rankings.csv", index=False)
    with pytest.warns(RunMismatchWarning, match="7 judged question.s. only in the first, 0 only in the second"):
        row = compare_runs([base, short]).pairs.iloc[0]
    assert (row["n"], row["only_a"], row["only_b"]) == (5, 7, 0)


class Cells(HTMLParser):
    """Rows of the tables of class `moved`: per cell its text, the hrefs and the <pre> texts in it."""

    def __init__(self):
        super().__init__()
        self.rows, self.tags, self.in_moved = [], [], False

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.tags.append(tag)
        if tag == "table":
            self.in_moved = attrs.get("class") == "moved"
        elif self.in_moved and tag == "tr":
            self.rows.append([])
        elif self.in_moved and tag == "td":
            self.rows[-1].append({"text": "", "href": [], "pre": []})
        elif self.in_moved and tag == "a" and self.rows and self.rows[-1]:
            self.rows[-1][-1]["href"].append(attrs["href"])
        elif self.in_moved and tag == "pre":
            self.rows[-1][-1]["pre"].append("")

    def handle_endtag(self, tag):
        if tag == "table":
            self.in_moved = False

    def handle_data(self, data):
        if self.in_moved and self.rows and self.rows[-1]:
            cell = self.rows[-1][-1]
            cell["text"] += data
            if self.tags and self.tags[-1] == "pre":
                cell["pre"][-1] += data


def test_cli_writes_the_folder_and_a_page_that_links_or_names_each_changed_question(runs, tmp_path):
    base, tuned = runs
    out = tmp_path / "cmp"
    res = runner.invoke(app, ["compare", "--explain-pages=0",
                              str(base), str(tuned), "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert {p.name for p in out.iterdir()} == {"pairs.csv", "per_type.csv", "questions.csv", "compare.html", "run.json"}
    questions = pd.read_csv(out / "questions.csv")
    assert len(questions) == 24 and json.loads((out / "run.json").read_text())["config"]["experiment"] == "compare"
    page = (out / "compare.html").read_text()
    assert not re.search(r"<(script|link|img|iframe)[^>]*\s(src|href)=", page)  # offline: plotly.js inlined
    parser = Cells()
    parser.feed(page)
    rows = [r for r in parser.rows if r]  # header rows have no <td>
    changed = questions[(questions["change"] != "same") | (questions["change_tieavg"] != "same")]
    assert len(rows) == len(changed)
    by_question = {}
    for cells in rows:
        by_question.setdefault(cells[0]["text"], []).append(cells)
    assert set(by_question) == set(changed["question_id"])
    assert set(by_question) == {"demo_q07", "demo_q08", "demo_q11", "demo_q13"}  # BM25's pair; TagGraph-Basic ran alike
    q07 = by_question["demo_q07"][0][-1]  # tuned has a page for it
    assert q07["href"] and (out / q07["href"][0]).resolve() == (tuned / "misses" / "demo_q07.explain.html").resolve()
    q08 = by_question["demo_q08"][0][-1]  # no page: the command, one per run, as their BM25s differ
    assert not q08["href"] and len(q08["pre"]) == 2
    assert q08["pre"][0].startswith(f"taggraph explain --data {DEMO_DATA} --question demo_q08 --methods BM25 "
                                    "--extractor none --depth 40 --param BM25.k1=1.5 --param BM25.b=0.75")
    assert q08["pre"][0].endswith("--out base-demo_q08.explain.html")
    assert "--param BM25.k1=5.0" in q08["pre"][1] and q08["pre"][1].endswith("--out tuned-demo_q08.explain.html")
    # a pair within one run: one command with both methods
    res = runner.invoke(app, ["compare", "--explain-pages=0",
                              str(base), str(tuned), "--pair", "1:BM25=1:TagGraph-Basic",
                              "--out", str(tmp_path / "within")])
    assert res.exit_code == 0, res.output
    parser = Cells()
    parser.feed((tmp_path / "within" / "compare.html").read_text())
    commands = [cells[-1]["pre"] for cells in parser.rows if cells]
    assert commands and all(len(c) == 1 and "--methods BM25,TagGraph-Basic " in c[0]
                            and c[0].endswith(".explain.html") and "--out base-" not in c[0] for c in commands)
    res = runner.invoke(app, ["compare", str(base), str(tuned), "--out", str(out)])
    assert res.exit_code == 2 and "not empty" in res.output
    assert runner.invoke(app, ["compare", str(base), str(tuned), "--out", str(out), "--force"]).exit_code == 0
    assert not list(tmp_path.glob(".*partial"))


def test_holm_and_bh_adjust_by_hand_and_a_missing_test_stays_out():
    p = [0.01, 0.04, 0.03, np.nan, 0.005]
    adjusted = adjusted_p_values(p)
    # Holm: sorted 0.005, 0.01, 0.03, 0.04 times 4, 3, 2, 1, then a running maximum
    assert adjusted["holm"] == pytest.approx([0.03, 0.06, 0.06, np.nan, 0.02], nan_ok=True)
    # BH: p * 4 / rank, then a running minimum from the largest
    assert adjusted["bh"] == pytest.approx([0.02, 0.04, 0.04, np.nan, 0.02], nan_ok=True)
    assert adjusted_p_values([0.2])["holm"] == pytest.approx([0.2])  # one test: nothing to adjust


def test_several_pairs_get_adjusted_p_values_and_a_table_per_question_type(runs, tmp_path):
    base, tuned = runs
    specs = ["1:BM25=2:BM25", "1:BM25=1:TagGraph-Basic", "2:BM25=2:TagGraph-Basic"]
    comparison = compare_runs([base, tuned], specs)
    pairs = comparison.pairs
    assert pairs["p_holm"].to_numpy() == pytest.approx(adjusted_p_values(pairs["p_value"])["holm"])
    assert pairs["p_bh"].to_numpy() == pytest.approx(adjusted_p_values(pairs["p_value"])["bh"])
    assert (pairs["p_holm"] >= pairs["p_value"]).all() and (pairs["p_holm"] > pairs["p_value"]).any()
    assert list(pairs["sig"]) == ["*" if p < 0.05 else "" for p in pairs["p_holm"]]
    per_type = comparison.per_type
    questions = comparison.questions
    assert len(per_type) == len(questions.groupby(["run_a", "method_a", "run_b", "method_b", "question_type"]))
    assert per_type.groupby(["run_a", "method_a", "run_b", "method_b"], sort=False)["n"].sum().tolist() == [12] * 3
    for row in per_type.to_dict("records"):
        part = questions[(questions["method_a"] == row["method_a"]) & (questions["method_b"] == row["method_b"])
                         & (questions["run_a"] == row["run_a"]) & (questions["run_b"] == row["run_b"])
                         & (questions["question_type"] == row["question_type"])]
        assert row["diff"] == pytest.approx(part["delta"].mean())
        assert row["diff_tieavg"] == pytest.approx(part["delta_tieavg"].mean())
        if len(part) >= 2:
            assert row["p_value"] == pytest.approx(paired_test(part["RR_b"], part["RR_a"]).p_value)
    tested = per_type["p_value"].notna()
    assert per_type.loc[tested, "p_holm"].to_numpy() == pytest.approx(
        adjusted_p_values(per_type.loc[tested, "p_value"])["holm"])
    out = tmp_path / "cmp"
    res = runner.invoke(app, ["compare", str(base), str(tuned), *[f"--pair={s}" for s in specs], "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert len(pd.read_csv(out / "per_type.csv")) == len(per_type)
    page = (out / "compare.html").read_text()
    assert "Per question type" in page and "p Holm" in page and "p BH" in page
    assert page.count("class=\"plotly-graph-div\"") == 1 + len(specs)  # the intervals, then one per pair


def test_a_pair_named_twice_is_tested_once(runs):
    base, tuned = runs
    comparison = compare_runs([base, tuned], ["1:BM25=2:BM25", "BM25=2:TagGraph-Basic", "base:BM25=tuned:BM25"])
    assert comparison.pairs[["method_a", "method_b"]].values.tolist() == [["BM25", "BM25"], ["BM25", "TagGraph-Basic"]]
    assert len(comparison.questions) == 2 * 12


def test_tg_compare_takes_bench_results_as_their_saved_run_folders(runs):
    """`tg.compare` of results in memory gives the numbers of the same runs saved and compared as folders."""
    import taggraph as tg

    base, tuned = runs
    cases = tg.load(DEMO_DATA)
    in_memory = tg.compare([tg.bench(cases, METHODS, extractor="none", backend=None),
                            tg.bench(cases, METHODS, extractor="none", backend=None,
                                     method_params={"BM25": {"k1": 5.0, "epsilon": 0.0}})])
    numbers = ["n", "MRR_a", "MRR_b", "diff", "ci_low", "ci_high", "p_value", "wins", "losses", "ties", "tie_order"]
    assert list(in_memory.pairs["run_a"]) == ["result1", "result1"]
    pd.testing.assert_frame_equal(in_memory.pairs[numbers], compare_runs([base, tuned]).pairs[numbers])


def only_bm25(run: Path, tmp_path: Path) -> Path:
    """A copy of `run` holding BM25 alone, with the run's report beside it."""
    copy = tmp_path / "only-bm25"
    shutil.copytree(run, copy)
    rows = pd.read_csv(copy / "rankings.csv", dtype=str, keep_default_na=False)
    rows[rows["method"] == "BM25"].to_csv(copy / "rankings.csv", index=False)
    (copy / "report.html").write_text("<html><body>report</body></html>")
    return copy


def test_the_page_reads_a_to_b_links_each_report_and_names_what_it_left_out(runs, tmp_path):
    base, tuned = runs
    other, out = only_bm25(tuned, tmp_path), tmp_path / "cmp"
    res = runner.invoke(app, ["compare", str(base), str(other), "--out", str(out)])
    assert res.exit_code == 0 and "TagGraph-Basic not in only-bm25" in res.output, res.output
    page = (out / "compare.html").read_text()
    assert "<td>base:BM25 → only-bm25:BM25</td>" in page and "<th>MRR a</th>\n      <th>MRR b</th>\n      " \
                                                                "<th>ΔMRR (b − a)</th>" in page
    assert "<h2>base: BM25 → only-bm25: BM25</h2>" in page
    assert "<a href='../only-bm25/report.html'>report</a>" in page  # the base run has no report: no link
    assert "Not compared: 1 method(s)" in page and "--pair 1:TagGraph-Basic=2:BM25" in page


def test_a_pair_that_moved_no_question_says_so(runs, tmp_path):
    base, _ = runs
    out = tmp_path / "same"
    assert runner.invoke(app, ["compare", str(base), str(base), "--out", str(out)]).exit_code == 0
    assert (out / "compare.html").read_text().count("so this pair says nothing") == 2


def test_the_worst_regressions_get_their_explain_pages_linked(runs, tmp_path):
    base, tuned = runs
    out = tmp_path / "cmp"
    assert runner.invoke(app, ["compare", str(base), str(tuned), "--out", str(out)]).exit_code == 0
    page, written = (out / "compare.html").read_text(), sorted(p.name for p in (out / "explain").iterdir())
    assert written and all(f"<a href='explain/{name}'>" in page for name in written)
    questions = pd.read_csv(out / "questions.csv")
    worst = questions[questions["delta"] < 0].sort_values(["delta", "question_id"]).iloc[0]["question_id"]
    for run in (base, tuned):  # the worst regression's page: in the run folder, else written beside compare.html
        assert (run / "misses" / f"{worst}.explain.html").is_file() or f"{run.name}-{worst}.explain.html" in written
    none = tmp_path / "none"
    assert runner.invoke(app, ["compare", str(base), str(tuned), "--explain-pages", "0", "--out",
                               str(none)]).exit_code == 0
    assert not (none / "explain").exists()
