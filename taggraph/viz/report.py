"""Run reports: report.md (tables) and report.html (styled tables, offline plotly charts, misses).

report.html shows our numbers (beside the paper's Table 1 when a `benchmark` is named,
as `taggraph.runs.folders.benchmark_name` decides from the cases), Success@k per question type,
the distribution of first-gold ranks, and a table of the questions some method
missed (first gold rank per method; a top-k place owed to tie order alone counts as a miss, marked
"tie"), and the tie-aware columns' definitions; for the first N misses it links an explain
page and a graph page written into the run folder under ``misses/``. All text
from data (method names, question types, questions) is HTML-escaped, in report.md's tables and data
warnings too (``|`` as well in its tables: `markdown_table`); plotly.js is inlined once, so the pages need
no network.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd
import plotly.express as px
import plotly.graph_objects as go

from taggraph.evaluation.paper import paper_table1
from taggraph.evaluation.metrics import judged_rows, score_rankings
from taggraph.evaluation.significance import ALPHA, PAIRED_N, RESAMPLES
from taggraph.evaluation.tables import significance_matrix, summary_latex, with_intervals
from taggraph.viz.provenance_view import provenance_lines, provenance_table


def mrr_chart(intervals: pd.DataFrame) -> go.Figure:
    """MRR per method with its 95% bootstrap interval, beside its tie-aware twin MRR_tieavg when the run has it
    (`tables.with_intervals`); the axis spans the intervals, not 0-1, so close methods stay apart."""
    fig = go.Figure()
    shown = [c for c in ("MRR", "MRR_tieavg") if c in intervals]
    for column, colour in zip(shown, ("#4c78a8", "#6f42c1")):
        mean = intervals[column]
        fig.add_trace(go.Scatter(
            x=intervals["method"], y=mean, mode="markers+text", name=column, offsetgroup=column,
            text=mean.map("{:.3f}".format), textposition="middle right", marker={"color": colour, "size": 10},
            error_y={"type": "data", "array": intervals[f"{column}_ci_high"] - mean,
                     "arrayminus": mean - intervals[f"{column}_ci_low"]}))
    title = "MRR per method" + (" and MRR_tieavg (ties in random order)" if len(shown) > 1 else "")
    fig.update_layout(title=f"{title}, 95% bootstrap interval", yaxis_title="MRR", title_automargin=True,
                      scattermode="group", xaxis={"type": "category"})
    drawn = intervals[[f"{c}{end}" for c in shown for end in ("", "_ci_low", "_ci_high")]].stack()  # NaN left out
    if len(drawn):
        pad = 0.05 * max(drawn.max() - drawn.min(), 0.1)
        fig.update_layout(yaxis_range=[max(drawn.min() - pad, 0), min(drawn.max() + pad, 1)])
    return fig


SUCCESS_COLUMNS = ["Success@1", "Success@3", "Success@5"]
NAMES_NOTE = ("Success@k is hit-at-k (a gold session among the first k; LongMemEval's recall_any@k), which is "
              "what the paper's per-type tables call recall@k. R@k is the share of gold sessions in the first k; "
              "recall_all@k and ndcg_any@k are LongMemEval's official metrics, nDCG@k is ir-measures'.")
TIE_NOTES = [  # one line per tie-aware column (taggraph.evaluation.metrics.tie_averaged)
    "MRR_tieavg: the expected MRR when sessions with equal scores are put in random order (exact, not sampled); "
    "the paper's MRR orders them by note order, earlier sessions first.",
    "Success@k_tieavg: the expected Success@k under that random order, i.e. the chance a gold session is in the top k.",
    "MRR_from_tie_order: MRR - MRR_tieavg, the part of MRR that note order gave (negative: note order cost MRR).",
]


def recall_chart(per_type: pd.DataFrame, methods: Sequence[str]) -> go.Figure:
    """Success@k bars per question type, methods in `methods`' order (the tables' order)."""
    long = per_type.melt(id_vars=["question_type", "method"], value_vars=SUCCESS_COLUMNS,
                         var_name="k", value_name="Success")
    return px.bar(long, x="method", y="Success", color="k", barmode="group", facet_col="question_type",
                  facet_col_wrap=3, category_orders={"method": list(methods)}, height=650,
                  title="Success@k (the paper's per-type recall@k) per question type")


RANK_BINS = [(1, 1), (2, 2), (3, 3), (4, 4), (5, 5), (6, 10), (11, 20), (21, 40)]  # our choice: finer near the top


def first_gold_ranks(rankings: pd.DataFrame) -> pd.DataFrame:
    """Judged rows with the rank of the first gold session (``first_gold``, None when not retrieved)."""
    judged = judged_rows(rankings).copy()
    judged["first_gold"] = judged["RR"].map(lambda rr: round(1 / rr) if rr > 0 else None).astype("Int64")
    return judged


def rank_bin(rank) -> str:
    """The histogram bin of a first-gold rank: '1'...'5', '6-10', '11-20', '21-40', '>40' or 'miss'."""
    if pd.isna(rank):
        return "miss"
    for lo, hi in RANK_BINS:
        if lo <= rank <= hi:
            return str(lo) if lo == hi else f"{lo}-{hi}"
    return f">{RANK_BINS[-1][1]}"


def rank_chart(rankings: pd.DataFrame, k: int = 5) -> go.Figure:
    """Bars of first-gold-rank bins per method: counted here, so each bar sits on its own label. A first
    gold in the top k by tie order alone (``Success@k_tieavg`` < 1, as `misses_table` counts it) has a bin
    of its own, 'top k by tie order', beside the ranks it was not earned by."""
    judged = first_gold_ranks(rankings)
    judged["bin"] = judged["first_gold"].map(rank_bin)
    tie_bin = f"top {k} by tie order"
    if f"Success@{k}_tieavg" in judged:
        judged.loc[(judged["first_gold"] <= k).fillna(False) & (judged[f"Success@{k}_tieavg"] < 1), "bin"] = tie_bin
    order = [rank_bin(lo) for lo, _ in RANK_BINS if lo <= k] + [tie_bin] + [rank_bin(lo) for lo, _ in RANK_BINS
                                                                            if lo > k] + [f">{RANK_BINS[-1][1]}", "miss"]
    counts = (judged.groupby(["method", "bin"], sort=False).size().rename("questions").reset_index())
    counts = counts[counts["bin"].isin(order)]
    fig = px.bar(counts, x="bin", y="questions", color="method", barmode="group",
                 category_orders={"bin": order, "method": list(dict.fromkeys(judged["method"]))},
                 title="Rank of the first gold session", labels={"bin": "first gold rank"})
    return fig.update_xaxes(type="category")


def comparison_table(summary: pd.DataFrame, benchmark: str, label: str) -> pd.DataFrame:
    """Ours (MRR, and MRR_tieavg when the run has it, with our n) beside the paper's Table 1 MRR rows for
    `benchmark`; methods as columns, the rows named in the index 'MRR of'."""
    paper = paper_table1(benchmark)
    table = paper.pivot_table(index="extraction", columns="method", values="MRR", sort=False)
    table.index = [f"paper: {i}" for i in table.index]
    ns = sorted(set(summary["n"].astype(int)))
    n = f"n = {ns[0]}" if len(ns) == 1 else f"n = {ns[0]}–{ns[-1]}"
    ours = summary.set_index("method")[[c for c in ("MRR", "MRR_tieavg") if c in summary]].T
    ours.index = [f"ours: {label}, {c} ({n})" for c in ours.index]
    return pd.concat([ours, table]).reindex(columns=list(summary["method"])).rename_axis("MRR of")


def _interval(low: float, high: float, decimals: int = 3) -> str:
    return f"{low:.{decimals}f}–{high:.{decimals}f}" if pd.notna(low) else "–"


def _interval_cell(row: dict, column: str, scale: float = 1, decimals: int = 3) -> str:
    """A mean and its 95% interval as one cell, '83.3 (58–100)' (the interval to `decimals` - 1 places; none where
    every question scored alike)."""
    mean, low, high = (scale * row[c] for c in (column, f"{column}_ci_low", f"{column}_ci_high"))
    spread = pd.notna(low) and low < high
    return f"{mean:.{decimals}f}" + (f" ({_interval(low, high, max(decimals - 1, 0))})" if spread else "")


def per_type_table(rankings: pd.DataFrame, methods: list[str]) -> pd.DataFrame:
    """Rows (question type, n, k), one column per method: Success@k in percent with its 95% bootstrap interval,
    '83.3 (58–100)'."""
    intervals = with_intervals(rankings, SUCCESS_COLUMNS, by=["question_type"])
    records = intervals.to_dict("records")
    long = pd.concat([intervals.assign(k=k, cell=[_interval_cell(r, k, 100, 1) for r in records])
                      for k in SUCCESS_COLUMNS]).sort_values(["question_type", "k"], kind="stable")
    table = long.pivot_table(index=["question_type", "n", "k"], columns="method", values="cell", aggfunc="first",
                             sort=False)
    return table.reindex(columns=methods).reset_index().rename_axis(columns=None)


def summary_view(result) -> pd.DataFrame:
    """The summary as the terminal and the reports show it: rounded to 3 decimals, with the comparison to
    the baseline (ΔMRR, p, p_holm, p_bh, sig) right after MRR, and the baseline's own cells there (NaN in
    summary.csv: it is not compared with itself) as '— (baseline)', '—', ...; MRR_tieavg (when the run has it)
    right after MRR, and MRR's 95% bootstrap interval (`MRR_CI`) beside MRR. The report page shows the
    `KEY_COLUMNS` first and the whole table one click away."""
    table = result.summary.round(3)
    intervals = with_intervals(result.rankings).set_index("method")
    table.insert(list(table.columns).index("MRR") + 1, MRR_CI, table["method"].map(
        lambda m: _interval(intervals.at[m, "MRR_ci_low"], intervals.at[m, "MRR_ci_high"]) if m in intervals.index
        else "–"))
    baseline = result.config.get("baseline")
    if not baseline:
        first = ["method", "n", "MRR", MRR_CI, "MRR_tieavg"]
        return table[[c for c in first if c in table] + [c for c in table if c not in first]]
    numbers = [c for c in (f"ΔMRR vs {baseline}", "p", "p_holm", "p_bh") if c in table]
    compared = [*numbers, "sig", *[c for c in (PAIRED_N,) if c in table]]
    first = ["method", "n", "MRR", MRR_CI, "MRR_tieavg", *compared]
    table = table[[c for c in first if c in table] + [c for c in table if c not in first]]
    table[numbers] = table[numbers].map(lambda v: "—" if pd.isna(v) else f"{v:.3f}")
    if PAIRED_N in table:  # the questions the difference is paired over, where a method left some out
        table[PAIRED_N] = table[PAIRED_N].map(lambda v: "—" if pd.isna(v) else f"{v:.0f}")
    table.loc[table["method"] == baseline, compared] = ["— (baseline)", *["—"] * (len(compared) - 1)]
    return table


MRR_CI = "MRR 95% CI"
KEY_COLUMNS = ["method", "n", "MRR", MRR_CI, "MRR_tieavg", "p", "p_holm", "sig", "Success@5",
               "Success@5_tieavg"]  # and ΔMRR


def significance_note(result) -> str:
    """What p, p_holm, p_bh and the star of the summary mean; empty without a baseline."""
    baseline, table = result.config.get("baseline"), result.extra.get("significance")
    if not baseline or table is None:
        return ""
    tested = int(table["p_value"].notna().sum())
    return (f"p: the paired randomization test of each method's reciprocal ranks against {baseline}'s (two-sided, "
            f"{RESAMPLES:,} resamples), not adjusted; p_holm and p_bh adjust it for the {tested} method(s) compared "
            f"with {baseline} (Holm: family-wise error; Benjamini-Hochberg: false discovery rate). "
            f"sig * : p_holm < {ALPHA}.")


def _summary_html(result) -> str:
    """The key columns (`KEY_COLUMNS`, the baseline comparison) in view, every metric one click away."""
    view = summary_view(result)
    key = view[[c for c in view if c in KEY_COLUMNS or c.startswith("ΔMRR")]]
    return (_table(key, "num summary key")
            + f"<details class='all'><summary>All {len(view.columns) - 1} metrics per method (R@k, nDCG@k, "
              f"LongMemEval's recall_all@k and ndcg_any@k, every tie-aware column)</summary>"
            + _table(view, "num summary") + "</details>")


def _provenance_html(result, record: dict | None) -> str:
    """The provenance on the first screen (commit, date, command, data and sha256), the machine, resources and
    each method's parameters, embedder and times one click away."""
    lines = provenance_lines(result, record)
    first = "".join(f"<li>{html.escape(line)}</li>" for line in lines[:4])
    rest = "".join(f"<li>{html.escape(line)}</li>" for line in lines[4:])
    return (f"<ul class='meta provenance'>{first}</ul><details class='all'><summary>Machine, resources and each "
            f"method's parameters, embedder, index and query times</summary><ul class='meta'>{rest}</ul>"
            f"{_table(provenance_table(result), 'num')}</details>")


def _provenance_md(result, record: dict | None) -> list[str]:
    return ["## Provenance", "", *[f"- {_markdown_text(line)}" for line in provenance_lines(result, record)], "",
            markdown_table(provenance_table(result), index=False), ""]


def _markdown_text(value):
    """A text value with the characters Markdown or HTML would read as markup (``& < > |``) escaped."""
    if not isinstance(value, str):
        return value
    return value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("|", "\\|")


def markdown_table(table: pd.DataFrame, index: bool = True, decimals: int = 3) -> str:
    """`table` as a Markdown table whose text cells, column names and index labels (question types and method
    names from data) render as the text they are (`_markdown_text`); every number column with `decimals` places
    (0 as 0.000, not 0)."""
    shown = table.rename(columns=_markdown_text, index=_markdown_text)
    for column in shown.select_dtypes(include=["object", "string"]).columns:
        shown[column] = shown[column].map(_markdown_text)
    return shown.to_markdown(index=index, floatfmt=f".{decimals}f")


def markdown_report(result, title: str, data_label: str, benchmark: str | None, record: dict | None = None) -> str:
    cfg = result.config
    readers: dict[str, list[str]] = {}  # embedder -> the methods that read with it
    for name, c in cfg["methods"].items():
        if c.get("embedder") is not None:
            readers.setdefault(str(c["embedder"]), []).append(name)
    shown = [f"`{e}`" + (f" ({', '.join(readers[e])})" if len(readers) > 1 else "") for e in sorted(readers)]
    dense = (f" Dense embedder: {', '.join(shown)} (the paper's OpenClaw used `nomic-embed-text`)." if readers else "")
    parts = [f"# {title}", "",
             f"Data: `{data_label}` - {cfg['n_cases']} questions, of which {cfg['n_abstention']} abstention "
             f"(the answer is not in the history, so the sessions they name are not judged; LongMemEval marks them "
             f"`_abs`) are excluded "
             f"from every metric. Extractor: `{cfg['extractor']}`."
             f"{dense} Depth {cfg['depth']}.", "", *data_warnings_md(result),
             f"## MRR and the other metrics (session level, de-duplicated through depth {cfg['depth']})", "",
             NAMES_NOTE, "", markdown_table(summary_view(result), index=False), "",
             *([_markdown_text(significance_note(result)), ""] if significance_note(result) else []),
             *_tie_notes_md(result)]
    if benchmark:
        parts += [f"## Beside the paper's Table 1 ({benchmark}, MRR; the paper's rows used LLM extraction)", "",
                  markdown_table(comparison_table(result.summary, benchmark, cfg["extractor"]).round(3)), ""]
    for method, lines in result.verdicts.items():
        parts += [f"## Does each component of {method} earn its keep?", "", *[f"- {line}" for line in lines], ""]
    parts += ["## Success@k per question type (the paper's appendix G recall@k; %)", "",
              markdown_table(per_type_table(result.rankings, list(result.summary["method"])), index=False),
              "", *_provenance_md(result, record)]
    return "\n".join(parts)


def _has_ties(result) -> bool:
    return "MRR_tieavg" in result.summary


def _tie_notes_md(result) -> list[str]:
    """The definitions of the tie-aware columns and MRR_from_tie_order per question type, when the run has them."""
    if not _has_ties(result):
        return []
    return [*[f"- {line}" for line in TIE_NOTES], "", "MRR_from_tie_order per question type:", "",
            markdown_table(tie_share_table(result.per_type, list(result.summary["method"])), index=False), ""]


def tie_share_table(per_type: pd.DataFrame, methods: list[str]) -> pd.DataFrame:
    """MRR_from_tie_order per question type (rows, with n) and method (columns), to 3 decimals."""
    table = per_type.pivot_table(index=["question_type", "n"], columns="method", values="MRR_from_tie_order", sort=False)
    return table.reindex(columns=methods).round(3).reset_index().rename_axis(columns=None)


def data_warnings_md(result) -> list[str]:
    """A "Data warnings" section (one item per `DataWarning` of the result), or nothing without any."""
    found = getattr(result, "warnings", [])
    return ["## Data warnings", "", *[f"- {_markdown_text(w.message)}" for w in found], ""] if found else []


def _data_warnings_html(result) -> str:
    found = getattr(result, "warnings", [])
    items = "".join(f"<li>{html.escape(w.message)}</li>" for w in found)
    return f"<h2>Data warnings</h2><ul class='caveat'>{items}</ul>" if found else ""


def misses_table(rankings: pd.DataFrame, k: int = 5) -> pd.DataFrame:
    """One row per question some method did not rank in its top k: question_id, question_type and
    the first gold rank under each method (<NA>: not retrieved), in question order.

    A placement in the top k by tie order alone counts as a miss: the rank is there, and
    ``attrs["tie_only"]`` maps (question_id, method) to Success@k_tieavg (< 1: some order of the tied
    sessions leaves every gold session out of the top k; the pages' rule, `explain.tie_order_only`, on
    the run's column), as it does a place outside the top k by tie order alone (> 0: some order brings one
    in). Needs the run's ``Success@k_tieavg`` column."""
    judged = first_gold_ranks(rankings)
    rows = judged.drop_duplicates(["question_id", "method"]).set_index(["question_id", "method"])
    table = (rows["first_gold"].unstack("method")
             .reindex(index=list(dict.fromkeys(judged["question_id"])), columns=list(dict.fromkeys(judged["method"]))))
    tie_col = f"Success@{k}_tieavg"
    tie_only = {}
    if tie_col in rows:
        inside = (rows["first_gold"] <= k).fillna(False) & (rows[tie_col] < 1)
        outside = (rows["first_gold"] > k).fillna(False) & (rows[tie_col] > 0)  # another order brings it in
        tie_only = {key: float(v) for key, v in rows[tie_col][inside | outside].items()}
    tied = pd.Series(False, index=table.index)
    for qid, _ in tie_only:
        tied[qid] = True
    missed = table.isna().any(axis=1) | (table > k).any(axis=1) | tied
    table.insert(0, "question_type", rows.reset_index().drop_duplicates("question_id")
                 .set_index("question_id")["question_type"])
    out = table[missed].rename_axis(index="question_id", columns=None).reset_index()
    out.attrs["tie_only"] = tie_only
    return out


def _page_name(question_id: str, kind: str) -> str:
    return f"misses/{re.sub(r'[^A-Za-z0-9_.-]', '_', question_id)}.{kind}.html"


@dataclass(frozen=True)
class MissPages:
    """The run's page recorder (`run_bench(..., pages=MissPages(n))`): called by the runner for each memory
    while it exists, it draws the explain and graph pages ({run-folder file name: html}) of the memory's first
    `n` missed questions with the run's own retrievers, explaining each question's first gold note. The
    report then only picks the pages of the run's first `n` misses: no store is built again."""
    n: int = 10
    k: int = 5

    def __call__(self, run, cases: Sequence, rows: list[dict], depth: int) -> dict[str, str]:
        from taggraph.viz.explain import explain_html, gold_notes
        from taggraph.viz.graph.page import graph_page

        if not self.n or not rows:
            return {}
        by_id = {c.case_id: c for c in cases}
        misses = misses_table(score_rankings(pd.DataFrame(rows)), self.k)
        ranked = {(r["question_id"], r["method"]): r["ranked_note_ids"] for r in rows}
        pages: dict[str, str] = {}
        explained = 0
        for qid in misses["question_id"]:
            case, store = by_id[qid], run.store
            gold = gold_notes(case, store)
            if not gold:  # a miss by construction (no gold notes): nothing to explain, and it takes no page's place
                continue
            if explained == self.n:
                break
            explained += 1
            names = {kind: _page_name(qid, kind).split("/", 1)[1] for kind in ("explain", "graph")}
            try:  # the graph page first: the explain page links only the notes it draws
                graph = graph_page(store, question=case.question, gold_note_ids=gold, neighbourhood_of=case.question,
                                   top_k=self.k, retrievers=run.retrievers, depth=depth, asked_on=case.asked_on,
                                   results_by_method={m: ranked[qid, m] for m in run.methods}, question_id=qid,
                                   links={"explain page": names["explain"], "run report": "../report.html"})
                pages[_page_name(qid, "graph")], drawn = graph.html, graph.notes
            except Exception as exc:  # a page that cannot be drawn says so; it never costs the run
                pages[_page_name(qid, "graph")], drawn = failed_page(f"graph page of {qid}", exc), frozenset()
            try:
                pages[_page_name(qid, "explain")] = explain_html(
                    store, case.question, gold[0], run.retrievers, k=self.k, depth=depth, answer=case.answer,
                    gold=gold, asked_on=case.asked_on, question_id=qid, graph_notes=drawn,
                    links={"graph page": names["graph"], "run report": "../report.html"})
            except Exception as exc:
                pages[_page_name(qid, "explain")] = failed_page(f"explain page of {qid}", exc)
        return pages


def failed_page(what: str, exc: Exception) -> str:
    """A page in place of `what`, which could not be drawn: the error, in one line."""
    message = html.escape(f"{type(exc).__name__}: {' '.join(str(exc).split())}"[:500])
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(what)}: not drawn</title></head>"
            f"<body><h1>The {html.escape(what)} could not be drawn</h1><p><code>{message}</code></p>"
            f"<p><a href='../report.html'>run report</a></p></body></html>")


def miss_pages(result, misses: pd.DataFrame, n: int) -> dict[str, str]:
    """The recorded pages (`BenchResult.pages`, by `MissPages`) of the run's first `n` missed questions that
    have them (a question without known gold notes has none)."""
    chosen = [qid for qid in misses["question_id"] if _page_name(qid, "explain") in result.pages][:n]
    return {name: result.pages[name] for qid in chosen for name in (_page_name(qid, "explain"), _page_name(qid, "graph"))}


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


def _table(df: pd.DataFrame, cls: str = "", decimals: int | None = None) -> str:
    """`df` as an HTML table (text escaped); every float with `decimals` places when given (0 as 0.000)."""
    formats = {"float_format": f"{{:.{decimals}f}}".format} if decimals is not None else {}
    table = df.to_html(index=False, escape=True, na_rep="–", classes=cls or None, border=0, **formats)
    return f"<div class='wide'>{table}</div>"


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


def _questions_html(rankings: pd.DataFrame, methods: list[str]) -> str:
    """Every judged question's RR under each method, a table sorted by any column with a click on its header."""
    judged = judged_rows(rankings)
    table = (judged.pivot_table(index=["question_id", "question_type"], columns="method", values="RR", sort=False)
             .reindex(columns=methods).reset_index().rename_axis(columns=None))
    return (f"<h2>Per question (RR)</h2><details class='all'><summary>{len(table)} judged questions, the reciprocal "
            f"rank of the first gold session under each method; click a header to sort</summary>"
            f"{_table(table, 'num sortable', decimals=3)}</details>")


# Sorts a table.sortable by the column of a clicked header: cells that are numbers as numbers, others as text; a
# second click reverses.
SORTABLE_JS = """
document.querySelectorAll("table.sortable").forEach(function (table) {
  var body = table.tBodies[0];
  table.querySelectorAll("thead th").forEach(function (th, col) {
    th.style.cursor = "pointer";
    th.addEventListener("click", function () {
      var down = th.dataset.sorted !== "down";
      table.querySelectorAll("thead th").forEach(function (h) { delete h.dataset.sorted; });
      th.dataset.sorted = down ? "down" : "up";
      var key = function (row) { var t = row.cells[col].textContent.trim(), n = t === "" ? NaN : Number(t);
                                 return isNaN(n) ? t : n; };
      Array.from(body.rows).sort(function (a, b) {
        var x = key(a), y = key(b), c = (typeof x === typeof y) ? (x < y ? -1 : x > y ? 1 : 0)
                                                               : (typeof x === "number" ? -1 : 1);
        return down ? -c : c;
      }).forEach(function (row) { body.appendChild(row); });
    });
  });
});
"""


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
        links = " · ".join(f"<a href='{html.escape(_page_name(qid, kind))}'>{kind}</a>"
                           for kind in ("explain", "graph") if _page_name(qid, kind) in pages)
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
            f"{sum(_page_name(q, 'explain') in pages for q in misses['question_id'])}.</p>"
            f"<table class='misses'><tr>{head}</tr>{''.join(rows)}</table>")


def _miss_cell(rank, tie_chance: float | None, k: int) -> str:
    """One rank cell of the misses table: bad (outside the top k, or not retrieved), tie or ok."""
    if tie_chance is not None:
        return f"<td class='tie num'>{int(rank)} (tie, {tie_chance:.0%})</td>"
    cls = "bad" if pd.isna(rank) or rank > k else "ok"
    return f"<td class='{cls} num'>{'–' if pd.isna(rank) else int(rank)}</td>"


def _tie_notes_html(result) -> str:
    if not _has_ties(result):
        return ""
    items = "".join(f"<li>{html.escape(line)}</li>" for line in TIE_NOTES)
    return (f"<ul class='meta'>{items}</ul><p class='meta'>MRR_from_tie_order per question type:</p>"
            + _table(tie_share_table(result.per_type, list(result.summary["method"])), "num", decimals=3))


def _verdicts_html(result) -> str:
    return "".join(f"<h2>Does each component of {html.escape(method)} earn its keep?</h2><ul>"
                   + "".join(f"<li>{html.escape(line)}</li>" for line in lines) + "</ul>"
                   for method, lines in result.verdicts.items())


def _few_questions(summary: pd.DataFrame, below: int = 30) -> str:
    """A caveat when the means rest on fewer than `below` questions (our threshold)."""
    n = int(summary["n"].min()) if len(summary) else 0
    if n >= below:
        return ""
    return (f"<p class='caveat'>Only n = {n} judged questions: one question moves a method's MRR by up to "
            f"{1 / max(n, 1):.2f}, so differences between methods here are anecdotes, not findings.</p>")


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
                 + comparison.rename_axis(columns=None).reset_index().pipe(_table, "num"))
    return ("<!doctype html><html><head><meta charset='utf-8'>"
            f"<title>{html.escape(title)}</title><style>{_CSS}</style></head><body>"
            f"<h1>{html.escape(title)}</h1>"
            f"<p class='meta'>Data <code>{html.escape(data_label)}</code> · {cfg['n_cases']} questions, "
            f"{cfg['n_abstention']} abstention excluded · extractor <code>{html.escape(str(cfg['extractor']))}</code>"
            f" · depth {cfg['depth']}</p>{_provenance_html(result, record)}"
            f"{_data_warnings_html(result)}"
            f"<h2>Per method</h2><p class='meta'>{html.escape(NAMES_NOTE)}</p>{_few_questions(result.summary)}"
            f"{_summary_html(result)}<p class='meta'>{html.escape(significance_note(result))}</p>{charts[0]}"
            f"{_tie_notes_html(result)}{_verdicts_html(result)}{paper}"
            f"<h2>Questions missed by some method (top {k})</h2>{_misses_html(misses, pages, questions, k)}"
            f"{charts[2]}<h2>Per question type (Success@k, %, with its 95% bootstrap interval)</h2>"
            f"{_table(per_type_table(result.rankings, methods), 'num nowrap')}{charts[1]}"
            f"{_matrix_html(matrix, methods)}{_questions_html(result.rankings, methods)}"
            f"<script>{SORTABLE_JS}</script></body></html>")


_CSS = """
html { overflow-y: scroll; }  /* the scroll bar from the first frame: plotly sizes a chart to the width it finds */
body { font: 14px system-ui, sans-serif; margin: 1.5em auto; max-width: 90em; padding: 0 1em; }
table { border-collapse: collapse; margin: .5em 0 1em; }
th, td { border-bottom: 1px solid #ddd; padding: 4px 10px; text-align: left; vertical-align: top; }
th { background: #f3f3f3; } tr:hover td { background: #fafafa; }
table.num td { font-variant-numeric: tabular-nums; } td.num { text-align: right; }
td.bad { color: #c0392b; font-weight: bold; } td.ok { color: #1a7f37; }
td.tie, span.tie { color: #6f42c1; font-weight: bold; }
td.better { color: #1a7f37; } td.worse { color: #c0392b; } table.nowrap td { white-space: nowrap; }
p.meta, ul.meta { color: #444; max-width: 60em; } div.wide { overflow-x: auto; }
table.summary { font-size: 12px; } table.summary th, table.summary td { padding: 3px 6px; }
details.all > summary { cursor: pointer; color: #345; margin-bottom: .3em; }
p.caveat { background: #fff6e0; padding: .4em .6em; color: #8a5a00; }
ul.provenance { font-size: 12px; margin: .2em 0; padding-left: 1.2em; word-break: break-all; }
ul.caveat { background: #fff6e0; padding: .4em .6em .4em 2em; color: #8a5a00; }
"""
