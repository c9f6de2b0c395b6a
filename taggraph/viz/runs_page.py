"""The runs index (runs.html): one offline page over a folder of run folders, as `taggraph runs` writes it.

A row per bench run found under the folder (any depth; a folder with run.json and summary.csv): its date, commit,
data file and sha256, questions, methods, best MRR, each method's MRR, the settings it records unlike most runs
there and a link to its report. The page filters its rows by any text typed, sorts them by a click on a header,
overlays the per-type MRR of the runs ticked (two or more; MRR's axis from 0 to 1), and for two runs ticked says
what differs between them and links their compare page (`taggraph runs` writes one per pair of runs over the same
data) or shows the `taggraph compare` command; after Back it rebuilds all that from the boxes the browser
restores. Every figure is in the page (plotly.js inlined once); it reads nothing else, and all text from the runs
is escaped.
"""

from __future__ import annotations

import html
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import plotly.graph_objects as go

from taggraph.runs.finished_runs import read_record
from taggraph.viz.report import _CSS, SORTABLE_JS
from taggraph.viz.run_params import run_params, unusual


@dataclass
class RunEntry:
    """One run folder as the index shows it: its name under the indexed folder, run.json and its two tables."""

    path: Path
    name: str
    record: dict[str, Any]
    summary: pd.DataFrame
    per_type: pd.DataFrame

    @property
    def checksum(self) -> str:
        data = self.record.get("data")
        return data.get("sha256", "") if isinstance(data, dict) else ""


def find_runs(folder: Path) -> list[RunEntry]:
    """Every bench run folder under `folder` (run.json and summary.csv; hidden folders skipped), oldest first."""
    folder = Path(folder)
    found = []
    for record_file in sorted(folder.rglob("run.json")):
        run = record_file.parent
        if not (run / "summary.csv").is_file() or any(p.startswith(".") for p in run.relative_to(folder).parts):
            continue
        per_type = run / "per_type.csv"
        found.append(RunEntry(run, run.relative_to(folder).as_posix() or run.name, read_record(run),
                              pd.read_csv(run / "summary.csv"),
                              pd.read_csv(per_type) if per_type.is_file() else pd.DataFrame()))
    return sorted(found, key=lambda r: (str(r.record.get("created", "")), r.name))


def _cell(value: Any) -> str:
    return f"<td>{html.escape('–' if value is None or value == '' else str(value))}</td>"


def _row(i: int, run: RunEntry, out: Path, unusual: list[str]) -> str:
    data = run.record.get("data") if isinstance(run.record.get("data"), dict) else {}
    mrr = run.summary.set_index("method")["MRR"] if {"method", "MRR"} <= set(run.summary) else pd.Series(dtype=float)
    best = f"{mrr.max():.3f} {mrr.idxmax()}" if len(mrr.dropna()) else "–"
    report = run.path / "report.html"
    link = (f"<a href='{html.escape(Path(os.path.relpath(report, out.parent)).as_posix())}'>report</a>"
            if report.is_file() else "–")
    methods = ", ".join(f"{m} {v:.3f}" for m, v in mrr.items())
    return (f"<tr data-run='{i}'><td><input type='checkbox' class='pick' value='{i}'></td>"
            + "".join(_cell(v) for v in (run.name, run.record.get("created"), str(run.record.get("git_commit", ""))[:12],
                                         Path(str(data.get("path", ""))).name, run.checksum[:12],
                                         run.record.get("config", {}).get("n_cases")))
            + f"<td class='num'>{html.escape(best)}</td><td class='methods'>{html.escape(methods)}</td>"
            + f"<td class='methods'>{html.escape(', '.join(unusual) or 'as most runs here')}</td><td>{link}</td>"
            + "</tr>")


def runs_html(runs: list[RunEntry], out: Path, compare_pages: dict[tuple[int, int], Path] | None = None,
              title: str = "taggraph runs") -> str:
    """The index page of `runs`, written to `out` (its links relative to it); `compare_pages` maps two runs'
    positions (earlier first) to their compare page."""
    out = Path(out).resolve()
    heads = ["pick", "run", "date", "commit", "data", "sha256", "questions", "best MRR", "MRR per method",
             "settings unlike most runs' (a tie: the oldest's)", "report"]
    params = [run_params(r.record) for r in runs]
    data = {"runs": [{"name": r.name, "path": str(r.path), "params": p,
                      "per_type": r.per_type[["question_type", "method", "MRR"]].to_dict("records")
                      if {"question_type", "method", "MRR"} <= set(r.per_type) else []} for r, p in zip(runs, params)],
            "compare": {f"{a}-{b}": Path(os.path.relpath(page, out.parent)).as_posix()
                        for (a, b), page in (compare_pages or {}).items()}}
    overlay = go.Figure().update_layout(title="Per question type: MRR of the runs ticked", height=460,
                                        xaxis={"type": "category"}, yaxis={"title": "MRR", "range": [0, 1]},
                                        scattermode="group")  # MRR's own range, drawn or empty
    chart = overlay.to_html(full_html=False, include_plotlyjs=True, div_id="overlay", config={"displaylogo": False})
    payload = json.dumps(data).replace("</", "<\\/")
    return ("<!doctype html><html><head><meta charset='utf-8'>"
            f"<title>{html.escape(title)}</title><style>{_CSS}{_RUNS_CSS}</style></head><body>"
            f"<h1>{html.escape(title)}</h1><p class='meta'>{len(runs)} run(s), oldest first. Type to filter the rows "
            "(any text: a method, a date, a data file), click a header to sort, tick two runs for their compare page, "
            "two or more to overlay their per-type MRR.</p>"
            "<p><input id='filter' type='search' placeholder='filter runs' size='40'></p>"
            "<div class='wide'><table class='num sortable runs'><thead><tr>"
            + "".join(f"<th>{h}</th>" for h in heads) + "</tr></thead><tbody>"
            + "".join(_row(i, r, out, u) for i, (r, u) in enumerate(zip(runs, unusual(params))))
            + "</tbody></table></div>"
            "<p id='picked' class='meta'>No run ticked.</p>"
            f"{chart}<script type='application/json' id='runs-data'>{payload}</script>"
            f"<script>{SORTABLE_JS}{_RUNS_JS}</script></body></html>")


_RUNS_CSS = ("td.methods { font-size: 12px; max-width: 30em; } #picked a { font-weight: bold; }"
             " table.runs td:nth-child(3) { white-space: nowrap; }")

# Filters the rows, and on each tick: the compare page of two runs (or its command) and the per-type overlay.
_RUNS_JS = """
var RUNS = JSON.parse(document.getElementById("runs-data").textContent);
document.getElementById("filter").addEventListener("input", function (e) {
  var text = e.target.value.toLowerCase();
  document.querySelectorAll("table.runs tbody tr").forEach(function (row) {
    row.style.display = row.textContent.toLowerCase().indexOf(text) >= 0 ? "" : "none"; });
});
var SYMBOLS = ["circle", "diamond", "square", "triangle-up", "x", "star"];
var COLOURS = ["#4c78a8", "#f58518", "#54a24b", "#e45756", "#72b7b2", "#b279a2", "#eeca3b", "#9d755d", "#bab0ac"];
function ticked() {
  return Array.from(document.querySelectorAll("input.pick:checked")).map(function (b) { return +b.value; })
    .sort(function (a, b) { return a - b; });
}
function showPicked(picked) {
  var out = document.getElementById("picked");
  out.textContent = "";
  if (picked.length !== 2) {
    out.textContent = picked.length ? picked.length + " run(s) ticked; tick two for their compare page."
                                    : "No run ticked.";
    return;
  }
  var a = RUNS.runs[picked[0]], b = RUNS.runs[picked[1]], page = RUNS.compare[picked[0] + "-" + picked[1]];
  var differ = document.createElement("div");  /* as the compare page's line: b's settings otherwise than a's */
  differ.textContent = "What differs: " + difference(a, b);
  out.appendChild(differ);
  if (page) {
    var link = document.createElement("a");
    link.href = page; link.textContent = "compare page: " + a.name + " → " + b.name;
    out.appendChild(link);
  } else {
    out.appendChild(document.createTextNode("No compare page for these two (other data, or no method in common): "));
    var code = document.createElement("code");
    code.textContent = "taggraph compare '" + a.path + "' '" + b.path + "' --other-data";
    out.appendChild(code);
  }
}
function difference(a, b) {
  var items = Object.keys(b.params).filter(function (k) { return k in a.params && a.params[k] !== b.params[k]; })
    .map(function (k) { return k + "=" + b.params[k]; });
  return items.length ? b.name + ": " + items.join(", ") : "the runs record the same settings";
}
function overlay(picked) {
  var traces = [], colour = {};  // a method keeps its colour across runs, a run its marker
  picked.forEach(function (i, n) {
    var run = RUNS.runs[i], methods = {};
    run.per_type.forEach(function (r) { (methods[r.method] = methods[r.method] || []).push(r); });
    Object.keys(methods).forEach(function (m) {
      traces.push({type: "scatter", mode: "markers", name: run.name + ": " + m, offsetgroup: run.name + m,
                   x: methods[m].map(function (r) { return r.question_type; }),
                   y: methods[m].map(function (r) { return r.MRR; }),
                   cliponaxis: false, marker: {symbol: SYMBOLS[n % SYMBOLS.length], size: 9,
                            color: colour[m] = colour[m] || COLOURS[Object.keys(colour).length % COLOURS.length]}});
    });
  });
  var plot = document.getElementById("overlay");
  Plotly.react(plot, picked.length >= 2 ? traces : [], plot.layout);
}
function refresh() { var picked = ticked(); showPicked(picked); overlay(picked); }
document.querySelectorAll("input.pick").forEach(function (box) { box.addEventListener("change", refresh); });
/* after Back the browser restores the ticks, not what they showed: rebuild from the boxes */
window.addEventListener("pageshow", refresh);
refresh();
"""
