"""Fill the embedding cache for the dense methods of a dataset before a bench run.

`run_bench` embeds each case's chunks inside its own case, in batches of 64 in
note order. `fill_embedding_cache` instead gathers the chunks of every case and
dense method first, drops the duplicates (LongMemEval haystacks share sessions:
13% of the S dev split's raw chunks are repeats) and those already cached, sorts
the rest by length so a batch pads little, and embeds them in one process. A
later `taggraph bench` with the same embedder finds every chunk in the cache.
"""

from __future__ import annotations

import time
from typing import Any

import pandas as pd

from taggraph._infra.config import DEFAULT_EXTRACTOR
from taggraph.datasets import Case
from taggraph.errors import ConfigError
from taggraph.runs.runner import build_store, group_by_history
from taggraph._infra.progress import progress
from taggraph.methods import method, method_names
from taggraph.embedders.base import Embedder, get_embedder
from taggraph.methods.openclaw import OpenClaw, note_chunks

SLICE = 2048  # texts per call to `Embedder.embed`: the unit of progress and of cache writes
_CHUNK_KEYS = ("source", "chunk_chars", "overlap_chars")


def chunking_methods() -> list[str]:
    """The methods whose embeddings this cache fills ahead: OpenClaw's kind (chunks of every note);
    TagGraph-Fusion embeds only its pool's notes, at query time."""
    return [m for m in method_names(ablations=False) if method(m).cls() is OpenClaw]


def dense_chunks(cases: list[Case], methods: list[str], extractor: str = DEFAULT_EXTRACTOR,
                 method_params: dict[str, dict[str, Any]] | None = None) -> dict[str, list[str]]:
    """Every chunk each chunking method in `methods` (`CHUNKING_METHODS`) embeds over `cases`, in case and
    note order; a history that several cases share (LoCoMo, ATANT) is built and chunked once."""
    unknown = [m for m in methods if m not in chunking_methods()]
    if unknown:
        raise ConfigError(f"not methods that embed chunks: {unknown}; these do: {', '.join(chunking_methods())}")
    params = {m: {k: getattr(method(m).params(**(method_params or {}).get(m, {})), k) for k in _CHUNK_KEYS}
              for m in methods}
    out: dict[str, list[str]] = {m: [] for m in methods}
    for case in progress([group[0] for group in group_by_history(cases)], desc="chunking", unit="history"):
        store = build_store(case, extractor)
        for m in methods:
            out[m] += [c for note in store.notes for c in note_chunks(note, **params[m])]
    return out


def fill_embedding_cache(cases: list[Case], methods: list[str] | None = None, embedder: str | Embedder = "minilm",
                         extractor: str = DEFAULT_EXTRACTOR,
                         method_params: dict[str, dict[str, Any]] | None = None) -> pd.DataFrame:
    """Embed every chunk the dense `methods` need over `cases` that the cache lacks.

    Returns one row per method (chunks, distinct chunks) and a row "all" that adds
    how many distinct chunks were already cached, how many were embedded now, the
    embedding seconds and chunks per second.
    """
    methods = list(methods or chunking_methods())
    model = get_embedder(embedder)
    t0 = time.perf_counter()
    chunks = dense_chunks(cases, methods, extractor, method_params)
    chunk_seconds = time.perf_counter() - t0
    rows = [{"method": m, "chunks": len(c), "distinct": len(set(c))} for m, c in chunks.items()]
    distinct = list(dict.fromkeys(c for cs in chunks.values() for c in cs))
    todo = sorted(model.missing(distinct), key=len)
    t1 = time.perf_counter()
    for start in progress(range(0, len(todo), SLICE), desc=f"embedding ({model.name})", unit="slice"):
        model.embed(todo[start:start + SLICE])
    seconds = time.perf_counter() - t1
    rows.append({"method": "all", "chunks": sum(r["chunks"] for r in rows), "distinct": len(distinct),
                 "cached_before": len(distinct) - len(todo), "embedded": len(todo),
                 "chunking_seconds": round(chunk_seconds, 1), "embedding_seconds": round(seconds, 1),
                 "chunks_per_second": round(len(todo) / seconds, 1) if todo else None,
                 "embedder": model.cache_key})
    return pd.DataFrame(rows)
