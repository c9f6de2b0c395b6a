"""TagGraph-Fusion: lexical, dense, graph, session and time evidence in one score (beyond the paper).

For a query (and optionally the date it is asked, ``asked_on``):

1. lexical: Okapi BM25 over the notes (`BM25` on the shared TermIndex) and over
   the raw turns (`BM25` on a TermIndex of `Note.raw_text`, no tag line), and BM25-stem over both;
2. candidate pool: the `pool` best notes of each lexical list and of a first PPR
   (seeded by tags and lexical scores); only pool notes are embedded (int8 MiniLM, ``minilm-int8``,
   through the project's embedder and its disk cache), never the whole haystack;
3. dense: cosine of the query to each pool note's user turn (`dense_text`), and to each of its turns on its own
   (`turns`: the best turn; `speaker`: the best turn of a speaker the question names);
4. graph: Personalized PageRank over AdaptiveGraph's matrix, teleporting half to
   the concepts the query's tokens match (as AdaptiveGraph seeds them) and half to
   the pool notes by their lexical + dense evidence;
5. each signal is scaled per query (z-score over its evidence, shifted so the weakest is 0) and summed with
   `weights` (`DEFAULT_WEIGHTS`, fitted on LongMemEval-S and LoCoMo dev by benchmarks/fusion_joint_cv.py):
   relevance r, plus each session's best turn and the mean of its two best;
6. session aggregation: every note of a session gets ``session * sum_i gamma^i r_(i)``
   over the session's other notes in decreasing r (i = 1, 2, ...): more notes add
   evidence, each less (diminishing returns);
7. time: the sum is multiplied by ``1 + target * closeness to a date the question names
   ("two weeks ago", "last Saturday", "in March", "the first week of June", read by dateparser
   against ``asked_on`` into windows, `time_expressions`; "before I moved": the window before the
   date of the note that best matches "I moved") + recent * recency (on "most recent",
   "currently", "now", ...) + early * earliness (on "first", "originally", ...)``, dates from
   `Note.timestamp`.

A request for suggestions ("Can you recommend a show for tonight?", "Any tips?"; `is_request`)
takes another route: its gold session is where the user said something about the topic, in
other words than the request's, so the lexical pool rarely holds it. The dense component then
scores every note's raw turn (`request_text`: user and assistant, as OpenClaw embeds it, not
just the user turn), and the note's score is OpenClaw's mix (paper, appendix E), ``0.7 dense +
0.3 raw-turn BM25`` (`REQUEST_WEIGHTS`, not fitted). This costs one embedder pass per note of the
store for the first request asked of it.

Each switch (``graph``, ``dense``, ``raw_turns``, ``session``, ``time``, ``requests``, ``stems``, ``turns``) removes
one part (registry ablations). Signals no protocol adopted weigh 0 and are not computed unless a weight names them
(``chunks``, ``coverage``, ``agreement``, ``session_stem``, ``raw_bm25``, ``dense``: candidates of the fitting
protocols, `fusion.signal_table`). ``embed_on_add`` embeds every note when it is added instead of when a pool first
holds it: the same rankings, a costlier index and no model pass for notes at query time, for a long-lived memory
that must answer new questions fast. Without ``asked_on`` (``query(text, k, asked_on=...)``) the date-relative rules
stay off (order cues still apply). `evidence` splits a note's score into its signals (`fusion.why`).
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Annotated, Any

import numpy as np
from pydantic import BeforeValidator, Field

from taggraph.core.graph import concept_node, file_node
from taggraph.core.notes import Note
from taggraph.methods.adaptive import AdaptiveGraph
from taggraph.methods.adaptive import _teleport as unit_teleport  # PPR's teleport as it normalizes it
from taggraph.methods.base import Evidence, Retriever
from taggraph.methods.scores import Scores
from taggraph.methods.params import DEVICE, EMBEDDER, Component
from taggraph.methods.bm25 import BM25
from taggraph.methods.bm25_stem import BM25Stem
from taggraph.embedders.base import Embedder, get_embedder
from taggraph.embedders.rows import NoteRows
from taggraph._infra.growing import GrowingArray
from taggraph.methods.index import raw_term_index
from taggraph.methods.fusion.time_expressions import SPAN_TOLERANCE, AnchorDate, Window, as_of, question_anchors, question_windows
from taggraph.core.text import MAX_QUERY_CHARS, days
from taggraph.methods.fusion.why import fusion_evidence
from taggraph.methods.fusion.features import (SPEAKER_SHARE, dense_text, evidence_vector, note_chunks,
                                              note_day, request_text, top_notes, turn_speakers, turn_texts)
from taggraph.methods.fusion.signal_table import BY_NAME, SIGNALS, Query
from taggraph.methods.fusion.signals import (COMPONENTS, DEFAULT_WEIGHTS, DENSE_LIKE, NORMALIZE, POOL, SESSION_FEATURES,
                                               TIME_FEATURES, TURN_PARTS, FusionWeights, SignalName, Signals, Weight,
                                               fused, fused_parts, is_request, normalized, normalized_all, time_features,
                                               weights_dict)


class RawTurnsStem(BM25Stem):
    """BM25-stem over the raw turns (`Note.raw_text`, no tag line): Fusion's `raw_stem`."""

    INDEX = "raw_stems"

    @staticmethod
    def indexed_text(note: Note) -> str:
        return note.raw_text


class TagGraphFusion(Retriever):
    @dataclass(frozen=True)
    class Params:
        weights: Annotated[dict[SignalName, Weight], BeforeValidator(weights_dict), Field(description=(
            "each signal's weight in the sum (docs/methods.md); a dict given is read over these, a signal at 0 or "
            "not listed is off"))] = field(default_factory=lambda: dict(DEFAULT_WEIGHTS))
        graph: Annotated[bool, Component("Graph"), Field(description=(
            "the graph signal: PPR over the tag graph from the question's concepts and the pool's notes"))] = True
        dense: Annotated[bool, Component("Dense"), Field(description=(
            "the embedder over the pool: it seeds the pool and PPR and feeds the turn signals (weight 0 itself)"))] = True
        raw_turns: Annotated[bool, Component("Raw"), Field(description=(
            "BM25 over the raw turns, no tag line: it fills the pool and scores requests"))] = True
        session: Annotated[bool, Component("Session"), Field(description=(
            "a note gains its session's other notes' relevance, each further one halved"))] = True
        time: Annotated[bool, Component("Time"), Field(description=(
            "the dates a question names, and its recency and order cues, multiply the score"))] = True
        requests: Annotated[bool, Component("Requests"), Field(description=(
            "a request for suggestions takes OpenClaw's route: 0.7 dense + 0.3 raw-turn BM25 over every note"))] = True
        stems: Annotated[bool, Component("Stems"), Field(description=(
            "BM25-stem over the notes and over the raw turns"))] = True
        turns: Annotated[bool, Component("Turns"), Field(description=(
            "each turn embedded on its own: the best turn, the named speaker's, its session's best and top two"))] = True
        pool: Annotated[int, Field(ge=1, description=(
            "notes taken from each lexical list and from a first PPR into the pool the embedder reads"))] = POOL
        # minilm-int8, not the paper's methods' minilm: the maintainers found it ranks as minilm on four hidden sets
        # (Fusion only; OpenClaw and OC-notes keep minilm); embedder="minilm" is the float32 model
        embedder: Annotated[str | Embedder, EMBEDDER, Field(description=(
            "the sentence embedder of the dense and turn signals (minilm: float32 MiniLM)"))] = "minilm-int8"
        device: Annotated[str, DEVICE, Field(description="where the embedder runs: auto, cpu or cuda")] = "auto"
        embed_on_add: Annotated[bool, Field(description=(
            "embed each note as it is added: the same rankings, a costlier index, no model pass at query time"))] = False

        def __post_init__(self) -> None:
            """`weights` read over `DEFAULT_WEIGHTS`; a signal no default weighs is listed only when weighed (a
            default's 0 stays listed, so that the record reads back as it was)."""
            merged = {**DEFAULT_WEIGHTS, **self.weights}
            object.__setattr__(self, "weights", {n: v for n, v in merged.items() if v or n in DEFAULT_WEIGHTS})

    @classmethod
    def embeds(cls, params: Params) -> bool:
        return params.dense and params.embedder is not None

    def __init__(self, store, params: Params | None = None) -> None:
        super().__init__(store, params)
        p = self.params
        self.weights = FusionWeights.of(p.weights)
        self.note_bm25 = BM25(store)
        self.raw_bm25 = BM25(store, terms=raw_term_index(store)) if p.raw_turns else None
        self.graph = AdaptiveGraph(store, AdaptiveGraph.Params(file_seeding=False)) if p.graph else None
        read = {s.index for s in SIGNALS if s.index and self.computes(s.name)}  # the stemmed indexes signals read
        self.note_stem = BM25Stem(store) if "note_stem" in read else None
        self.raw_stem = RawTurnsStem(store) if "raw_stem" in read else None
        for part in (self.note_bm25, self.raw_bm25, self.graph, self.note_stem, self.raw_stem):
            if part is not None:
                part.sync()
        self.embedder = get_embedder(p.embedder, p.device) if self.embeds(p) else None
        self.sessions: dict[str, int] = {}
        self._session_code = GrowingArray(np.int64)  # per note: its session's number in `sessions`
        self._days = GrowingArray(np.float64)  # per note: `note_day`, NaN when undated
        self._file_node = GrowingArray(np.int64)  # per note: its file node in the graph part's matrix
        self.vectors = NoteRows()  # per note: its `dense_text`'s vector: pool notes (every note with embed_on_add)
        self.request_vectors = NoteRows()  # per note: its raw turn's vector, once a request is asked
        self.chunk_vectors = NoteRows()  # per note: its chunks' vectors: pool notes, for `chunks`
        self.turn_vectors = NoteRows()  # per note: its turns' vectors, labelled by speaker: pool notes, for TURN_PARTS
        # each kind of vectors and the texts of a note it holds rows of (what is embedded and what `embedded` keeps)
        self._pieces = {"dense": (self.vectors, lambda note: [dense_text(note)]),
                        "request": (self.request_vectors, lambda note: [request_text(note)]),
                        "chunks": (self.chunk_vectors, note_chunks), "turns": (self.turn_vectors, turn_texts)}
        self.speaker_turns: dict[str, int] = {}  # "Name" -> turns it heads
        self.speaker_code: dict[str | None, int] = {None: -1}  # "Name" -> the label of its turns' rows
        self.unnamed_turns = 0
        # the last query's key, evidence, time windows, the graph part's teleport and its PPR's last step (what
        # `evidence` reads)
        self._memo: tuple[tuple, Signals, list[Window], np.ndarray | None, Any] | None = None
        self._query_memo: tuple[str, np.ndarray] | None = None  # the last question and its vector
        self._parts_memo: tuple[Signals, tuple] | None = None  # the last query's evidence and `parts`

    def uses(self, part: str) -> bool:
        """Whether the signal `part` counts: its switch on (`SIGNALS`; a signal no default weighs has none), its
        weight not 0 and, if it needs the embedder, the embedder on."""
        spec = BY_NAME[part]
        return (spec.switch is None or getattr(self.params, spec.switch)) and getattr(self.weights, part) != 0 and (
            not spec.embedder or self.embeds(self.params))

    def computes(self, part: str) -> bool:
        """Whether the signal `part` is computed: it counts (`uses`) or a signal that counts reads it (`needs`)."""
        return self.uses(part) or any(part in s.needs and self.uses(s.name) for s in SIGNALS)

    def config(self) -> dict[str, Any]:
        """The parameters, with the embedder's name and device when the dense part runs."""
        config = super().config()
        if self.embedder is not None:
            config.update(embedder=self.embedder.name, device=self.embedder.device)
        return config

    @property
    def session_code(self) -> np.ndarray:
        """Per note, its session's number in `sessions`."""
        return self._session_code.view

    @property
    def days(self) -> np.ndarray:
        """Per note, its date in days since 1970 (`note_day`), NaN when it has none."""
        return self._days.view

    def add_many(self, notes: list[Note]) -> None:
        self._session_code.extend([self.sessions.setdefault(note.session_id, len(self.sessions)) for note in notes])
        self._days.extend([np.nan if (day := note_day(note.timestamp)) is None else day for note in notes])
        for note in notes:
            for who in turn_speakers(note):
                if who is None:
                    self.unnamed_turns += 1
                else:
                    self.speaker_turns[who] = self.speaker_turns.get(who, 0) + 1
                    self.speaker_code.setdefault(who, len(self.speaker_code) - 1)
        self._memo = None
        if self.params.embed_on_add and self.embedder is not None:
            self._embed_notes([note.index for note in notes])  # one batch for the notes indexed together

    def add(self, note: Note) -> None:
        self.add_many([note])

    def _embed_notes(self, indexes) -> None:
        """Embed the notes at `indexes` for the pool, for requests and for chunks, as far as they are on."""
        self._embed(indexes, request=False)
        if self.params.requests:
            self._embed(indexes, request=True)
        if self.uses("chunks"):
            self._embed_chunks(indexes)
        if any(self.uses(part) for part in TURN_PARTS):
            self._embed_turns(indexes)

    def _vectors_of(self, request: bool) -> tuple[NoteRows, Any]:
        """(the vectors, a note's texts they embed) for a request's dense part (whole turns) or for the pool's (user
        turns)."""
        return self._pieces["request" if request else "dense"]

    def _embed(self, indexes, request: bool) -> None:
        """Embed the notes at `indexes` that have no vector of this kind yet (one batch)."""
        self._embed_pieces(indexes, *self._vectors_of(request))

    def _embed_chunks(self, indexes) -> None:
        """Embed the chunks of the notes at `indexes` that have none yet (one batch)."""
        self._embed_pieces(indexes, *self._pieces["chunks"])

    def _embed_turns(self, indexes) -> None:
        """Embed each turn of the notes at `indexes` on its own (`turn_texts`), for those that have none yet, each
        row labelled with its speaker's `speaker_code`."""
        self._embed_pieces(indexes, *self._pieces["turns"],
                           lambda note: [self.speaker_code[who] for who in turn_speakers(note)])

    def _embed_pieces(self, indexes, vectors: NoteRows, pieces_of, labels_of=None) -> None:
        """Embed `pieces_of(note)` for the notes at `indexes` that `vectors` has no rows of (one batch), each row
        labelled by `labels_of(note)` when given."""
        todo = vectors.missing(indexes)
        if len(todo):
            notes = [self.store.notes[i] for i in todo.tolist()]
            pieces = [pieces_of(note) for note in notes]
            labels = None if labels_of is None else [label for note in notes for label in labels_of(note)]
            vectors.put(todo, self.embedder.embed([c for chunks in pieces for c in chunks]), list(map(len, pieces)),
                        labels)

    def embedded(self) -> tuple[list[str], np.ndarray]:
        """Every text embedded for the notes so far, and its vector row by row (what `Memory.save` keeps)."""
        texts: list[str] = []
        rows = []
        for vectors, pieces_of in self._pieces.values():
            done = np.flatnonzero(vectors.first_rows >= 0)
            if len(done):
                texts += [piece for i in done.tolist() for piece in pieces_of(self.store.notes[i])]
                rows.append(vectors.matrix[vectors.row_ids(done)])
        return texts, np.concatenate(rows) if rows else np.zeros((0, 0), dtype=np.float32)

    def _teleport(self, text: str, file_seed: np.ndarray) -> np.ndarray:
        """PPR's teleport over the graph's nodes: half on the query's matched concepts, half on `file_seed`."""
        s = np.zeros(self.graph.adjacency().shape[0])
        concepts, _, _ = self.graph.seeds(text)
        total = sum(concepts.values())
        for path, mass in concepts.items():
            s[self.graph.node_index[concept_node(path)]] += mass / total
        if file_seed.sum() > 0:
            s[self._file_nodes()] += file_seed / file_seed.sum()
        return s

    def _file_nodes(self) -> np.ndarray:
        """Each note's file node in the graph part's matrix (kept per note: a node's place never changes)."""
        self.graph.adjacency()  # its nodes indexed up to the last note
        done = len(self._file_node)
        if done < len(self.store.notes):
            index = self.graph.node_index
            self._file_node.extend([index[file_node(note.note_id)] for note in self.store.notes[done:]])
        return self._file_node.view

    def _ppr(self, s: np.ndarray) -> tuple[np.ndarray, Any]:
        """(PPR mass per note, NaN where none, from the teleport `s` (`_teleport`); the walk's last step,
        `AdaptiveGraph._last_step`, which `personalized_pagerank` runs bit for bit, kept for `walk_step`)."""
        step = self.graph._last_step(unit_teleport(s))
        mass = step[0][self._file_nodes()]
        return np.where(mass > 0, mass, np.nan), step

    def _query_vector(self, text: str) -> np.ndarray:
        """The question's vector, computed once per question (dense, chunks and turns all read it)."""
        if self._query_memo is None or self._query_memo[0] != text:
            self._query_memo = (text, self.embedder.embed_queries([text[:MAX_QUERY_CHARS]])[0])
        return self._query_memo[1]

    def _dense(self, text: str, pool: np.ndarray, request: bool = False) -> np.ndarray:
        """Cosine of the query to each pool note (NaN outside the pool); for a request the pool is every note
        and the vectors are of `request_text`."""
        out = np.full(len(self.store.notes), np.nan)
        if not len(pool) or not text.strip():
            return out
        self._embed(pool, request)
        out[pool] = self._vectors_of(request)[0].dots(pool, self._query_vector(text))[0]
        return out

    def _chunks(self, text: str, pool: np.ndarray) -> np.ndarray:
        """Best cosine of the query to each pool note's chunks (NaN outside the pool)."""
        out = np.full(len(self.store.notes), np.nan)
        if not len(pool) or not text.strip():
            return out
        self._embed_chunks(pool)
        cos, first = self.chunk_vectors.dots(pool, self._query_vector(text))
        out[pool] = np.maximum.reduceat(cos, first)
        return out

    def _turns(self, text: str, pool: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(best cosine of the query to each pool note's turns, the same over the turns of the speakers the
        question names), NaN outside the pool or where no turn qualifies."""
        best, named = np.full(len(self.store.notes), np.nan), np.full(len(self.store.notes), np.nan)
        if not len(pool) or not text.strip():
            return best, named
        self._embed_turns(pool)
        cos, first = self.turn_vectors.dots(pool, self._query_vector(text))
        best[pool] = np.maximum.reduceat(cos, first)
        names = self.named_speakers(text)
        if names:
            said = np.isin(self.turn_vectors.labels[self.turn_vectors.row_ids(pool)],
                           [self.speaker_code[name] for name in names])
            top = np.maximum.reduceat(np.where(said, cos, -np.inf), first)
            named[pool] = np.where(np.isfinite(top), top, np.nan)
        return best, named

    def named_speakers(self, text: str) -> set[str]:
        """The history's speakers (`speakers`) whose name the question holds as a word."""
        return {name for name in self.speakers() if re.search(rf"\b{re.escape(name)}\b", text)}

    def speakers(self) -> set[str]:
        """Names heading at least SPEAKER_SHARE of the history's turns as "Name: ..." (LoCoMo's turns; a
        LongMemEval turn has no name)."""
        turns = sum(self.speaker_turns.values()) + self.unnamed_turns
        return {name for name, count in self.speaker_turns.items() if count >= SPEAKER_SHARE * turns}

    def windows(self, text: str, asked_on: datetime | None) -> list[Window]:
        """The question's time windows: its dates read against `asked_on`, and "before / after <event>" dated
        by the note that best matches the event (BM25 over the notes)."""
        if asked_on is None:
            return []
        now = days(asked_on)
        out = question_windows(text, as_of(now))
        for anchor in question_anchors(text):
            match = evidence_vector(self.note_bm25.score(anchor.clause), len(self.days))
            dated = ~np.isnan(match) & ~np.isnan(self.days)
            if dated.any():
                best = int(np.argmax(np.where(dated, match, -np.inf)))  # the best match, the earliest of ties
                day, note = self.days[best], self.store.notes[best]
                matched = self.note_bm25.evidence(anchor.clause, note).detail.get("matched_terms", {})
                source = AnchorDate(anchor.clause, anchor.direction, note.note_id, as_of(day).date().isoformat(),
                                    tuple(matched))
                out.append(Window(-np.inf, day, SPAN_TOLERANCE, source) if anchor.direction == "before"
                           else Window(day, now, SPAN_TOLERANCE, source))
        return out

    def signals(self, text: str, asked_on: datetime | None = None) -> Signals:
        """Every component of every note for `text` asked on date `asked_on` (memoized per store size)."""
        key = (text, asked_on, len(self.store.notes))
        if self._memo is not None and self._memo[0] == key:
            return self._memo[1]
        n = len(self.store.notes)
        raw = np.full((n, len(COMPONENTS)), np.nan)
        cols = np.zeros((n, len(COMPONENTS)))  # "max"-normalized: what the pool and PPR seeds read

        def put(name: str, values: np.ndarray) -> None:
            j = COMPONENTS.index(name)
            raw[:, j], cols[:, j] = values, normalized(values, "max", name in DENSE_LIKE)

        put("note_bm25", evidence_vector(self.note_bm25.score(text), n))
        if self.raw_bm25 is not None:
            put("raw_bm25", evidence_vector(self.raw_bm25.score(text), n))
        lexical = cols[:, 0] + cols[:, 1]
        in_pool = np.zeros(n, dtype=bool)
        in_pool[top_notes(cols[:, 0], self.params.pool)] = in_pool[top_notes(cols[:, 1], self.params.pool)] = True
        if self.graph is not None and n:
            first, _ = self._ppr(self._teleport(text, lexical * in_pool))
            in_pool[top_notes(normalized(first, "max", False), self.params.pool)] = True
        pool_ids = np.flatnonzero(in_pool)
        request = self.params.requests and self.embedder is not None and is_request(text)
        if self.embedder is not None:
            put("dense", self._dense(text, np.arange(n), request=True) if request else self._dense(text, pool_ids))
        teleport = step = None
        if self.graph is not None and n:
            seed = np.zeros(n)
            seed[pool_ids] = lexical[pool_ids] + cols[pool_ids, 2]
            teleport = self._teleport(text, seed)
            mass, step = self._ppr(teleport)
            put("graph", mass)
        codes = self.session_code
        q = Query(text, n, pool_ids, request, codes, len(self.sessions))
        for spec in SIGNALS:  # the table's note signals with a compute function, as far as they count
            if spec.level == "note" and spec.compute and self.computes(spec.name) and (spec.requests or not request):
                put(spec.name, spec.compute(self, q))
        q.cols = cols
        q.components = components = normalized_all(raw, NORMALIZE)
        per_session = np.zeros((len(self.sessions), len(SESSION_FEATURES)))
        for j, name in enumerate(SESSION_FEATURES):
            if self.computes(name):
                per_session[:, j] = BY_NAME[name].compute(self, q)
        notes = np.arange(n)  # every note is ranked, as by AdaptiveGraph: no evidence at all -> note order
        windows = self.windows(text, asked_on) if self.params.time else []
        times = time_features(text, windows, self.days) if self.params.time else np.zeros((n, len(TIME_FEATURES)))
        ev = Signals(notes, codes, components, times, request, per_session[codes], raw)
        self._memo = (key, ev, windows, teleport, step)
        return ev

    def walk_step(self) -> Any:
        """The graph part's last PPR step (`AdaptiveGraph._last_step`) from the last query's teleport, kept by the
        query: every note `evidence` explains (the note and its rivals) traces its walk from it."""
        return self._memo[4]

    def _weights(self, ev: Signals) -> FusionWeights:
        w = self.weights if self.params.session else FusionWeights(**{**asdict(self.weights), "session": 0.0})
        return ev.weights(w)

    def parts(self, ev: Signals) -> tuple:
        """`fused_parts` of the query's evidence `ev` under its weights, computed once per query (the score and
        every note `evidence` explains read them)."""
        if self._parts_memo is None or self._parts_memo[0] is not ev:
            self._parts_memo = (ev, fused_parts(ev, self._weights(ev)))
        return self._parts_memo[1]

    def score(self, text: str, *, asked_on: datetime | None = None) -> Scores:
        """Every note's fused score (`fuse`), zeros included: every note is ranked."""
        ev = self.signals(text, asked_on)
        return Scores(ev.notes, fused(self.parts(ev)))

    def evidence(self, text: str, note: Note, *, asked_on: datetime | None = None) -> Evidence:
        """The note's signals, adding up to its score, and what each read (`fusion.why`)."""
        return fusion_evidence(self, text, note, asked_on)
