"""The main job: every chosen method over every case of a dataset, scored per question.

`run_bench` returns tidy DataFrames (one row per question x method) and the run
configuration; `taggraph.runs.folders.save_run` writes them as a run folder.
Each memory (cases sharing one history) is built once and asked all its questions
(`taggraph.runs.runner`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import pandas as pd

from taggraph._infra.config import DEFAULT_EXTRACTOR
from taggraph.datasets import Case, DataWarning, Dataset
from taggraph.datasets.base import compact_warnings, data_warning, note_ids
from taggraph.datasets.registry import data_warnings, format_of, resolve
from taggraph.evaluation.metrics import per_type, score_rankings, summarize
from taggraph.evaluation.score import external_rankings
from taggraph.errors import ServerError
from taggraph.evaluation.significance import PAIRED_N, compare
from taggraph.evaluation.verdicts import component_verdicts
from taggraph.runs.runner import MemoryRun, build_store, extractor_for, group_by_growth, parallel_map
from taggraph.core.store_stats import store_stats
from taggraph.extractors import Extractor, check_portable, extractor_spec
from taggraph.runs.provenance import cache_entries, cache_state, machine, process_usage
from taggraph.methods import DEFAULT_DEPTH, DEFAULT_METHODS, check_methods
from taggraph.methods.base import one_line
from taggraph.runs.provenance import method_origin
from taggraph.core.store import MemoryStore

ALLOW_FAILED = "--allow-failed-extractions (run_bench(..., allow_failed_extractions=True))"


@dataclass
class MemoryResult:
    rows: list[dict[str, Any]]
    timings: list[dict[str, Any]]
    method_configs: dict[str, dict[str, Any]]
    store_stats: list[dict[str, Any]]
    failed_extractions: list[str] = field(default_factory=list)  # "note 'id': reason" of each note stored untagged
    pages: dict[str, str] = field(default_factory=dict)  # what the run's `PageRecorder` drew while the memory existed
    cpu_seconds: float = 0.0  # the process's CPU time on this memory: extraction, indexing, queries, pages
    peak_memory_mb: float = 0.0  # the peak resident memory of the process that ran it, so far


# Called for each memory while it exists, after its questions: (its MemoryRun, its cases, their ranking rows, the
# depth) -> {file name: page}. Views draw from the live store and the run's own retrievers (`viz.miss_pages.MissPages`),
# so no report builds a store again; the runner does not import them (it calls what it is given).
PageRecorder = Callable[[MemoryRun, list[Case], list[dict[str, Any]], int], dict[str, str]]


def failed_extractions(store: MemoryStore) -> list[str]:
    """"note 'id': reason" of each note of `store` whose extraction failed (stored untagged)."""
    return [f"note {note_id!r}: {one_line(reason, 200)}" for note_id, reason in store.extraction_errors.items()]


def run_memory(cases: list[Case], methods: list[str], extractor: str = DEFAULT_EXTRACTOR, depth: int = DEFAULT_DEPTH,
               method_params: dict[str, dict[str, Any]] | None = None,
               extractor_options: dict[str, Any] | None = None,
               allow_failed_extractions: bool = False, pages: PageRecorder | None = None) -> MemoryResult:
    """Build the store the `cases` share once and ask each case's question with each method, then let `pages`
    draw what it needs from the memory. Cases whose histories begin one another's (`runner.group_by_growth`, in
    order of length) share one store that grows: each question is asked, and its pages drawn, when the store holds
    its history. A store with notes whose extraction failed is a ServerError before any method runs, unless
    `allow_failed_extractions`."""
    t0, cpu0 = time.perf_counter(), time.process_time()
    store = build_store(cases[0], extractor, extractor_options)
    run = MemoryRun(store, methods, method_params)
    rows, stats, drawn, held = [], [], {}, len(cases[0].interactions)
    for step in _growth_steps(cases):
        if len(step[0].interactions) > held:
            store.remember_many(step[0].interactions[held:])
            held = len(step[0].interactions)
        _refuse_failed(store, step, extractor, allow_failed_extractions)
        run.timings.append({"question_id": step[0].case_id, "stage": "extract+store", "method": "",
                            "seconds": time.perf_counter() - t0})
        step_rows = [row for case in step for row in run.ask(case, depth)]
        rows += step_rows
        step_stats = store_stats(store)
        stats += [{"question_id": c.case_id, "memory": cases[0].case_id, **step_stats} for c in step]
        drawn |= pages(run, step, step_rows, depth) if pages is not None else {}
        t0 = time.perf_counter()
    return MemoryResult(rows, run.timings, run.configs, stats, failed_extractions(store), drawn,
                        time.process_time() - cpu0, process_usage()[1])


def _growth_steps(cases: list[Case]) -> list[list[Case]]:
    """The cases in runs of one history length (one run when they share one history)."""
    steps: list[list[Case]] = []
    for case in cases:
        if steps and len(steps[-1][0].interactions) == len(case.interactions):
            steps[-1].append(case)
        else:
            steps.append([case])
    return steps


def _refuse_failed(store: MemoryStore, cases: list[Case], extractor, allow_failed_extractions: bool) -> None:
    failed = failed_extractions(store)
    if failed and not allow_failed_extractions:
        shared = f" (and {len(cases) - 1} more questions that share it)" if len(cases) > 1 else ""
        raise ServerError(f"{len(failed)} of {len(store)} notes of the memory of {cases[0].case_id!r}{shared} failed "
                          f"extraction with {extractor_spec(extractor)} (first: {failed[0]}); scores over untagged notes are "
                          f"wrong numbers: fix the extractor or its server and run again, or pass {ALLOW_FAILED} "
                          f"to score them anyway")


@dataclass
class BenchResult:
    """What `tg.bench` (and `taggraph bench`) returns; `tg.score` returns one too, its external runs as methods.

    rankings: one row per question and method: question_id, question_type, method, ranked_session_ids and
        gold_session_ids (lists), RR, ranked_note_ids, ranked_scores, every metric of the question (Success@k,
        R@k, nDCG@k, their tie-aware twins `*_tieavg`) and abstention (excluded from every metric).
    summary: one row per method, in the order run: n (judged questions), MRR, MRR_tieavg and every metric's mean;
        with a baseline, ΔMRR vs it, p (paired randomization test), p_holm, p_bh and sig.
    per_type: the summary's metrics per method and question type.
    timings: one row per stage: question_id, stage ("extract+store", "index", "query"), method, seconds.
    stores: each question's store at the time it was asked: notes, tags, concepts, edges.
    config: what run.json records as "config": methods (each one's parameters and origin), extractor, depth,
        workers, counts, input warnings, machine, resources (CPU seconds, peak memory, caches) and, from the
        command line, the command.
    extra: a benchmark's own tables (LongMemEval's recall_all@k, LoCoMo's categories, "significance", ...).
    """

    rankings: pd.DataFrame
    summary: pd.DataFrame
    per_type: pd.DataFrame
    timings: pd.DataFrame
    stores: pd.DataFrame
    config: dict[str, Any]
    extra: dict[str, pd.DataFrame] = field(default_factory=dict)  # a benchmark's own metric tables
    warnings: list[DataWarning] = field(default_factory=list)  # the data's (`Dataset.warnings`)
    pages: dict[str, str] = field(default_factory=dict)  # {file name: page} drawn during the run (`PageRecorder`)
    data: dict[str, Any] | None = None  # what run.json records of the data (`Dataset.record()`); None: plain cases

    @cached_property
    def verdicts(self) -> dict[str, list[str]]:
        """`evaluation.verdicts.component_verdicts` of the rankings, computed once for the terminal and
        both reports (each is a paired randomization test per ablation)."""
        return component_verdicts(self.rankings)


def run_bench(cases: Sequence[Case], methods: list[str] | None = None, extractor: str | Extractor = DEFAULT_EXTRACTOR,
              depth: int = DEFAULT_DEPTH, workers: int = 1, method_params: dict[str, dict] | None = None,
              backend: str | None = "loky", share_memories: bool = True,
              extractor_options: dict[str, Any] | None = None, allow_failed_extractions: bool = False,
              pages: PageRecorder | None = None) -> BenchResult:
    """Rank each case's notes with each method; rows come back in case order, then method order (a method
    named twice runs once).

    `extractor` is a name or an object (`taggraph.extractors.get_extractor`); run.json records its spec.
    `extractor_options` go with a name to `get_extractor` (e.g. an Ollama request timeout). Notes whose
    extraction failed stop the run (ServerError) unless `allow_failed_extractions`; then config's
    ``failed_extractions`` and a `DataWarning` (the report's, run.json's) say how many and the first reason.
    `pages` draws each memory's pages while it exists (`PageRecorder`; `viz.miss_pages.MissPages` for the
    report's miss pages); they come back in ``BenchResult.pages``."""
    methods = list(dict.fromkeys(check_methods(methods or DEFAULT_METHODS)))
    if workers != 1:
        check_portable(extractor)  # an extractor object must pickle to reach the workers
    groups = group_by_growth(cases, share_memories)
    caches, wall = cache_entries(), time.perf_counter()
    results = parallel_map(run_memory, groups, methods, extractor, depth, method_params, extractor_options,
                           allow_failed_extractions, pages, workers=workers, backend=backend)
    position = {c.case_id: i for i, c in enumerate(cases)}
    rows = sorted((r for res in results for r in res.rows),
                  key=lambda r: (position[r["question_id"]], methods.index(r["method"])))
    scored = score_rankings(pd.DataFrame(rows))
    failed = [f for res in results for f in res.failed_extractions]
    found = data_warnings(cases) + data_warning(
        "failed_extractions", f"notes failed extraction and are scored untagged ({ALLOW_FAILED.split()[0]})",
        failed, extractor_spec(extractor))
    config = {
        "methods": {m: {**c, **method_origin(m)} for m, c in (results[0].method_configs if results else {}).items()},
        "extractor": extractor_spec(extractor),
        "extractor_cache_key": getattr(extractor_for(extractor, extractor_options), "cache_key", ""),
        "extractor_options": dict(extractor_options or {}),
        "depth": depth, "workers": workers, "n_cases": len(cases), "n_memories": len(groups),
        "n_abstention": int(sum(c.is_abstention for c in cases)), "input_warnings": compact_warnings(found),
        "failed_extractions": {"notes": len(failed), "memories": sum(bool(r.failed_extractions) for r in results),
                               "first": failed[0] if failed else None},
        "machine": machine(),
        # CPU seconds of the memories' work summed over the processes that did it (workers too); peak memory: the
        # largest process's
        "resources": {"wall_seconds": round(time.perf_counter() - wall, 3),
                      "cpu_seconds": round(sum(r.cpu_seconds for r in results), 3),
                      "peak_memory_mb": round(max((r.peak_memory_mb for r in results), default=0.0), 1),
                      "caches": cache_state(caches, cache_entries())},
    }
    return BenchResult(scored, summarize(scored, order=methods), per_type(scored),
                       pd.DataFrame([t for r in results for t in r.timings]),
                       pd.DataFrame([s for r in results for s in r.store_stats]), config, warnings=found,
                       pages={name: page for r in results for name, page in r.pages.items()},
                       data=cases.record() if isinstance(cases, Dataset) else None)


def bench(cases: Sequence[Case], methods: list[str] | None = None, baseline: str | None = "BM25",
          **options: Any) -> BenchResult:
    """What `taggraph bench` computes (`tg.bench`): `run_bench(cases, methods, **options)`, the format's own
    metrics (`add_benchmark_metrics`) and each method's MRR against `baseline` (`add_significance`; None:
    no baseline)."""
    result = run_bench(cases, methods, **options)
    add_benchmark_metrics(result, cases)
    return add_significance(result, baseline)


def history_ids(case: Case) -> dict[str, str]:
    """Each note id and session id of the case's history -> its session id (a session's id wins)."""
    ids = note_ids(case.interactions)
    return {**{nid: sid for nid, sid in ids}, **{sid: sid for _, sid in ids}}


def score_external(paths: list, cases: list[Case], depth: int = DEFAULT_DEPTH,
                   base: BenchResult | None = None) -> BenchResult:
    """Another system's ranking files or run folders (`taggraph.evaluation.score`) scored like `run_bench`,
    beside `base`. The summary's ``missing`` column counts the questions a run does not rank (left out
    of its n); ``config["external_runs"]`` records each run's source, name there, missing questions, the
    number of ranked ids its questions' histories lack (``unknown_ids``) and of note ids it ranks
    (``note_ids``)."""
    external = external_rankings(paths, cases, {c.case_id: history_ids(c) for c in cases}, depth,
                                 reserved=base.summary["method"] if base is not None else ())
    scored = score_rankings(external)
    found = data_warnings(cases)
    config = {"methods": {}, "extractor": "-", "depth": depth, "n_cases": len(cases),
              "n_abstention": int(sum(c.is_abstention for c in cases)), "input_warnings": compact_warnings(found)}
    if base is not None:
        scored = pd.concat([base.rankings, scored], ignore_index=True)
        config = dict(base.config)
    missing = external.attrs["missing"]
    config["external_runs"] = {m: {**source, "missing": len(missing[m]), "first_missing": missing[m][:5],
                                   "unknown_ids": external.attrs["unknown"][m],
                                   "note_ids": external.attrs["note_ids"][m]}
                               for m, source in external.attrs["sources"].items()}
    methods = list(dict.fromkeys(scored["method"]))
    summary = summarize(scored, order=methods)
    summary.insert(2, "missing", summary["method"].map(lambda m: len(missing.get(m, ()))))
    return BenchResult(scored, summary, per_type(scored),
                       base.timings if base is not None else pd.DataFrame(),
                       base.stores if base is not None else pd.DataFrame(), config,
                       warnings=base.warnings if base is not None else found,
                       pages=base.pages if base is not None else {},
                       data=cases.record() if isinstance(cases, Dataset) else None)


def add_significance(result: BenchResult, baseline: str | None) -> BenchResult:
    """Each method's MRR against `baseline`'s, paired per question (`evaluation.significance.compare`):
    the table goes to ``result.extra["significance"]``; the summary gains ``ΔMRR``, ``p`` (unadjusted),
    ``p_holm`` and ``p_bh`` (adjusted for the methods compared) and ``sig`` ("*": p_holm < 0.05) columns,
    and ``ΔMRR n`` (the questions both ranked) when that is not the n of both
    methods (a scored run that left questions out: its ΔMRR is then not the difference of the two MRRs
    shown). No-op without a baseline or when it did not run."""
    if not baseline or baseline not in set(result.summary["method"]):
        return result
    table = compare(result.rankings, baseline)
    result.extra["significance"] = table
    cols = table.set_index("method")[["diff", "p_value", "p_holm", "p_bh", "sig", "n"]].rename(
        columns={"diff": f"ΔMRR vs {baseline}", "p_value": "p", "n": PAIRED_N})
    summary = result.summary.merge(cols, left_on="method", right_index=True, how="left")
    base_n = summary.loc[summary["method"] == baseline, "n"].iloc[0]
    if not (summary[PAIRED_N].notna() & ((summary[PAIRED_N] != summary["n"]) | (summary[PAIRED_N] != base_n))).any():
        summary = summary.drop(columns=PAIRED_N)  # every ΔMRR is over both methods' own n questions
    result.summary = summary
    result.config["baseline"] = baseline
    return result


def add_benchmark_metrics(result: BenchResult, cases: Sequence[Case]) -> BenchResult:
    """Add the own metrics of the cases' format (`DatasetFormat.metrics`: ATANT's strict/permissive
    content match, LoCoMo's note level); no-op for a format without.

    The full table goes to ``result.extra["benchmark_metrics"]``; the mean of the format's columns over
    its chosen rows (the all-category ones) becomes extra summary columns, with the questions they judge
    (``<prefix>n``, when the table counts them: LoCoMo's note level leaves out questions with no evidence turn,
    which the session-level ``n`` counts as misses)."""
    fmt = format_of(cases)
    own = fmt.metrics if fmt else None
    if own is None or not len(cases):
        return result
    table = resolve(own.table)(result.rankings, cases)
    rows = table
    for column, value in own.where:
        rows = rows[rows[column] == value]
    columns = (["n"] if "n" in rows and "n" not in own.columns else []) + list(own.columns)
    overall = rows.groupby("method")[columns].mean().add_prefix(own.prefix)  # <prefix>n: the questions they judge
    if "n" in columns:
        overall[f"{own.prefix}n"] = overall[f"{own.prefix}n"].round().astype("Int64")
    result.extra["benchmark_metrics"] = table
    if len(overall):  # no method has the format's level (runs read from session-level files): no columns
        result.summary = result.summary.merge(overall, left_on="method", right_index=True, how="left")
    return result
