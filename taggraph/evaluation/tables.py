"""Tables for a paper from a run's scored rankings: each mean with its bootstrap interval, every pair of methods
tested (Holm over all pairs), and the summary as a LaTeX table (booktabs, best per column in bold, a dagger
where the method beats or trails the baseline at Holm-adjusted p < ALPHA)."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations

import numpy as np
import pandas as pd

from taggraph.evaluation.metrics import judged_rows
from taggraph.evaluation.significance import ALPHA, mean_interval, paired_test, with_adjusted

MEAN_NAMES = {"RR": "MRR", "RR_tieavg": "MRR_tieavg"}  # a per-question column's mean, named as the summary names it
LATEX_COLUMNS = ["MRR", "MRR_tieavg", "Success@1", "Success@5", "Success@10", "R@10", "nDCG@10"]


def with_intervals(scored: pd.DataFrame, metrics: Sequence[str] = ("RR",), by: Sequence[str] = ()) -> pd.DataFrame:
    """Per (`by` group,) method over its judged questions: n and each metric's mean with its 95% percentile
    bootstrap interval (`mean_interval`), as ``<mean>``, ``<mean>_ci_low`` and ``<mean>_ci_high``."""
    rows = []
    for key, part in judged_rows(scored).groupby([*by, "method"], sort=False):
        row = {**dict(zip([*by, "method"], key)), "n": len(part)}
        for metric in metrics:
            name = MEAN_NAMES.get(metric, metric)
            row[name] = part[metric].mean()
            row[f"{name}_ci_low"], row[f"{name}_ci_high"] = mean_interval(part[metric])
        rows.append(row)
    return pd.DataFrame(rows)


def significance_matrix(scored: pd.DataFrame, metric: str = "RR", alpha: float = ALPHA) -> pd.DataFrame:
    """Every pair of methods (a before b in the run's order) over the questions both judge: the mean difference
    b - a of `metric` with its bootstrap interval and paired randomization p (`paired_test`), p adjusted by Holm
    and BH over all the pairs (`with_adjusted`); NaN for a pair with fewer than 2 questions."""
    judged = judged_rows(scored)
    wide = judged.pivot_table(index="question_id", columns="method", values=metric, sort=False)
    rows = []
    for a, b in combinations(list(dict.fromkeys(judged["method"])), 2):
        both = wide[[a, b]].dropna()
        test = paired_test(both[b], both[a]) if len(both) >= 2 else None
        rows.append({"method_a": a, "method_b": b, "n": len(both),
                     **({"diff": test.mean_diff, "ci_low": test.ci_low, "ci_high": test.ci_high,
                         "p_value": test.p_value} if test else dict.fromkeys(("diff", "ci_low", "ci_high", "p_value"),
                                                                             np.nan))})
    table = pd.DataFrame(rows, columns=["method_a", "method_b", "n", "diff", "ci_low", "ci_high", "p_value"])
    return with_adjusted(table, alpha)


def summary_latex(summary: pd.DataFrame, baseline: str | None = None, alpha: float = ALPHA) -> str:
    """`summary` (one row per method) as a booktabs LaTeX table of the `LATEX_COLUMNS` it has, 3 decimals, the best
    of each column in bold and a dagger on the MRR of each method whose ``p_holm`` against `baseline` is below
    `alpha`; method and column names escaped for LaTeX."""
    columns = [c for c in LATEX_COLUMNS if c in summary]
    table = summary.set_index("method")[columns].astype(float).rename_axis(None)
    styler = table.style.format("{:.3f}").apply(
        lambda col: np.where(np.isclose(col, col.max()), "textbf:--rwrap;", ""), axis=0)
    daggers = summary.loc[summary.get("p_holm", pd.Series(np.nan, summary.index)) < alpha, "method"].tolist()
    if daggers:
        styler = styler.format("{:.3f}$^\\dagger$", subset=pd.IndexSlice[daggers, ["MRR"]])
    n = int(summary["n"].min()) if "n" in summary and len(summary) else 0
    caption = (f"Session-level retrieval over {n} judged questions; bold: best per column"
               + (f"; $^\\dagger$: MRR differs from {baseline}'s at Holm-adjusted $p < {alpha}$ (paired randomization "
                  f"test)" if baseline else "") + ".")
    styler = styler.format_index(escape="latex", axis=0).format_index(escape="latex", axis=1)
    return styler.to_latex(hrules=True, column_format="l" + "r" * len(columns), caption=caption.replace("_", "\\_"),
                           position_float="centering")


def results_markdown(summaries: dict[str, pd.DataFrame], metric: str = "MRR") -> str:
    """A Markdown table of `metric` with one row per method (in the first run's order, then the others') and one
    column per run (`summaries`: its label -> summary.csv, the label with its judged n), the best of each column
    in bold, '–' where a run lacks the method."""
    methods = list(dict.fromkeys(m for s in summaries.values() for m in s["method"]))
    columns = {}
    for label, summary in summaries.items():
        values = summary.set_index("method")[metric].reindex(methods)
        best = values.max()
        columns[f"{label} (n = {int(summary['n'].max())})"] = [
            "–" if pd.isna(v) else f"**{v:.3f}**" if np.isclose(v, best) else f"{v:.3f}" for v in values]
    return pd.DataFrame({"method": methods, **columns}).to_markdown(index=False, colalign=["left"] + [
        "right"] * len(columns))
