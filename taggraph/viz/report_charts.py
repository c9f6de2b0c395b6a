"""The run report's plotly charts: MRR per method with its interval (`mrr_chart`), Success@k per question type
(`recall_chart`) and the first gold session's rank, binned (`rank_chart`)."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
import plotly.express as px
import plotly.graph_objects as go

from taggraph.evaluation.placement import first_gold_ranks
from taggraph.viz.report_tables import SUCCESS_COLUMNS


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


def recall_chart(per_type: pd.DataFrame, methods: Sequence[str]) -> go.Figure:
    """Success@k bars per question type, methods in `methods`' order (the tables' order)."""
    long = per_type.melt(id_vars=["question_type", "method"], value_vars=SUCCESS_COLUMNS,
                         var_name="k", value_name="Success")
    rows = -(-long["question_type"].nunique() // 3)
    fig = px.bar(long, x="method", y="Success", color="k", barmode="group", facet_col="question_type",
                 facet_col_wrap=3, facet_row_spacing=0.3 / max(rows, 1), category_orders={"method": list(methods)},
                 height=200 + 330 * rows, title="Success@k (the paper's per-type recall@k) per question type")
    # upright method names stay under their own panel (slanted ones ran into the next); no x title under each
    return fig.update_xaxes(tickangle=-90, title=None)


RANK_BINS = [(1, 1), (2, 2), (3, 3), (4, 4), (5, 5), (6, 10), (11, 20), (21, 40)]  # our choice: finer near the top


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
