"""Tables for a paper: means with bootstrap intervals, every pair of methods tested with Holm over all pairs,
summary.tex (booktabs, best per column bold, a dagger at p_holm < 0.05), and the report's use of them."""

import re

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from taggraph.evaluation.significance import RESAMPLES, SEED, holm, paired_test
from taggraph.evaluation.tables import significance_matrix, summary_latex, with_intervals
from taggraph.viz.page_shell import html_table
from taggraph.viz.report_charts import mrr_chart
from taggraph.viz.report_tables import tie_share_table

RR = {"A": [1, 1, 0.5, 0.2, 1, 0, 1, 0.5], "B": [1, 0.5, 0.5, 0.2, 0.3, 0, 1, 0.5], "C": [0] * 8}


def scored() -> pd.DataFrame:
    return pd.DataFrame([{"question_id": f"q{i}", "question_type": "t", "method": m, "RR": rr, "abstention": False}
                         for m, values in RR.items() for i, rr in enumerate(values)])


def test_each_mean_gets_the_percentile_bootstrap_interval_scipy_gives():
    table = with_intervals(scored()).set_index("method")
    ci = stats.bootstrap((np.array(RR["A"]),), np.mean, n_resamples=RESAMPLES, method="percentile",
                         random_state=SEED).confidence_interval
    assert table.loc["A", ["MRR", "MRR_ci_low", "MRR_ci_high"]].tolist() == pytest.approx(
        [np.mean(RR["A"]), ci.low, ci.high])
    assert table.loc["C", ["MRR_ci_low", "MRR_ci_high"]].tolist() == [0, 0]  # every question alike


def test_every_pair_of_methods_is_tested_and_holm_counts_all_pairs():
    matrix = significance_matrix(scored())
    assert list(zip(matrix["method_a"], matrix["method_b"])) == [("A", "B"), ("A", "C"), ("B", "C")]
    test = paired_test(RR["C"], RR["A"])
    assert matrix.iloc[1][["diff", "ci_low", "ci_high", "p_value"]].tolist() == pytest.approx(list(test))
    assert matrix["p_holm"].tolist() == pytest.approx(holm(matrix["p_value"]).tolist())


def test_summary_tex_is_booktabs_with_the_best_in_bold_and_a_dagger_where_holm_p_is_small():
    summary = pd.DataFrame({"method": ["BM25", "Tag_Graph", "Other"], "n": [8, 8, 8], "MRR": [0.5, 0.7, 0.6],
                            "Success@5": [0.9, 0.8, 0.9], "p_holm": [np.nan, 0.01, 0.2]})
    tex = summary_latex(summary, "BM25")
    assert all(rule in tex for rule in ("\\toprule", "\\midrule", "\\bottomrule"))
    rows = {line.split(" & ")[0]: line for line in tex.splitlines() if " & " in line}
    assert "\\textbf{0.700$^\\dagger$}" in rows["Tag\\_Graph"] and "$^\\dagger$" not in rows["Other"]
    assert rows["BM25"].count("\\textbf{0.900}") == 1 and rows["Other"].count("\\textbf{0.900}") == 1
    assert "Holm-adjusted $p < 0.05$" in tex


def test_the_mrr_chart_draws_intervals_on_an_axis_that_spans_them():
    intervals = with_intervals(scored().query("method != 'C'"))
    fig = mrr_chart(intervals)
    low, high = fig.layout.yaxis.range
    assert 0 < low < intervals["MRR_ci_low"].min() and intervals["MRR_ci_high"].max() < high <= 1
    assert list(fig.data[0].error_y.array) == pytest.approx(list(intervals["MRR_ci_high"] - intervals["MRR"]))


def test_a_column_of_zeros_reads_0_000_like_its_neighbours():
    per_type = pd.DataFrame({"question_type": ["t", "t"], "n": [2, 2], "method": ["A", "B"],
                             "MRR_from_tie_order": [0.0, -0.025]})
    cells = re.findall(r"<td>(.*?)</td>", html_table(tie_share_table(per_type, ["A", "B"]), decimals=3))
    assert cells[-2:] == ["0.000", "-0.025"]


def test_bench_writes_summary_tex_and_the_matrix_into_the_run_folder(tmp_path):
    from typer.testing import CliRunner

    from taggraph.cli import app

    out = tmp_path / "run"
    res = CliRunner().invoke(app, ["bench", "--methods", "BM25,TagGraph-Basic", "--extractor", "none",
                                   "--miss-pages", "0", "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert "\\toprule" in (out / "summary.tex").read_text() and "TagGraph-Basic" in (out / "summary.tex").read_text()
    assert pd.read_csv(out / "significance_matrix.csv")[["method_a", "method_b"]].values.tolist() == [
        ["BM25", "TagGraph-Basic"]]


def test_results_table_rebuilds_the_table_between_the_markers_of_a_readme(tmp_path):
    from typer.testing import CliRunner

    from taggraph.cli import app

    for name, mrr in (("dev", [0.7, 0.8]), ("heldout", [0.75, 0.6])):
        (tmp_path / name).mkdir()
        pd.DataFrame({"method": ["BM25", "Fusion"], "n": [10, 10], "MRR": mrr}).to_csv(tmp_path / name / "summary.csv")
    readme = tmp_path / "README.md"
    readme.write_text("# x\n\n<!-- results-table:start -->\nold\n<!-- results-table:end -->\n\nafter\n")
    runs = [str(tmp_path / "dev"), str(tmp_path / "heldout")]
    result = CliRunner().invoke(app, ["results-table", *runs, "--into", str(readme)])
    assert result.exit_code == 0, result.output
    text = readme.read_text()
    assert "old" not in text and text.endswith("<!-- results-table:end -->\n\nafter\n")
    rows = [line for line in text.splitlines() if line.startswith("|")]
    assert "dev (n = 10)" in rows[0] and "heldout (n = 10)" in rows[0]
    assert [c.strip() for c in rows[2].strip("|").split("|")] == ["BM25", "0.700", "**0.750**"]
    assert [c.strip() for c in rows[3].strip("|").split("|")] == ["Fusion", "**0.800**", "0.600"]
    (tmp_path / "plain.md").write_text("no markers")
    result = CliRunner().invoke(app, ["results-table", *runs, "--into", str(tmp_path / "plain.md")])
    assert result.exit_code != 0 and "results-table:start" in result.output
