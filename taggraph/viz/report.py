"""Run reports: report.md (`report_md`) and report.html (styled tables, offline plotly charts, misses).

report.html shows our numbers (beside the paper's Table 1 when a `benchmark` is named,
as `taggraph.runs.folders.benchmark_name` decides from the cases), Success@k per question type,
the distribution of first-gold ranks, and a table of the questions some method
missed (first gold rank per method; a top-k place owed to tie order alone counts as a miss, marked
"tie": `placement.misses_table`), and the tie-aware columns' definitions; for the first N misses it links an
explain page and a graph page written into the run folder under ``misses/`` (`miss_pages`). All text
from data (method names, question types, questions) is HTML-escaped; plotly.js is inlined once, so the pages
need no network.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

import pandas as pd

from taggraph.evaluation.metrics import judged_rows
from taggraph.evaluation.placement import misses_table
from taggraph.evaluation.significance import ALPHA
from taggraph.evaluation.tables import significance_matrix, summary_latex, with_intervals
from taggraph.viz.miss_pages import miss_page_name, miss_pages
from taggraph.viz.page_shell import few_questions, html_table, shell_page, static
from taggraph.viz.provenance_view import provenance_lines, provenance_table
from taggraph.viz.report_charts import mrr_chart, rank_chart, recall_chart
from taggraph.viz.report_md import markdown_report
from taggraph.viz.report_tables import (KEY_COLUMNS, NAMES_NOTE, TIE_NOTES, comparison_table, has_ties,
                                        per_type_table, significance_note, summary_view, tie_share_table,
                                        without_repeated_n)


def _summary_html(result) -> str:
    """The key columns (`KEY_COLUMNS`, the baseline comparison) in view, every metric one click away."""
    view = summary_view(result)
    key = without_repeated_n(view)
    key = key[[c for c in key if c in KEY_COLUMNS or c.startswith("ΔMRR")]]
    return (html_table(key, "num summary key")
            + f"<details class='all'><summary>All {len(view.columns) - 1} metrics per method (R@k, nDCG@k, "
              f"LongMemEval's recall_all@k and ndcg_any@k, every tie-aware column)</summary>"
            + html_table(view, "num summary") + "</details>")


def _provenance_html(result, record: dict | None) -> str:
    """The provenance on the first screen (commit, date, command, data and sha256), the machine, resources and
    each method's parameters, embedder and times one click away."""
    lines = provenance_lines(result, record)
    first = "".join(f"<li>{html.escape(line)}</li>" for line in lines[:4])
    rest = "".join(f"<li>{html.escape(line)}</li>" for line in lines[4:])
    return (f"<ul class='meta provenance'>{first}</ul><details class='all'><summary>Machine, resources and each "
            f"method's parameters, embedder, index and query times</summary><ul class='meta'>{rest}</ul>"
            f"{html_table(provenance_table(result), 'num')}</details>")


def _data_warnings_html(result) -> str:
    found = getattr(result, "warnings", [])
    items = "".join(f"<li>{html.escape(w.message)}</li>" for w in found)
    return f"<h2>Data warnings</h2><ul class='caveat'>{items}</ul>" if found else ""


def report_pages(result, title: str, data_label: str, benchmark: str | None, cases: Sequence = (),
                 n_miss_pages: int = 10, k: int = 5, record: dict | None = None) -> dict[str, str]:
    """The run folder's pages: report.md, report.html and the explain and graph pages of the first
    `n_miss_pages` missed questions, as recorded during the run (`MissPages`); `record`: run.json's created,
    git_commit and data, shown as the report's provenance."""
    md = markdown_report(result, title, data_label, benchmark, record)
    misses = misses_table(result.rankings, k)
    extra = miss_pages(result, misses, n_miss_pages)
    questions = {c.case_id: c.question for c in cases}
    matrix = significance_matrix(result.rankings)
    return {"report.md": md, "report.html": html_report(result, title, data_label, benchmark, misses, extra,
                                                        questions, k, record, matrix),
            "summary.tex": summary_latex(result.summary, result.config.get("baseline")),
            "significance_matrix.csv": matrix.to_csv(index=False), **extra}


def _matrix_html(matrix: pd.DataFrame | None, methods: list[str]) -> str:
    """Every pair of methods as a square: row minus column MRR and its Holm-adjusted p (`significance_matrix`),
    green or red where p Holm < ALPHA; empty without a matrix."""
    if matrix is None or matrix.empty:
        return ""
    cells = {}
    for pair in matrix.to_dict("records"):
        for row, column, sign in ((pair["method_b"], pair["method_a"], 1), (pair["method_a"], pair["method_b"], -1)):
            diff = round(sign * pair["diff"], 3) + 0.0  # never -0.000
            cls = "" if not pair["p_holm"] < ALPHA else " better" if diff > 0 else " worse"
            text = "–" if pd.isna(diff) else f"{diff:+.3f}<br><small>p Holm {pair['p_holm']:.3f}</small>"
            cells[row, column] = f"<td class='num{cls}'>{text}{'*' if cls else ''}</td>"
    head = "".join(f"<th>{html.escape(m)}</th>" for m in ["row − column", *methods])
    rows = "".join(f"<tr><th>{html.escape(r)}</th>"
                   + "".join(cells.get((r, c), "<td class='num'>—</td>") for c in methods) + "</tr>" for r in methods)
    return (f"<h2>Every pair of methods (MRR)</h2><p class='meta'>Each cell: the row's MRR minus the column's over the "
            f"questions both judge, and its paired randomization p adjusted by Holm over all {len(matrix)} pairs "
            f"(also in significance_matrix.csv, with the 95% intervals and BH); * and colour: p Holm &lt; {ALPHA}."
            f"</p><div class='wide'><table class='num matrix'><tr>{head}</tr>{rows}</table></div>")


def _questions_html(rankings: pd.DataFrame, methods: list[str], questions: dict[str, str],
                    pages: dict[str, str]) -> str:
    """Every judged question with its text, its type, its RR under each method and its explain and graph pages
    when the run wrote them: a table sorted by any column with a click on its header."""
    judged = judged_rows(rankings)
    table = (judged.pivot_table(index=["question_id", "question_type"], columns="method", values="RR", sort=False)
             .reindex(columns=methods).reset_index().rename_axis(columns=None))
    head = "".join(f"<th>{html.escape(h)}</th>" for h in ["question", "text", "type", *methods, "pages"])
    rows = "".join(
        f"<tr><td><code>{html.escape(r['question_id'])}</code></td>"
        f"<td class='text'>{html.escape(questions.get(r['question_id'], ''))}</td>"
        f"<td>{html.escape(str(r['question_type']))}</td>"
        + "".join(f"<td class='num'>{'–' if pd.isna(r[m]) else f'{r[m]:.3f}'}</td>" for m in methods)
        + f"<td>{_page_links(r['question_id'], pages)}</td></tr>" for r in table.to_dict("records"))
    return (f"<h2>Per question (RR)</h2><p class='meta'>{len(table)} judged questions, the reciprocal rank of the "
            "first gold session under each method; click a header to sort (text A to Z first, numbers largest "
            "first; again to reverse). Pages: the explain and graph pages of the questions the run wrote them for "
            "(its first misses).</p>"
            f"<div class='wide'><table class='num sortable questions'><thead><tr>{head}</tr></thead>"
            f"<tbody>{rows}</tbody></table></div>")


def _page_links(question_id: str, pages: dict[str, str]) -> str:
    """The links to `question_id`'s explain and graph pages among the run's `pages`; '' when it has none."""
    return " · ".join(f"<a href='{html.escape(miss_page_name(question_id, kind))}'>{kind}</a>"
                      for kind in ("explain", "graph") if miss_page_name(question_id, kind) in pages)


def _misses_html(misses: pd.DataFrame, pages: dict[str, str], questions: dict[str, str], k: int) -> str:
    if misses.empty:
        return (f"<p>Every method ranks a gold session in its top {k} for every judged question, and not by tie "
                f"order alone.</p>")
    methods = [c for c in misses.columns if c not in ("question_id", "question_type")]
    tie_only = misses.attrs.get("tie_only", {})
    head = "".join(f"<th>{html.escape(m)}</th>" for m in ["question", "type", *methods, "pages"])
    rows = []
    for r in misses.to_dict("records"):
        qid = r["question_id"]
        cells = "".join(_miss_cell(r[m], tie_only.get((qid, m)), k) for m in methods)
        links = _page_links(qid, pages)
        text = questions.get(qid, "")
        rows.append(f"<tr><td><code>{html.escape(qid)}</code>" + (f"<br>{html.escape(text)}" if text else "")
                    + f"</td><td>{html.escape(str(r['question_type']))}</td>{cells}<td>{links}</td></tr>")
    return (f"<p>{len(misses)} question(s) where some method ranks no gold session in its top {k}, or does only by "
            f"tie order; a cell is the rank of the first gold session (– : not retrieved). <span class='tie'>"
            f"3 (tie, 64%)</span>: in the top {k} only because tied sessions are ordered by note order, and "
            f"<span class='tie'>9 (tie, 38%)</span>: outside it only by that order; in a random "
            f"order of the ties a gold session is in the top {k} with that chance. This table lists both as misses; "
            f"Success@{k} (the paper's reading: ties in note order) counts it as a hit, Success@{k}_tieavg as that "
            f"chance. Explain and graph pages exist for the first "
            f"{sum(miss_page_name(q, 'explain') in pages for q in misses['question_id'])}.</p>"
            f"<table class='misses'><tr>{head}</tr>{''.join(rows)}</table>")


def _miss_cell(rank, tie_chance: float | None, k: int) -> str:
    """One rank cell of the misses table: bad (outside the top k, or not retrieved), tie or ok."""
    if tie_chance is not None:
        return f"<td class='tie num'>{int(rank)} (tie, {tie_chance:.0%})</td>"
    cls = "bad" if pd.isna(rank) or rank > k else "ok"
    return f"<td class='{cls} num'>{'–' if pd.isna(rank) else int(rank)}</td>"


def _tie_notes_html(result) -> str:
    if not has_ties(result):
        return ""
    items = "".join(f"<li>{html.escape(line)}</li>" for line in TIE_NOTES)
    return (f"<ul class='meta'>{items}</ul><p class='meta'>MRR_from_tie_order per question type:</p>"
            + html_table(tie_share_table(result.per_type, list(result.summary["method"])), "num", decimals=3))


def _verdicts_html(result) -> str:
    return "".join(f"<h2>Does each component of {html.escape(method)} earn its keep?</h2><ul>"
                   + "".join(f"<li>{html.escape(line)}</li>" for line in lines) + "</ul>"
                   for method, lines in result.verdicts.items())


def html_report(result, title: str, data_label: str, benchmark: str | None, misses: pd.DataFrame,
                pages: dict[str, str], questions: dict[str, str], k: int = 5, record: dict | None = None,
                matrix: pd.DataFrame | None = None) -> str:
    """The run report as one self-contained page (see the module docstring)."""
    cfg = result.config
    methods = list(result.summary["method"])
    tie_aware = ["RR_tieavg"] if "RR_tieavg" in result.rankings else []
    figs = [mrr_chart(with_intervals(result.rankings, ["RR", *tie_aware])), recall_chart(result.per_type, methods),
            rank_chart(result.rankings, k)]
    charts = [f.to_html(full_html=False, include_plotlyjs=(i == 0), config={"displaylogo": False})  # no link out
              for i, f in enumerate(figs)]
    paper = ""
    if benchmark:
        comparison = comparison_table(result.summary, benchmark, cfg["extractor"]).round(3)
        paper = (f"<h2>Beside the paper's Table 1 ({html.escape(benchmark)}, MRR)</h2>"
                 "<p>The paper's rows used LLM extraction and its own question count; ours used the extractor and "
                 "the n named in our rows (MRR_tieavg: ties in random order, which the paper does not report).</p>"
                 + comparison.rename_axis(columns=None).reset_index().pipe(html_table, "num"))
    return shell_page(title, f"<h1>{html.escape(title)}</h1>"
            f"<p class='meta'>Data <code>{html.escape(data_label)}</code> · {cfg['n_cases']} questions, "
            f"{cfg['n_abstention']} abstention excluded · extractor <code>{html.escape(str(cfg['extractor']))}</code>"
            f" · depth {cfg['depth']}</p>{_provenance_html(result, record)}"
            f"{_data_warnings_html(result)}"
            f"<h2>Per method</h2><p class='meta'>{html.escape(NAMES_NOTE)}</p>{few_questions(result.summary)}"
            f"{_summary_html(result)}<p class='meta'>{html.escape(significance_note(result))}</p>{charts[0]}"
            f"{_tie_notes_html(result)}{_verdicts_html(result)}{paper}"
            f"<h2>Questions missed by some method (top {k})</h2>{_misses_html(misses, pages, questions, k)}"
            f"{charts[2]}<h2>Per question type (Success@k, %, with its 95% bootstrap interval)</h2>"
            f"{html_table(per_type_table(result.rankings, methods), 'num nowrap')}{charts[1]}"
            f"{_matrix_html(matrix, methods)}{_questions_html(result.rankings, methods, questions, pages)}",
        static("report.css"), static("sortable.js"))

