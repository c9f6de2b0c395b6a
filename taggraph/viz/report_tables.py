"""The run report's tables and the words beside them, as report.md and report.html both show them: the summary
(`summary_view`, its `KEY_COLUMNS` in view; the terminal's `terminal_table`), ours beside the paper's Table 1 (`comparison_table`), Success@k per
question type (`per_type_table`), MRR_from_tie_order per type (`tie_share_table`) and what the columns mean."""

from __future__ import annotations

import pandas as pd

from taggraph.evaluation.paper import paper_table1
from taggraph.evaluation.significance import ALPHA, PAIRED_N, RESAMPLES
from taggraph.evaluation.tables import with_intervals


SUCCESS_COLUMNS = ["Success@1", "Success@3", "Success@5"]
NAMES_NOTE = ("n is the questions each mean is over, n_judged those of them with gold sessions to judge against "
              "(the others count as misses). Success@k is hit-at-k (a gold session among the first k; LongMemEval's "
              "recall_any@k), which is what the paper's per-type tables call recall@k. R@k is the share of gold "
              "sessions in the first k (Success@10, not R@10, is the any-gold \"Recall@10\" some systems report); "
              "recall_all@k and ndcg_any@k are LongMemEval's official metrics, nDCG@k is ir-measures'.")
TIE_NOTES = [  # one line per tie-aware column (taggraph.evaluation.metrics.tie_averaged)
    "MRR_tieavg: the expected MRR when sessions with equal scores are put in random order (exact, not sampled); "
    "the paper's MRR orders them by note order, earlier sessions first.",
    "Success@k_tieavg: the expected Success@k under that random order, i.e. the chance a gold session is in the top k.",
    "MRR_from_tie_order: MRR - MRR_tieavg, the part of MRR that note order gave (negative: note order cost MRR).",
]


def comparison_table(summary: pd.DataFrame, benchmark: str, label: str) -> pd.DataFrame:
    """Ours (MRR, and MRR_tieavg when the run has it, with our n) beside the paper's Table 1 MRR rows for
    `benchmark`; methods as columns, the rows named in the index 'MRR of'."""
    paper = paper_table1(benchmark)
    table = paper.pivot_table(index="extraction", columns="method", values="MRR", sort=False)
    table.index = [f"paper: {i}" for i in table.index]
    ns = sorted(set(summary["n"].astype(int)))
    n = f"n = {ns[0]}" if len(ns) == 1 else f"n = {ns[0]}–{ns[-1]}"
    ours = summary.set_index("method")[[c for c in ("MRR", "MRR_tieavg") if c in summary]].T
    named = f": {label}," if label and str(label) != "-" else ","  # a scored external run records no extractor
    ours.index = [f"ours{named} {c} ({n})" for c in ours.index]
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
        first = ["method", "n", "n_judged", "MRR", MRR_CI, "MRR_tieavg"]
        return table[[c for c in first if c in table] + [c for c in table if c not in first]]
    numbers = [c for c in (f"ΔMRR vs {baseline}", "p", "p_holm", "p_bh") if c in table]
    compared = [*numbers, "sig", *[c for c in (PAIRED_N,) if c in table]]
    first = ["method", "n", "n_judged", "MRR", MRR_CI, "MRR_tieavg", *compared]
    table = table[[c for c in first if c in table] + [c for c in table if c not in first]]
    table[numbers] = table[numbers].map(lambda v: "—" if pd.isna(v) else f"{v:.3f}")
    if PAIRED_N in table:  # the questions the difference is paired over, where a method left some out
        table[PAIRED_N] = table[PAIRED_N].map(lambda v: "—" if pd.isna(v) else f"{v:.0f}")
    table.loc[table["method"] == baseline, compared] = ["— (baseline)", *["—"] * (len(compared) - 1)]
    return table


MRR_CI = "MRR 95% CI"
KEY_COLUMNS = ["method", "n", "n_judged", "MRR", MRR_CI, "MRR_tieavg", "p", "p_holm", "sig", "Success@5",
               "Success@5_tieavg", "Success@10"]  # and ΔMRR


TERMINAL_COLUMNS = ["method", "n", "n_judged", "MRR", MRR_CI, "ΔMRR", PAIRED_N, "p_holm", "Success@1", "Success@5",
                    "Success@10", "nDCG@10"]
# PAIRED_N only where some ΔMRR is over fewer questions than its method's n, n_judged where some method's is below n


def without_repeated_n(view: pd.DataFrame) -> pd.DataFrame:
    """`view` without its n_judged column when every method judged all its n questions (it would repeat n)."""
    if "n_judged" in view and (view["n_judged"] == view["n"]).all():
        return view.drop(columns="n_judged")
    return view


def terminal_table(result, columns: str = "key") -> str:
    """The summary as the terminal prints it: `TERMINAL_COLUMNS` (ΔMRR: against the run's baseline; n_judged only
    where some method's is below its n), every number to 3 decimals, and a line naming where the other columns are
    (summary.csv, ``--columns all``); with `columns` 'all', every column of `summary_view`."""
    view = summary_view(result)
    view = view.rename(columns={c: "ΔMRR" for c in view if c.startswith("ΔMRR vs ")})
    if columns != "all":
        view = without_repeated_n(view)  # the 120-column budget
    view = view.replace({"— (baseline)": "baseline"})  # the width the ΔMRR column needs
    shown = view if columns == "all" else view[[c for c in TERMINAL_COLUMNS if c in view]]
    numbers = [c for c in shown if c != "n" and pd.api.types.is_float_dtype(shown[c])]
    text = shown.assign(**{c: shown[c].map(lambda v: "–" if pd.isna(v) else f"{v:.3f}") for c in numbers}).to_string(
        index=False, na_rep="–")  # as the reports: – has no value
    baseline = result.config.get("baseline")
    if baseline and "ΔMRR" in shown:
        text += f"\nΔMRR: MRR - {baseline}'s, paired per question; p_holm: its Holm-adjusted randomization p."
    if "n_judged" in shown and columns != "all":
        text += "\nn_judged: the questions of n with gold to judge against; the others name none and count as misses."
    rest = [c for c in view if c not in shown]
    if rest:
        text += (f"\n{len(rest)} more columns ({', '.join(rest[:4])}, ...): summary.csv in the run folder, report.html, "
                 "or --columns all.")
    return text


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


def has_ties(result) -> bool:
    """Whether the run has the tie-aware columns (its rankings carried their scores)."""
    return "MRR_tieavg" in result.summary


def tie_share_table(per_type: pd.DataFrame, methods: list[str]) -> pd.DataFrame:
    """MRR_from_tie_order per question type (rows, with n) and method (columns), to 3 decimals."""
    table = per_type.pivot_table(index=["question_type", "n"], columns="method", values="MRR_from_tie_order", sort=False)
    return table.reindex(columns=methods).round(3).reset_index().rename_axis(columns=None)
