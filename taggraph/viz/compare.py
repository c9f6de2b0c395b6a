"""The comparison page (compare.html): pairs of methods across runs, and the questions that moved.

One self-contained page in the style of the run report (`taggraph.viz.report`): a table per
pair (ΔMRR with CI and p, wins/losses/ties), then per pair the questions whose RR changed,
worst first, with the first gold rank in each run. Each question links the explain page of
either run folder (``misses/<id>.explain.html``, written for a run's first missed questions)
by a relative path; for a question neither run has a page for, the page shows the
``taggraph explain`` command that writes one with that run's data, extractor, depth and
recorded method parameters. All text from data is HTML-escaped; no script, no network.
"""

from __future__ import annotations

import html
import os
import shlex
from pathlib import Path

import pandas as pd

from taggraph.experiments.compare import PAIR_COLUMNS, Comparison, Run
from taggraph.viz.report import _CSS, _few_questions, _page_name, _table

_CMP_CSS = "td.better { color: #1a7f37; } td.worse { color: #c0392b; } pre { white-space: pre-wrap; margin: 0; }"


def explain_command(run: Run, question_id: str, methods: list[str], out: str) -> str | None:
    """The `taggraph explain` command that writes `question_id`'s explain page to `out` as `run` ran
    `methods` (every recorded parameter of a simple type is passed); None for a run without one data
    file or for methods that ran outside taggraph (no recorded configuration)."""
    config, data = run.record.get("config", {}), run.record.get("data")
    configs = config.get("methods", {})
    known = [m for m in dict.fromkeys(methods) if m in configs]
    if not known or not isinstance(data, dict) or "path" not in data:
        return None
    params = [f"--param {shlex.quote(f'{m}.{key}={value}')}" for m in known for key, value in configs[m].items()
              if key != "method" and isinstance(value, (bool, int, float, str))]
    return " ".join(["taggraph explain", f"--data {shlex.quote(str(data['path']))}",
                     f"--question {shlex.quote(question_id)}", f"--methods {shlex.quote(','.join(known))}",
                     f"--extractor {shlex.quote(str(config.get('extractor')))}", f"--depth {config.get('depth')}",
                     *params, f"--out {shlex.quote(out)}"])


def _rank(rr: float) -> str:
    return "–" if rr <= 0 else str(round(1 / rr))


def _pages_cell(question_id: str, sides: list[tuple[Run, str]], out: Path) -> str:
    """Links to the explain pages either run has for the question, else the command that writes one (one
    per run when their data, extractor, depth or parameters differ)."""
    runs = list({id(run): run for run, _ in sides}.values())
    links = [f"<a href='{html.escape(Path(os.path.relpath(page, out)).as_posix())}'>explain ({html.escape(run.label)})</a>"
             for run in runs if (page := run.path.resolve() / _page_name(question_id, "explain")).is_file()]
    if links:
        return " · ".join(links)
    name = Path(_page_name(question_id, "explain")).name
    methods = {id(run): [m for r, m in sides if r is run] for run in runs}
    commands = list(dict.fromkeys(c for run in runs if (c := explain_command(run, question_id, methods[id(run)], name))))
    if len(commands) > 1:  # the runs differ: one page each, named by run
        commands = [c for run in runs
                    if (c := explain_command(run, question_id, methods[id(run)], f"{Path(run.label).name}-{name}"))]
    if not commands:
        return "no explain page (methods run outside taggraph)"
    return ("<details><summary>no page; command</summary>"
            + "".join(f"<pre>{html.escape(c)}</pre>" for c in commands) + "</details>")


def _pair_html(pair: dict, questions: pd.DataFrame, runs: dict[str, Run], out: Path) -> str:
    a, b = runs[pair["run_a"]], runs[pair["run_b"]]
    title = f"{pair['run_b']}: {pair['method_b']} against {pair['run_a']}: {pair['method_a']}"
    moved = questions[questions["change"] != "same"].sort_values(["delta", "question_id"])
    head = (f"<h2>{html.escape(title)}</h2><p>{pair['wins']} better, {pair['losses']} worse, {pair['ties']} the same "
            f"of {pair['n']} questions both rank (by reciprocal rank of the first gold session).</p>")
    if moved.empty:
        return head
    rows = []
    for q in moved.to_dict("records"):
        sides = [(a, pair["method_a"]), (b, pair["method_b"])]
        rows.append(f"<tr><td><code>{html.escape(str(q['question_id']))}</code></td>"
                    f"<td>{html.escape(str(q['question_type']))}</td><td class='num'>{_rank(q['RR_a'])}</td>"
                    f"<td class='num'>{_rank(q['RR_b'])}</td><td class='num {q['change']}'>{q['delta']:+.3f}</td>"
                    f"<td>{_pages_cell(str(q['question_id']), sides, out)}</td></tr>")
    cols = ["question", "type", f"rank in {pair['run_a']}", f"rank in {pair['run_b']}", "ΔRR", "explain"]
    return (head + "<table class='moved'><tr>" + "".join(f"<th>{html.escape(c)}</th>" for c in cols) + "</tr>"
            + "".join(rows) + "</table>")


def _runs_html(comparison: Comparison) -> str:
    rows = []
    for run in comparison.runs:
        cfg = run.record.get("config", {})
        rows.append({"run": run.label, "folder": str(run.path), "created": run.record.get("created"),
                     "commit": str(run.record.get("git_commit", ""))[:12],
                     "data sha256": ", ".join(c[:12] for c in run.checksums), "extractor": cfg.get("extractor"),
                     "depth": cfg.get("depth"), "questions": cfg.get("n_cases")})
    return _table(pd.DataFrame(rows))


def compare_html(comparison: Comparison, out: Path, title: str = "taggraph compare") -> str:
    """The page for `comparison`, its links relative to the output folder `out` (see the module docstring)."""
    out = Path(out).resolve()
    runs = {r.label: r for r in comparison.runs}
    pairs = comparison.pairs.round(3).rename(columns={"diff": "ΔMRR (b - a)"})
    by_pair = dict(list(comparison.questions.groupby(PAIR_COLUMNS, sort=False)))
    sections = [_pair_html(pair, by_pair.get(tuple(pair[c] for c in PAIR_COLUMNS), comparison.questions.iloc[:0]),
                           runs, out) for pair in comparison.pairs.to_dict("records")]
    return ("<!doctype html><html><head><meta charset='utf-8'>"
            f"<title>{html.escape(title)}</title><style>{_CSS}{_CMP_CSS}</style></head><body>"
            f"<h1>{html.escape(title)}</h1><h2>Runs</h2>{_runs_html(comparison)}"
            "<h2>Pairs</h2><p class='meta'>Per pair, over the judged questions both runs rank: MRR of each side, "
            "ΔMRR = MRR_b - MRR_a with its 95% bootstrap interval and paired randomization p-value (sig * : "
            "p &lt; 0.05), and the questions whose reciprocal rank rose (wins), fell (losses) or stayed (ties). "
            "only_a / only_b: judged questions only one side ranks, left out.</p>"
            f"{_few_questions(comparison.pairs)}{_table(pairs, 'num summary')}{''.join(sections)}</body></html>")
