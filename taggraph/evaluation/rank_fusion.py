"""Fusion of ranked runs (not the TagGraph-Fusion method): RRF, CombSUM, CombMNZ and a weighted sum, as ranx fuses.

A run here is question id -> docid -> score (`taggraph.evaluation.score.trec_scores_of` reads one from a
TREC file). `fuse` computes what ``ranx.fuse`` computes, with ranx's names, defaults and formulas:

- ``rrf``: Reciprocal Rank Fusion, sum of 1 / (k + rank), k = 60 by default (scores are not normalized);
- ``combsum``: the sum of the normalized scores; ``combmnz``: that sum times the number of runs that rank
  the docid; ``wsum``: the sum weighted by `weights` (one per run); a run that does not rank a docid adds 0;
- normalizations (per question and run, before fusing): ``min-max`` (x - min) / (max - min), ``zscore``
  (ranx's ``zmuv``: (x - mean) / population std), ``max`` x / max, ``sum`` (x - min) / (sum - n min),
  ``none``; every denominator is floored at 1e-9, as ranx does. Scores above 1e100 are scaled down first (the
  normalizations do not change with the scale, and ranx's overflow to inf gave a silently wrong order); fused
  scores that still overflow (``none``) are refused.

Written here, not called from ranx: ranx's numba code typed and compiled its calls again in every new process,
about 10 s for two runs of two questions (34 s on first use), for formulas of a few lines; `tests/integration/test_fuse.py`
checks every method and normalization against ``ranx.fuse`` on runs of 250 questions with ties (ranx is a
test dependency). What ranx leaves open is fixed here as trec_eval does it: RRF reads each run's ranks in
trec_eval's order (score descending, ties by docid descending; ranx takes the order it was given); a question
some runs do not rank counts as an empty ranking there (ranx requires the same questions in every run); and
the fused scores are ordered and written as trec_eval reads them (`taggraph.evaluation.score.trec_lines`).

Fusion ties often (RRF gives a docid ranked 1st and 2nd the same score as one ranked 2nd and 1st), and
trec_eval then orders the tied docids by their spelling. `run_ties` gives a run's tie-aware figures as
`bench` gives them for its methods (`taggraph.evaluation.metrics.tie_metrics`: RR_tieavg, Success@k_tieavg,
first_gold_tied), from its scores as trec_eval holds them (single precision).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from taggraph.errors import ConfigError
from taggraph.evaluation.metrics import session_scores, tie_metrics
from taggraph.evaluation.score import single, trec_lines, trec_order
from taggraph.methods.base import same_score

Run = Mapping[str, Mapping[str, float]]  # question id -> docid -> score

FUSION_METHODS = ("rrf", "combsum", "combmnz", "wsum")
RUN_NORMALIZATIONS = ("min-max", "zscore", "max", "sum", "none")
RRF_K = 60  # Cormack et al.'s k, ranx's default
FLOOR = 1e-9  # ranx's floor under every normalization's denominator
HUGE = 1e100  # scores above this are scaled down before they are normalized (1e308 squared is no float)


def check_fusion(method: str, norm: str, weights: Sequence[float] | None, n_runs: int, k: float = RRF_K) -> None:
    """ConfigError for an unknown method or normalization, fewer than two runs, weights that are not one
    finite number per run (given without ``wsum``, or missing with it), or k < 0."""
    if method not in FUSION_METHODS:
        raise ConfigError(f"fusion method {method!r} unknown; choose one of {', '.join(FUSION_METHODS)}")
    if norm not in RUN_NORMALIZATIONS:
        raise ConfigError(f"normalization {norm!r} unknown; choose one of {', '.join(RUN_NORMALIZATIONS)}")
    if n_runs < 2:
        raise ConfigError(f"fusion needs two or more runs, got {n_runs}")
    if method == "wsum":
        if weights is None or len(weights) != n_runs or not all(math.isfinite(w) for w in weights):
            raise ConfigError(f"wsum needs one finite weight per run ({n_runs}), got {list(weights or [])}")
    elif weights is not None:
        raise ConfigError(f"weights are for wsum only, not {method}")
    if method == "rrf" and not (math.isfinite(k) and k >= 0):
        raise ConfigError(f"RRF's k must be a number >= 0, got {k}")


def normalized_run(scored: Mapping[str, float], norm: str) -> dict[str, float]:
    """One run's scores of one question under `norm` (module docstring), as ranx's normalizations give them."""
    if norm == "none" or not scored:
        return {doc: float(score) for doc, score in scored.items()}
    x = np.fromiter(scored.values(), dtype=float, count=len(scored))
    if np.abs(x).max() > HUGE:  # every normalization is scale-free: scaled first, squares and sums stay finite
        x = x / np.abs(x).max()
    if norm == "min-max":
        x = (x - x.min()) / max(x.max() - x.min(), FLOOR)
    elif norm == "zscore":
        x = (x - x.mean()) / max(x.std(), FLOOR)
    elif norm == "max":
        x = x / max(x.max(), FLOOR)
    else:  # sum
        x = (x - x.min()) / max(x.sum() - x.min() * len(x), FLOOR)
    return dict(zip(scored, x.tolist()))


def _reciprocal_ranks(scored: Mapping[str, float], k: float) -> dict[str, float]:
    """1 / (k + rank) of each docid, ranked in trec_eval's order."""
    return {doc: 1 / (k + rank) for rank, doc in enumerate(trec_order(dict(scored)), start=1)}


def _combined(per_run: list[dict[str, float]], method: str, weights: Sequence[float] | None) -> dict[str, float]:
    """One question's fused scores from each run's (normalized) scores, summed in run order as ranx sums them."""
    docs = dict.fromkeys(doc for scored in per_run for doc in scored)
    if method == "combmnz":
        present = {doc: [scored[doc] for scored in per_run if doc in scored] for doc in docs}
        return {doc: sum(scores) * len(scores) for doc, scores in present.items()}
    if method == "wsum":
        return {doc: sum(w * scored.get(doc, 0.0) for w, scored in zip(weights, per_run)) for doc in docs}
    return {doc: sum(scored.get(doc, 0.0) for scored in per_run) for doc in docs}


def fuse_rankings(runs: Sequence[Run], method: str = "rrf", norm: str = "min-max", weights: Sequence[float] | None = None,
         k: float = RRF_K) -> dict[str, dict[str, float]]:
    """The fused run of `runs` (module docstring); ConfigError for parameters `check_fusion` refuses.
    RRF ignores `norm`; every question of any run is in the result (empty where no run ranks a docid)."""
    check_fusion(method, norm, weights, len(runs), k)
    questions = dict.fromkeys(q for run in runs for q in run)
    fused = {}
    for q in questions:
        scored = [run.get(q, {}) for run in runs]
        if method == "rrf":
            fused[q] = _combined([_reciprocal_ranks(s, k) for s in scored], "combsum", None)
        else:
            fused[q] = _combined([normalized_run(s, norm) for s in scored], method, weights)
        if not all(map(math.isfinite, fused[q].values())):
            raise ConfigError(f"question {q!r}: the fused scores overflow ({method}, normalization {norm}); the "
                              f"runs' scores are too large to add as they are: choose a normalization")
    return fused


def run_trec(run: Run, name: str) -> str:
    """`run` as a TREC run named `name`: each question's docids in trec_eval's order, their scores in single
    precision and strictly descending (`trec_lines`), so that trec_eval reads the order written."""
    lines = [line for q, scored in run.items() for line in trec_lines(q, trec_order(dict(scored)),
                                                                       sorted(scored.values(), reverse=True), name)]
    return "".join(line + "\n" for line in lines)


def run_ties(scored: Mapping[str, float], sessions: Mapping[str, str], gold: Sequence[str],
             depth: int) -> dict[str, float | bool]:
    """`tie_metrics` of one question's `scored` docids (`sessions`: each docid's session; a docid it lacks is its
    own) against `gold`, ranked as trec_eval ranks them through `depth`, their scores in single precision:
    docids beyond `depth` tied with the last one join its tie group."""
    order = trec_order(dict(scored))
    values = [float(single(scored[doc])) for doc in order]
    ranked = session_scores([sessions.get(doc, doc) for doc in order], values, depth)
    cut = values[depth - 1] if len(order) > depth else None
    beyond = [sessions.get(doc, doc) for doc, v in zip(order[depth:], values[depth:]) if same_score(v, cut)]
    return tie_metrics([sid for sid, _ in ranked], [v for _, v in ranked], gold, beyond, cut)
