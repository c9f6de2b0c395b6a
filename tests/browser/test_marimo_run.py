"""Notebooks under `marimo run` (marimo's own server and frontend) in headless Chromium: 04's rank table shows
every method's column in view at once (its right-hand columns, OC-notes and TagGraph-Fusion, were cut off); 05's
plotly charts draw; and the browser asks nothing of any host but 127.0.0.1 (marimo's plotly output asked
cdn.jsdelivr.net for MathJax once per page with a chart).

Skipped without Chromium or websocket-client.
"""

import contextlib
import json
import os
import sys
import time

import pytest

from test_jupyterlab_widgets import REPO, chromium, free_port, served, wait_for  # noqa: F401  (chromium: a fixture)
from test_browser import CHROMIUM, page_requests

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(CHROMIUM is None, reason="no chromium binary on PATH (Debian: apt-get install -y chromium)"),
]


@contextlib.contextmanager
def marimo_served(notebook: str, tmp_path):
    """`marimo run notebooks/<notebook>` on a free port, no token; yields its URL."""
    port = free_port()
    env = {**os.environ, "TQDM_DISABLE": "1", "PYTHONPYCACHEPREFIX": str(tmp_path / "pycache")}
    with served([sys.executable, "-m", "marimo", "run", str(REPO / "notebooks" / notebook), "--headless",
                 "--host", "127.0.0.1", f"--port={port}", "--no-token", "--no-sandbox"],
                env, tmp_path / "marimo.log", f"http://127.0.0.1:{port}", "the marimo server", cwd=tmp_path):
        yield f"http://127.0.0.1:{port}"


@pytest.fixture
def marimo_run(tmp_path):
    """`marimo run notebooks/04_retrieval.py`; yields its URL."""
    with marimo_served("04_retrieval.py", tmp_path) as url:
        yield url


# The first table in the page (shadow roots included) with a header cell starting with `method`: each header
# cell's left and right edge and the horizontal region left visible by the window and every clipping ancestor.
RANK_TABLE = """((method) => {
  const all = (root) => [...root.querySelectorAll('*')].flatMap(e => [e, ...(e.shadowRoot ? all(e.shadowRoot) : [])]);
  const table = all(document).find(e => e.tagName === 'TABLE'
    && [...e.querySelectorAll('th')].some(th => th.textContent.trim().startsWith(method)));
  if (!table) return '';
  const up = (e) => e.parentElement ?? e.getRootNode().host;
  let left = 0, right = window.innerWidth;
  for (let e = up(table); e && e !== document.documentElement; e = up(e)) {
    if (getComputedStyle(e).overflowX === 'visible') continue;
    const c = e.getBoundingClientRect();
    left = Math.max(left, c.left); right = Math.min(right, c.right);
  }
  return JSON.stringify([...table.querySelectorAll('th')].map(th => {
    const r = th.getBoundingClientRect();
    return {text: th.textContent.trim(), left: r.left, right: r.right, visibleLeft: left, visibleRight: right}; }));
})"""


def test_rank_table_shows_every_method_column_under_marimo_run(marimo_run, chromium):
    """At 1024 px, every column is in view at once: the headers wrap. (marimo's own table showed BM25 to
    AdaptiveGraph and cut OC-notes and TagGraph-Fusion off behind a thin scrollbar.)"""
    page, stop = chromium
    page.call("Emulation.setDeviceMetricsOverride", width=1024, height=768, deviceScaleFactor=1, mobile=False)
    page.call("Page.navigate", url=marimo_run)
    probe = f"({RANK_TABLE})({json.dumps('TagGraph-Fusion')})"
    cells = json.loads(wait_for(lambda: page.js(probe), 300, "04's rank table under marimo run",
                                state=lambda: page.js("document.body?.innerText.slice(0, 500)")))
    names = [c["text"] for c in cells]
    assert all(any(n.startswith(m) for n in names) for m in ("BM25", "OC-notes", "TagGraph-Fusion")), names
    cut = [c for c in cells if c["left"] < c["visibleLeft"] - 1 or c["right"] > c["visibleRight"] + 1]
    assert cut == [], f"header cells cut off: {cut}"
    assert page_requests(stop(), local_host="127.0.0.1") == []


# Each drawn plotly chart in the page (shadow roots and same-origin frames included): one element
# `.js-plotly-plot` holding plotly's `.main-svg`, as JSON [{title, traces}], each traces the number of trace groups drawn.
DRAWN_CHARTS = """(() => {
  const all = (root) => [...root.querySelectorAll('*')].flatMap(e => [e,
      ...(e.shadowRoot ? all(e.shadowRoot) : []),
      ...(e.tagName === 'IFRAME' && e.contentDocument ? all(e.contentDocument) : [])]);
  return JSON.stringify(all(document).filter(e => e.classList?.contains('js-plotly-plot') && e.querySelector('.main-svg'))
    .map(e => ({title: e.querySelector('.gtitle')?.textContent ?? '', traces: e.querySelectorAll('.trace').length})));
})()"""


def test_charts_draw_asking_nothing_off_the_machine_under_marimo_run(tmp_path, chromium):
    """05's two plotly charts (MRR change per removed component, and with its bootstrap interval) draw under `marimo
    run` while the browser asks no host but 127.0.0.1 (all other lookups fail). marimo's own plotly output asked
    cdn.jsdelivr.net for MathJax (`mathjax-full@3.2.2/es5/tex-mml-svg.min.js`) for any chart."""
    page, stop = chromium
    with marimo_served("05_ablations.py", tmp_path) as url:
        page.call("Page.navigate", url=url)
        wanted = ("MRR change from removing one AdaptiveGraph component", "MRR change from removing one component,")
        drawn = wait_for(lambda: (c := json.loads(page.js(DRAWN_CHARTS) or "[]")) and len(c) >= len(wanted) and c,
                         120, "05's charts under marimo run",
                         state=lambda: page.js(DRAWN_CHARTS) + (page.js("document.body?.innerText.slice(0, 300)") or ""))
        time.sleep(1)  # a request a chart makes once drawn (MathJax is asked for as it mounts) is in the log too
    assert len(drawn) == len(wanted) and all(any(c["title"].startswith(w) for c in drawn) for w in wanted), drawn
    assert all(c["traces"] for c in drawn), drawn
    assert page_requests(stop(), local_host="127.0.0.1") == []
