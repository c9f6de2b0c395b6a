"""TagGraph-Fusion's signals in one table (`SIGNALS`): each signal's name, level, switch, whether it needs the
embedder, how it is computed, what it reads, its meaning in plain words, its default weight and its compute function.
The weights type (`FusionWeights`), the component and session columns, the switches (`SWITCHED_BY`), the why's
legend and the table in docs/methods.md (`signals_markdown`) are all derived from it: adding a signal is one entry
here plus its compute function (docs/your-own-work.md)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, make_dataclass
from typing import Any, Literal

import numpy as np

from taggraph.methods.fusion.features import evidence_vector, session_turns
from taggraph.methods.fusion.peer_cues import keyword_overlap

Level = Literal["note", "session", "bonus", "time", "factor"]
LEVELS = {  # what each level means, as the legend and docs say it
    "note": "a note's own evidence, scaled per question (z-score over the notes with evidence, the weakest at 0)",
    "session": "its session's evidence, in [0, 1], given to each of the session's notes",
    "bonus": "the session bonus: a share of the session's other notes' evidence",
    "time": "a time feature in [0, 1]; weighted, it multiplies the sum (1 + the weighted features)",
    "factor": "not weighted itself: what the time factor adds to the sum",
}
UNIT = "points"  # the fused score's unit: a weighted sum of per-question z-scores, so a point is about one spread


@dataclass
class Query:
    """What a compute function reads for one question: its text, the store's size, the dense pool, whether it is
    a request, the evidence so far ("max"-scaled `cols`, scaled `components`) and the notes' session codes."""

    text: str
    n: int
    pool: np.ndarray
    request: bool
    codes: np.ndarray
    n_sessions: int
    cols: np.ndarray | None = None
    components: np.ndarray | None = None
    memo: dict[str, Any] = field(default_factory=dict)

    def once(self, key: str, compute: Callable[[], Any]) -> Any:
        """`compute()` once per question (two signals read one pass: turns and speaker)."""
        if key not in self.memo:
            self.memo[key] = compute()
        return self.memo[key]


@dataclass(frozen=True)
class FusionSignal:
    """One signal. `compute(fusion, query)`: a "note" signal's raw evidence per note (NaN: none), a "session"
    signal's value per session; None: computed by the method's own pipeline (the pool's lists, PPR, time rules).
    `needs`: signals it reads, computed when it is; `index`: the BM25-stem part it reads ("note_stem" or
    "raw_stem"), built when it is used; `dense_like`: cosines over the pool (min-max when "max"-scaled);
    `requests`: computed on a request's route too."""

    name: str
    level: Level
    weight: float | None
    switch: str | None
    embedder: bool
    computed: str
    reads: str
    meaning: str
    compute: Callable[[Any, Query], np.ndarray] | None = None
    needs: tuple[str, ...] = ()
    index: str | None = None
    dense_like: bool = False
    requests: bool = True


def _stem_list(part: str) -> Callable[[Any, Query], np.ndarray]:
    return lambda fusion, q: evidence_vector(getattr(fusion, part).score(q.text), q.n)


def _turn_pair(fusion: Any, q: Query) -> tuple[np.ndarray, np.ndarray]:
    return q.once("turns", lambda: fusion._turns(q.text, q.pool))


def _session_turn(column: int) -> Callable[[Any, Query], np.ndarray]:
    def compute(fusion: Any, q: Query) -> np.ndarray:
        turns = q.components[:, COMPONENTS.index("turns")]
        return q.once("session_turns", lambda: session_turns(turns, q.codes, q.n_sessions))[:, column]
    return compute


SIGNALS: tuple[FusionSignal, ...] = (
    FusionSignal("note_bm25", "note", 1.0, None, False, "Okapi BM25 over the notes (tag line and turns)",
                 "the question's words in the note, each with its BM25 weight",
                 "the question's words found in the note, rare words counting more; the scale the others follow"),
    FusionSignal("raw_bm25", "note", 0.0, "raw_turns", False, "Okapi BM25 over the raw turns, no tag line",
                 "the question's words in the turns as said",
                 "the question's words found in what was said, without the note's tags"),
    FusionSignal("dense", "note", 0.0, "dense", True, "cosine of the question to the note's user turn (pool notes)",
                 "the start of the user turn and its cosine",
                 "how close in meaning the note's user turn is to the question", dense_like=True),
    FusionSignal("graph", "note", 0.3, "graph", False,
                 "Personalized PageRank over the tag graph from the question's concepts and the pool's notes",
                 "the share of the walk that ends on the note (PPR mass) and the route most of it took",
                 "how often a random walk from the question's tags and best notes, over shared tags, ends on this note "
                 "(its PPR mass)"),
    FusionSignal("session", "bonus", 0.25, "session", False,
                 "sum over the session's other notes of their relevance times 0.5^i (i = 1, 2, ... by relevance)",
                 "the session's further notes and their relevance",
                 "the rest of its conversation session also matches: each further note adds, each half as much"),
    FusionSignal("target", "time", 0.625, "time", False,
                 "1 inside a date window the question names, fading as exp(-days outside / tolerance)",
                 "the question's window and the note's date",
                 "how close the note's date is to the time the question names (1: inside its window, towards 0 "
                 "outside)"),
    FusionSignal("recent", "time", 0.05, "time", False, "(day - oldest) / (newest - oldest) on a recency cue",
                 "the question's recency cue ('latest', 'now', ...)",
                 "how late the note is among all notes, when the question asks for the latest"),
    FusionSignal("early", "time", 0.05, "time", False, "1 - recency on an order cue for the first",
                 "the question's order cue ('first', 'originally', ...)",
                 "how early the note is among all notes, when the question asks for the first"),
    FusionSignal("note_stem", "note", 2.0, "stems", False, "BM25-stem over the notes (bm25s's tokenizer, stemmed)",
                 "the question's word stems in the note, each with its weight ('befor' <- 'before')",
                 "like note_bm25 on word stems ('running' meets 'runs'), common words dropped",
                 compute=_stem_list("note_stem"), index="note_stem"),
    FusionSignal("raw_stem", "note", 2.0, "stems", False, "BM25-stem over the raw turns, no tag line",
                 "the question's word stems in the turns as said",
                 "like raw_bm25 on word stems, common words dropped", compute=_stem_list("raw_stem"), index="raw_stem"),
    FusionSignal("turns", "note", 3.0, "turns", True, "best cosine of the question to each turn of the note alone",
                 "the turn that matched best and its cosine",
                 "how close in meaning the note's best single turn is to the question",
                 compute=lambda fusion, q: _turn_pair(fusion, q)[0], dense_like=True, requests=False),
    FusionSignal("speaker", "note", 0.25, "turns", True,
                 "best cosine over the turns of a speaker the question names (a speaker heads >= 10% of the turns)",
                 "the named speaker's best turn and its cosine",
                 "how close in meaning the best turn of a person the question names is to it",
                 compute=lambda fusion, q: _turn_pair(fusion, q)[1], needs=("turns",), requests=False),
    FusionSignal("best_turn", "session", 1.0, "turns", True, "the session's best scaled `turns` value",
                 "the session's note whose turn matched best",
                 "the best turn match anywhere in the note's session", compute=_session_turn(0), needs=("turns",)),
    FusionSignal("top2_turns", "session", 1.0, "turns", True, "the mean of the session's two best scaled `turns`",
                 "the session's note whose turn matched best",
                 "the session's two best turn matches, averaged: two turns that fit beat one",
                 compute=_session_turn(1), needs=("turns",)),
    FusionSignal("time", "factor", None, "time", False,
                 "(sum of the other signals) x (factor - 1), factor = 1 + target x w + recent x w + early x w",
                 "the time rule that applied, the question's and the note's dates, the window's source",
                 "what the time rules add: the rest of the score times the factor minus 1 (can be larger than the "
                 "margin, when the other signals favour the note)"),
    FusionSignal("keyword_overlap", "session", 0.0, None, False,
                 "share of the question's keywords (>= 3 letters, no stop word) starting a word of the session's "
                 "people's turns (MemPalace's hybrid_v4; preset KEYWORD_OVERLAP, weight 8)",
                 "the session's share of the question's keywords in what its people said",
                 "how many of the question's words the people said somewhere in its session (lab study 41: "
                 "adopted, weight 0 by default)",
                 compute=lambda fusion, q: keyword_overlap(fusion, q.text, q.codes, q.n_sessions)),
)


def _by_level(*levels: str) -> tuple[str, ...]:
    return tuple(s.name for s in SIGNALS if s.level in levels)


BY_NAME = {s.name: s for s in SIGNALS}
COMPONENTS = _by_level("note")  # the columns of `Signals.components`, in this order
SESSION_FEATURES = _by_level("session")  # the columns of `Signals.session_features`
TIME_FEATURES = _by_level("time")  # the columns of `Signals.time`
DENSE_LIKE = tuple(s.name for s in SIGNALS if s.dense_like)  # cosines over the pool: no evidence outside it
SWITCHED_BY = {s.name: s.switch for s in SIGNALS}  # the switch that turns each signal off (None: only its weight)
MEANINGS = {s.name: s.meaning for s in SIGNALS}  # one line each, what every view shows beside a signal's name


def _weights_of(cls, weights: dict[str, float]):
    """The weights a method's sparse `weights` parameter names; a signal not named weighs 0."""
    return cls(**{f: float(weights.get(f, 0.0)) for f in cls.__dataclass_fields__})


def _column(names: tuple[str, ...]) -> Callable[[Any], np.ndarray]:
    return lambda self: np.array([getattr(self, c) for c in names])


FusionWeights = make_dataclass(
    "FusionWeights", [(s.name, float, field(default=s.weight)) for s in SIGNALS if s.weight is not None], frozen=True,
    namespace={"of": classmethod(_weights_of), "components": _column(COMPONENTS),
               "session_features": _column(SESSION_FEATURES), "time": _column(TIME_FEATURES),
               "__doc__": "One weight per weighted signal of `SIGNALS`, its default the adopted one: what "
                          "benchmarks/fusion_joint_cv.py's protocol fits on LongMemEval-S dev and LoCoMo dev together "
                          "under z-scores, by coordinate ascent from the protocol's `START`; the time weights stay "
                          "fixed; requests are routed apart (`REQUEST_WEIGHTS`), so not fitted on requests.",
               "__module__": __name__})


def signals_markdown() -> str:
    """The table of docs/methods.md: one row per signal, from `SIGNALS`."""
    rows = ["| signal | level | default weight | switch | embedder | computed as | reads | meaning |",
            "|---|---|---|---|---|---|---|---|"]
    for s in SIGNALS:
        weight = "-" if s.weight is None else f"{s.weight:g}"
        rows.append(f"| `{s.name}` | {s.level} | {weight} | {f'`{s.switch}`' if s.switch else '-'} | "
                    f"{'yes' if s.embedder else 'no'} | {s.computed} | {s.reads} | {s.meaning} |")
    return "\n".join(rows)
