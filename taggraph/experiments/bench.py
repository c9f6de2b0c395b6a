"""The main job: every chosen method over every case of a dataset, scored per question.

`run_bench` returns tidy DataFrames (one row per question x method) and the run
configuration; `taggraph.experiments.runs.save_run` writes them as a run folder.
Cases are independent, so they run in parallel with joblib; results do not
depend on the number of workers (each case is computed the same way alone).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import pandas as pd
from joblib import Parallel, delayed

from taggraph.datasets import Case
from taggraph.evaluation import dedupe_sessions, session_metrics
from taggraph.extraction import get_extractor
from taggraph.progress import progress
from taggraph.retrieval import DEFAULT_DEPTH, PAPER_METHODS, make_retriever
from taggraph.store import MemoryStore

_EXTRACTORS: dict[str, Any] = {}


def extractor_for(name: str):
    """One extractor per process and name (spaCy and model clients load once)."""
    if name not in _EXTRACTORS:
        _EXTRACTORS[name] = get_extractor(name)
    return _EXTRACTORS[name]


def build_store(case: Case, extractor: str = "offline") -> MemoryStore:
    """The case's memory: every interaction remembered in order."""
    store = MemoryStore(case.case_id, extractor_for(extractor))
    store.remember_many(case.interactions)
    return store


@dataclass
class CaseResult:
    rows: list[dict[str, Any]]
    timings: list[dict[str, Any]]
    method_configs: dict[str, dict[str, Any]]
    store_stats: dict[str, Any] = field(default_factory=dict)


def run_case(case: Case, methods: list[str], extractor: str = "offline", depth: int = DEFAULT_DEPTH,
             method_params: dict[str, dict[str, Any]] | None = None) -> CaseResult:
    """Rank the case's notes with each method and map them to de-duplicated sessions."""
    t0 = time.perf_counter()
    store = build_store(case, extractor)
    timings = [{"question_id": case.case_id, "stage": "extract+store", "method": "",
                "seconds": time.perf_counter() - t0}]
    rows = []
    configs = {}
    for name in methods:
        t1 = time.perf_counter()
        retriever = make_retriever(name, store, **(method_params or {}).get(name, {}))
        t2 = time.perf_counter()
        configs[name] = retriever.config()
        asked = {"now": case.question_date} if getattr(retriever, "uses_question_date", False) else {}
        results = retriever.query(case.question, k=depth, **asked)
        t3 = time.perf_counter()
        timings += [{"question_id": case.case_id, "stage": "index", "method": name, "seconds": t2 - t1},
                    {"question_id": case.case_id, "stage": "query", "method": name, "seconds": t3 - t2}]
        rows.append({
            "question_id": case.case_id, "question_type": case.question_type, "method": name,
            "ranked_session_ids": dedupe_sessions((r.session_id for r in results), depth),
            "gold_session_ids": list(case.gold_session_ids),
            "ranked_note_ids": [r.note_id for r in results],
            "abstention": case.is_abstention,
        })
    stats = {"question_id": case.case_id, "notes": len(store), "distinct_tags": len(store.ontology),
             "tag_occurrences": sum(store.ontology.counts.values()), "minted": store.minted,
             "reused": store.reused, "extraction_errors": len(store.extraction_errors),
             **store.graph.stats()}
    return CaseResult(rows, timings, configs, stats)


@dataclass
class BenchResult:
    rankings: pd.DataFrame
    summary: pd.DataFrame
    per_type: pd.DataFrame
    timings: pd.DataFrame
    stores: pd.DataFrame
    config: dict[str, Any]
    extra: dict[str, pd.DataFrame] = field(default_factory=dict)  # a benchmark's own metric tables


def score_rankings(rankings: pd.DataFrame) -> pd.DataFrame:
    """Add the per-question metrics to rankings (abstention questions get NaN)."""
    scored = rankings.copy()
    golds = {}
    runs = {}
    for i, row in scored.iterrows():
        if row["gold_session_ids"]:
            golds[i] = row["gold_session_ids"]
            runs[i] = row["ranked_session_ids"]
    metrics = session_metrics({str(k): v for k, v in runs.items()}, {str(k): v for k, v in golds.items()})
    table = pd.DataFrame.from_dict(metrics, orient="index")
    table.index = table.index.astype(int)
    scored = scored.join(table)
    return scored.rename(columns={"RR": "reciprocal_rank"})


METRIC_COLUMNS = ["MRR", "R@1", "R@3", "R@5", "recall_all@5", "recall_all@10", "ndcg_any@5", "ndcg_any@10"]


def summarize(scored: pd.DataFrame, methods: list[str]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(summary per method, recall per method and question type) over questions with gold."""
    judged = scored[~scored["abstention"] & scored["reciprocal_rank"].notna()]
    agg = {"n": ("question_id", "size"), "MRR": ("reciprocal_rank", "mean"),
           **{c: (c, "mean") for c in METRIC_COLUMNS[1:]}}
    summary = judged.groupby("method", sort=False).agg(**agg).reindex(methods).reset_index()
    per_type = (judged.groupby(["question_type", "method"], sort=True)
                .agg(n=("question_id", "size"), MRR=("reciprocal_rank", "mean"),
                     **{f"R@{k}": (f"R@{k}", "mean") for k in (1, 3, 5)})
                .reset_index())
    return summary, per_type


def run_bench(cases: list[Case], methods: list[str] | None = None, extractor: str = "offline",
              depth: int = DEFAULT_DEPTH, workers: int = 1, method_params: dict[str, dict] | None = None,
              backend: str = "loky") -> BenchResult:
    methods = list(methods or PAPER_METHODS)
    jobs = (delayed(run_case)(c, methods, extractor, depth, method_params) for c in cases)
    if workers == 1:
        results = [run_case(c, methods, extractor, depth, method_params)
                   for c in progress(cases, desc="cases", unit="case")]
    else:
        results = list(progress(Parallel(n_jobs=workers, backend=backend, return_as="generator")(jobs),
                                total=len(cases), desc="cases", unit="case"))
    rankings = pd.DataFrame([r for res in results for r in res.rows])
    scored = score_rankings(rankings)
    summary, per_type = summarize(scored, methods)
    config = {
        "methods": results[0].method_configs if results else {},
        "extractor": extractor, "extractor_cache_key": getattr(extractor_for(extractor), "cache_key", ""),
        "depth": depth, "workers": workers, "n_cases": len(cases),
        "n_abstention": int(sum(c.is_abstention for c in cases)),
    }
    return BenchResult(scored, summary, per_type, pd.DataFrame([t for r in results for t in r.timings]),
                       pd.DataFrame([r.store_stats for r in results]), config)


def add_benchmark_metrics(result: BenchResult, cases: list[Case]) -> BenchResult:
    """Add ATANT's (strict/permissive content match) or LoCoMo's (note level) own metrics.

    The full table goes to ``result.extra["benchmark_metrics"]``; the all-category
    numbers also become extra summary columns.
    """
    from taggraph.datasets.atant import AtantCase, atant_metrics
    from taggraph.datasets.locomo import LocomoCase, locomo_metrics

    if cases and isinstance(cases[0], AtantCase):
        table = atant_metrics(result.rankings, cases)
        overall = table[table["category"] == "all"].groupby("method")[["MRR_strict", "MRR_permissive"]].mean()
    elif cases and isinstance(cases[0], LocomoCase):
        table = locomo_metrics(result.rankings, cases)
        notes = table[(table["level"] == "note") & (table["category"] == "all")].set_index("method")
        overall = notes[[c for c in notes.columns if c == "MRR" or c.startswith("recall@")]].add_prefix("note_")
    else:
        return result
    result.extra["benchmark_metrics"] = table
    result.summary = result.summary.merge(overall, left_on="method", right_index=True, how="left")
    return result
