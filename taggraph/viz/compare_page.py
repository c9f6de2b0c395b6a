"""The comparison page (compare.html): pairs of methods across runs, and the questions that moved.

One self-contained page in the style of the run report (`taggraph.viz.report`): a table per
pair (ΔMRR with CI, p and Holm/BH-adjusted p, the same for the tie-aware RR, wins/losses/ties),
a chart of each pair's interval, a per-question-type table, then per pair a chart of every
question's RR difference and the questions whose RR or tie-aware RR changed, worst first, with
the first gold rank in each run and a verdict naming a place that rests on tie order (purple).
Each pair reads ``a → b``, as its columns do (MRR a, MRR b, ΔMRR = b − a); the runs link their reports, and the
methods no pair compares are listed with a ``--pair`` that would. Each question links the explain page of either
run folder (``misses/<id>.explain.html``, written for a run's first missed questions) or the one compare wrote
for a pair's worst regressions (``explain/``, `regressions`) by a relative path; for a question without a page,
the page shows the ``taggraph explain`` command that writes one with that run's data (``--format`` when
the format its run.json records is not the one detected), extractor, depth and recorded method
parameters (a method known by name only in the Python session that ran it is given as the
``module:Class`` run.json records, else the page says so). All text from data is HTML-escaped;
plotly.js is inlined once, so the page needs no network.
"""

from __future__ import annotations

import html
import os
import shlex
from collections.abc import Collection
from pathlib import Path

import pandas as pd
import plotly.graph_objects as go

from taggraph.runs.compare import PAIR_COLUMNS, Comparison
from taggraph.runs.finished_runs import Run, data_options, method_spec
from taggraph.viz.miss_pages import miss_page_name
from taggraph.viz.page_shell import few_questions, html_table, shell_page, static
from taggraph.viz.run_params import difference_line, differences, run_params



def explain_command(run: Run, question_id: str, methods: list[str], out: str) -> str | None:
    """The `taggraph explain` command that writes `question_id`'s explain page to `out` as `run` ran
    `methods` (its data read in the format it recorded, `data_options`; every recorded parameter of a simple
    type is passed); None for a run without one data file, for methods that ran outside taggraph (no recorded
    configuration) or that cannot be named on the command line (`method_spec`)."""
    config, data = run.record.get("config", {}), run.record.get("data")
    configs = config.get("methods", {})
    known = [m for m in dict.fromkeys(methods) if m in configs]
    specs = [method_spec(run, m) for m in known]
    if not known or None in specs or not isinstance(data, dict) or "path" not in data:
        return None
    params = [f"--param {shlex.quote(f'{m}.{key}={value}')}" for m in known for key, value in configs[m].items()
              if key not in ("method", "origin") and isinstance(value, (bool, int, float, str))]
    return " ".join(["taggraph explain", shlex.join(data_options(data)), f"--question {shlex.quote(question_id)}",
                     f"--methods {shlex.quote(','.join(specs))}",
                     f"--extractor {shlex.quote(str(config.get('extractor')))}", f"--depth {config.get('depth')}",
                     *params, f"--out {shlex.quote(out)}"])


def _no_command(runs: list[Run], methods: dict[int, list[str]]) -> str:
    """Why no command is shown: methods run outside taggraph, or registered in Python without a recorded origin."""
    unnamed = [m for run in runs for m in methods[id(run)]
               if m in run.record.get("config", {}).get("methods", {}) and method_spec(run, m) is None]
    if not unnamed:
        return "no explain page (methods run outside taggraph)"
    return (f"no explain page; {', '.join(dict.fromkeys(unnamed))} was registered in Python and its run.json "
            f"records no module:Class: run taggraph explain with --methods package.module:Class, or "
            f"taggraph.viz.explain from the Python session that registered it")


def _rank(rr: float, tie: bool) -> str:
    """The rank of an RR ('–' for none), with '(tie)' when the place rests on tie order."""
    rank = "–" if rr <= 0 else str(round(1 / rr))
    return f"<td class='num tie'>{rank} (tie)</td>" if tie else f"<td class='num'>{rank}</td>"


def written_page(run: Run, question_id: str) -> str:
    """Where compare writes `run`'s explain page of `question_id` in its output folder."""
    return f"explain/{Path(run.label).name}-{Path(miss_page_name(question_id, 'explain')).name}"


def regressions(comparison: Comparison, n: int) -> dict[str, tuple[Run, str, list[str]]]:
    """The explain pages compare writes: for each pair's `n` worst regressions (ΔRR < 0), each side's run that has
    no page for the question in its folder, as {`written_page`: (run, question id, the pair's methods of it)}."""
    runs = {r.label: r for r in comparison.runs}
    wanted: dict[str, tuple[Run, str, list[str]]] = {}
    for pair in comparison.pairs.to_dict("records"):
        key = tuple(pair[c] for c in PAIR_COLUMNS)
        rows = comparison.questions[(comparison.questions[PAIR_COLUMNS] == key).all(axis=1)]
        for qid in rows[rows["delta"] < 0].sort_values(["delta", "question_id"])["question_id"].head(n):
            for run, method in ((runs[pair["run_a"]], pair["method_a"]), (runs[pair["run_b"]], pair["method_b"])):
                if not (run.path / miss_page_name(qid, "explain")).is_file():
                    methods = wanted.setdefault(written_page(run, qid), (run, qid, []))[2]
                    methods += [method] if method not in methods else []
    return wanted


def _pages_cell(question_id: str, sides: list[tuple[Run, str]], out: Path, written: Collection[str] = ()) -> str:
    """Links to the explain pages the runs have for the question, or compare wrote (`written`), and, for each run
    without one, the command that writes it (one command for runs whose data, extractor, depth and parameters
    agree)."""
    runs = list({id(run): run for run, _ in sides}.values())
    pages = {id(run): page for run in runs
             if (page := run.path.resolve() / miss_page_name(question_id, "explain")).is_file()}
    pages.update({id(run): out / written_page(run, question_id) for run in runs
                  if id(run) not in pages and written_page(run, question_id) in written})
    links = [f"<a href='{html.escape(Path(os.path.relpath(pages[id(run)], out)).as_posix())}'>explain "
             f"({html.escape(run.label)})</a>" for run in runs if id(run) in pages]
    pageless = [run for run in runs if id(run) not in pages]
    if not pageless:
        return " · ".join(links)
    name = Path(miss_page_name(question_id, "explain")).name
    methods = {id(run): [m for r, m in sides if r is run] for run in pageless}
    commands = list(dict.fromkeys(c for run in pageless if (c := explain_command(run, question_id, methods[id(run)], name))))
    if len(commands) > 1 or links:  # one page per run, named by run, beside the other run's page
        commands = [c for run in pageless
                    if (c := explain_command(run, question_id, methods[id(run)], f"{Path(run.label).name}-{name}"))]
    if not commands:
        return " · ".join([*links, html.escape(_no_command(pageless, methods))])
    labels = ", ".join(run.label for run in pageless)
    summary = f"no page for {labels}; command" if links else "no page; command"
    return " · ".join([*links, f"<details><summary>{html.escape(summary)}</summary>"
                       + "".join(f"<pre>{html.escape(c)}</pre>" for c in commands) + "</details>"])


def moved(questions: pd.DataFrame) -> pd.DataFrame:
    """The questions whose RR or tie-aware RR changed, worst first."""
    changed = (questions["change"] != "same") | ~questions["change_tieavg"].isin(["same", ""])
    return questions[changed].sort_values(["delta", "question_id"])


def _pair_name(pair: dict) -> str:
    """'a → b', in the order of the columns (MRR a, MRR b) and of ΔMRR = b − a."""
    return (f"{pair['method_a']} → {pair['method_b']}" if pair["run_a"] == pair["run_b"]
            else f"{pair['run_a']}:{pair['method_a']} → {pair['run_b']}:{pair['method_b']}")


def _number(value: float) -> str:
    return "–" if pd.isna(value) else f"{value:.3f}"


def _pair_html(pair: dict, questions: pd.DataFrame, runs: dict[str, Run], out: Path,
               written: Collection[str] = ()) -> tuple[str, go.Figure | None]:
    """The pair's section and its per-question difference chart (None when no question is judged)."""
    a, b = runs[pair["run_a"]], runs[pair["run_b"]]
    title = f"{pair['run_a']}: {pair['method_a']} → {pair['run_b']}: {pair['method_b']}"
    rows_moved = moved(questions)
    unmoved = len(questions) and questions["delta"].eq(0).all() and questions["delta_tieavg"].fillna(0).eq(0).all()
    head = (f"<h2>{html.escape(title)}</h2><p>{pair['wins']} better, {pair['losses']} worse, {pair['ties']} the same "
            f"of {pair['n']} questions both rank (by reciprocal rank of the first gold session); "
            f"{pair['tie_order']} rest on tie order on either side (<span class='tie'>purple</span>).</p>"
            + ("<p class='caveat'>ΔRR and Δ tie-aware RR are 0 on every question: both sides rank the gold alike "
               "(the same method, data and parameters do), so this pair says nothing.</p>" if unmoved else ""))
    chart = difference_chart(questions, _pair_name(pair)) if len(questions) else None
    if rows_moved.empty:
        return head, chart
    rows = []
    for q in rows_moved.to_dict("records"):
        sides = [(a, pair["method_a"]), (b, pair["method_b"])]
        verdict_class = "tie" if q["tie_order_a"] or q["tie_order_b"] else q["change"]
        rows.append(f"<tr><td><code>{html.escape(str(q['question_id']))}</code></td>"
                    f"<td>{html.escape(str(q['question_type']))}</td>{_rank(q['RR_a'], q['tie_order_a'])}"
                    f"{_rank(q['RR_b'], q['tie_order_b'])}<td class='num {q['change']}'>{q['delta']:+.3f}</td>"
                    f"<td class='num'>{_number(q['RR_tieavg_a'])} → {_number(q['RR_tieavg_b'])}</td>"
                    f"<td class='num {html.escape(str(q['change_tieavg']))}'>{_number(q['delta_tieavg'])}</td>"
                    f"<td class='{verdict_class}'>{html.escape(str(q['verdict']))}</td>"
                    f"<td>{_pages_cell(str(q['question_id']), sides, out, written)}</td></tr>")
    side_a, side_b = ((pair["method_a"], pair["method_b"]) if pair["run_a"] == pair["run_b"]
                      else (pair["run_a"], pair["run_b"]))
    cols = ["question", "type", f"rank in {side_a}", f"rank in {side_b}", "ΔRR", "tie-aware RR",
            "Δ tie-aware", "verdict", "explain"]
    return (head + "<table class='moved'><tr>" + "".join(f"<th>{html.escape(c)}</th>" for c in cols) + "</tr>"
            + "".join(rows) + "</table>"), chart


def difference_chart(questions: pd.DataFrame, name: str) -> go.Figure:
    """Each question's RR difference (bars, sorted) and tie-aware RR difference (diamonds) of one pair."""
    ordered = questions.sort_values(["delta", "delta_tieavg", "question_id"])
    colours = ["#1a7f37" if d > 0 else "#c0392b" if d < 0 else "#999" for d in ordered["delta"]]
    fig = go.Figure([go.Bar(x=ordered["question_id"], y=ordered["delta"], name="ΔRR", marker_color=colours),
                     go.Scatter(x=ordered["question_id"], y=ordered["delta_tieavg"], mode="markers",
                                name="Δ tie-aware RR", marker={"symbol": "diamond", "color": "#6f42c1", "size": 8})])
    return fig.update_layout(title=f"Per question: RR difference, {name}", yaxis_title="RR difference (b − a)",
                             xaxis={"type": "category", "showticklabels": len(ordered) <= 60}, height=380)


def interval_chart(pairs: pd.DataFrame) -> go.Figure:
    """ΔMRR of each pair with its 95% bootstrap interval, and the tie-aware ΔMRR with its own."""
    names = [_pair_name(p) for p in pairs.to_dict("records")]
    fig = go.Figure()
    for suffix, label, colour in (("", "ΔMRR", "#4c78a8"), ("_tieavg", "Δ tie-aware MRR", "#6f42c1")):
        diff = pairs[f"diff{suffix}"]
        fig.add_trace(go.Scatter(x=diff, y=names, mode="markers", name=label, marker={"color": colour, "size": 10},
                                 offsetgroup=label, orientation="h",
                                 error_x={"type": "data", "array": pairs[f"ci_high{suffix}"] - diff,
                                          "arrayminus": diff - pairs[f"ci_low{suffix}"]}))
    fig.add_vline(x=0, line_color="#999")
    return fig.update_layout(title="Each pair's MRR difference (b − a), 95% bootstrap interval",
                             xaxis_title="MRR difference", height=180 + 50 * len(pairs), scattermode="group",
                             yaxis={"automargin": True, "type": "category"})


PAIR_VIEW = {"run_a": "run a", "method_a": "method a", "run_b": "run b", "method_b": "method b", "n": "n",
             "MRR_a": "MRR a", "MRR_b": "MRR b", "diff": "ΔMRR (b − a)", "ci_low": "CI low", "ci_high": "CI high",
             "p_value": "p", "p_holm": "p Holm", "p_bh": "p BH", "sig": "sig", "MRR_tieavg_a": "MRR_tieavg a",
             "MRR_tieavg_b": "MRR_tieavg b", "diff_tieavg": "ΔMRR_tieavg", "ci_low_tieavg": "CI low (tie)",
             "ci_high_tieavg": "CI high (tie)", "p_value_tieavg": "p (tie)", "p_holm_tieavg": "p Holm (tie)",
             "p_bh_tieavg": "p BH (tie)", "sig_tieavg": "sig (tie)", "wins": "wins", "losses": "losses",
             "ties": "ties", "tie_order": "tie-order places", "only_a": "only a", "only_b": "only b"}
# The pairs' columns shown by default: all fit a 1280 px window; every column is one click away (`_pairs_html`).
PAIR_KEY = ["pair", "n", "MRR a", "MRR b", "ΔMRR (b − a)", "p Holm", "sig", "ΔMRR_tieavg", "p Holm (tie)", "sig (tie)",
            "wins", "losses", "ties", "tie-order places"]
TYPE_VIEW = {**{k: v for k, v in PAIR_VIEW.items() if k in PAIR_COLUMNS}, "question_type": "type", "n": "n",
             "MRR_a": "MRR a", "MRR_b": "MRR b", "diff": "ΔMRR", "ci_low": "CI low", "ci_high": "CI high",
             "p_value": "p", "p_holm": "p Holm", "p_bh": "p BH", "sig": "sig", "diff_tieavg": "ΔMRR_tieavg"}


def _p_text(p: float) -> str:
    """A p-value to 3 decimals, a smaller one in 2 significant digits (0.0001, not 0.000)."""
    return "–" if pd.isna(p) else f"{p:.3f}" if p >= 0.001 else f"{p:.2g}"


def _view(table: pd.DataFrame, names: dict[str, str]) -> pd.DataFrame:
    view = table.reindex(columns=list(names)).round(3)
    for column in [c for c in view if c.startswith(("p_value", "p_holm", "p_bh"))]:
        view[column] = table[column].map(_p_text)
    return view.rename(columns=names)


def _pairs_html(pairs: pd.DataFrame) -> str:
    """The pairs' key columns (`PAIR_KEY`, each pair named 'b − a'), then every column on demand."""
    view = _view(pairs, PAIR_VIEW)
    key = view.assign(pair=[_pair_name(p) for p in pairs.to_dict("records")])[PAIR_KEY]
    return (html_table(key, "num summary key", decimals=3)
            + f"<details class='all'><summary>All {len(view.columns)} columns per pair (runs and methods apart, the "
              f"95% intervals, p and p BH, each side's tie-aware MRR, only a / only b)</summary>"
            + html_table(view, "num summary", decimals=3) + "</details>")


def _runs_html(comparison: Comparison, out: Path) -> str:
    """The runs compared, each with a link to its report (relative to the output folder `out`) when it has one and
    the settings it records otherwise than the first run, and above them the line that tells them apart."""
    params = [run_params(run.record) for run in comparison.runs]
    line = difference_line([run.label for run in comparison.runs], params)
    rows = []
    for run, differing in zip(comparison.runs, [[], *(differences(params[0], p) for p in params[1:])]):
        cfg, report = run.record.get("config", {}), run.path.resolve() / "report.html"
        link = (f"<a href='{html.escape(Path(os.path.relpath(report, out)).as_posix())}'>report</a>"
                if report.is_file() else "–")
        cells = [run.label, str(run.path), run.record.get("created"), str(run.record.get("git_commit", ""))[:12],
                 ", ".join(c[:12] for c in run.checksums), cfg.get("extractor"), cfg.get("depth"), cfg.get("n_cases"),
                 ", ".join(differing) or ("(the first run)" if run is comparison.runs[0] else "as the first run")]
        rows.append("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in cells) + f"<td>{link}</td></tr>")
    head = ["run", "folder", "created", "commit", "data sha256", "extractor", "depth", "questions",
            "settings otherwise than the first run", "report"]
    return (f"<p class='differ'><b>What differs:</b> {html.escape(line)}</p>"
            f"<div class='wide'><table class='runs'><tr>{''.join(f'<th>{h}</th>' for h in head)}</tr>"
            f"{''.join(rows)}</table></div>")


def _unpaired_html(comparison: Comparison) -> str:
    """A caveat naming each run's methods no pair compares, with the --pair that would compare each with the
    first run's first method; empty when every method is paired."""
    paired = {(r, m) for p in comparison.pairs.to_dict("records") for r, m in ((p["run_a"], p["method_a"]),
                                                                               (p["run_b"], p["method_b"]))}
    first = comparison.runs[0]
    left = [(i, run, m) for i, run in enumerate(comparison.runs, 1) for m in run.methods
            if (run.label, m) not in paired]
    if not left:
        return ""
    other = comparison.runs[1] if len(comparison.runs) > 1 else first
    specs = [f"1:{m}=2:{other.methods[0]}" if run is first else f"1:{first.methods[0]}={i}:{m}" for i, run, m in left]
    items = "".join(f"<li>{html.escape(run.label)}: {html.escape(m)} — e.g. <code>--pair "
                    f"{html.escape(shlex.quote(spec))}</code></li>" for (_, run, m), spec in zip(left, specs))
    return (f"<div class='caveat'><p>Not compared: {len(left)} method(s) with no namesake in the other run(s). "
            f"Only the methods both runs ran are paired by default; name other pairs with --pair.</p><ul>{items}</ul>"
            f"</div>")


def compare_html(comparison: Comparison, out: Path, title: str = "taggraph compare",
                 written: Collection[str] = ()) -> str:
    """The page for `comparison`, its links relative to the output folder `out` (see the module docstring), to the
    explain pages compare writes there too (`written`, `regressions`)."""
    out = Path(out).resolve()
    runs = {r.label: r for r in comparison.runs}
    by_pair = dict(list(comparison.questions.groupby(PAIR_COLUMNS, sort=False)))
    sections = [_pair_html(pair, by_pair.get(tuple(pair[c] for c in PAIR_COLUMNS), comparison.questions.iloc[:0]),
                           runs, out, written) for pair in comparison.pairs.to_dict("records")]
    figs = [interval_chart(comparison.pairs), *(chart for _, chart in sections if chart is not None)]
    charts = iter([f.to_html(full_html=False, include_plotlyjs=(i == 0), config={"displaylogo": False})  # no link out
                   for i, f in enumerate(figs)])
    interval = next(charts)
    body = "".join(text + (next(charts) if chart is not None else "") for text, chart in sections)
    return shell_page(title, f"<h1>{html.escape(title)}</h1><h2>Runs</h2>{_runs_html(comparison, out)}"
            f"{_unpaired_html(comparison)}"
            "<h2>Pairs</h2><p class='meta'>Every number is recomputed from the runs' rankings. Per pair, over the "
            "judged questions both runs rank: MRR of each side, ΔMRR = MRR_b - MRR_a with its 95% bootstrap interval "
            "and paired randomization p-value; p Holm and p BH adjust p for the pairs tested together (Holm: "
            "family-wise error; Benjamini-Hochberg: false discovery rate); sig * : p Holm &lt; "
            f"{comparison.config['alpha']}. The (tie) columns repeat them for the tie-aware RR, the expected RR when "
            "sessions with equal scores are put in random order (MRR_tieavg in the run report); – where a side "
            "has no scores to tie (a run read from ranking files by score or fuse). wins / losses / "
            "ties: questions whose reciprocal rank rose, fell or stayed; tie-order places: questions where either "
            "side's first gold rank rests on tie order. only a / only b: judged questions only one side ranks, "
            "left out. The table gives each pair's key columns; 'All columns' opens every one.</p>"
            f"{few_questions(comparison.pairs)}"
            f"{_pairs_html(comparison.pairs)}"
            f"{interval}<h2>Per question type</h2><p class='meta'>The same paired test within each question type; "
            "p Holm and p BH adjust over every pair and type tested (– : fewer than 2 questions).</p>"
            f"{html_table(_view(comparison.per_type, TYPE_VIEW), 'num summary', decimals=3)}{body}",
        static("report.css") + static("compare.css"))
