"""TagGraph-Fusion's evidence and arithmetic: its weights, the per-query signals, normalization, and the
session, turn and time features (the retriever that gathers them is `taggraph.methods.fusion.method`)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import BeforeValidator, Field

from taggraph.core.notes import Note
from taggraph.methods.bm25_stem import BM25Stem
from taggraph.methods.fusion.time_expressions import Window, as_of
from taggraph.core.text import MAX_QUERY_CHARS, chunk_text, days, parse_note_date


COMPONENTS = ("note_bm25", "raw_bm25", "dense", "graph", "note_stem", "raw_stem", "chunks", "turns", "speaker")
SESSION_FEATURES = ("coverage", "agreement", "best_turn", "top2_turns", "session_stem")
DENSE_LIKE = ("dense", "chunks", "turns")  # cosines over the pool: no evidence outside it
NORMALIZATIONS = ("max", "minmax", "zscore", "rrf")
RRF_K = 60  # the constant of reciprocal rank fusion (Cormack et al., 2009)
TURN_PARTS = ("turns", "speaker", "best_turn", "top2_turns")  # what the turn embeddings feed
TURN_COLUMNS = [SESSION_FEATURES.index("best_turn"), SESSION_FEATURES.index("top2_turns")]
SPEAKER_SHARE = 0.1  # free choice: a "Name: " prefix is a speaker if it heads at least 10% of the turns
SPEAKER = re.compile(r"([A-Z][\w'-]*(?: [A-Z][\w'-]*){0,2}): ")  # "Caroline: ...", as the LoCoMo loader writes turns
TIME_FEATURES = ("target", "recent", "early")
POOL = 30  # free choice: notes taken from each list into the dense pool (about 33 distinct notes per question)
GAMMA = 0.5  # free choice: the i-th further note of a session counts gamma^i (geometric, so bounded)
DENSE_CHARS = 1000  # free choice: MiniLM reads ~256 word pieces (~1,000 characters); the rest is cut here
MAX_CHUNKS = 4  # free choice: chunks of a note's raw turn embedded for `chunks` (the first 4,000 characters)
AGREE_TOP = 3  # free choice: a list agrees on a session that it ranks among its 3 best sessions
# present-tense requests only: "what you recommended" / "you suggested" recall an answer, they ask for none
REQUEST = re.compile(r"\b(suggest|suggestions?|recommend|recommendations?|tips?|advice|ideas?)\b", re.I)
# a question about an earlier answer ("remind me of the tips you gave") recalls, even with a request word
RECALL = re.compile(r"\b(remind me|you (?:gave|mentioned|said|told|suggested|recommended|provided|shared|listed)|"
                    r"(?:our|the|my) (?:previous|last|earlier) (?:conversation|chat|discussion))\b", re.I)


@dataclass(frozen=True)
class FusionWeights:
    """Weights of the fused score: what benchmarks/fusion_joint_cv.py's protocol fits on
    LongMemEval-S dev and LoCoMo dev together under z-scores (out of fold LongMemEval 0.968, LoCoMo 0.804),
    by coordinate ascent from the protocol's `START`; the time weights stay
    fixed; requests are routed apart (`REQUEST_WEIGHTS`), so not fitted on requests."""

    note_bm25: float = 1.0  # the scale: fixed, the others are relative to it
    raw_bm25: float = 0.0
    dense: float = 0.0  # the pool's dense list still seeds PPR and the pool; its own weight fitted to 0
    graph: float = 0.3
    session: float = 0.25
    target: float = 0.625
    recent: float = 0.05
    early: float = 0.05
    note_stem: float = 2.0
    raw_stem: float = 2.0
    chunks: float = 0.0
    coverage: float = 0.0
    agreement: float = 0.0
    turns: float = 3.0
    speaker: float = 0.25
    best_turn: float = 1.0
    top2_turns: float = 1.0
    session_stem: float = 0.0  # its protocol found no gain out of fold: not chosen

    @classmethod
    def of(cls, weights: dict[str, float]) -> FusionWeights:
        """The weights a method's sparse `weights` parameter names; a signal not named weighs 0."""
        return cls(**{f: float(weights.get(f, 0.0)) for f in cls.__dataclass_fields__})

    def components(self) -> np.ndarray:
        return np.array([getattr(self, c) for c in COMPONENTS])

    def session_features(self) -> np.ndarray:
        return np.array([getattr(self, c) for c in SESSION_FEATURES])

    def time(self) -> np.ndarray:
        return np.array([getattr(self, t) for t in TIME_FEATURES])


# TagGraph-Fusion's `weights` parameter: the adopted weights, every one above 0 (a signal at 0 is not listed)
DEFAULT_WEIGHTS = {name: value for name, value in vars(FusionWeights()).items() if value}
SignalName = Literal[tuple(FusionWeights.__dataclass_fields__)]  # the signals a weight can name


def _weight(value: Any) -> Any:
    """A weight as given: a switch (True) is no weight, though pydantic would read it as 1."""
    if isinstance(value, bool):
        raise ValueError("a weight is a number, not true or false")
    return value


Weight = Annotated[float, BeforeValidator(_weight), Field(ge=0)]


def weights_dict(value: Any) -> Any:
    """A `FusionWeights` (the fitting protocols' type) given for the `weights` parameter, as its dict."""
    return dict(vars(value)) if isinstance(value, FusionWeights) else value
# the switch that turns each signal's computation off (None: no switch, computed only when weighted)
SWITCHED_BY = {"note_stem": "stems", "raw_stem": "stems", "session_stem": "stems", "chunks": None, "coverage": None,
               "agreement": None, **{part: "turns" for part in ("turns", "speaker", "best_turn", "top2_turns")}}
NORMALIZE = "zscore"  # how each signal is scaled per query before the sum (`normalized`; fitted with it)

# OpenClaw's 0.7 dense + 0.3 keyword (paper, appendix E) for requests; chosen, not fitted
# (every other weight 0, a weight added later too: the defaults must not leak into the route)
REQUEST_WEIGHTS = FusionWeights(**{k: 0.0 for k in FusionWeights.__dataclass_fields__}
                                | {"raw_bm25": 0.3, "dense": 0.7})


def is_request(text: str) -> bool:
    """Whether `text` asks for suggestions ("Any tips?", "Can you recommend ...?"), not for a past answer
    ("Remind me of the tips you gave me")."""
    return bool(REQUEST.search(text)) and not RECALL.search(text)


@dataclass
class Signals:
    """One query's evidence over every note of the store (all-zero rows: notes without evidence)."""

    notes: np.ndarray       # note indexes, ascending
    sessions: np.ndarray    # session code of each note
    components: np.ndarray  # (n, len(COMPONENTS)), each column normalized per query (`normalized`)
    time: np.ndarray        # (n, len(TIME_FEATURES)), each in [0, 1]
    request: bool = False   # a request: dense over the notes' raw turns, scored with REQUEST_WEIGHTS
    session_features: np.ndarray | None = None  # (n, len(SESSION_FEATURES)): the note's session's, in [0, 1]
    raw: np.ndarray | None = None  # (n, len(COMPONENTS)) before normalization; NaN: no evidence

    def weights(self, w: FusionWeights) -> FusionWeights:
        """The weights this query is scored with: REQUEST_WEIGHTS for a request, else `w`."""
        return REQUEST_WEIGHTS if self.request else w


def fuse(ev: Signals, w: FusionWeights, gamma: float = GAMMA) -> np.ndarray:
    """Fused score of each note of `ev` (steps 5-7 of the module docstring)."""
    rel, bonus, features, factor = fused_parts(ev, w, gamma)
    for part in (bonus, features):  # in this order: the sums, and so the rankings, stay bit for bit
        if part is not None:
            rel = rel + part
    return rel * factor


def fused_parts(ev: Signals, w: FusionWeights, gamma: float = GAMMA) -> tuple[np.ndarray, np.ndarray | None,
                                                                           np.ndarray | None, np.ndarray]:
    """Per note of `ev`: (its weighted components, the session bonus from its session's other notes (None when
    `w.session` is 0), its weighted session features (None without them), the time factor)."""
    rel = ev.components @ w.components()
    bonus = None
    if w.session and len(rel):
        order = np.lexsort((-rel, ev.sessions))  # by session, best note first
        sess, vals = ev.sessions[order], rel[order]
        first = np.r_[True, sess[1:] != sess[:-1]]
        start = np.maximum.accumulate(np.where(first, np.arange(len(sess)), 0))
        depth = np.arange(len(sess)) - start  # 0 for a session's best note, 1 for the next, ...
        extra = np.where(depth > 0, vals * gamma ** depth.astype(float), 0.0)
        per_session = np.zeros(int(ev.sessions.max()) + 1)
        np.add.at(per_session, sess, extra)
        bonus = w.session * per_session[ev.sessions]
    features = None if ev.session_features is None else ev.session_features @ w.session_features()
    return rel, bonus, features, 1.0 + ev.time @ w.time()


# -- time ------------------------------------------------------------------------------

_RECENT = re.compile(r"\b(most recent(?:ly)?|latest|last time|recently|currently|current|now|nowadays|"
                     r"these days|still|anymore|so far|lately|newest)\b")
_EARLY = re.compile(r"\b(first|earliest|initially|originally|at the start|oldest)\b")


def time_features(text: str, windows: list[Window], days: np.ndarray) -> np.ndarray:
    """(len(days), 3): closeness to a date the question names, recency and earliness, each in [0, 1].

    Closeness is the best `Window.closeness` over `windows` (the question's dates, resolved
    by `time_expressions`); recency is (day - oldest) / (newest - oldest) over the given notes when
    `text` has a recency cue, earliness 1 - recency on an order cue for the first. Notes without a
    parsable date get 0.
    """
    out = np.zeros((len(days), len(TIME_FEATURES)))
    known = ~np.isnan(days)
    if not known.any():
        return out
    lowered = text.lower()
    for window in windows:
        out[known, 0] = np.maximum(out[known, 0], window.closeness(days[known]))
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


def _evidence(scores: dict[int, float], n: int) -> np.ndarray:
    """Scores as a length-n vector, NaN where there is no evidence: notes not scored, and negative or zero
    BM25 scores (rank-bm25's idf floor for terms in over half the notes)."""
    v = np.full(n, np.nan)
    if scores:
        values = np.array(list(scores.values()), dtype=float)
        v[np.array(list(scores))[values > 0]] = values[values > 0]
    return v


def normalized(column: np.ndarray, mode: str, dense_like: bool) -> np.ndarray:
    """One component's raw values (NaN: no evidence) scaled per query; notes without evidence get 0.

    "max": a lexical or PPR list divided by its maximum (its floor is 0, so this is min-max from 0), cosines
    min-max over the pool (all 1 when equal): the normalization before the joint fit. "minmax": every component
    min-max over its evidence. "zscore": (value - min) / standard deviation over its evidence, the per-query
    z-score shifted so that the weakest evidence is 0, as no evidence is (the multiplicative time rule needs
    scores >= 0). "rrf": RRF_K / (RRF_K + rank) among the notes with evidence (ties: earlier note first), so a
    weighted sum of these is weighted reciprocal rank fusion.
    """
    has = ~np.isnan(column)
    out = np.zeros(len(column))
    if not has.any():
        return out
    values = column[has]
    if mode == "max" and not dense_like:
        top = values.max()
        out[has] = values / top if top > 0 else 0.0
    elif mode in ("max", "minmax"):
        span = values.max() - values.min()
        out[has] = (values - values.min()) / span if span > 0 else 1.0
    elif mode == "zscore":
        sd = values.std()
        out[has] = (values - values.min()) / sd if sd > 0 else 1.0
    elif mode == "rrf":
        order = np.argsort(-values, kind="stable")
        ranks = np.empty(len(values))
        ranks[order] = np.arange(1, len(values) + 1)
        out[has] = RRF_K / (RRF_K + ranks)
    else:
        raise ValueError(f"unknown normalization {mode!r}; one of {', '.join(NORMALIZATIONS)}")
    return out


def normalized_all(raw: np.ndarray, mode: str) -> np.ndarray:
    """`normalized` for every column of a query's raw evidence matrix."""
    return np.column_stack([normalized(raw[:, j], mode, c in DENSE_LIKE) for j, c in enumerate(COMPONENTS)]) \
        if len(raw) else np.zeros((0, len(COMPONENTS)))



def _top(v: np.ndarray, m: int) -> set[int]:
    """Indexes of the m largest positive entries."""
    best = np.argsort(-v, kind="stable")[:m]
    return {int(i) for i in best if v[i] > 0}


class RawTurnsStem(BM25Stem):
    """BM25-stem over the raw turns (`Note.raw_text`, no tag line): Fusion's `raw_stem` and `coverage`."""

    def indexed_text(self, note: Note) -> str:
        return note.raw_text


def session_coverage(index: BM25Stem, text: str, session_code: np.ndarray, n_sessions: int) -> np.ndarray:
    """Per session, the share of the query's distinct stems (stopwords dropped) found in its notes of `index`."""
    terms = set(index.tokens(text[:MAX_QUERY_CHARS], grow=False))
    out = np.zeros(n_sessions)
    for term in terms:
        out[np.unique(session_code[index.postings_arrays(term)[0]])] += 1
    return out / len(terms) if terms else out


def session_stem(index: BM25Stem, text: str, session_code: np.ndarray, n_sessions: int) -> np.ndarray:
    """Per session, BM25-stem of `text` over the session's raw turns read as one document, over the query's best
    (in [0, 1]): a question whose words are spread over a session's turns (LoCoMo's multi-hop) finds it whole."""
    scores = index.group_scores(text, session_code, n_sessions)
    return scores / scores.max() if len(scores) and scores.max() > 0 else scores


def session_agreement(lists: list[np.ndarray], session_code: np.ndarray, n_sessions: int) -> np.ndarray:
    """Per session, the share of `lists` (note scores) that rank it among their AGREE_TOP best sessions."""
    out = np.zeros(n_sessions)
    for scores in lists:
        best = np.zeros(n_sessions)
        np.maximum.at(best, session_code, scores)
        top = np.argsort(-best, kind="stable")[:AGREE_TOP]
        out[top[best[top] > 0]] += 1
    return out / len(lists) if lists else out


def turn_texts(note: Note) -> list[str]:
    """Each turn of a note on its own, as the dataset wrote it (LoCoMo's "Speaker: text"; LongMemEval's turns
    carry no name, the roles being user and assistant), each cut at DENSE_CHARS (the user turn is the text
    `dense` embeds, so its vector comes from the embedder's cache)."""
    return [t[:DENSE_CHARS] for t in (note.user, note.assistant) if t.strip()] or [note.raw_text[:DENSE_CHARS]]


def turn_speakers(note: Note) -> list[str | None]:
    """The name heading each of `turn_texts` ("Caroline: ..."), None where there is none."""
    return [m.group(1) if (m := SPEAKER.match(t)) else None for t in turn_texts(note)]


def session_turns(turns: np.ndarray, session_code: np.ndarray, n_sessions: int) -> np.ndarray:
    """(n_sessions, 2): each session's best `turns` value (max-sim) and the mean of its two best (one note:
    that one), over its notes with turn evidence (> 0); 0 for a session without any."""
    out = np.zeros((n_sessions, 2))
    has = turns > 0
    if not has.any():
        return out
    order = np.lexsort((-turns[has], session_code[has]))
    sess, vals = session_code[has][order], turns[has][order]
    first = np.r_[True, sess[1:] != sess[:-1]]
    second = np.r_[False, first[:-1] & ~first[1:]]  # a session's second-best value, right after its best
    out[sess[first], 0] = out[sess[first], 1] = vals[first]
    out[sess[second], 1] = (vals[np.r_[second[1:], False]] + vals[second]) / 2
    return out


def note_day(timestamp: str) -> float | None:
    """Days since 1970 for a note's timestamp (`parse_note_date`: LoCoMo's "1:56 pm on 8 May, 2023" too)."""
    moment = parse_note_date(timestamp)
    return None if moment is None else days(moment)


def note_chunks(note: Note) -> list[str]:
    """The pieces of a note's raw turn embedded for `chunks`: OpenClaw's line-wise chunker at DENSE_CHARS,
    no overlap, the first MAX_CHUNKS."""
    return chunk_text(note.raw_text, DENSE_CHARS, 0)[:MAX_CHUNKS]


def shown_date(moment: datetime | None) -> str | None:
    """The question's date as the pages show it, "2023-05-30 23:40" (its offset too when it has one)."""
    return None if moment is None else moment.isoformat(" ", "minutes")


def window_label(window: Window) -> str:
    """A window as dates: "2024-02-01 to 2024-02-29 (+-7 days)"; "up to ..." when it is open before."""
    def day(d: float) -> str:
        return as_of(float(d)).date().isoformat()  # a note dated past 9999-12-31 (UTC) shows as that day
    start = "up to" if np.isinf(window.start) else f"{day(window.start)} to"
    return f"{start} {day(window.end)} (+-{window.tolerance:g} days)"
