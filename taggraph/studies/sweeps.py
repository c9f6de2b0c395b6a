"""Controlled sweeps: distractor density (paper, section 6.1) and retrieval depth (appendix E).

Distractor sweep: for each case the gold sessions are kept and n distractor
sessions (non-gold sessions of the case's own haystack) are added, for each n in
`counts`. Distractors are drawn by shuffling the case's distinct non-gold session
ids with ``random.Random(f"{seed}:{case_id}")`` and taking the first n, so samples
are deterministic and nested (the 3 of n=3 are among the 8 of n=8); n larger than
the haystack takes every distractor (the summary's ``distractors/case`` and the result's `warnings` say
so). Notes keep their haystack (chronological) order.
Tags are extracted once per history over the full haystack and the same notes are
reused for every n: only the set of memories changes, not their extraction. Cases that
share a history (ATANT, LoCoMo) share that one extraction (`runner.group_by_history`).

Diffusion's contribution at each n is MRR(with PPR iterations) - MRR(iterations=0),
with file seeding (AdaptiveGraph vs -noDiffusion) and without it (-noFileSeeding vs
-noFileSeeding-noDiffusion). MRR and Success@5 are the session-level metrics of
`taggraph.evaluation.metrics` over questions with gold sessions (abstention left out); so is the
summary's ``notes/case``.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import pandas as pd
import plotly.express as px

from taggraph._infra.config import DEFAULT_EXTRACTOR
from taggraph.datasets import Case
from taggraph.errors import ConfigError
from taggraph.evaluation.metrics import judged_rows, score_rankings, summarize
from taggraph.evaluation.significance import compare
from taggraph.runs.runner import MemoryRun, build_store, extractor_for, group_by_history, parallel_map
from taggraph.methods import DEFAULT_DEPTH, check_methods
from taggraph.core.store import MemoryStore

SWEEP_METHODS = ("AdaptiveGraph", "AdaptiveGraph-noDiffusion", "AdaptiveGraph-noFileSeeding",
                 "AdaptiveGraph-noFileSeeding-noDiffusion")
DISTRACTOR_COUNTS = (0, 3, 8, 18, 36)
DEPTHS = (20, 40, 80)


def settings(values: Sequence[Any], name: str, least: int) -> list[int]:
    """`values` as whole numbers, each once, in the order given; ConfigError for none, or one that is not a
    whole number of at least `least` (a question asked twice at one setting would count twice)."""
    values = list(values)
    if not values:
        raise ConfigError(f"{name}: give at least one value")
    for v in values:
        if isinstance(v, bool) or not isinstance(v, int) or v < least:
            raise ConfigError(f"{name}: each must be a whole number >= {least}, got {v!r}")
    return list(dict.fromkeys(values))


def substore(store: MemoryStore, session_ids: set[str]) -> MemoryStore:
    """A new store holding copies of `store`'s notes from `session_ids`, in the same order."""
    sub = MemoryStore(store.case_id)
    for note in store.notes:
        if note.session_id in session_ids:
            sub.add_note(replace(note))
    return sub


def distractor_order(case: Case, seed: int) -> list[str]:
    """The case's distinct non-gold session ids in the seeded order distractors are taken."""
    gold = set(case.gold_session_ids)
    order = [s for s in dict.fromkeys(i.session_id for i in case.interactions) if s not in gold]
    random.Random(f"{seed}:{case.case_id}").shuffle(order)
    return order


def _distractor_memory(cases, counts, seed, extractor, methods, depth, method_params):
    """One history's store, built once; each case asked over its gold plus n distractors."""
    store = build_store(cases[0], extractor)
    rows = []
    for case in cases:
        order = distractor_order(case, seed)
        gold = set(case.gold_session_ids)
        for n in counts:
            rows += MemoryRun(substore(store, gold | set(order[:n])), methods, method_params) \
                .ask(case, depth, distractors=n, distractors_added=min(n, len(order)))
    return rows


def _depth_memory(cases, depths, extractor, methods, method_params):
    """One history's store and indexes, built once; each case asked at every depth."""
    run = MemoryRun(build_store(cases[0], extractor), methods, method_params)
    return [row for case in cases for d in depths for row in run.ask(case, d, depth=d)]


@dataclass
class SweepResult:
    rankings: pd.DataFrame  # one row per question x setting x method, scored
    summary: pd.DataFrame  # MRR and Success@5 per setting and method
    config: dict[str, Any]
    contribution: pd.DataFrame | None = None  # distractor sweep: diffusion's MRR contribution per count
    warnings: list[str] = field(default_factory=list)  # distractor sweep: counts some haystacks cannot fill


def _summarize(scored: pd.DataFrame, setting: str, methods: list[str]) -> pd.DataFrame:
    """MRR, Success@5 (and every other metric) per setting and method, with notes per case over the same
    judged cases as ``n`` and the metrics (abstention left out); the distractor sweep's ``distractors/case`` is
    how many it could add, fewer than asked where a haystack holds fewer."""
    summary = summarize(scored, by=[setting, "method"], order=methods)
    judged = judged_rows(scored).drop_duplicates(["question_id", setting])  # as `summarize` counts n
    means = {"notes": "notes/case", "distractors_added": "distractors/case"}
    per_case = judged.groupby(setting)[[c for c in means if c in judged]].mean().rename(columns=means)
    return summary.join(per_case, on=setting)


def unfilled_counts(scored: pd.DataFrame) -> list[str]:
    """One line per distractor count that some judged case's haystack cannot fill (it then takes them all)."""
    judged = judged_rows(scored).drop_duplicates(["question_id", "distractors"])
    short = judged[judged["distractors_added"] < judged["distractors"]]
    return [f"{n} distractors: {len(rows)} of {int((judged['distractors'] == n).sum())} judged questions have "
            f"fewer non-gold sessions and took them all ({rows['distractors_added'].mean():.1f} on average)"
            for n, rows in short.groupby("distractors")]


def _config(experiment: str, methods, extractor, workers, backend, cases, method_params, **kw) -> dict[str, Any]:
    """Run configuration; loads the extractor first, so a broken one fails before any case runs."""
    return {"experiment": experiment, "methods": methods, "method_params": method_params or {},
            "extractor": extractor, "extractor_cache_key": getattr(extractor_for(extractor), "cache_key", ""),
            "workers": workers, "backend": backend, "n_cases": len(cases), **kw}


CONTRIBUTIONS = {"with_seeding": ("AdaptiveGraph", "AdaptiveGraph-noDiffusion"),
                 "without_seeding": ("AdaptiveGraph-noFileSeeding", "AdaptiveGraph-noFileSeeding-noDiffusion")}


def diffusion_contribution(summary: pd.DataFrame, scored: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per distractor count: MRR gain from diffusion with and without file seeding (NaN if a run is
    missing), and, given the `scored` rankings, each gain's paired randomization p-value.

    Beside each gain (the paper's MRR, ties in note order), when the summary has ``MRR_tieavg``, the same gain
    with ties averaged (``diffusion_with_seeding_tieavg``, ...): where gold sessions come first in the history
    (LoCoMo) a configuration that scores them 0 still ranks them first by note order, which can flip the
    gain's sign."""
    metrics = ["MRR", "MRR_tieavg"] if "MRR_tieavg" in summary else ["MRR"]
    out = pd.DataFrame(index=pd.Index(summary["distractors"].drop_duplicates(), name="distractors"))
    for metric in metrics:
        wide = summary.pivot(index="distractors", columns="method", values=metric).reindex(
            index=out.index, columns=list(SWEEP_METHODS))
        suffix = "" if metric == "MRR" else "_tieavg"
        for column, (full, ablated) in CONTRIBUTIONS.items():
            out[f"diffusion_{column}{suffix}"] = wide[full] - wide[ablated]
    out = out.reset_index()
    if scored is None:
        return out
    for column, (full, ablated) in CONTRIBUTIONS.items():
        pair = scored[scored["method"].isin([full, ablated])]
        tests = compare(pair, ablated, by=["distractors"]).set_index("distractors")["p_value"]
        out[f"p_{column}"] = out["distractors"].map(tests)
    return out


def distractor_sweep(cases: Sequence[Case], counts: Sequence[int] = DISTRACTOR_COUNTS, seed: int = 0,
                     extractor: str = DEFAULT_EXTRACTOR, methods: Sequence[str] = SWEEP_METHODS,
                     depth: int = DEFAULT_DEPTH, method_params: dict[str, dict] | None = None,
                     workers: int = 1, backend: str | None = "loky") -> SweepResult:
    """Rerun `methods` on each case reduced to its gold sessions plus n sampled distractors (module doc)."""
    methods, counts = list(dict.fromkeys(check_methods(methods))), settings(counts, "counts", 0)
    config = _config("distractor_sweep", methods, extractor, workers, backend, cases, method_params,
                     counts=list(counts), seed=seed, depth=depth)
    rows = parallel_map(_distractor_memory, group_by_history(cases), list(counts), seed, extractor, methods, depth,
                        method_params, workers=workers, backend=backend)
    scored = score_rankings(pd.DataFrame([r for rs in rows for r in rs]))
    summary = _summarize(scored, "distractors", methods)
    return SweepResult(scored, summary, config, diffusion_contribution(summary, scored), unfilled_counts(scored))


def depth_sweep(cases: Sequence[Case], method: str | Sequence[str] = "TagGraph-TFIDF",
                depths: Sequence[int] = DEPTHS, extractor: str = DEFAULT_EXTRACTOR,
                method_params: dict[str, dict] | None = None, workers: int = 1,
                backend: str | None = "loky") -> SweepResult:
    """MRR and Success@5 of `method` at each retrieval depth (sessions de-duplicated within the depth)."""
    methods = list(dict.fromkeys(check_methods([method] if isinstance(method, str) else method)))
    depths = settings(depths, "depths", 1)
    config = _config("depth_sweep", methods, extractor, workers, backend, cases, method_params, depths=list(depths))
    rows = parallel_map(_depth_memory, group_by_history(cases), list(depths), extractor, methods, method_params,
                        workers=workers, backend=backend)
    scored = score_rankings(pd.DataFrame([r for rs in rows for r in rs]))
    return SweepResult(scored, _summarize(scored, "depth", methods), config)


# How the charts name the two MRRs: the paper's (primary) and the tie-averaged one beside it.
MRR_LABELS = {"MRR": "MRR (paper: ties in note order)", "MRR_tieavg": "MRR_tieavg (ties averaged)"}


def plot_distractor_sweep(summary: pd.DataFrame):
    """Plotly figure: MRR against distractor sessions per configuration; beside it, dashed, MRR with ties
    averaged (``MRR_tieavg``) when the summary has it."""
    metrics = [m for m in MRR_LABELS if m in summary]
    hover = [c for c in ["n", "notes/case", "distractors/case", "Success@5"] if c in summary]
    long = summary.melt(id_vars=["distractors", "method", *hover], value_vars=metrics, var_name="metric",
                        value_name="value").assign(metric=lambda t: t["metric"].map(MRR_LABELS))
    fig = px.line(long, x="distractors", y="value", color="method", line_dash="metric", markers=True,
                  hover_data=hover, title="MRR by distractor sessions per case"
                  + ("<br><sup>solid: the paper's MRR (ties in note order); dashed: ties averaged</sup>"
                     if len(metrics) > 1 else ""))
    return fig.update_layout(xaxis_title="distractor sessions added to the gold sessions", yaxis_title="MRR")


def plot_diffusion_contribution(contribution: pd.DataFrame):
    """Plotly figure: diffusion's MRR contribution with and without file seeding; beside each, dashed, the
    contribution with ties averaged when `contribution` has it (`diffusion_contribution`)."""
    names = {f"diffusion_{c}{suffix}": (f"diffusion_{c}", MRR_LABELS[metric])
             for c in CONTRIBUTIONS for suffix, metric in (("", "MRR"), ("_tieavg", "MRR_tieavg"))}
    present = [c for c in names if c in contribution]
    long = contribution.melt(id_vars="distractors", value_vars=present, var_name="column", value_name="MRR gain")
    long["setting"] = long["column"].map(lambda c: names[c][0])
    long["metric"] = long["column"].map(lambda c: names[c][1])
    tied = any(c.endswith("_tieavg") for c in present)
    fig = px.line(long, x="distractors", y="MRR gain", color="setting", line_dash="metric", markers=True,
                  title="Diffusion's contribution (MRR with PPR - MRR without)"
                  + ("<br><sup>solid: the paper's MRR (ties in note order); dashed: ties averaged. Where they "
                     "differ in sign, tie order decides it</sup>" if tied else ""))
    return fig.add_hline(y=0, line_color="#999")


def plot_depth_sweep(summary: pd.DataFrame):
    """Plotly figure: MRR against retrieval depth per method."""
    return px.line(summary, x="depth", y="MRR", color="method", markers=True, hover_data=["n", "Success@5"],
                   title="MRR by retrieval depth")
