"""`taggraph runs`: the runs index over a folder of run folders, its compare pages, and the page in Chromium with
the network off (filter, sort, a compare page for two runs ticked, the per-type overlay)."""

import json
import shutil

import pytest
from typer.testing import CliRunner

from taggraph.cli import app
from taggraph._infra.config import DEMO_DATA
from taggraph.datasets import load_dataset
from taggraph.runs.bench import run_bench
from taggraph.runs.folders import data_record, save_bench

runner = CliRunner()
HOSTILE = "<img src=x onerror=\"document.title='pwned'\">"


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """Runs under one folder: `base` (BM25, TagGraph-Basic), `nested/tuned` (the same with BM25's k1 = 5) and
    `other` (BM25 over data with another sha256), each with a report page."""
    root = tmp_path_factory.mktemp("runs")
    cases = load_dataset(DEMO_DATA)
    report = {"report.html": "<html><body>report</body></html>"}
    save_bench(run_bench(cases, ["BM25", "TagGraph-Basic"], extractor="none", backend=None), root / "base",
               data_record(DEMO_DATA), report)
    save_bench(run_bench(cases, ["BM25", "TagGraph-Basic"], extractor="none", backend=None,
                         method_params={"BM25": {"k1": 5.0}}), root / "nested" / "tuned", data_record(DEMO_DATA), report)
    other = save_bench(run_bench(cases, ["BM25"], extractor="none", backend=None), root / "other",
                       data_record(DEMO_DATA), report)
    record = json.loads((other / "run.json").read_text())
    record["data"]["sha256"], record["created"] = "f" * 64, "2999-01-01T00:00:00+00:00"
    record["config"]["extractor"] = HOSTILE
    (other / "run.json").write_text(json.dumps(record))
    result = runner.invoke(app, ["runs", str(root)])
    assert result.exit_code == 0, result.output
    assert "3 run(s), 1 compare page(s)" in result.output
    return root


def test_the_index_lists_every_run_and_compares_the_runs_over_the_same_data(folder):
    page = (folder / "runs.html").read_text()
    for name in ("base", "nested/tuned", "other"):
        assert f"<td>{name}</td>" in page
    assert (folder / "compare" / "base-vs-nested_tuned" / "compare.html").is_file()
    assert not (folder / "compare" / "base-vs-other").exists()  # other data: the page shows the command
    assert "<a href='base/report.html'>report</a>" in page and "<a href='nested/tuned/report.html'>" in page
    assert HOSTILE not in page and "<script src=" not in page


def test_an_empty_folder_is_one_line(tmp_path):
    result = runner.invoke(app, ["runs", str(tmp_path)])
    assert result.exit_code != 0 and "no run folder" in result.output and "Traceback" not in result.output


# Types a filter, sorts by run name twice, ticks two runs, then reports the rows shown, the compare link and the
# overlay's traces.
READER = """
var rows = function () { return Array.from(document.querySelectorAll("table.runs tbody tr"))
  .filter(function (r) { return r.style.display !== "none"; }).map(function (r) { return r.cells[1].textContent; }); };
var filter = document.getElementById("filter");
filter.value = "TUNED"; filter.dispatchEvent(new Event("input")); var filtered = rows();
filter.value = ""; filter.dispatchEvent(new Event("input"));
var head = document.querySelectorAll("table.runs thead th")[1]; head.click(); var first = rows(); head.click();
var second = rows();
var boxes = {}; document.querySelectorAll("input.pick").forEach(function (b) {
  boxes[b.closest("tr").cells[1].textContent] = b; });
boxes["base"].click(); var one = document.getElementById("overlay").data.length;
boxes["nested/tuned"].click();
var link = document.querySelector("#picked a");
var two = {link: link ? link.getAttribute("href") : null, traces: document.getElementById("overlay").data.length};
boxes["nested/tuned"].click(); boxes["other"].click();
return {filtered: filtered, first: first, second: second, one: one, two: two, command: document.getElementById("picked").textContent,
        title: document.title};
"""


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("chromium") is None, reason="no chromium binary on PATH")
def test_a_reader_filters_sorts_ticks_two_runs_and_overlays_them_offline(folder, tmp_path):
    from test_browser_report import probe_report

    state = probe_report(tmp_path, folder / "runs.html", size="1280,900", state=READER)
    assert state["filtered"] == ["nested/tuned"]
    # a text column sorts A to Z first, then Z to A
    assert state["first"] == ["base", "nested/tuned", "other"] and state["second"] == ["other", "nested/tuned", "base"]
    assert state["one"] == 0 and state["two"]["traces"] == 4  # two runs of two methods each
    assert state["two"]["link"] == "compare/base-vs-nested_tuned/compare.html"
    assert (folder / state["two"]["link"]).is_file()
    assert "taggraph compare" in state["command"] and "--other-data" in state["command"]
    assert state["title"] != "pwned"


def _after_back(page, profile) -> dict:
    """In Chromium (network off, driven over its DevTools protocol): tick the first two runs of `page`, open their
    compare link, press Back; what the page then shows."""
    import asyncio
    import subprocess
    import time
    import urllib.request

    import websockets

    proc = subprocess.Popen([shutil.which("chromium"), "--headless", "--no-sandbox", "--disable-gpu",
                             "--host-resolver-rules=MAP * ~NOTFOUND", f"--user-data-dir={profile}",
                             "--remote-debugging-port=0", "about:blank"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    async def drive():
        port_file = profile / "DevToolsActivePort"
        while not (port_file.is_file() and port_file.read_text().strip()):
            await asyncio.sleep(0.1)
        port = port_file.read_text().split()[0]
        targets = json.loads(urllib.request.urlopen(f"http://127.0.0.1:{port}/json").read())
        async with websockets.connect(next(t["webSocketDebuggerUrl"] for t in targets if t["type"] == "page"),
                                      max_size=None) as ws:
            calls = iter(range(1, 1000))

            async def call(method, **params):
                mine = next(calls)
                await ws.send(json.dumps({"id": mine, "method": method, "params": params}))
                while (answer := json.loads(await ws.recv())).get("id") != mine:
                    pass
                await asyncio.sleep(1.5)
                return answer.get("result") or {}

            async def run(expression):
                return (await call("Runtime.evaluate", expression=expression, returnByValue=True)).get(
                    "result", {}).get("value")

            await call("Page.navigate", url=page.as_uri())
            await run("document.querySelectorAll('input.pick').forEach(function (b, i) { if (i < 2) b.click(); })")
            away = await run("var a = document.querySelector('#picked a'); a.click(); a.getAttribute('href')")
            await run("history.back()")
            state = await run("JSON.stringify({ticked: document.querySelectorAll('input.pick:checked').length, "
                              "picked: document.getElementById('picked').textContent, "
                              "range: document.getElementById('overlay').layout.yaxis.range, "
                              "traces: document.getElementById('overlay').data.length})")
            return {**json.loads(state), "away": away}

    try:
        started = time.monotonic()
        return asyncio.run(asyncio.wait_for(drive(), timeout=60))
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        assert time.monotonic() - started < 120


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("chromium") is None, reason="no chromium binary on PATH")
def test_after_back_the_index_shows_what_its_ticked_boxes_pick_and_mrr_stays_in_its_range(folder, tmp_path):
    """Tick two runs, open their compare page, press Back: the browser restores the ticks; the page rebuilds the
    selection from them (it said 'No run ticked.' beside two ticked boxes and drew an MRR axis from -1 to 4)."""
    state = _after_back(folder / "runs.html", tmp_path / "profile")
    assert state["away"].endswith("compare.html") and state["ticked"] == 2
    assert "compare page" in state["picked"] and "No run ticked" not in state["picked"]
    assert "What differs: nested/tuned: BM25.k1=5.0" in state["picked"]  # the one-line difference, as compare's
    assert state["traces"] == 4 and state["range"] == [0, 1]
