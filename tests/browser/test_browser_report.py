"""The run report in headless Chromium at 1280 x 800, network off: a reader sees MRR and MRR_tieavg without
scrolling and the other metrics one click away. Reuses tests/browser/test_browser.py's Chromium
helpers and is skipped like it without Chromium."""

import json
import re
import subprocess

import pytest

from taggraph._infra.atomic import atomic_write
from taggraph._infra.config import DEMO_DATA
from taggraph.datasets import load_dataset
from taggraph.runs.bench import run_bench
from taggraph.viz.report import report_pages

from test_browser import CHROMIUM, page_requests, pytestmark  # noqa: F401  (slow, needs chromium)

# After load: where the first table's MRR and MRR_tieavg headers are drawn, the window's size, what the first
# table holds beside a <details> with every metric, and each chart title's drawn box against its chart's.
STATE = """
var first = document.querySelector("table.summary") || document.createElement("table"), heads = {};
Array.from(first.querySelectorAll("th")).forEach(function (th) {
  var r = th.getBoundingClientRect(); heads[th.textContent] = [r.left, r.top, r.right, r.bottom]; });
var all = document.querySelector("div.wide + details.all");  // the one after the summary table
return {heads: heads, width: window.innerWidth, height: window.innerHeight,
        overflow: document.documentElement.scrollWidth - document.documentElement.clientWidth,
        inDetails: all ? Array.from(all.querySelectorAll("th")).map(function (th) { return th.textContent; }) : [],
        open: all ? all.open : null,
        titles: Array.from(document.querySelectorAll(".js-plotly-plot")).map(function (plot) {
          var t = plot.querySelector(".gtitle"), p = plot.getBoundingClientRect(), b = t.getBoundingClientRect();
          return [t.textContent, b.left - p.left, b.right - p.left, p.width]; })};
"""


def probe_report(tmp_path, page, size: str = "1280,800", scrollbars: bool = False, state: str = STATE) -> dict:
    """What the script `state` returns once the page has loaded, in Chromium at `size`, with the network off."""
    copy = tmp_path / f"probed-{page.name}"
    copy.write_text(page.read_text(encoding="utf-8").replace(
        "</body>", "<script>window.addEventListener('load', function () { setTimeout(function () {"
                   "document.body.dataset.probe = JSON.stringify((function () {" + state + "})()); }, 1000); });"
                   "</script></body>"), encoding="utf-8")
    netlog = tmp_path / "netlog.json"
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
           "--no-first-run", f"--user-data-dir={tmp_path / 'profile'}", "--host-resolver-rules=MAP * ~NOTFOUND",
           f"--log-net-log={netlog}", f"--window-size={size}", "--virtual-time-budget=5000",
           "--dump-dom", copy.as_uri()]
    cmd[-3:-3] = [] if scrollbars else ["--hide-scrollbars"]
    dom = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=True).stdout
    assert page_requests(netlog) == []
    found = re.search(r'data-probe="([^"]*)"', dom)
    assert found, "the page's script did not run to the end"
    return json.loads(found.group(1).replace("&quot;", '"').replace("&amp;", "&"))


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    cases = load_dataset(DEMO_DATA)
    result = run_bench(cases, ["BM25", "TagGraph-Basic", "TagGraph-TFIDF"], extractor="offline", backend=None)
    page = tmp_path_factory.mktemp("run") / "report.html"
    atomic_write(page, report_pages(result, "demo report", "demo", "LongMemEval-S", cases)["report.html"])
    return page


def test_a_reader_at_1280_px_sees_mrr_and_its_tie_aware_twin_first(report, tmp_path):
    state = probe_report(tmp_path, report)
    for column in ("MRR", "MRR_tieavg"):
        left, top, right, bottom = state["heads"][column]
        assert 0 <= left and right <= state["width"] and 0 <= top and bottom <= state["height"], (column, state)
    assert list(state["heads"])[:5] == ["method", "n", "MRR", "MRR 95% CI", "MRR_tieavg"]
    assert not state["open"] and {"R@10", "nDCG@10", "recall_all@5", "Success@1_tieavg"} <= set(state["inDetails"])
    assert len(state["heads"]) <= 8  # the rest is one click away


def test_the_page_does_not_scroll_sideways_once_its_scroll_bar_appears(report, tmp_path):
    """Plotly sizes a chart to the page's width once; a scroll bar that appeared later made each chart
    wider than the page by the bar's width."""
    assert probe_report(tmp_path, report, scrollbars=True)["overflow"] == 0


def test_the_report_says_what_a_tie_placement_counts_as_and_labels_table_1(report):
    page = report.read_text(encoding="utf-8")
    assert "counts as a miss" not in page  # Success@5 counts it a hit: the legend says so
    assert "Success@5 (the paper&#x27;s reading: ties in note order) counts it as a hit" in page.replace("'", "&#x27;")
    head = re.search(r"Beside the paper's Table 1.*?<tr[^>]*>(.*?)</tr>", page, re.S).group(1)
    assert re.findall(r"<th>(.*?)</th>", head)[0] == "MRR of"  # no empty, unlabelled first column
    assert "ours: offline, MRR_tieavg (n = 12)" in page



def test_the_gold_rank_chart_title_is_not_cut_in_a_notebook_wide_frame(tmp_path):
    """The notebooks' gold-rank chart at 900 px (a notebook's output column): its title, with the miss and
    tie-order legend, fits in the chart."""
    from taggraph.runs.runner import build_store
    from taggraph.viz.charts import gold_rank_chart
    from taggraph.methods import build_retrievers
    from taggraph.datasets.base import gold_note_ids
    from taggraph.runs.retrieval import retrieve_all

    case = next(c for c in load_dataset(DEMO_DATA) if c.case_id == "demo_q12")
    store = build_store(case, "offline-v2")
    results = retrieve_all(store, case.question, build_retrievers(store, ["BM25", "TagGraph-Stopwords"]),
                           asked_on=case.question_date)
    page = tmp_path / "chart.html"
    atomic_write(page, gold_rank_chart(results, gold_note_ids(case, store)).to_html(include_plotlyjs=True))
    state = probe_report(tmp_path, page, size="900,700")
    [(text, left, right, width)] = state["titles"]
    assert "tie order" in text and 0 <= left and right <= width, (text, left, right, width)


# Clicks the per-question table's BM25 header once, then again: the BM25 column top-down after each click.
SORTED = """
var table = document.querySelector("table.sortable"), heads = Array.from(table.querySelectorAll("thead th"));
var col = heads.findIndex(function (th) { return th.textContent === "BM25"; });
var column = function () { return Array.from(table.tBodies[0].rows).map(function (r) {
  return parseFloat(r.cells[col].textContent); }); };
heads[col].click(); var first = column(); heads[col].click(); var second = column();
var text = heads.findIndex(function (th) { return th.textContent === "text"; }); heads[text].click();
var texts = Array.from(table.tBodies[0].rows).map(function (r) { return r.cells[text].textContent; });
var links = table.querySelectorAll("a[href$='.explain.html']").length;
return {first: first, second: second, texts: texts, links: links, arrow: getComputedStyle(heads[text], "::after").content,
        open: !table.closest("details"), matrix: document.querySelectorAll("table.matrix td.num").length,
        perType: Array.from(document.querySelectorAll("table.nowrap td")).map(function (td) {
          return td.textContent; })};
"""


def test_a_reader_sorts_the_questions_and_reads_intervals_and_every_pair(report, tmp_path):
    state = probe_report(tmp_path, report, state=SORTED)
    assert state["first"] == sorted(state["first"], reverse=True) and state["second"] == sorted(state["first"])
    assert len(state["first"]) == 12 and state["matrix"] == 3 * 3
    # the question text sorts A to Z first (it sorted Z to A), its arrow says so; the table is open, not collapsed
    assert state["texts"] == sorted(state["texts"]) and "How many" in " ".join(state["texts"])
    assert state["arrow"] == '" ▲"' and state["open"]
    assert any(re.fullmatch(r"\d+\.\d \(\d+–\d+\)", cell) for cell in state["perType"]), state["perType"]


# Each bar label of the gold-rank chart: its text, and whether the drawn top-k line crosses its box, drawn above it.
LABELS_STRUCK = """
var line = document.querySelector(".shapelayer path"), box = line.getBoundingClientRect();
var above = !line.closest(".layer-below");
return Array.from(document.querySelectorAll(".bars .bartext")).map(function (t) {
  var r = t.getBoundingClientRect();
  return [t.textContent, above && r.top < box.bottom && box.top < r.bottom]; });
"""


def test_the_top_k_line_strikes_no_bar_label(tmp_path):
    """Drawn over the bars, the dashed top-5 line at 5.5 ran through the label of a rank-6 bar: '6' read '5'."""
    from taggraph.methods import Result
    from taggraph.viz.charts import gold_rank_chart

    results = {m: [Result(f"n{r}", 50.0 - r, f"s{r}", r) for r in range(1, 41)] for m in ("A", "B")}
    page = tmp_path / "ranks.html"
    atomic_write(page, gold_rank_chart(results, ["n6", "n5", "n99"]).to_html(include_plotlyjs=True))  # n99: a miss
    labels = probe_report(tmp_path, page, size="900,700", state=LABELS_STRUCK)
    assert {text for text, _ in labels} == {"6", "5", "miss"} and not any(struck for _, struck in labels), labels
