"""Paired significance of a difference between two methods' per-question scores.

Both statistics come from scipy.stats, not hand-written: a paired randomization
test (`permutation_test` with ``permutation_type="samples"``: each question's
two scores are swapped or not, at random) for the p-value, and a percentile
`bootstrap` over questions for the confidence interval of the mean difference.
Inputs are per-question arrays in the same question order, e.g. the ``RR``
column of two methods' rankings; `compare` pairs them from scored rankings.
When several pairs are tested, `adjusted_p_values` gives Holm's (family-wise error)
and Benjamini-Hochberg's (false discovery rate) adjusted p-values; `with_adjusted` adds both to a table of
tests, with ``sig`` = "*" where Holm's < ALPHA (what bench's and compare's stars mean).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
import pandas as pd
from scipy import stats

from taggraph.evaluation.metrics import without_abstention

RESAMPLES = 10_000  # free choice: Monte Carlo resamples (p-value resolution ~1e-4)
SEED = 0  # fixed, so a report's p-values and intervals are reproducible
ALPHA = 0.05  # a star: Holm-adjusted p < ALPHA


class PairedTest(NamedTuple):
    mean_diff: float  # mean of a - b
    ci_low: float
    ci_high: float
    p_value: float  # two-sided


def _mean_diff(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.mean(x - y, axis=axis)


def paired_test(a, b, confidence: float = 0.95, resamples: int = RESAMPLES, seed: int = SEED) -> PairedTest:
    """Mean difference a - b, its bootstrap CI and the paired two-sided randomization p-value.

    Identical inputs give (0, 0, 0, 1.0): no resampling can show a difference.
    """
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.shape != b.shape or a.ndim != 1 or len(a) < 2:
        raise ValueError(f"need two 1-D arrays of the same length >= 2, got shapes {a.shape} and {b.shape}")
    diff = a - b
    if not diff.any():
        return PairedTest(0.0, 0.0, 0.0, 1.0)
    perm = stats.permutation_test((a, b), _mean_diff, permutation_type="samples", vectorized=True,
                                  n_resamples=resamples, alternative="two-sided", random_state=seed)
    low, high = mean_interval(diff, confidence, resamples, seed)
    return PairedTest(float(diff.mean()), low, high, float(perm.pvalue))


def mean_interval(values, confidence: float = 0.95, resamples: int = RESAMPLES,
                  seed: int = SEED) -> tuple[float, float]:
    """The percentile bootstrap interval of the mean of `values` over questions (the value itself when all are
    equal; NaN for fewer than 2)."""
    x = np.asarray(values, dtype=float)
    if len(x) < 2:
        return float("nan"), float("nan")
    if np.ptp(x) == 0:  # every question alike: the interval is that value
        return float(x[0]), float(x[0])
    ci = stats.bootstrap((x,), np.mean, confidence_level=confidence, n_resamples=resamples, method="percentile",
                         random_state=seed).confidence_interval
    return float(ci.low), float(ci.high)


def holm(p_values) -> np.ndarray:
    """Holm's step-down adjusted p-values: the i-th smallest of m is max over j <= i of (m - j + 1) p_(j), at most 1."""
    # our own: scipy has no Holm and statsmodels (multipletests) is not a dependency; this is its whole rule
    p = np.asarray(p_values, dtype=float)
    order = np.argsort(p)
    steps = np.minimum(1.0, np.maximum.accumulate((len(p) - np.arange(len(p))) * p[order]))
    out = np.empty_like(p)
    out[order] = steps
    return out


def adjusted_p_values(p_values) -> dict[str, np.ndarray]:
    """``{"holm": ..., "bh": ...}``: the Holm and Benjamini-Hochberg (`scipy.stats.false_discovery_control`)
    adjustments of `p_values` as one family; a NaN (no test) stays NaN and is not counted in the family."""
    p = np.asarray(p_values, dtype=float)
    tested = ~np.isnan(p)
    out = {"holm": np.full(p.shape, np.nan), "bh": np.full(p.shape, np.nan)}
    if tested.any():
        out["holm"][tested] = holm(p[tested])
        out["bh"][tested] = stats.false_discovery_control(p[tested], method="bh")
    return out


def with_adjusted(table: pd.DataFrame, alpha: float = ALPHA, suffixes: Sequence[str] = ("",)) -> pd.DataFrame:
    """`table` with the Holm and BH adjustments (``p_holm<suffix>``, ``p_bh<suffix>``) of each ``p_value<suffix>``
    column over its rows as one family, and ``sig<suffix>`` = "*" where the Holm-adjusted p < `alpha`."""
    for suffix in suffixes:
        adjusted = adjusted_p_values(table[f"p_value{suffix}"])
        table[f"p_holm{suffix}"], table[f"p_bh{suffix}"] = adjusted["holm"], adjusted["bh"]
        table[f"sig{suffix}"] = np.where(table[f"p_holm{suffix}"] < alpha, "*", "")
    return table


def significant(test: PairedTest, alpha: float = 0.05, min_diff: float = 0.0) -> bool:
    """True when p < alpha and the mean difference is at least `min_diff` in size."""
    return test.p_value < alpha and abs(test.mean_diff) >= min_diff


PAIRED_N = "ΔMRR n"  # the summary's column of `compare`'s n, where it differs from the MRRs' own


def compare(scored: pd.DataFrame, baseline: str, metric: str = "RR", by: Sequence[str] = (),
            alpha: float = ALPHA) -> pd.DataFrame:
    """Every other method against `baseline` on the per-question `metric`, paired by question.

    `scored` is scored rankings (one row per question x method, and x each `by` column);
    only judged rows (metric not NaN, not abstention) count, and only the questions both
    methods answered. One row per (`by` group,) method: n, both means, the mean
    difference with its bootstrap CI, the randomization p-value, its Holm and BH adjustments
    over every row (`with_adjusted`), and ``sig`` = "*" when the Holm-adjusted p < `alpha`.
    """
    judged = without_abstention(scored[scored[metric].notna()])
    keys = [*by, "question_id"]
    rows = []
    for group, part in (judged.groupby(list(by), sort=False) if by else [((), judged)]):
        wide = part.pivot_table(index=keys, columns="method", values=metric, sort=False)
        if baseline not in wide:
            continue
        for method in [m for m in dict.fromkeys(part["method"]) if m != baseline]:
            pair = wide[[baseline, method]].dropna()
            if len(pair) < 2:
                continue
            test = paired_test(pair[method].to_numpy(), pair[baseline].to_numpy())
            rows.append({**dict(zip(by, group if isinstance(group, tuple) else (group,))), "method": method,
                         "baseline": baseline, "n": len(pair), "metric": metric,
                         "baseline_mean": pair[baseline].mean(), "mean": pair[method].mean(),
                         "diff": test.mean_diff, "ci_low": test.ci_low, "ci_high": test.ci_high,
                         "p_value": test.p_value})
    return with_adjusted(pd.DataFrame(rows, columns=[*by, "method", "baseline", "n", "metric", "baseline_mean", "mean",
                                                     "diff", "ci_low", "ci_high", "p_value"]), alpha)
