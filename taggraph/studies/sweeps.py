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

Distractor pools (`POOLS`, ``pool=``): ``"own"`` (the default, the paper's sweep) draws only from the case's
haystack, as above. ``"dataset"`` reaches past it, towards LongMemEval-M's ~500 sessions per question: after the
case's own non-gold sessions (in the order above) come other questions' sessions of the same dataset
(`session_pool`: every distinct session id once, first-seen version), never one of the case's own or gold
sessions, shuffled with ``random.Random(f"{seed}:{case_id}:pool")``; so draws stay deterministic and nested, and
up to the haystack's size they are the default's, note for note. Such a case's memory is its haystack with its
drawn sessions after it, extracted once at the largest count (the haystack's notes first, so their tags are the
default's; offline-v2 caches extraction on disk by content, so each distinct interaction is extracted once); each
count's store merges the drawn sessions' notes into the haystack by timestamp (`substore`'s `own_notes`), so
a tie in note order does not put every foreign note behind the gold ones.

Every row also holds its costs, measured in this run (CPU seconds, `time.process_time`): ``extract_cpu_s``, the
memory's extraction at the largest count, shared by its counts and methods; ``store_cpu_s``, the count's store
(`substore` and the structures its methods share), shared by its methods; ``index_cpu_s``, the method's own
index over it; ``rank_cpu_s``, one query (timed apart from the ranking the row holds, which is the same).

Diffusion's contribution at each n is MRR(with PPR iterations) - MRR(iterations=0),
with file seeding (AdaptiveGraph vs -noDiffusion) and without it (-noFileSeeding vs
-noFileSeeding-noDiffusion). MRR and Success@5 are the session-level metrics of
`taggraph.evaluation.metrics` over questions with gold sessions (abstention left out); so is the
summary's ``notes/case``.
"""

from __future__ import annotations

import heapq
import math
import random
import time
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
from taggraph.methods.base import method_errors
from taggraph.methods.index import concept_matcher, term_index
from taggraph.core.store import Interaction, MemoryStore, Note
from taggraph.core.text import parse_datetime

SWEEP_METHODS = ("AdaptiveGraph", "AdaptiveGraph-noDiffusion", "AdaptiveGraph-noFileSeeding",
                 "AdaptiveGraph-noFileSeeding-noDiffusion")
DISTRACTOR_COUNTS = (0, 3, 8, 18, 36)
POOLS = ("own", "dataset")  # where distractors come from (module doc)
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


def _when(note: Note) -> float:
    """A note's timestamp as a sortable number; +inf when it names none (such notes go last)."""
    when = parse_datetime(note.timestamp) if note.timestamp else None
    return when.timestamp() if when is not None else math.inf


def substore(store: MemoryStore, session_ids: set[str], own_notes: int | None = None) -> MemoryStore:
    """A new store holding copies of `store`'s notes from `session_ids`, in the same order; given `own_notes`,
    the notes past the first `own_notes` (other questions' sessions) are merged into those by timestamp
    (a stable merge: the first notes keep their order, a foreign note goes after own notes of its time)."""
    notes = [note for note in store.notes if note.session_id in session_ids]
    if own_notes is not None:
        foreign = sorted((note for note in notes if note.index >= own_notes), key=_when)
        notes = heapq.merge([note for note in notes if note.index < own_notes], foreign, key=_when)
    sub = MemoryStore(store.case_id)
    for note in notes:
        sub.add_note(replace(note))
    return sub


def distractor_order(case: Case, seed: int) -> list[str]:
    """The case's distinct non-gold session ids in the seeded order distractors are taken."""
    gold = set(case.gold_session_ids)
    order = [s for s in dict.fromkeys(i.session_id for i in case.interactions) if s not in gold]
    random.Random(f"{seed}:{case.case_id}").shuffle(order)
    return order


def session_pool(cases: Sequence[Case]) -> dict[str, list[Interaction]]:
    """Every distinct session of `cases` by id, in first-seen order, with the interactions of its first case."""
    pool: dict[str, list[Interaction]] = {}
    for case in cases:
        new: dict[str, list[Interaction]] = {}
        for interaction in case.interactions:
            if interaction.session_id not in pool:
                new.setdefault(interaction.session_id, []).append(interaction)
        pool.update(new)
    return pool


def pooled_order(case: Case, pool: dict[str, list[Interaction]], seed: int) -> tuple[list[str], list[str]]:
    """(`distractor_order`, then the `pool`'s sessions that are neither the case's nor its gold in their
    seeded order): the ``"dataset"`` pool's draws, and those of them from other questions."""
    own = {i.session_id for i in case.interactions} | set(case.gold_session_ids)
    foreign = [s for s in pool if s not in own]
    random.Random(f"{seed}:{case.case_id}:pool").shuffle(foreign)
    return distractor_order(case, seed) + foreign, foreign


def _memories(cases: Sequence[Case], pool: str, pool_cases: Sequence[Case] | None, counts: list[int],
              seed: int) -> list[tuple[list[Case], list[Interaction]]]:
    """(cases sharing one memory, the other questions' interactions its memory adds) per memory: with the
    ``"own"`` pool, a history's cases and nothing; with ``"dataset"``, each case with the sessions the largest
    count draws past its haystack."""
    if pool == "own":
        return [(group, []) for group in group_by_history(cases)]
    sessions = session_pool(pool_cases if pool_cases is not None else cases)
    memories = []
    for case in cases:
        order, foreign = pooled_order(case, sessions, seed)
        drawn = foreign[:max(0, max(counts) - (len(order) - len(foreign)))]
        memories.append(([case], [i for s in drawn for i in sessions[s]]))
    return memories


def _ready_store(store: MemoryStore, session_ids: set[str], own_notes: int | None) -> MemoryStore:
    """`substore`, with the store-wide structures the methods share built (the base graph, the term statistics
    and the concept matcher, otherwise built by whichever method comes first), so its cost is the store's."""
    sub = substore(store, session_ids, own_notes)
    sub.graph.g  # the base graph is built on first read
    term_index(sub)
    concept_matcher(sub)
    return sub


def _costed_ask(run: MemoryRun, case: Case, depth: int, **extra: Any) -> list[dict[str, Any]]:
    """`MemoryRun.ask`'s rows, each with its method's ``index_cpu_s`` and ``rank_cpu_s`` (one query, timed
    apart: the row's ranking also ranks every note for the ties at the cut)."""
    cost = {}
    for name in run.methods:
        with method_errors(name, case.case_id):
            start = time.process_time()
            retriever = run.retriever(name)
            built = time.process_time()
            retriever.query(case.question, k=depth, asked_on=case.asked_on)
            cost[name] = {"index_cpu_s": built - start, "rank_cpu_s": time.process_time() - built}
    return [{**row, **cost[row["method"]]} for row in run.ask(case, depth, **extra)]


def _distractor_memory(memory, counts, seed, extractor, methods, depth, method_params):
    """One memory's store, built once (its history, then any other questions' sessions it draws); each case
    asked over its gold plus n distractors."""
    cases, foreign = memory
    start = time.process_time()
    store = build_store(replace(cases[0], interactions=cases[0].interactions + foreign), extractor)
    extract_cpu_s = (time.process_time() - start) / len(cases)
    own_notes = len(cases[0].interactions) if foreign else None
    rows = []
    for case in cases:
        order = distractor_order(case, seed) + list(dict.fromkeys(i.session_id for i in foreign))
        gold = set(case.gold_session_ids)
        for n in counts:
            start = time.process_time()
            sub = _ready_store(store, gold | set(order[:n]), own_notes)
            rows += _costed_ask(MemoryRun(sub, methods, method_params), case, depth, distractors=n,
                                distractors_added=min(n, len(order)), extract_cpu_s=extract_cpu_s,
                                store_cpu_s=time.process_time() - start)
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


COSTS = ("extract_cpu_s", "store_cpu_s", "index_cpu_s", "rank_cpu_s")  # per question, CPU s, measured (module doc)


def _summarize(scored: pd.DataFrame, setting: str, methods: list[str]) -> pd.DataFrame:
    """MRR, Success@5 (and every other metric) per setting and method, with notes per case over the same
    judged cases as ``n`` and the metrics (abstention left out); the distractor sweep's ``distractors/case`` is
    how many it could add, fewer than asked where a haystack holds fewer."""
    summary = summarize(scored, by=[setting, "method"], order=methods)
    judged = judged_rows(scored)
    cases = judged.drop_duplicates(["question_id", setting])  # as `summarize` counts n
    means = {"notes": "notes/case", "distractors_added": "distractors/case"}
    per_case = cases.groupby(setting)[[c for c in means if c in cases]].mean().rename(columns=means)
    summary = summary.join(per_case, on=setting)
    costs = [c for c in COSTS if c in judged]
    if not costs:
        return summary
    return summary.join(judged.groupby([setting, "method"])[costs].mean(), on=[setting, "method"])


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
                     workers: int = 1, backend: str | None = "loky", pool: str = "own",
                     pool_cases: Sequence[Case] | None = None) -> SweepResult:
    """Rerun `methods` on each case reduced to its gold sessions plus n sampled distractors, drawn from the
    `pool` (`POOLS`; module doc); with ``"dataset"``, other questions' sessions come from `pool_cases`
    (default: `cases`), e.g. the whole dataset when `cases` is a subset of it."""
    methods, counts = list(dict.fromkeys(check_methods(methods))), settings(counts, "counts", 0)
    if pool not in POOLS:
        raise ConfigError(f"pool: {pool!r} is not one of {', '.join(POOLS)}")
    config = _config("distractor_sweep", methods, extractor, workers, backend, cases, method_params,
                     counts=list(counts), seed=seed, depth=depth, pool=pool,
                     **({"pool_questions": len(pool_cases if pool_cases is not None else cases)}
                        if pool == "dataset" else {}))
    rows = parallel_map(_distractor_memory, _memories(cases, pool, pool_cases, counts, seed), list(counts), seed,
                        extractor, methods, depth, method_params, workers=workers, backend=backend)
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


# The panels of `plot_sweep_by_size`: a title and the summary's columns it adds up.
SIZE_PANELS = {"MRR": ("MRR",), "CPU s per question: the store and the method's index": ("store_cpu_s", "index_cpu_s"),
               "CPU s per question: one query": ("rank_cpu_s",)}


def plot_sweep_by_size(summary: pd.DataFrame):
    """Plotly figure, three panels against distractor sessions per case, one line per method: MRR, the CPU s
    to build the store and the method's index over it, and the CPU s of one query (a distractor sweep's
    summary with its costs; the costs are measurements of that run)."""
    long = pd.concat([summary[["distractors", "method", "notes/case"]].assign(
        panel=title, value=summary[list(columns)].sum(axis=1)) for title, columns in SIZE_PANELS.items()])
    fig = px.line(long, x="distractors", y="value", color="method", facet_col="panel", markers=True,
                  hover_data=["notes/case"], title="MRR and cost by distractor sessions per case")
    fig.update_yaxes(matches=None, showticklabels=True, title_text="")
    fig.for_each_annotation(lambda a: a.update(text=a.text.split("=", 1)[-1]))
    return fig.update_xaxes(title_text="distractor sessions")
