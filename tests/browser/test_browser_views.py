"""The graph page's side panel in headless Chromium for a note drawn without a label (dense drawing);
reuses tests/browser/test_browser.py's Chromium helpers and is skipped like it without Chromium."""

import json
import re

from taggraph._infra.config import DEMO_DATA
from taggraph.datasets import load_dataset
from taggraph.runs.runner import build_store
from taggraph.methods import make_retriever
from taggraph.viz.graph.page import save_graph_html
from taggraph.viz.widgets import iframe

from test_browser import dump_dom, pytestmark  # noqa: F401  (slow, needs chromium)
from test_jupyterlab_widgets import chromium, wait_for  # noqa: F401  (chromium: a fixture)


def test_side_panel_names_a_note_whose_label_is_hidden(tmp_path, monkeypatch):
    """On a drawing laid out by the spring layout (larger than COLUMNS_DRAWN), where only telling nodes keep a label."""
    from taggraph.viz.graph import page as graphview

    monkeypatch.setattr(graphview, "COLUMNS_DRAWN", graphview.DENSE_LABELS)
    store = build_store(load_dataset(DEMO_DATA, limit=1)[0], "offline")
    retrievers = {"BM25": make_retriever("BM25", store)}
    question = "what breed is my dog"
    page = save_graph_html(tmp_path / "g.html", store, question=question, retrievers=retrievers,
                           results_by_method={"BM25": retrievers["BM25"].query(question)})
    nodes = json.loads(re.search(r"var DATA = (.*);", page.read_text()).group(1))["nodes"]
    quiet = next(n["id"][len("file:"):] for n in nodes if n["kind"] == "file" and not n["label"].strip())
    dom = dump_dom(tmp_path, page, "#note=" + quiet.replace("#", "%23"))
    title = re.search(r'<b id="why-title">(.*?)</b>', dom).group(1)
    assert title == f"{quiet} · BM25"


def test_a_fitted_frame_follows_its_page_when_the_window_narrows_and_widens(tmp_path, chromium):
    """JupyterLab's explain frames (`iframe(..., fit=True)`) kept the height of their first layout: cut off after
    the window or sidebar narrowed, a blank below the page after it widened. The frame is as high as its page
    at each width."""
    text = "<p>" + " ".join(f"word{i}" for i in range(3000)) + "</p>"
    host = tmp_path / "host.html"
    host.write_text("<!doctype html><html><body>" + iframe(f"<!doctype html><html><body>{text}</body></html>",
                                                             300, fit=True).data + "</body></html>", encoding="utf-8")
    heights = {}
    page, stop = chromium
    try:
        probe = ("(() => { const f = document.querySelector('iframe'), d = f && f.contentDocument;"
                 " if (!d || d.readyState !== 'complete' || !d.querySelector('p')) return null;"  # not the blank first document
                 " return [f.getBoundingClientRect().height, d.documentElement.offsetHeight]; })()")
        for step, width in enumerate((1200, 500, 1200)):
            page.call("Emulation.setDeviceMetricsOverride", width=width, height=800, deviceScaleFactor=1, mobile=False)
            if step == 0:
                page.call("Page.navigate", url=host.as_uri())
            relaid = lambda h: step == 0 or abs(h[1] - heights[step - 1]) > 1  # noqa: E731  (the new width's layout)
            frame, content = wait_for(lambda: (h := page.js(probe)) and relaid(h) and abs(h[0] - h[1]) <= 1 and h, 15,
                                      f"the frame to be as high as its page at {width} px",
                                      state=lambda: f"frame and page heights: {page.js(probe)}")
            heights[step] = frame
    finally:
        stop()
    assert heights[1] > 1.5 * heights[0] and abs(heights[2] - heights[0]) <= 1, heights


def test_a_long_wide_table_keeps_its_sideways_scrollbar_in_view(tmp_path, chromium):
    """At 1024 px with JupyterLab's file browser open, `table_view` of a long table cut its evidence column and
    its only sideways scrollbar was 41 rows down: the table's box now ends within the window."""
    import pandas as pd

    from taggraph.viz.widgets import table_view

    reason = "BM25 over the query terms " + ", ".join(f"'term{i}' 1.{i}" for i in range(30))
    table = pd.DataFrame({f"method {m}": [reason] * 41 for m in range(6)})
    host = tmp_path / "host.html"
    host.write_text(f"<!doctype html><html><body><div style='width:700px'>{table_view(table).data}</div></body></html>",
                    encoding="utf-8")
    page, stop = chromium
    try:
        page.call("Emulation.setDeviceMetricsOverride", width=1024, height=768, deviceScaleFactor=1, mobile=False)
        page.call("Page.navigate", url=host.as_uri())
        probe = ("(() => { const box = document.querySelector('.taggraph-table'); if (!box) return null;"
                 " return {bottom: box.getBoundingClientRect().bottom, scrolls: box.scrollWidth > box.clientWidth,"
                 " window: innerHeight}; })()")
        box = wait_for(lambda: page.js(probe), 15, "the table")
    finally:
        stop()
    assert box["scrolls"] and box["bottom"] <= box["window"], box


def test_fusions_contrast_reads_the_same_on_the_explain_and_graph_pages(tmp_path):
    """The flagship's why, as a reader meets it: the note at rank 1 and the signal that decided, in the explain
    page's contrast table and in the graph page's walk text, from the same explanation."""
    from typer.testing import CliRunner

    from taggraph.cli import app

    for command, out in (("explain", tmp_path / "e.html"), ("graph", tmp_path / "g.html")):
        result = CliRunner().invoke(app, [command, "--question", "demo_q01", "--methods", "TagGraph-Fusion",
                                          "--out", str(out)])
        assert result.exit_code == 0, result.output
    explain = dump_dom(tmp_path, tmp_path / "e.html")
    decided = re.search(r"rank 1 <code>(\S+)</code>: decided by <b>(\w+)</b>", explain)
    assert decided, "the explain page names the note at rank 1 and the deciding signal"
    graph = dump_dom(tmp_path, tmp_path / "g.html")
    walk = re.search(r'<div id="walk">(.*?)</div></div>', graph, re.S).group(1)
    assert f"note {decided.group(1)} (rank 1) scores" in walk and f"decided by {decided.group(2)}" in walk


def test_the_explain_page_shows_the_note_under_its_summary(tmp_path):
    """demo_q12's explain page put the note's text and tags about 3,900 px down a 4,390 px page, under every verdict
    that rests on them; at 1280 px it now starts within the first 1,300 px, right after the summary table."""
    from typer.testing import CliRunner

    from taggraph.cli import app
    from test_browser_subgraph import probe

    page = tmp_path / "e.html"
    result = CliRunner().invoke(app, ["explain", "--question", "demo_q12", "--out", str(page)])
    assert result.exit_code == 0, result.output
    state, _ = probe(tmp_path, page, window="1280,900", state="""
      var note = document.querySelector("section.note"), summary = document.querySelector("table.summary");
      return {note: note.getBoundingClientRect().top + window.scrollY, text: note.textContent,
              summaryEnd: summary.getBoundingClientRect().bottom + window.scrollY,
              height: document.documentElement.scrollHeight};""")
    assert state["summaryEnd"] <= state["note"] <= 1300, state
    assert "Stream Trail" in state["text"] or "stream_trail" in state["text"]
