"""Paired significance of a difference between two methods' per-question scores.

Both statistics come from scipy.stats, not hand-written: a paired randomization
test (`permutation_test` with ``permutation_type="samples"``: each question's
two scores are swapped or not, at random) for the p-value, and a percentile
`bootstrap` over questions for the confidence interval of the mean difference.
Inputs are per-question arrays in the same question order, e.g. the
``reciprocal_rank`` column of two methods' rankings.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy import stats

RESAMPLES = 10_000  # free choice: Monte Carlo resamples (p-value resolution ~1e-4)
SEED = 0  # fixed, so a report's p-values and intervals are reproducible


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
    if np.ptp(diff) == 0:  # every question moved by the same amount: the interval is that amount
        low = high = float(diff[0])
    else:
        ci = stats.bootstrap((diff,), np.mean, confidence_level=confidence, n_resamples=resamples,
                             method="percentile", random_state=seed).confidence_interval
        low, high = float(ci.low), float(ci.high)
    return PairedTest(float(diff.mean()), low, high, float(perm.pvalue))


def significant(test: PairedTest, alpha: float = 0.05, min_diff: float = 0.0) -> bool:
    """True when p < alpha and the mean difference is at least `min_diff` in size."""
    return test.p_value < alpha and abs(test.mean_diff) >= min_diff
