"""OpenClaw: dense + keyword hybrid retrieval over chunks (paper, appendix E).

Each note's text - ``source="raw"``: `Note.raw_text`, the conversation as written
(OpenClaw (orig.)); ``source="notes"``: `Note.to_markdown()`, the extracted note
(OC-notes) - is cut into chunks (`chunk_text`: ~1,600 characters on line
boundaries, ~320 characters of whole lines carried over; OpenClaw's 400/80-token
defaults at 4 characters per token). For a query and depth k:

- dense list: cosine between the query embedding and every chunk; a note scores
  its best chunk; the `candidate_multiplier` * k = 4k best notes are kept.
- keyword list: SQLite FTS5 over the chunks; query = the distinct query tokens
  (taggraph.core.text.query_tokens) double-quoted and joined with AND; a chunk's
  ``bm25()`` rank r (negative, lower is better) scores |r| / (1 + |r|); a note
  scores its best chunk; the 4k best notes are kept. A query without tokens, or
  with no chunk holding all of them, gives an empty keyword list.
- merge by note: 0.7 * dense + 0.3 * keyword, 0 for a list the note is absent from.

Off by default, as in the paper's runs: temporal decay (score * 0.5 ** (age /
half_life_days), age in days behind the newest note; notes with unparsable
timestamps are not decayed), then MMR re-ranking of the merged candidates.

Where this differs from OpenClaw's own code: candidates merge per note, not per
chunk (the note is the "memory identifier" here); tokens come from the shared
Unicode tokenizer, not OpenClaw's ASCII ``[A-Za-z0-9_]+``; OpenClaw's minimum-score
filter is not applied; the default embedder is the offline all-MiniLM-L6-v2
(``embedder="ollama:nomic-embed-text"`` is the paper's model; ``"minilm-static"``
is a much faster, weaker static distillation of MiniLM, see embeddings.py).
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import Field

from taggraph.errors import ConfigError
from taggraph.core.notes import Note
from taggraph.methods.base import DEFAULT_DEPTH, Evidence, Retriever, check_k, checked_scores
from taggraph.methods.params import DEVICE, EMBEDDER
from taggraph.embedders.base import Embedder, get_embedder
from taggraph.core.text import MAX_QUERY_CHARS, chunk_text, parse_timestamp, query_tokens, snippet

SNIPPET_CHARS = 200


def note_chunks(note: Note, source: str = "raw", chunk_chars: int = 1600, overlap_chars: int = 320) -> list[str]:
    """The chunks OpenClaw embeds and indexes for `note` (source "raw" or "notes")."""
    text = note.raw_text if source == "raw" else note.to_markdown()
    return chunk_text(_valid_utf8(text), chunk_chars, overlap_chars)


def _valid_utf8(text: str) -> str:
    """Lone surrogates (e.g. from JSON escapes) -> "?": SQLite and the tokenizers reject them."""
    return text.encode("utf-8", "replace").decode("utf-8")


def fts_query(text: str) -> str:
    """The FTS5 MATCH expression: distinct query tokens, double-quoted, joined with AND ("" if none)."""
    return " AND ".join(f'"{t}"' for t in dict.fromkeys(query_tokens(text)))


def rank_to_score(rank: float) -> float:
    """FTS5 bm25() rank (negative, lower is better) -> |r| / (1 + |r|) in [0, 1); 0 for r >= 0."""
    return -rank / (1.0 - rank) if rank < 0 else 0.0


def _top(scores: dict[int, float], m: int) -> dict[int, float]:
    """The m best entries: score descending, ties by earlier note."""
    return dict(sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))[:m])


def _position(scores: dict[int, float], i: int) -> int:
    """1-based rank of note i in `scores` under the `_top` order."""
    s = scores[i]
    return 1 + sum(1 for j, v in scores.items() if v > s or (v == s and j < i))


@dataclass
class _Lists:
    """Both full (uncut) lists for one query over the current store."""

    sims: np.ndarray                      # cosine per chunk; empty for a blank query
    dense: dict[int, float]               # note -> best chunk cosine; {} for a blank query
    keyword: dict[int, tuple[float, int]]  # note -> (best chunk keyword score, that chunk)


class OpenClaw(Retriever):
    @dataclass(frozen=True)
    class Params:
        source: Literal["raw", "notes"] = "raw"
        # float32 minilm, not TagGraph-Fusion's minilm-int8: a paper method, and int8 was measured for Fusion only
        embedder: Annotated[str | Embedder, EMBEDDER] = "minilm"
        device: Annotated[Literal["auto", "cpu", "cuda"] | str, DEVICE] = "auto"
        dense_weight: Annotated[float, Field(ge=0)] = 0.7
        keyword_weight: Annotated[float, Field(ge=0)] = 0.3
        candidate_multiplier: Annotated[int, Field(ge=1)] = 4
        chunk_chars: Annotated[int, Field(ge=1)] = 1600
        overlap_chars: Annotated[int, Field(ge=0)] = 320
        mmr: bool = False
        mmr_lambda: Annotated[float, Field(ge=0, le=1)] = 0.7
        temporal_decay: bool = False
        half_life_days: Annotated[float, Field(gt=0)] = 30.0

    def __init__(self, store, params: Params | None = None) -> None:
        super().__init__(store, params)
        p = self.params
        if p.overlap_chars >= p.chunk_chars:
            raise ConfigError(f"OpenClaw: overlap_chars ({p.overlap_chars}) must be below chunk_chars ({p.chunk_chars})")
        self.embedder = get_embedder(p.embedder, p.device)
        self.depth = DEFAULT_DEPTH  # depth `score` (and so `explain`) cuts the candidate lists for
        self.chunks: list[str] = []
        self.chunk_note: list[int] = []
        self.note_start: list[int] = []  # first chunk of each note; a note's chunks are contiguous
        self.days: list[float] = []      # note timestamps in days, nan when unparsable
        self._vecs: list[np.ndarray] = []  # chunk embeddings per note
        self._matrix: np.ndarray | None = None
        self._memo: tuple[tuple[str, int], _Lists] | None = None
        self.db = sqlite3.connect(":memory:", check_same_thread=False)
        try:
            self.db.execute("CREATE VIRTUAL TABLE chunks USING fts5(text)")
        except sqlite3.OperationalError as exc:
            raise RuntimeError(f"SQLite {sqlite3.sqlite_version} here has no FTS5: {exc}") from None

    def config(self) -> dict[str, Any]:
        """The parameters, with the embedder's name and the device it runs on (auto resolved)."""
        return {**super().config(), "embedder": self.embedder.name, "device": self.embedder.device}

    def _chunk(self, note: Note) -> list[str]:
        return note_chunks(note, self.params.source, self.params.chunk_chars, self.params.overlap_chars)

    def add_many(self, notes: list[Note]) -> None:
        """Index `notes`, their chunks embedded in one batched call."""
        chunks = [self._chunk(note) for note in notes]
        flat = [c for cs in chunks for c in cs]
        vectors = np.split(self.embedder.embed(flat), np.cumsum([len(c) for c in chunks])[:-1])
        for note, cs, vecs in zip(notes, chunks, vectors):
            self._insert(note, cs, vecs)

    def add(self, note: Note) -> None:
        self.add_many([note])

    def _insert(self, note: Note, chunks: list[str], vecs: np.ndarray) -> None:
        first = len(self.chunks)
        self.note_start.append(first)
        self.chunks += chunks
        self.chunk_note += [note.index] * len(chunks)
        self._vecs.append(vecs)
        self.db.executemany("INSERT INTO chunks(rowid, text) VALUES (?, ?)",
                            [(first + i, c) for i, c in enumerate(chunks)])
        days = parse_timestamp(note.timestamp)
        self.days.append(np.nan if days is None else days)
        self._matrix, self._memo = None, None

    def _lists(self, text: str) -> _Lists:
        """Dense and keyword scores of every note; the query is embedded once per (text, store size)."""
        key = (text, len(self.note_start))
        if self._memo is not None and self._memo[0] == key:
            return self._memo[1]
        text = _valid_utf8(text[:MAX_QUERY_CHARS])
        sims, dense = np.zeros(0, dtype=np.float32), {}
        if text.strip() and self.chunks:
            if self._matrix is None:
                self._matrix = np.vstack(self._vecs)
            sims = self._matrix @ self.embedder.embed_queries([text])[0]
            dense = dict(enumerate(np.maximum.reduceat(sims, self.note_start).tolist()))
        keyword: dict[int, tuple[float, int]] = {}
        match = fts_query(text)
        if match:
            rows = self.db.execute("SELECT rowid, bm25(chunks) AS r FROM chunks WHERE chunks MATCH ? "
                                   "ORDER BY r", (match,))
            for rowid, rank in rows:  # best chunk first, so setdefault keeps each note's best
                keyword.setdefault(self.chunk_note[rowid], (rank_to_score(rank), rowid))
        lists = _Lists(sims, dense, keyword)
        self._memo = (key, lists)
        return lists

    def _cut(self, lists: _Lists, depth: int) -> tuple[dict[int, float], dict[int, float]]:
        m = self.params.candidate_multiplier * depth
        return _top(lists.dense, m), _top({i: s for i, (s, _) in lists.keyword.items()}, m)

    def _scores(self, text: str, depth: int) -> dict[int, float]:
        dense, keyword = self._cut(self._lists(text), depth)
        wd, wk = self.params.dense_weight, self.params.keyword_weight
        scores = {i: wd * dense.get(i, 0.0) + wk * keyword.get(i, 0.0)
                  for i in sorted(dense.keys() | keyword.keys())}
        if self.params.temporal_decay:
            scores = self._decay(scores)
        if self.params.mmr and scores:
            scores = self._mmr(scores)
        return scores

    def _decay(self, scores: dict[int, float]) -> dict[int, float]:
        days = np.asarray(self.days)
        if np.isnan(days).all():
            return scores
        newest, half_life = np.nanmax(days), self.params.half_life_days
        return {i: s if np.isnan(days[i]) else s * 0.5 ** ((newest - days[i]) / half_life)
                for i, s in scores.items()}

    def _mmr(self, scores: dict[int, float]) -> dict[int, float]:
        """Greedy MMR: pick argmax of lambda * score - (1 - lambda) * max(0, cosine to the notes
        already picked), a note's vector being its mean chunk embedding. A note's new score is
        its value when picked, which never increases from one pick to the next."""
        lam = self.params.mmr_lambda
        ids = sorted(scores, key=lambda i: (-scores[i], i))
        vecs = np.stack([self._vecs[i].mean(axis=0) for i in ids])
        vecs /= np.maximum(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-12)
        sim = vecs @ vecs.T
        rel = np.array([scores[i] for i in ids])
        max_sim = np.zeros(len(ids))
        left = np.ones(len(ids), dtype=bool)
        out = {}
        for _ in ids:
            value = np.where(left, lam * rel - (1 - lam) * max_sim, -np.inf)
            j = int(np.argmax(value))
            out[ids[j]] = float(value[j])
            left[j] = False
            max_sim = np.maximum(max_sim, sim[j])
        return out

    def score(self, text: str, *, asked_on: datetime | None = None) -> dict[int, float]:
        """Merged scores of the candidates at depth `self.depth` (each list cut to 4 * depth)."""
        return self._scores(text, self.depth)

    def rank(self, text: str, k: int = DEFAULT_DEPTH, *, asked_on: datetime | None = None) -> list[tuple[int, float]]:
        """Top-k with each candidate list cut to `candidate_multiplier` * k notes."""
        self.sync()
        k = check_k(k)
        return self._order(checked_scores(self.name, self._scores(text, k), len(self.store)), k)

    def evidence(self, text: str, note: Note, *, asked_on: datetime | None = None) -> Evidence:
        lists = self._lists(text)
        i, depth = note.index, self.depth
        m = self.params.candidate_multiplier * depth
        dense, keyword = self._cut(lists, depth)
        detail: dict[str, Any] = {"fts_query": snippet(fts_query(text), SNIPPET_CHARS)}
        if lists.dense:
            end = self.note_start[i + 1] if i + 1 < len(self.note_start) else len(self.chunks)
            best = self.note_start[i] + int(np.argmax(lists.sims[self.note_start[i]:end]))
            detail["dense"] = {"score": round(lists.dense[i], 4), "rank": _position(lists.dense, i),
                               "chunk": snippet(self.chunks[best], SNIPPET_CHARS)}
        if i in lists.keyword:
            kw, best = lists.keyword[i]
            detail["keyword"] = {"score": round(kw, 4),
                                 "rank": _position({j: s for j, (s, _) in lists.keyword.items()}, i),
                                 "chunk": snippet(self.chunks[best], SNIPPET_CHARS)}
        detail["contributions"] = {"dense": round(self.params.dense_weight * dense.get(i, 0.0), 4),
                                   "keyword": round(self.params.keyword_weight * keyword.get(i, 0.0), 4)}
        ev = Evidence(detail=detail)
        parts = [f"{k} {v:.3g}" for k, v in detail["contributions"].items() if v]
        if parts:
            ev.summary = (f"{self.params.dense_weight} dense + {self.params.keyword_weight} keyword: "
                          + " + ".join(parts))
        if not lists.keyword and detail["fts_query"]:
            n_tokens = len(set(query_tokens(text)))
            ev.fallback = (f"the keyword list is empty: FTS5 ANDs all {n_tokens} query tokens and no "
                           f"chunk holds them all, so only the dense score counts")
        if i not in dense and i not in keyword:
            why_dense = (f"its dense score ranks {detail['dense']['rank']} of {len(lists.dense)}"
                         if lists.dense else "the query is blank, so there is no dense list")
            if not detail["fts_query"]:
                why_kw = "the query has no keyword tokens"
            elif not lists.keyword:
                why_kw = "the AND query matched no chunk at all, so the keyword list is empty"
            elif i not in lists.keyword:
                why_kw = f"the AND query matched {len(lists.keyword)} notes but no chunk of this one"
            else:
                why_kw = f"its keyword score ranks {detail['keyword']['rank']} of {len(lists.keyword)}"
            ev.missing = (f"in neither candidate list (each keeps the best {m} notes, "
                          f"{self.params.candidate_multiplier} x depth {depth}): {why_dense}; {why_kw}")
        return ev
