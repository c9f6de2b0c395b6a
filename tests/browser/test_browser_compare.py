"""`taggraph compare`'s page in Chromium: drawn offline, each pair's key columns within a 1280 px window, both
markers of a pair apart."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from taggraph.cli import app
from tests.helpers.runs import two_demo_runs
from test_browser import dump_dom, pytestmark  # noqa: F401  (slow, needs chromium)
from test_browser_report import probe_report
from test_browser_subgraph import probe

runner = CliRunner()


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """`two_demo_runs`: `base` and `tuned`."""
    return two_demo_runs(tmp_path_factory.mktemp("runs"))


def test_compare_page_opens_offline_in_a_browser(runs, tmp_path):
    base, tuned = runs
    out = tmp_path / "cmp"
    assert runner.invoke(app, ["compare", str(base), str(tuned), "--out", str(out)]).exit_code == 0
    dom = dump_dom(tmp_path, out / "compare.html")
    assert 'class="moved"' in dom and "demo_q07" in dom  # a question the tuned BM25 moves
    assert dom.count('class="main-svg"') >= 2 * 3  # plotly drew the intervals and each pair's differences, offline


# The pairs' first table: its frame's scroll and client widths, each header's text and right edge; the table of every
# column: whether it is folded away, its column count.
PAIRS_READ = """var key = document.querySelector("table.summary"), all = document.querySelector("details.all");
return {scroll: key.parentNode.scrollWidth, width: key.parentNode.clientWidth, window: window.innerWidth,
        heads: Array.from(key.rows[0].cells).map(function (c) { return [c.textContent, c.getBoundingClientRect().right]; }),
        folded: !!all && !all.open, allColumns: all ? all.querySelector("table").rows[0].cells.length : 0};"""


def test_each_pair_s_key_columns_fit_a_1280_window_and_every_column_is_one_click_away(runs, tmp_path):
    """compare.html's pairs table was 29 columns, about 1,500 px: at 1280 losses, ties and the tie-order count were
    off-screen. Now the key columns fit without side-scrolling and 'All 29 columns' opens the rest."""
    base, tuned = runs
    out = tmp_path / "cmp"
    specs = ["1:BM25=2:BM25", "1:TagGraph-Basic=2:TagGraph-Basic", "1:BM25=1:TagGraph-Basic", "2:BM25=2:TagGraph-Basic"]
    assert runner.invoke(app, ["compare", str(base), str(tuned), *[f"--pair={s}" for s in specs],
                               "--out", str(out)]).exit_code == 0
    state, _ = probe(tmp_path, out / "compare.html", state=PAIRS_READ)
    assert state["scroll"] <= state["width"], "the pairs table scrolls sideways"
    heads = dict(state["heads"])
    for column in ("ΔMRR (b − a)", "p Holm", "ΔMRR_tieavg", "wins", "losses", "ties", "tie-order places"):
        assert heads[column] <= state["window"], column
    assert state["folded"] and state["allColumns"] == 29

# Where plotly drew the interval chart's markers: per trace, each point's (x, y) on the page.
MARKERS = """var plot = document.querySelector(".js-plotly-plot");
return Array.from(plot.querySelectorAll(".scatterlayer .trace")).map(function (trace) {
  return Array.from(trace.querySelectorAll(".points path")).map(function (p) {
    var r = p.getBoundingClientRect();
    return [Math.round(r.x + r.width / 2), Math.round(r.y + r.height / 2)]; }); });"""


def test_the_interval_chart_draws_both_markers_of_a_pair_apart(runs, tmp_path):
    """Both differences of a pair were drawn on one line: the tie-aware marker hid the other where they agree."""
    out = tmp_path / "cmp"
    assert runner.invoke(app, ["compare", *map(str, runs), "--out", str(out)]).exit_code == 0
    plain, tie_aware = probe_report(tmp_path, out / "compare.html", state=MARKERS)
    assert len(plain) == len(tie_aware) == 2
    assert all(p[1] != t[1] for p, t in zip(plain, tie_aware)), (plain, tie_aware)  # each on its own line
