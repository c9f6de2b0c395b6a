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
from taggraph.viz.page_shell import shell_page, static
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
    return shell_page(title, f"<h1>{html.escape(title)}</h1><p class='meta'>{len(runs)} run(s), oldest first. "
            "Type to filter the rows "
            "(any text: a method, a date, a data file), click a header to sort, tick two runs for their compare page, "
            "two or more to overlay their per-type MRR.</p>"
            "<p><input id='filter' type='search' placeholder='filter runs' size='40'></p>"
            "<div class='wide'><table class='num sortable runs'><thead><tr>"
            + "".join(f"<th>{h}</th>" for h in heads) + "</tr></thead><tbody>"
            + "".join(_row(i, r, out, u) for i, (r, u) in enumerate(zip(runs, unusual(params))))
            + "</tbody></table></div>"
            "<p id='picked' class='meta'>No run ticked.</p>"
            f"{chart}<script type='application/json' id='runs-data'>{payload}</script>",
        static("report.css") + static("runs.css"), static("sortable.js") + static("runs.js"))


