"""Per-query latency, PPR vs networkx, incremental remember vs rebuild, on real cases.

    python benchmarks/bench_methods.py [--cases 20] [--data PATH] [--methods ...]

Uses LongMemEval-S dev cases when TAGGRAPH_DATA (or ../shared/data) has them, else
the demo. Prints markdown tables (medians; absolute times are noisy on shared
machines, ratios less so).
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import networkx as nx
import numpy as np
import pandas as pd

from taggraph._infra.config import DEMO_DATA, data_dir
from taggraph.datasets import load_dataset
from taggraph.runs.runner import build_store, extractor_for
from taggraph.methods import make_retriever
from taggraph.methods.adaptive import personalized_pagerank
from taggraph.core.notes import Note
from taggraph.core.store import Interaction, MemoryStore

FAST = ["BM25", "TagGraph-Basic", "TagGraph-Stopwords", "TagGraph-TFIDF", "AdaptiveGraph"]


def timed(fn, *args, **kw):
    t = time.perf_counter()
    out = fn(*args, **kw)
    return time.perf_counter() - t, out


def main() -> None:
    ap = argparse.ArgumentParser()
    default = data_dir() / "longmemeval_s_dev.json.gz"
    ap.add_argument("--data", type=Path, default=default if default.exists() else DEMO_DATA)
    ap.add_argument("--cases", type=int, default=20)
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--methods", default=",".join(FAST + ["OpenClaw", "OC-notes"]))
    ap.add_argument("--extractor", default="offline")
    args = ap.parse_args()
    methods = args.methods.split(",")
    all_cases = load_dataset(args.data)
    cases = all_cases[:args.cases]
    queries = [c.question for c in all_cases[-args.queries:]]  # distinct real questions, asked of every case
    latency = {m: [] for m in methods}
    index = {m: [] for m in methods}
    ppr_ratio, remember_ratio, remember_sync_ratio = [], [], []
    notes = []
    extractor_for(args.extractor)  # load the model outside the timings
    for case in cases:
        store = build_store(case, args.extractor)
        notes.append(len(store))
        retrievers = {}
        for m in methods:
            t_idx, retrievers[m] = timed(make_retriever, m, store)
            retrievers[m].query(case.question)  # first query syncs lazy structures (PPR matrix)
            index[m].append(t_idx)
            for q in queries:
                latency[m].append(timed(retrievers[m].query, q)[0])
        # PPR to convergence: ours (cached LU solve) vs networkx.pagerank, same graph and personalization
        ag = retrievers.get("AdaptiveGraph") or make_retriever("AdaptiveGraph", store)
        P, dangling = ag.transition()
        _, s = ag.scores_all(case.question)
        if s.sum() > 0:
            g = store.graph.to_networkx(chronological=True)
            pers = {n: float(s[i]) for n, i in ag.node_index.items()}
            t_nx, ref = timed(nx.pagerank, g, alpha=0.85, personalization=pers, weight=None, tol=1e-10, max_iter=1000)
            solve = ag.exact_solver()  # factorized once per graph state, like the cached matrix
            t_us = statistics.median(timed(personalized_pagerank, P, dangling, s, iterations=None, solver=solve)[0]
                                     for _ in range(5))
            ours = personalized_pagerank(P, dangling, s, iterations=None, solver=solve)
            assert np.abs(ours - np.array([ref[n] for n in ag.node_index])).max() < 1e-6
            ppr_ratio.append(t_nx / t_us)
        # incremental remember vs rebuilding the case (graph and BM25 indexes; extraction given)
        graph_methods = [m for m in methods if m in FAST]
        t_rebuild = statistics.median(timed(rebuild, store, graph_methods, case.question)[0] for _ in range(3))
        fresh = rebuild(store, graph_methods, case.question)
        extra = Interaction(case.interactions[-1].session_id + "_bench", "I adopted a beagle named Max.", "Nice!")
        extraction = extractor_for(args.extractor).extract(extra.user, extra.assistant, [])
        for i in range(5):
            base_q = sum(timed(r.query, case.question)[0] for r in fresh)  # warm queries, nothing to sync
            t_add, _ = timed(fresh[0].store.remember, Interaction(f"{extra.session_id}{i}", extra.user), extraction)
            t_sync = sum(timed(r.query, case.question)[0] for r in fresh) - base_q  # lazy re-sync at next query
            remember_ratio.append(t_rebuild / t_add)
            remember_sync_ratio.append(t_rebuild / (t_add + max(t_sync, 0.0)))
    rows = [{"method": m, "index build p50 (ms)": 1000 * statistics.median(index[m]),
             "query p50 (ms)": 1000 * statistics.median(latency[m]),
             "query p95 (ms)": 1000 * float(np.percentile(latency[m], 95))} for m in methods]
    print(f"data: {args.data.name}, {len(cases)} cases, median {statistics.median(notes)} notes/case, "
          f"{len(queries)} queries per case, extractor {args.extractor}\n")
    print(pd.DataFrame(rows).round(2).to_markdown(index=False))
    if ppr_ratio:
        print(f"\nPPR to convergence vs networkx.pagerank (same scores within 1e-6): median speed-up "
              f"{statistics.median(ppr_ratio):.0f}x over {len(ppr_ratio)} cases")
    print(f"\none incremental remember() (extraction given) vs rebuilding the case's store and graph/BM25 "
          f"indexes: median {statistics.median(remember_ratio):.0f}x cheaper; including the lazy index "
          f"re-sync paid at the next query: {statistics.median(remember_sync_ratio):.0f}x")


def rebuild(store: MemoryStore, methods: list[str], question: str) -> list:
    """A fresh store from the same notes (extraction not repeated) with `methods` indexed and synced."""
    fresh = MemoryStore(store.case_id)
    for n in store.notes:
        fresh.add_note(Note(n.note_id, n.session_id, n.user, n.assistant, n.timestamp, n.tags, n.summary))
    retrievers = [make_retriever(m, fresh) for m in methods]
    for r in retrievers:
        r.query(question)
    return retrievers


if __name__ == "__main__":
    main()
