"""The plotly charts the notebooks show: score distributions, gold ranks, misses, answers, intervals.

Each function takes a table or results the library already produces and returns a
`plotly.graph_objects.Figure`; nothing here computes a metric.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd
import plotly.express as px
import plotly.graph_objects as go

from taggraph.evaluation.placement import tie_order_only
from taggraph.methods.base import DEFAULT_DEPTH, Result


def score_chart(results_by_method: Mapping[str, Sequence[Result]], gold: Sequence[str] = ()) -> go.Figure:
    """Scores of each method's retrieved notes, one panel per method (scales differ: BM25 sums idf,
    PPR mass sums to 1), gold notes marked."""
    gold = set(gold)
    rows = [{"method": m, "score": r.score, "rank": r.rank, "note": r.note_id,
             "note kind": "gold" if r.note_id in gold else "other"}
            for m, res in results_by_method.items() for r in res]
    fig = px.strip(pd.DataFrame(rows, columns=["method", "score", "rank", "note", "note kind"]), x="method", y="score",
                   color="note kind", facet_col="method", facet_col_wrap=4, facet_row_spacing=0.12,
                   hover_data=["note", "rank"], color_discrete_map={"gold": "#f2b701", "other": "#4c78a8"},
                   height=300 + 250 * ((len(results_by_method) - 1) // 4),
                   title="Scores of the retrieved notes per method (one scale per panel)")
    # the panel's title names the method: no x label, and four panels a row leave each title room of its own
    fig.update_yaxes(matches=None, showticklabels=True).update_xaxes(matches=None, title=None, showticklabels=False)
    return fig.for_each_annotation(lambda a: a.update(text=a.text.split("=")[-1]))


def gold_rank_chart(results_by_method: Mapping[str, Sequence[Result]], gold: Sequence[str],
                    depth: int = DEFAULT_DEPTH, k: int = 5) -> go.Figure:
    """Rank of each gold note under each method; a note not retrieved is drawn at depth + 1 and
    labelled 'miss'; one in the top k only by tie order (`tie_order_only` on the retrieved notes: notes
    tied with it, in another order, would push it out) is hatched and labelled 'tie order', a miss too;
    the dashed line is the top-k cut-off."""
    rows = []
    for m, res in results_by_method.items():
        found, scores = {r.note_id: r for r in res}, [r.score for r in res]
        for g in gold:
            r = found.get(g)
            tie = r is not None and tie_order_only(scores, [x.note_id == g for x in res], k)
            rows.append({"method": m, "gold note": g, "rank": r.rank if r else depth + 1, "tie": tie,
                         "label": "miss" if r is None else f"{r.rank} tie order" if tie else str(r.rank)})
    fig = px.bar(pd.DataFrame(rows, columns=["method", "gold note", "rank", "label", "tie"]), x="method", y="rank",
                 color="gold note", barmode="group", text="label", custom_data=["tie"],
                 labels={"rank": "note rank"},  # short: a longer y title runs up into the subtitle
                 title=f"Rank of each gold note per method (lower is better)<br><sup>notes counted, not sessions; "
                       f"miss: not in the first {depth}; hatched: in the top {k} only by tie order</sup>")
    fig.update_xaxes(tickangle=-90)  # upright names: slanted ones would run into each other's boxes
    for trace in fig.data:
        trace.marker.pattern.shape = ["/" if tie else "" for tie in trace.customdata[:, 0]]
    if not gold:  # an abstention or free-text question: nothing to draw, and the chart says so
        return fig.add_annotation(text="No gold notes for this question: no rank to show", showarrow=False,
                                  xref="paper", yref="paper", x=0.5, y=0.5, font={"size": 16})
    # beneath the bars: it would strike a rank-6 bar's label, which then reads like a 5
    return fig.add_hline(y=k + 0.5, line_dash="dash", annotation_text=f"top {k}", layer="below")


def misses_chart(units: pd.DataFrame, cases_by_id: Mapping | None = None) -> go.Figure:
    """Missed gold notes (`failure_diagnostics(...).units`) counted by category (C1-C4), coloured by
    question type when `cases_by_id` (question id -> `Case`) is given."""
    table = units.drop_duplicates(["question_id", "note_id"]).copy()
    table["question type"] = (table["question_id"].map(lambda q: cases_by_id[q].question_type)
                              if cases_by_id else "all")
    counts = table.groupby(["category", "question type"]).size().rename("gold notes").reset_index()
    return px.bar(counts, x="category", y="gold notes", color="question type",
                  category_orders={"category": ["C1", "C2", "C3", "C4"]},
                  title="Gold notes missed in the top 5, by failure category and question type")


def answer_chart(summary: pd.DataFrame) -> go.Figure:
    """Token F1 and containment per method (`answer_accuracy(...).summary`)."""
    long = summary.melt(id_vars=["method"], value_vars=["token_f1", "containment"], var_name="score",
                        value_name="mean")
    return px.bar(long, x="method", y="mean", color="score", barmode="group", text_auto=".2f",
                  title=f"Answer accuracy from each method's top notes ({summary['generator'].iloc[0]})"
                  ).update_layout(yaxis_range=[0, 1])


def interval_chart(intervals: pd.DataFrame) -> go.Figure:
    """MRR change per removed component with its confidence interval (`ablation_intervals`)."""
    fig = px.scatter(intervals, x="removed", y="MRR change", color="dataset",
                     error_y=intervals["CI high"] - intervals["MRR change"],
                     error_y_minus=intervals["MRR change"] - intervals["CI low"],
                     title="MRR change from removing one component, with its 95% bootstrap interval")
    return fig.add_hline(y=0, line_color="#999")
