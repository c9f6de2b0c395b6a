"""Fusion of ranked runs (not the TagGraph-Fusion method): RRF, CombSUM, CombMNZ and a weighted sum, by ranx.

A run here is question id -> docid -> score (`taggraph.evaluation.score.trec_scores_of` reads one from a
TREC file). `fuse` hands the runs to ``ranx.fuse`` with ranx's names and defaults:

- ``rrf``: Reciprocal Rank Fusion, sum of 1 / (k + rank), k = 60 by default (scores are not normalized);
- ``combsum``: the sum of the normalized scores; ``combmnz``: that sum times the number of runs that rank
  the docid; ``wsum``: the sum weighted by `weights` (one per run);
- normalizations (per question, before fusing): ``min-max``, ``zscore`` (ranx's ``zmuv``), ``max``,
  ``sum``, ``none``.

What ranx leaves open is fixed here as trec_eval does it: RRF reads each run's ranks in trec_eval's order
(score descending, ties by docid descending; ranx takes the order it was given); a question some runs
do not rank counts as an empty ranking there (ranx requires the same questions in every run); and the
fused scores are ordered and written as trec_eval reads them (`taggraph.evaluation.score.trec_lines`).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence

from taggraph.errors import ConfigError
from taggraph.evaluation.score import trec_lines, trec_order

Run = Mapping[str, Mapping[str, float]]  # question id -> docid -> score

FUSION_METHODS = {"rrf": "rrf", "combsum": "sum", "combmnz": "mnz", "wsum": "wsum"}  # ours -> ranx's
NORMALIZATIONS = {"min-max": "min-max", "zscore": "zmuv", "max": "max", "sum": "sum", "none": None}
RRF_K = 60  # Cormack et al.'s k, ranx's default


def check_fusion(method: str, norm: str, weights: Sequence[float] | None, n_runs: int, k: float = RRF_K) -> None:
    """ConfigError for an unknown method or normalization, fewer than two runs, weights that are not one
    finite number per run (given without ``wsum``, or missing with it), or k < 0."""
    if method not in FUSION_METHODS:
        raise ConfigError(f"fusion method {method!r} unknown; choose one of {', '.join(FUSION_METHODS)}")
    if norm not in NORMALIZATIONS:
        raise ConfigError(f"normalization {norm!r} unknown; choose one of {', '.join(NORMALIZATIONS)}")
    if n_runs < 2:
        raise ConfigError(f"fusion needs two or more runs, got {n_runs}")
    if method == "wsum":
        if weights is None or len(weights) != n_runs or not all(math.isfinite(w) for w in weights):
            raise ConfigError(f"wsum needs one finite weight per run ({n_runs}), got {list(weights or [])}")
    elif weights is not None:
        raise ConfigError(f"weights are for wsum only, not {method}")
    if method == "rrf" and not (math.isfinite(k) and k >= 0):
        raise ConfigError(f"RRF's k must be a number >= 0, got {k}")


def _rank_scores(run: Run) -> dict[str, dict[str, float]]:
    """Each question's docids scored n, n-1, ..., 1 in trec_eval's order, so that ranx's RRF reads those ranks."""
    return {q: {doc: float(len(scored) - i) for i, doc in enumerate(trec_order(dict(scored)))}
            for q, scored in run.items()}


def fuse(runs: Sequence[Run], method: str = "rrf", norm: str = "min-max", weights: Sequence[float] | None = None,
         k: float = RRF_K) -> dict[str, dict[str, float]]:
    """The fused run of `runs` (module docstring); ConfigError for parameters `check_fusion` refuses."""
    check_fusion(method, norm, weights, len(runs), k)
    try:
        from numba.core.errors import NumbaTypeSafetyWarning
        from ranx import Run as RanxRun
        from ranx import fuse as ranx_fuse
    except ImportError as exc:
        raise ConfigError(f"fusion needs ranx, a dependency of taggraph: pip install 'ranx>=0.3.21' ({exc})") from None

    questions = list(dict.fromkeys(q for run in runs for q in run))
    if method == "rrf":
        runs, norm = [_rank_scores(run) for run in runs], "none"
    ranx_runs = [RanxRun.from_dict({q: {doc: float(s) for doc, s in run.get(q, {}).items()} for q in questions},
                                   name=f"run{i}") for i, run in enumerate(runs)]
    params = {"k": k} if method == "rrf" else {"weights": list(weights)} if method == "wsum" else {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NumbaTypeSafetyWarning)  # ranx's RRF casts ranks; harmless, said per call
        fused = ranx_fuse(ranx_runs, norm=NORMALIZATIONS[norm], method=FUSION_METHODS[method], params=params)
    return {q: dict(fused.run[q]) if q in fused.run else {} for q in questions}


def run_trec(run: Run, name: str) -> str:
    """`run` as a TREC run named `name`: each question's docids in trec_eval's order, their scores in single
    precision and strictly descending (`trec_lines`), so that trec_eval reads the order written."""
    lines = [line for q, scored in run.items() for line in trec_lines(q, trec_order(dict(scored)),
                                                                       sorted(scored.values(), reverse=True), name)]
    return "".join(line + "\n" for line in lines)
