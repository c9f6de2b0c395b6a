"""MemPalace (https://github.com/MemPalace/mempalace, MIT) as a method: its verbatim drawers in ChromaDB, its ranking.

Where the harness forces a choice the package does not make, this takes MemPalace's own LongMemEval benchmark choice
(``benchmarks/longmemeval_bench.py``, its default ``--granularity session``): one drawer per session holding the
user's turns of that session verbatim, joined by newlines (the assistant's turns are not stored), and no query date
(its raw mode and the package's hybrid re-rank read none). Our rankings are over notes: every note of a session
gets its session's score, so the session ranks where MemPalace ranks its drawer (the metrics count a session at its
best note) and ties inside a session fall to the earlier note.

- ``mode="raw"`` (name ``MemPalace``): the drawer's vector similarity to the question, 1 - cosine distance as
  ChromaDB reports it (the benchmark's raw mode; its collection uses L2, which orders unit vectors as cosine does).
- ``mode="hybrid"`` (``MemPalace-hybrid``): the package's own re-rank, ``mempalace.searcher._hybrid_rank`` (vector
  similarity and Okapi BM25 over the candidates, min-max scaled, 0.6 / 0.4 by default), over the package's own
  candidate pool for depth 40 (``_candidate_pool_limits``: 4 x 40 nearest drawers). The package does not return the
  fused value, so a note scores its session's place in that order (the pool's size less its rank, plus one). No
  closet boost: closets come from the package's regex mining of files, which a drawer per session does not run.

The embedder is ours (default ``minilm``, the bundled all-MiniLM-L6-v2, the model MemPalace defaults to), handed to
ChromaDB (`chroma_embedding`): nothing is downloaded, and vectors come from the shared embedding cache, so a history's
palace costs one embedding per session document once. Each retriever holds one in-memory palace (a ChromaDB
collection of its own in the process's ephemeral client), never written into the repository. The hybrid_v4 mode
(keyword, temporal, quoted-phrase, name and preference boosts) lives only in MemPalace's benchmark script, not in the
package: `benchmarks/mempalace_script.py` runs that script and scores its rankings.
"""

from __future__ import annotations

import sys
import uuid
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from typing import Annotated, Any, Literal

import chromadb
import numpy as np
from chromadb.config import Settings
_PATH = list(sys.path)
from mempalace import searcher  # noqa: E402
sys.path[:] = _PATH  # mempalace's __init__ drops PYTHONPATH's folders from sys.path; the host's plug-ins live there
from pydantic import Field

from taggraph.core.notes import Note
from taggraph.core.text import snippet
from taggraph.embedders.base import Embedder, get_embedder
from taggraph.methods.base import DEFAULT_DEPTH, Evidence, Retriever
from taggraph.methods.params import DEVICE, EMBEDDER
from taggraph.methods.scores import Scores
from taggraph.peers.chroma_embedding import TaggraphEmbedding

SNIPPET_CHARS = 200


@lru_cache(maxsize=1)
def client() -> Any:
    """The process's one ephemeral ChromaDB client (its instances share state anyway, as MemPalace's script notes)."""
    return chromadb.EphemeralClient(Settings(anonymized_telemetry=False, allow_reset=False))


@dataclass
class _Ranked:
    """One question's ranking of the drawers: session -> (cosine distance, vector rank), and for hybrid mode
    session -> (hybrid rank, the package's BM25 score) over the candidate pool."""

    vector: dict[str, tuple[float, int]]
    hybrid: dict[str, tuple[int, float]]
    pool: int


class MemPalace(Retriever):
    """MemPalace's drawers of the user's turns per session, ranked by its own code (raw vector, or hybrid)."""

    @dataclass(frozen=True)
    class Params:
        mode: Literal["raw", "hybrid"] = "raw"
        # the package's defaults (mempalace.searcher._resolve_hybrid_rank_weights), fixed here so a user's
        # MEMPALACE_HYBRID_* environment cannot change a run
        vector_weight: Annotated[float, Field(ge=0)] = 0.6
        bm25_weight: Annotated[float, Field(ge=0)] = 0.4
        embedder: Annotated[str | Embedder, EMBEDDER] = "minilm"  # MemPalace's default model, our bundled copy
        device: Annotated[Literal["auto", "cpu", "cuda"] | str, DEVICE] = "auto"

    def __init__(self, store, params: Params | None = None) -> None:
        super().__init__(store, params)
        self.embedder = get_embedder(self.params.embedder, self.params.device)
        self.palace = client().create_collection(f"taggraph-{uuid.uuid4().hex}", metadata={"hnsw:space": "cosine"},
                                                 embedding_function=TaggraphEmbedding(self.embedder))
        self.turns: dict[str, list[str]] = {}  # session -> its user turns, in order
        self.notes_of: dict[str, list[int]] = {}  # session -> its note indexes
        self.dated: dict[str, str] = {}  # session -> its first note's timestamp (the package's tie-break)
        self._stale: set[str] = set()  # sessions whose drawer is not written yet
        self._memo: tuple[tuple[str, int], _Ranked] | None = None

    def __del__(self) -> None:
        try:
            client().delete_collection(self.palace.name)
        except Exception:  # noqa: BLE001 - interpreter shutdown, or the collection already gone
            pass

    def config(self) -> dict[str, Any]:
        """The parameters, with the embedder's name, the device it runs on and MemPalace's version."""
        return {**super().config(), "embedder": self.embedder.name, "device": self.embedder.device}

    def add(self, note: Note) -> None:
        sid = note.session_id
        self.notes_of.setdefault(sid, []).append(note.index)
        self.dated.setdefault(sid, note.timestamp)
        if note.user.strip():
            self.turns.setdefault(sid, []).append(note.user)
            self._stale.add(sid)
        self._memo = None

    def _write_drawers(self) -> None:
        """File each changed session's drawer (its user turns joined by newlines, as the benchmark builds it)."""
        if self._stale:
            sids = [s for s in self.turns if s in self._stale]  # in session order
            self.palace.upsert(ids=sids, documents=["\n".join(self.turns[s]) for s in sids],
                               metadatas=[{"session_id": s, "timestamp": self.dated[s]} for s in sids])
            self._stale.clear()

    def _ranked(self, text: str) -> _Ranked:
        """The drawers ranked for `text`, queried once per (text, number of notes)."""
        key = (text, len(self.store))
        if self._memo is not None and self._memo[0] == key:
            return self._memo[1]
        self._write_drawers()
        count = self.palace.count()
        vector: dict[str, tuple[float, int]] = {}
        hybrid: dict[str, tuple[int, float]] = {}
        pool = 0
        if text.strip() and count:
            found = self.palace.query(query_texts=[text], n_results=count, include=["documents", "distances"])
            ids, docs, dists = found["ids"][0], found["documents"][0], found["distances"][0]
            vector = {sid: (float(d), r) for r, (sid, d) in enumerate(zip(ids, dists), 1)}
            if self.params.mode == "hybrid":
                pool = min(searcher._candidate_pool_limits("vector", DEFAULT_DEPTH)[0], len(ids))
                hits = [{"text": doc, "distance": d, "authored_at": self.dated[sid], "session": sid}
                        for sid, doc, d in list(zip(ids, docs, dists))[:pool]]
                searcher._hybrid_rank(hits, text, vector_weight=self.params.vector_weight,
                                      bm25_weight=self.params.bm25_weight, metric="cosine")
                hybrid = {h["session"]: (r, float(h["bm25_score"])) for r, h in enumerate(hits, 1)}
        ranked = _Ranked(vector, hybrid, pool)
        self._memo = (key, ranked)
        return ranked

    def _session_scores(self, ranked: _Ranked) -> dict[str, float]:
        if self.params.mode == "hybrid":
            return {sid: float(ranked.pool - r + 1) for sid, (r, _) in ranked.hybrid.items()}
        return {sid: 1.0 - d for sid, (d, _) in ranked.vector.items()}

    def score(self, text: str, *, asked_on: datetime | None = None) -> Scores:
        """Each note scored as its session's drawer (module docstring); the query date is not read."""
        per_session = self._session_scores(self._ranked(text))
        values = np.zeros(len(self.store))
        reached = np.zeros(len(self.store), dtype=bool)
        for sid, value in per_session.items():
            values[self.notes_of[sid]] = value
            reached[self.notes_of[sid]] = True
        return Scores.of_dense(values, reached)

    def evidence(self, text: str, note: Note, *, asked_on: datetime | None = None) -> Evidence:
        """What MemPalace gives for the note's session: its drawer's cosine distance and vector rank, and in hybrid
        mode the package's BM25 score and its place in the re-rank."""
        sid = note.session_id
        if sid not in self.turns:
            return Evidence(missing="its session holds no user turn, so MemPalace files no drawer for it")
        ranked = self._ranked(text)
        if sid not in ranked.vector:
            return Evidence(missing="the question is blank, so MemPalace's vector query returns no drawer")
        distance, vector_rank = ranked.vector[sid]
        detail: dict[str, Any] = {"session": sid, "distance": round(distance, 4),
                                  "similarity": round(1.0 - distance, 4), "vector_rank": vector_rank,
                                  "drawers": len(ranked.vector),
                                  "drawer": snippet("\n".join(self.turns[sid]), SNIPPET_CHARS)}
        said = (f"session {sid}'s drawer at cosine distance {distance:.4f} (similarity {1 - distance:.4f}), "
                f"vector rank {vector_rank} of {len(ranked.vector)}")
        if self.params.mode == "raw":
            return Evidence(summary=said, detail=detail)
        if sid not in ranked.hybrid:
            return Evidence(missing=f"{said}: outside the package's pool of the {ranked.pool} nearest drawers it "
                                    f"re-ranks", detail=detail)
        hybrid_rank, bm25 = ranked.hybrid[sid]
        detail.update(bm25_score=bm25, hybrid_rank=hybrid_rank, pool=ranked.pool,
                      weights={"vector": self.params.vector_weight, "bm25": self.params.bm25_weight})
        return Evidence(summary=f"{said}; BM25 {bm25:g} among the {ranked.pool} candidates; the package's "
                                f"{self.params.vector_weight:g} vector + {self.params.bm25_weight:g} BM25 re-rank "
                                f"puts it {hybrid_rank}", detail=detail)
