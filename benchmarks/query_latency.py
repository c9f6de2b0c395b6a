"""TagGraph-Fusion query latency after indexing: known, perturbed and foreign query texts.

    python benchmarks/query_latency.py --data ../shared/data/longmemeval/longmemeval_s_dev.json.gz [--cases 20] \
        [--embed-on-add] [--repeats 5] [--params '{"normalize": "max"}']

For each of the first `--cases` cases the store is built (extraction cache warm or not: it is
not timed), TagGraph-Fusion indexes it, and the case's own question is asked once to fill the
pool's note vectors (not timed). Then three kinds of query are timed, each on a fresh evidence
memo, so nothing is answered from the previous call:

- ``own``: the case's question again (query vector and pool vectors in the embedding cache);
- ``perturbed``: the question plus a word no note holds (one MiniLM pass for the new text);
- ``foreign``: another case's question plus such a word (a new query vector and, usually, new
  pool notes to embed);
- ``request``: the store's first request for suggestions (Fusion's request route: lazily, every
  note's raw turn is embedded then, once per store).

Perturbed texts carry a per-run nonce, so the persistent embedding cache never holds them; the
model is loaded before the first timed call.

With ``--embed-on-add`` every note is embedded while indexing (`TagGraphFusion`'s
``embed_on_add``), so no query waits for note vectors; the index time per case is printed
beside (notes already in the embedding cache cost a lookup, not a model pass: clear
``TAGGRAPH_CACHE`` for a cold index). Prints p50 / p90 / max in ms per kind and the torch thread count. Timings depend on the load:
run it on an idle machine and read medians, not single calls.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

from taggraph.datasets import load_dataset
from taggraph.runs.runner import build_store
from taggraph.methods.registry import make_retriever


def timed(retriever, text: str, now: str | None) -> float:
    """Milliseconds for one ``query`` on a cleared evidence memo."""
    retriever._memo = None  # the memo answers a repeated (text, date, size) for free; we want the work
    start = time.perf_counter()
    retriever.query(text, asked_on=now)
    return (time.perf_counter() - start) * 1000


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--data", required=True)
    ap.add_argument("--cases", type=int, default=20)
    ap.add_argument("--extractor", default="offline")
    ap.add_argument("--repeats", type=int, default=1, help="times each kind of query is timed per case "
                    "(perturbed, foreign and request texts get a new nonce each time; a foreign query's later "
                    "repeats find its pool notes embedded)")
    ap.add_argument("--embed-on-add", action="store_true", help="embed every note while indexing")
    ap.add_argument("--params", type=json.loads, default={}, help="TagGraph-Fusion parameters over its defaults, "
                    "as JSON (a partial `weights` dict keeps the other weights); run two settings alternately to compare")
    args = ap.parse_args()
    cases = load_dataset(args.data, limit=args.cases)
    times: dict[str, list[float]] = {"own": [], "perturbed": [], "foreign": [], "request": []}
    index_s: list[float] = []
    nonce = f"zq{time.time_ns()}"
    for i, case in enumerate(cases):
        store = build_store(case, args.extractor)
        start = time.perf_counter()
        fusion = make_retriever("TagGraph-Fusion", store, **{"embed_on_add": args.embed_on_add, **args.params})
        index_s.append(time.perf_counter() - start)
        now = case.asked_on  # as the bench passes it
        fusion.query(case.question, asked_on=now)  # fills the pool's vectors: indexing, not timed
        fusion.embedder.embed([f"{nonce} warm-up {i}"])  # the model is loaded: not a query cost
        for r in range(args.repeats):
            times["own"].append(timed(fusion, case.question, now))
            times["perturbed"].append(timed(fusion, f"{case.question} {nonce}p{i}x{r}", now))
            times["foreign"].append(timed(fusion, f"{cases[(i + 1) % len(cases)].question} {nonce}f{i}x{r}", now))
            times["request"].append(timed(fusion, f"Can you recommend something to try this weekend? {nonce}r{i}x{r}",
                                          now))
    import torch
    print(f"{len(cases)} cases, torch threads {torch.get_num_threads()}, embed_on_add {args.embed_on_add}, "
          f"params {json.dumps(args.params)}, "
          f"index p50 {statistics.median(index_s):.2f} s per case (max {max(index_s):.2f} s)")
    print("| query | n | p50 ms | p90 ms | max ms |\n|---|---|---|---|---|")
    for kind, ms in times.items():
        p90 = statistics.quantiles(ms, n=10)[-1] if len(ms) > 1 else ms[0]
        print(f"| {kind} | {len(ms)} | {statistics.median(ms):.1f} | {p90:.1f} | {max(ms):.1f} |")


if __name__ == "__main__":
    main()
