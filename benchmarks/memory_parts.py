"""Where a memory's resident memory per note goes: its notes, the base graph, the shared indexes, each method's parts.

    python -m benchmarks.memory_parts --data ../shared/data/longmemeval/longmemeval_s_dev.json.gz \
        --notes 20000 [--embedder minilm-int8] [--queries 30] [--tracemalloc] [--out parts.json]

The memory holds the first `--notes` notes of LongMemEval-S dev's own history (`benchmarks.scale`'s `read_history`
and `stream`: distinct sessions in date order, then again under fresh ids), built with `Memory.remember_many` from
the cached offline extractions. Every method module and the embedder are loaded, and one one-note memory queried,
before the process base is read. Then each part is made in turn, and its row is the resident memory it added (RSS
after `gc.collect`, KB per note):

- ``notes (store)``: the notes (their texts included), their ontology and the store's own lists;
- ``base graph``: `core.graph.BaseGraph` taking the notes in (its first read);
- ``term index`` and ``concept matcher``: the shared indexes (`methods.index`);
- ``BM25`` and ``AdaptiveGraph``: each method with `--queries` questions asked (its memo included);
- TagGraph-Fusion (`--embedder`, default minilm-int8), part by part: the shared indexes it reads (its raw-turn term
  index, the BM25-stem indexes over the notes and the raw turns), then Fusion itself (its BM25s, its per-note
  arrays), its own AdaptiveGraph's walk, then the questions (the vectors of the notes it embeds: its pools only).

RSS deltas count what the allocator kept (freed Python objects leave their arenas resident); `--tracemalloc` adds
each part's traced bytes (Python objects and numpy buffers, what the part holds) and its three largest allocation
sites, at the price of a slower run whose RSS includes tracemalloc's own records.
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import json
import os
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

from taggraph import Memory
from taggraph._infra.atomic import atomic_write
from taggraph._infra.config import DEFAULT_EXTRACTOR
from taggraph.core.store import Interaction
from taggraph.methods.bm25_stem import BM25Stem
from taggraph.methods.fusion.method import RawTurnsStem
from taggraph.methods.index import concept_matcher, raw_term_index, term_index
from taggraph.runs.provenance import machine
from benchmarks.scale import load_process, one_round, questions, read_history, rss_kb, span_days, stream

FUSION = "TagGraph-Fusion"
SITES = 3  # allocation sites shown per part with --tracemalloc


class Parts:
    """The parts measured so far: each one's RSS (and with tracemalloc its traced bytes) above the last."""

    def __init__(self, notes: int, traced: bool) -> None:
        self.notes, self.traced, self.rows = notes, traced, []
        gc.collect()
        self._rss, self._bytes = rss_kb(), self._traced_bytes()
        self.base_kb = self._rss
        self._snapshot = tracemalloc.take_snapshot() if traced else None

    def _traced_bytes(self) -> int:
        return tracemalloc.get_traced_memory()[0] if self.traced else 0

    def measure(self, part: str, make: Callable[[], Any] = lambda: None) -> Any:
        """`make()`, and the row of `part`: what it added since the last part; returns what `make` returned."""
        start = time.process_time()
        made = make()
        cpu = time.process_time() - start
        gc.collect()
        rss, traced = rss_kb(), self._traced_bytes()
        row = {"part": part, "rss_kb_per_note": round((rss - self._rss) / self.notes, 3), "cpu_s": round(cpu, 2)}
        if self.traced:
            snapshot = tracemalloc.take_snapshot()
            row["traced_kb_per_note"] = round((traced - self._bytes) / 1024 / self.notes, 3)
            row["sites"] = [f"{s.traceback[0].filename.rpartition('site-packages/')[2]}:{s.traceback[0].lineno} "
                            f"{s.size_diff / 1024 / self.notes:.2f} KB/note"
                            for s in snapshot.compare_to(self._snapshot, "lineno")[:SITES]]
            self._snapshot = snapshot
        self.rows.append(row)
        self._rss, self._bytes = rss, traced
        print(f"{part}: {row['rss_kb_per_note']} KB/note", file=sys.stderr, flush=True)
        return made


def fusion_parts(parts: Parts, memory: Memory, asked: list[tuple[str, str]]) -> None:
    """TagGraph-Fusion's rows, part by part: the shared indexes it reads beyond BM25's and AdaptiveGraph's (each made
    as its first reader makes it), then Fusion itself (its BM25s on those indexes, its per-note arrays), its own
    AdaptiveGraph's walk, then the questions."""
    store = memory.store
    parts.measure("Fusion: raw-turn term index", lambda: raw_term_index(store))
    parts.measure("Fusion: BM25-stem index (notes)", lambda: BM25Stem(store))
    parts.measure("Fusion: BM25-stem index (raw turns)", lambda: RawTurnsStem(store))
    fusion = parts.measure("Fusion: its BM25s, per-note arrays", lambda: memory.retriever(FUSION))
    if fusion.graph is not None:
        parts.measure("Fusion: its AdaptiveGraph's walk", fusion.graph.adjacency)
    parts.measure("Fusion: questions (pool vectors, memos)", lambda: ask(memory, FUSION, asked))
    parts.rows[-1]["embedded_rows"] = {kind: len(vectors.matrix) for kind, (vectors, _) in fusion._pieces.items()}


def fresh(interaction: Interaction) -> Interaction:
    """`interaction` with texts of its own (decoded anew): the notes row counts the texts a memory holds, which the
    history read before the base would otherwise share."""
    return dataclasses.replace(interaction, user=interaction.user.encode().decode(),
                               assistant=interaction.assistant.encode().decode())


def ask(memory: Memory, method: str, asked: list[tuple[str, str]]) -> None:
    for question, date in asked:
        memory.query(question, method=method, k=10, asked_on=date)


def measure(data: Path, notes: int, embedder: str, queries: int, traced: bool) -> dict[str, Any]:
    """Every part's row (module docstring) for a memory of `notes` notes."""
    sessions, records = read_history(data)
    history = stream(sessions, notes)
    rounds = (notes - 1) // sum(1 for _ in one_round(sessions, 0, 0))  # the repetitions of the sessions it reaches
    asked = questions(records, queries, rounds * span_days(sessions))  # asked after the last note, as scale asks
    params = {FUSION: {"embedder": embedder}}
    load_process(["BM25", "AdaptiveGraph", FUSION], DEFAULT_EXTRACTOR, params, history[0])
    if traced:
        tracemalloc.start()
    parts = Parts(notes, traced)
    memory = Memory(DEFAULT_EXTRACTOR, method_params=params)
    parts.measure("notes (store)", lambda: memory.remember_many(map(fresh, history), progress=False))
    parts.measure("base graph", lambda: len(memory.store.graph.topic_of_frame))  # its first read takes the notes in
    parts.measure("term index", lambda: term_index(memory.store))
    parts.measure("concept matcher", lambda: concept_matcher(memory.store))
    for method in ("BM25", "AdaptiveGraph"):
        parts.measure(method, lambda: ask(memory, method, asked))
    fusion_parts(parts, memory, asked)
    gc.collect()
    total = round((rss_kb() - parts.base_kb) / notes, 3)
    return {"notes": notes, "embedder": embedder, "queries": len(asked), "base_rss_mb": round(parts.base_kb / 1024, 1),
            "total_kb_per_note": total, "parts": parts.rows, "machine": machine(), "load_average": os.getloadavg()}


def table(result: dict[str, Any]) -> str:
    """The rows as a Markdown table."""
    traced = "traced_kb_per_note" in result["parts"][0]
    lines = ["| part | RSS KB/note | " + ("traced KB/note | largest sites |" if traced else ""),
             "|---|---|" + ("---|---|" if traced else "")]
    for row in result["parts"]:
        extra = f" {row['traced_kb_per_note']} | {'; '.join(row['sites'])} |" if traced else ""
        lines.append(f"| {row['part']} | {row['rss_kb_per_note']} |{extra}")
    lines.append(f"| **total above base** ({result['notes']} notes) | **{result['total_kb_per_note']}** |"
                 + (" | |" if traced else ""))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, required=True, help="longmemeval_s_dev.json(.gz)")
    parser.add_argument("--notes", type=int, default=20000)
    parser.add_argument("--embedder", default="minilm-int8", help="TagGraph-Fusion's embedder")
    parser.add_argument("--queries", type=int, default=30)
    parser.add_argument("--tracemalloc", action="store_true", help="also each part's traced bytes and largest sites")
    parser.add_argument("--out", type=Path, help="the rows as JSON")
    args = parser.parse_args(argv)
    result = measure(args.data, args.notes, args.embedder, args.queries, args.tracemalloc)
    if args.out:
        atomic_write(args.out, json.dumps(result, indent=1))
    print(table(result))


if __name__ == "__main__":
    main()
