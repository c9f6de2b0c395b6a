"""TagGraph-Fusion: lexical, dense, graph, session and time evidence in one score (beyond the paper).

For a query (and optionally the date it is asked, ``asked_on``):

1. lexical: Okapi BM25 over the notes (`BM25` on the shared TermIndex) and over
   the raw turns (`BM25` on a TermIndex of `Note.raw_text`, no tag line);
2. candidate pool: the `pool` best notes of each lexical list and of a first PPR
   (seeded by tags and lexical scores); only pool notes are embedded (MiniLM
   through the project's embedder and its disk cache), never the whole haystack;
3. dense: cosine of the query to each pool note's user turn (`dense_text`);
4. graph: Personalized PageRank over AdaptiveGraph's matrix, teleporting half to
   the concepts the query's tokens match (as AdaptiveGraph seeds them) and half to
   the pool notes by their lexical + dense evidence;
5. each component is scaled to [0, 1] per query (BM25 and PPR by their maximum,
   cosine min-max over the pool) and summed with weights: relevance r;
6. session aggregation: every note of a session gets ``session * sum_i gamma^i r_(i)``
   over the session's other notes in decreasing r (i = 1, 2, ...): more notes add
   evidence, each less (diminishing returns);
7. time: r is multiplied by ``1 + target * closeness to a date the question names
   ("two weeks ago", "last month", "last Saturday", "in May") + recent * recency
   (on "most recent", "currently", "now", ...) + early * earliness (on "first",
   "originally", ...)``, dates from `Note.timestamp` against ``asked_on``.

A request for suggestions ("Can you recommend a show for tonight?", "Any tips?"; `is_request`)
takes another route: its gold session is where the user said something about the topic, in
other words than the request's, so the lexical pool rarely holds it. The dense component then
scores every note's raw turn (`request_text`: user and assistant, as OpenClaw embeds it, not
just the user turn), and the note's score is OpenClaw's mix (paper, appendix E), ``0.7 dense +
0.3 raw-turn BM25`` (`REQUEST_WEIGHTS`, not fitted). This costs one MiniLM pass per note of the
store for the first request asked of it.

Switches ``graph``, ``dense``, ``raw_turns``, ``session``, ``time`` and ``requests`` remove one
component each (registry ablations). ``embed_on_add`` embeds every note when it is
added instead of when a pool first holds it: the same rankings, a costlier index (every
note through MiniLM, twice with ``requests``: user turn and raw turn) and no model pass
for notes at query time, for a long-lived memory that must answer new questions fast.
Without ``asked_on`` (``query(text, k, asked_on=...)``) the date-relative rules stay off
(order cues still apply).
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta
from typing import Annotated, Any

import numpy as np
from pydantic import Field

from taggraph.graph import concept_node, file_node
from taggraph.notes import Note
from taggraph.retrieval.adaptive import AdaptiveGraph, personalized_pagerank
from taggraph.retrieval.base import Evidence, Retriever
from taggraph.retrieval.bm25 import BM25
from taggraph.retrieval.embeddings import Embedder, get_embedder
from taggraph.retrieval.openclaw import parse_timestamp
from taggraph.retrieval.index import raw_term_index
from taggraph.text import MAX_QUERY_CHARS

COMPONENTS = ("note_bm25", "raw_bm25", "dense", "graph")
TIME_FEATURES = ("target", "recent", "early")
POOL = 30  # free choice: notes taken from each list into the dense pool (~40 distinct notes per question)
GAMMA = 0.5  # free choice: the i-th further note of a session counts gamma^i (geometric, so bounded)
DENSE_CHARS = 1000  # free choice: MiniLM reads ~256 word pieces (~1,000 characters); the rest is cut here
EPOCH = datetime(1970, 1, 1)
# present-tense requests only: "what you recommended" / "you suggested" recall an answer, they ask for none
REQUEST = re.compile(r"\b(suggest|suggestions?|recommend|recommendations?|tips?|advice|ideas?)\b", re.I)
# a question about an earlier answer ("remind me of the tips you gave") recalls, even with a request word
RECALL = re.compile(r"\b(remind me|you (?:gave|mentioned|said|told|suggested|recommended|provided|shared|listed)|"
                    r"(?:our|the|my) (?:previous|last|earlier) (?:conversation|chat|discussion))\b", re.I)


@dataclass(frozen=True)
class FusionWeights:
    """Weights of the fused score: the ones benchmarks/fusion_cv.py fits on all of S dev (5-fold CV there),
    over offline-v2 notes with requests routed apart (so not fitted on requests).

    The fit sets the PPR component's weight to 0: PPR still widens the dense pool (its top notes join
    it), which the noGraph ablation removes too."""

    note_bm25: float = 1.0  # the scale: fixed, the others are relative to it
    raw_bm25: float = 1.0
    dense: float = 0.75
    graph: float = 0.0
    session: float = 0.1
    target: float = 0.25
    recent: float = 0.05
    early: float = 0.05

    def components(self) -> np.ndarray:
        return np.array([getattr(self, c) for c in COMPONENTS])

    def time(self) -> np.ndarray:
        return np.array([getattr(self, t) for t in TIME_FEATURES])


# OpenClaw's 0.7 dense + 0.3 keyword (paper, appendix E) for requests; chosen, not fitted
REQUEST_WEIGHTS = FusionWeights(note_bm25=0.0, raw_bm25=0.3, dense=0.7, graph=0.0, session=0.0, target=0.0,
                                recent=0.0, early=0.0)


def is_request(text: str) -> bool:
    """Whether `text` asks for suggestions ("Any tips?", "Can you recommend ...?"), not for a past answer
    ("Remind me of the tips you gave me")."""
    return bool(REQUEST.search(text)) and not RECALL.search(text)


@dataclass
class Signals:
    """One query's evidence over every note of the store (all-zero rows: notes without evidence)."""

    notes: np.ndarray       # note indexes, ascending
    sessions: np.ndarray    # session code of each note
    components: np.ndarray  # (n, len(COMPONENTS)), each column in [0, 1]
    time: np.ndarray        # (n, len(TIME_FEATURES)), each in [0, 1]
    request: bool = False   # a request: dense over every note's raw turn, scored with REQUEST_WEIGHTS

    def weights(self, w: FusionWeights) -> FusionWeights:
        """The weights this query is scored with: REQUEST_WEIGHTS for a request, else `w`."""
        return REQUEST_WEIGHTS if self.request else w


def fuse(ev: Signals, w: FusionWeights, gamma: float = GAMMA) -> np.ndarray:
    """Fused score of each note of `ev` (steps 5-7 of the module docstring)."""
    rel = ev.components @ w.components()
    if w.session and len(rel):
        order = np.lexsort((-rel, ev.sessions))  # by session, best note first
        sess, vals = ev.sessions[order], rel[order]
        first = np.r_[True, sess[1:] != sess[:-1]]
        start = np.maximum.accumulate(np.where(first, np.arange(len(sess)), 0))
        depth = np.arange(len(sess)) - start  # 0 for a session's best note, 1 for the next, ...
        extra = np.where(depth > 0, vals * gamma ** depth.astype(float), 0.0)
        bonus = np.zeros(int(ev.sessions.max()) + 1)
        np.add.at(bonus, sess, extra)
        rel = rel + w.session * bonus[ev.sessions]
    return rel * (1.0 + ev.time @ w.time())


# -- time rules ------------------------------------------------------------------------

_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
            "eight": 8, "nine": 9, "ten": 10, "a couple of": 2, "couple of": 2, "a few": 3, "few": 3,
            "several": 4}
_UNITS = {"day": 1, "week": 7, "month": 30.4, "year": 365}
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september",
           "october", "november", "december")
_NUM = r"(\d+|" + "|".join(sorted(map(re.escape, _NUMBERS), key=len, reverse=True)) + ")"
_AGO = re.compile(_NUM + r"\s+(day|week|month|year)s?\s+ago")
_PAST = re.compile(r"\b(?:past|last)\s+(?:" + _NUM + r"\s+)?(day|week|month|year)s?\b")
_WEEKDAY = re.compile(r"\blast\s+(" + "|".join(_WEEKDAYS) + r"|weekend)\b")
_MONTH = re.compile(r"\b(?:in|on|during|since|of)\s+(" + "|".join(_MONTHS) + r")\b")
_RECENT = re.compile(r"\b(most recent(?:ly)?|latest|last time|recently|currently|current|now|nowadays|"
                     r"these days|still|anymore|so far|lately|newest)\b")
_EARLY = re.compile(r"\b(first|earliest|initially|originally|at the start|oldest)\b")


def _count(word: str | None) -> float:
    if word is None:
        return 1.0
    return float(word) if word.isdigit() else float(_NUMBERS[word])


def date_windows(text: str, now: float) -> list[tuple[float, float, float]]:
    """(lo, hi, tolerance) in days before `now` of the dates `text` names relative to `now`.

    "two weeks ago" -> (14, 14, 3.5); "in the past month" / "last month" -> (0, 30.4, 7.6)
    (``last <unit>`` is read as the past unit, which covers the previous calendar unit's end);
    "last Saturday" -> 1-7 days back to that weekday ("last weekend": Saturday and Sunday);
    "in May" -> the most recent May up to `now`.
    """
    text = text.lower()
    out = []
    for n, unit in _AGO.findall(text):
        age = _count(n) * _UNITS[unit]
        out.append((age, age, max(2.0, age / 4)))  # free choice: +-25% of the distance, at least 2 days
    for n, unit in _PAST.findall(text):
        span = _count(n or None) * _UNITS[unit]
        out.append((0.0, span, max(2.0, span / 4)))
    today = (EPOCH + timedelta(days=now)).date()
    for day in _WEEKDAY.findall(text):
        back = (today.weekday() - (5 if day == "weekend" else _WEEKDAYS.index(day))) % 7 or 7
        out.append((back - (1 if day == "weekend" else 0), back, 1.0))
    for month in _MONTH.findall(text):
        m = _MONTHS.index(month) + 1
        year = today.year if m <= today.month else today.year - 1
        start = (datetime(year, m, 1) - EPOCH).total_seconds() / 86400
        end = (datetime(year + m // 12, m % 12 + 1, 1) - EPOCH).total_seconds() / 86400
        out.append((max(now - end, 0.0), now - start, 7.0))
    return out


def time_features(text: str, now: float | None, days: np.ndarray) -> np.ndarray:
    """(len(days), 3): closeness to a named date, recency and earliness, each in [0, 1].

    Closeness is 1 inside a window of `date_windows`, exp(-distance / tolerance)
    outside (0 without `now`); recency is (day - oldest) / (newest - oldest) over the
    given notes when `text` has a recency cue, earliness 1 - recency on an order cue
    for the first. Notes without a parsable date get 0.
    """
    out = np.zeros((len(days), len(TIME_FEATURES)))
    known = ~np.isnan(days)
    if not known.any():
        return out
    lowered = text.lower()
    if now is not None:
        age = now - days[known]
        for lo, hi, tol in date_windows(lowered, now):
            dist = np.maximum(lo - age, 0) + np.maximum(age - hi, 0)
            out[known, 0] = np.maximum(out[known, 0], np.exp(-dist / tol))
    span = np.ptp(days[known])
    recency = (days[known] - days[known].min()) / span if span > 0 else np.zeros(known.sum())
    if _RECENT.search(lowered):
        out[known, 1] = recency
    if _EARLY.search(lowered):
        out[known, 2] = 1.0 - recency
    return out


def dense_text(note: Note) -> str:
    """What is embedded for a note: its user turn (the assistant's when the user's is empty), cut."""
    return (note.user or note.assistant)[:DENSE_CHARS]


def request_text(note: Note) -> str:
    """What is embedded for a note when a request is asked: its raw turn, user and assistant, cut."""
    return note.raw_text[:DENSE_CHARS]


def _scaled(scores: dict[int, float], n: int) -> np.ndarray:
    """Scores as a length-n vector divided by their maximum (zeros when there is none).

    Negative BM25 scores (rank-bm25's idf floor for terms in over half the notes) count as no evidence.
    """
    v = np.zeros(n)
    if scores:
        v[list(scores)] = np.maximum(list(scores.values()), 0.0)
    top = v.max(initial=0.0)
    return v / top if top > 0 else v


def _top(v: np.ndarray, m: int) -> set[int]:
    """Indexes of the m largest positive entries."""
    best = np.argsort(-v, kind="stable")[:m]
    return {int(i) for i in best if v[i] > 0}


class TagGraphFusion(Retriever):
    @dataclass(frozen=True)
    class Params:
        weights: FusionWeights = field(default_factory=FusionWeights)
        graph: bool = True
        dense: bool = True
        raw_turns: bool = True
        session: bool = True
        time: bool = True
        requests: bool = True
        pool: Annotated[int, Field(ge=1)] = POOL
        embedder: str | Embedder = "minilm"
        device: str = "auto"
        embed_on_add: bool = False

    @classmethod
    def embeds(cls, params: Params) -> bool:
        return params.dense and params.embedder is not None

    def __init__(self, store, params: Params | None = None) -> None:
        super().__init__(store, params)
        p = self.params
        self.weights = p.weights
        self.note_bm25 = BM25(store)
        self.raw_bm25 = BM25(store, terms=raw_term_index(store)) if p.raw_turns else None
        self.graph = AdaptiveGraph(store, AdaptiveGraph.Params(file_seeding=False)) if p.graph else None
        for part in (self.note_bm25, self.raw_bm25, self.graph):
            if part is not None:
                part.sync()
        self.embedder = (get_embedder(p.embedder, p.device) if isinstance(p.embedder, str) else p.embedder) \
            if self.embeds(p) else None
        self.sessions: dict[str, int] = {}
        self.session_code: list[int] = []
        self.days: list[float] = []
        self.vectors: dict[int, np.ndarray] = {}  # note index -> embedding: pool notes (every note with embed_on_add)
        self.request_vectors: dict[int, np.ndarray] = {}  # note index -> raw-turn embedding, once a request is asked
        self._memo: tuple[tuple, Signals] | None = None

    def config(self) -> dict[str, Any]:
        """The parameters, with the embedder's name and device when the dense part runs."""
        config = super().config()
        if self.embedder is not None:
            config.update(embedder=self.embedder.name, device=self.embedder.device)
        return config

    def add_many(self, notes: list[Note]) -> None:
        for note in notes:
            self.session_code.append(self.sessions.setdefault(note.session_id, len(self.sessions)))
            day = parse_timestamp(note.timestamp)
            self.days.append(np.nan if day is None else day)
        self._memo = None
        if self.params.embed_on_add and self.embedder is not None:
            self._embed_notes([note.index for note in notes])  # one batch for the notes indexed together

    def add(self, note: Note) -> None:
        self.add_many([note])

    def _embed_notes(self, indexes) -> None:
        """Embed the notes at `indexes` for the pool and, with requests on, for requests."""
        self._embed(indexes, request=False)
        if self.params.requests:
            self._embed(indexes, request=True)

    def _embed(self, indexes, request: bool) -> None:
        """Embed the notes at `indexes` that have no vector of this kind yet (one batch)."""
        vectors, text_of = (self.request_vectors, request_text) if request else (self.vectors, dense_text)
        todo = [i for i in indexes if i not in vectors]
        if todo:
            for i, vec in zip(todo, self.embedder.embed([text_of(self.store.notes[i]) for i in todo])):
                vectors[i] = vec

    def _ppr(self, text: str, file_seed: np.ndarray) -> np.ndarray:
        """PPR mass per note: half the teleport on the query's matched concepts, half on `file_seed`."""
        P, dangling = self.graph.transition()
        s = np.zeros(P.shape[0])
        concepts, _, _ = self.graph.seeds(text)
        total = sum(concepts.values())
        for path, mass in concepts.items():
            s[self.graph.node_index[concept_node(path)]] += mass / total
        files = np.array([self.graph.node_index[file_node(n.note_id)] for n in self.store.notes])
        if file_seed.sum() > 0:
            s[files] += file_seed / file_seed.sum()
        x = personalized_pagerank(P, dangling, s, self.graph.params.alpha, self.graph.params.iterations)
        mass = x[files]
        return mass / mass.max() if mass.max() > 0 else mass

    def _dense(self, text: str, pool: list[int], request: bool = False) -> np.ndarray:
        """Min-max scaled cosine of the query to each pool note (0 outside the pool); for a request
        the pool is every note and the vectors are of `request_text`."""
        n = len(self.store.notes)
        out = np.zeros(n)
        if not pool or not text.strip():
            return out
        self._embed(pool, request)
        vectors = self.request_vectors if request else self.vectors
        q = self.embedder.embed([text[:MAX_QUERY_CHARS]])[0]
        cos = np.array([float(vectors[i] @ q) for i in pool])
        span = cos.max() - cos.min()
        out[pool] = (cos - cos.min()) / span if span > 0 else 1.0
        return out

    def signals(self, text: str, asked_on: str | None = None) -> Signals:
        """Every component of every note for `text` asked on date `asked_on` (memoized per store size)."""
        key = (text, asked_on, len(self.store.notes))
        if self._memo is not None and self._memo[0] == key:
            return self._memo[1]
        n = len(self.store.notes)
        cols = np.zeros((n, len(COMPONENTS)))
        cols[:, 0] = _scaled(self.note_bm25.score(text), n)
        if self.raw_bm25 is not None:
            cols[:, 1] = _scaled(self.raw_bm25.score(text), n)
        lexical = cols[:, 0] + cols[:, 1]
        pool = _top(cols[:, 0], self.params.pool) | _top(cols[:, 1], self.params.pool)
        if self.graph is not None and n:
            pool |= _top(self._ppr(text, lexical * np.isin(np.arange(n), list(pool))), self.params.pool)
        pool_ids = sorted(pool)
        request = self.params.requests and self.embedder is not None and is_request(text)
        if self.embedder is not None:
            cols[:, 2] = self._dense(text, list(range(n)), request=True) if request else self._dense(text, pool_ids)
        if self.graph is not None and n:
            seed = np.zeros(n)
            seed[pool_ids] = lexical[pool_ids] + cols[pool_ids, 2]
            cols[:, 3] = self._ppr(text, seed)
        notes = np.arange(n)  # every note is ranked, as by AdaptiveGraph: no evidence at all -> note order
        days = np.asarray(self.days)[notes]
        now = parse_timestamp(asked_on) if asked_on else None
        times = time_features(text, now, days) if self.params.time else np.zeros((len(notes), len(TIME_FEATURES)))
        ev = Signals(notes, np.asarray(self.session_code, dtype=np.int64)[notes], cols[notes], times, request)
        self._memo = (key, ev)
        return ev

    def _weights(self, ev: Signals) -> FusionWeights:
        w = self.weights if self.params.session else FusionWeights(**{**asdict(self.weights), "session": 0.0})
        return ev.weights(w)

    def score(self, text: str, *, asked_on: str | None = None) -> dict[int, float]:
        ev = self.signals(text, asked_on)
        return dict(zip(ev.notes.tolist(), fuse(ev, self._weights(ev)).tolist()))

    def evidence(self, text: str, note: Note, *, asked_on: str | None = None) -> Evidence:
        ev = self.signals(text, asked_on)
        i, w = note.index, self._weights(ev)
        detail: dict[str, Any] = {
            "components": {c: round(float(ev.components[i, j]), 4) for j, c in enumerate(COMPONENTS)},
            "weighted": {c: round(float(ev.components[i, j] * getattr(w, c)), 4) for j, c in enumerate(COMPONENTS)},
            "time": {t: round(float(ev.time[i, j]), 4) for j, t in enumerate(TIME_FEATURES)},
            "question_date": asked_on, "request": ev.request}
        out = Evidence(detail=detail)
        parts = [f"{c} {v:.3g}" for c, v in detail["weighted"].items() if v]
        if parts:
            out.summary = "weighted evidence " + " + ".join(parts) + (
                " (a request for suggestions: dense over every note's raw turn, OpenClaw's 0.7 / 0.3)"
                if ev.request else
                f", over the session and time rules (question date {asked_on})" if asked_on else "")
        if not ev.components[i].any():
            out.missing = ("no lexical, dense or graph evidence: no positive BM25 term, outside the "
                           "dense pool and unreached by PPR")
        return out
