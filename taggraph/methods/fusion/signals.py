"""TagGraph-Fusion's arithmetic: the per-query signals, normalization, the sum and the time features (the table of
signals is `signal_table`, the features they read `features`, the retriever that gathers them `method`)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import BeforeValidator, Field

from taggraph.methods.fusion.time_expressions import Window, as_of
# the table's derived columns and the features, re-read from here by the fitting protocols (benchmarks/)
from taggraph.methods.fusion.signal_table import (COMPONENTS, DENSE_LIKE, SESSION_FEATURES, SIGNALS, SWITCHED_BY,
                                                  TIME_FEATURES, FusionWeights)
from taggraph.methods.fusion.features import DENSE_CHARS, session_turns  # noqa: F401  (read by benchmarks/)

NORMALIZATIONS = ("max", "minmax", "zscore", "rrf")
RRF_K = 60  # the constant of reciprocal rank fusion (Cormack et al., 2009)
TURN_PARTS = tuple(s.name for s in SIGNALS if s.switch == "turns")  # what the turn embeddings feed
TURN_COLUMNS = [SESSION_FEATURES.index("best_turn"), SESSION_FEATURES.index("top2_turns")]
GAMMA = 0.5  # free choice: the i-th further note of a session counts gamma^i (geometric, so bounded)
POOL = 30  # free choice: notes taken from each lexical list and from a first PPR into the dense pool (about 33 a question)
# present-tense requests only: "what you recommended" / "you suggested" recall an answer, they ask for none
REQUEST = re.compile(r"\b(suggest|suggestions?|recommend|recommendations?|tips?|advice|ideas?)\b", re.I)
# a question about an earlier answer ("remind me of the tips you gave") recalls, even with a request word
RECALL = re.compile(r"\b(remind me|you (?:gave|mentioned|said|told|suggested|recommended|provided|shared|listed)|"
                    r"(?:our|the|my) (?:previous|last|earlier) (?:conversation|chat|discussion))\b", re.I)


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
    return fused(fused_parts(ev, w, gamma))


def fused(parts: tuple[np.ndarray, np.ndarray | None, np.ndarray | None, np.ndarray]) -> np.ndarray:
    """The fused score from `fused_parts`."""
    rel, bonus, features, factor = parts
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
        # by session, best note first; only notes with relevance (rel >= 0: a note at 0 comes last in its session
        # and adds 0, so the sums are those over every note)
        scored = np.flatnonzero(rel > 0)
        order = scored[np.lexsort((-rel[scored], ev.sessions[scored]))]
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


def shown_date(moment: datetime | None) -> str | None:
    """The question's date as the pages show it, "2023-05-30 23:40" (its offset too when it has one)."""
    return None if moment is None else moment.isoformat(" ", "minutes")


def window_label(window: Window) -> str:
    """A window as dates: "2024-02-01 to 2024-02-29 (+-7 days)"; "up to ..." when it is open before; one dated by
    a note says so: "before 2023-06-04 (+-7 days): the date of demo_s23#0, the best match for '...'"."""
    def day(d: float) -> str:
        return as_of(float(d)).date().isoformat()  # a note dated past 9999-12-31 (UTC) shows as that day
    if window.anchor is not None:  # "before / after <event>": dated by a note, which it names
        edge = day(window.end) if window.anchor.direction == "before" else day(window.start)
        return f"{window.anchor.direction} {edge} (+-{window.tolerance:g} days): {window.anchor.words()}"
    start = "up to" if np.isinf(window.start) else f"{day(window.start)} to"
    return f"{start} {day(window.end)} (+-{window.tolerance:g} days)"
