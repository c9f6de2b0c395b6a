"""Run reports: report.md (tables) and report.html (tables + offline plotly charts).

All text from data (method names, question types) is HTML-escaped; plotly.js
is inlined once, so the page needs no network.
"""

from __future__ import annotations

import html

import pandas as pd
import plotly.express as px
import plotly.graph_objects as go

from taggraph.evaluation.paper import paper_table1


def mrr_chart(summary: pd.DataFrame) -> go.Figure:
    fig = px.bar(summary, x="method", y="MRR", text_auto=".3f", title="MRR per method")
    return fig.update_layout(yaxis_range=[0, 1])


SUCCESS_COLUMNS = ["Success@1", "Success@3", "Success@5"]
NAMES_NOTE = ("Success@k is hit-at-k (a gold session among the first k; LongMemEval's recall_any@k), which is "
              "what the paper's per-type tables call recall@k. R@k is the share of gold sessions in the first k; "
              "recall_all@k and ndcg_any@k are LongMemEval's official metrics, nDCG@k is ir-measures'.")


def recall_chart(per_type: pd.DataFrame) -> go.Figure:
    long = per_type.melt(id_vars=["question_type", "method"], value_vars=SUCCESS_COLUMNS,
                         var_name="k", value_name="Success")
    return px.bar(long, x="method", y="Success", color="k", barmode="group", facet_col="question_type",
                  facet_col_wrap=3, title="Success@k (the paper's per-type recall@k) per question type", height=650)


def rank_chart(rankings: pd.DataFrame) -> go.Figure:
    judged = rankings[rankings["RR"].notna()].copy()
    judged["first gold rank"] = judged["RR"].map(lambda rr: str(round(1 / rr)) if rr > 0 else "miss")
    order = [str(i) for i in range(1, 41)] + ["miss"]
    return px.histogram(judged, x="first gold rank", color="method", barmode="group",
                        category_orders={"first gold rank": order}, title="Rank of the first gold session")


def comparison_table(summary: pd.DataFrame, benchmark: str, label: str) -> pd.DataFrame:
    """Ours beside the paper's Table 1 rows for `benchmark` (methods as columns)."""
    paper = paper_table1(benchmark)
    table = paper.pivot_table(index="extraction", columns="method", values="MRR", sort=False)
    table.index = [f"paper: {i}" for i in table.index]
    ours = summary.set_index("method")["MRR"].rename(f"ours: {label}").to_frame().T
    return pd.concat([ours, table]).reindex(columns=list(summary["method"]))


def per_type_table(per_type: pd.DataFrame, methods: list[str]) -> pd.DataFrame:
    """Rows (question type, n, k), one column per method, Success@k in percent."""
    long = per_type.melt(id_vars=["question_type", "method", "n"], value_vars=SUCCESS_COLUMNS,
                         var_name="k", value_name="recall")
    long["recall"] = (100 * long["recall"]).round(1)
    table = long.pivot_table(index=["question_type", "n", "k"], columns="method", values="recall", sort=False)
    return table.reindex(columns=methods).reset_index().rename_axis(columns=None)


def markdown_report(result, title: str, data_label: str, benchmark: str | None) -> str:
    cfg = result.config
    embedders = sorted({c["embedder"] for c in cfg["methods"].values() if "embedder" in c})
    dense = (f" Dense embedder: {', '.join(f'`{e}`' for e in embedders)} (the paper's OpenClaw used "
             f"`nomic-embed-text`)." if embedders else "")
    parts = [f"# {title}", "",
             f"Data: `{data_label}` - {cfg['n_cases']} questions, of which {cfg['n_abstention']} abstention "
             f"(`_abs`, no gold session) are excluded from every metric. Extractor: `{cfg['extractor']}`."
             f"{dense} Depth {cfg['depth']}.", "",
             f"## MRR and the other metrics (session level, de-duplicated through depth {cfg['depth']})", "",
             NAMES_NOTE, "", result.summary.round(3).to_markdown(index=False), ""]
    if benchmark:
        parts += [f"## Beside the paper's Table 1 ({benchmark}, MRR; the paper's rows used LLM extraction)", "",
                  comparison_table(result.summary, benchmark, cfg["extractor"]).round(3).to_markdown(), ""]
    parts += ["## Success@k per question type (the paper's appendix G recall@k; %)", "",
              per_type_table(result.per_type, list(result.summary["method"])).to_markdown(index=False), ""]
    return "\n".join(parts)


def report_pages(result, title: str, data_label: str, benchmark: str | None) -> dict[str, str]:
    """The run folder's report pages: {"report.md": ..., "report.html": ...}."""
    md = markdown_report(result, title, data_label, benchmark)
    return {"report.md": md, "report.html": html_report(result, title, md)}


def html_report(result, title: str, markdown_text: str) -> str:
    figs = [mrr_chart(result.summary), recall_chart(result.per_type), rank_chart(result.rankings)]
    charts = [f.to_html(full_html=False, include_plotlyjs=(i == 0)) for i, f in enumerate(figs)]
    tables = [result.summary.round(3).to_html(index=False, escape=True),
              result.per_type.round(3).to_html(index=False, escape=True)]
    return ("<!doctype html><html><head><meta charset='utf-8'>"
            f"<title>{html.escape(title)}</title></head><body>"
            f"<h1>{html.escape(title)}</h1>{tables[0]}{''.join(charts)}<h2>Per question type</h2>{tables[1]}"
            f"<h2>Report</h2><pre>{html.escape(markdown_text)}</pre></body></html>")
