"""Signals: a method's score of one note split into the parts that add up to it, and the contrast of a note with
the notes ranked above it, signal by signal.

A method that scores by signals returns them in `Evidence.signals`, one `Signal` each, in the unit of the final
score: the contributions of a note add up to its score (`taggraph.testing.MethodContract` checks it). From them
`Retriever.explain` builds a `Contrast`: the note beside the note at rank 1 and the others just above it, the
difference per signal and the signal that decided. Every view (the CLI's `explain`, the explain page, the graph
page, the notebooks) reads these two types, never a method's internals.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

RIVALS = 8  # free choice: the notes above a note contrasted with it, from rank 1; beyond, the one just above it
SUM_RTOL = 1e-6  # contributions add up to the score within this relative tolerance (float sums in another order)


@dataclass(frozen=True)
class Signal:
    """One signal's part of a note's score.

    `name`: the signal ("note_bm25"); `contribution`: what it adds to the note's score, in the score's unit (the
    contributions of a note add up to its score); `value` and `weight`: the signal before its weight, when it has
    one (contribution = value x weight, times any factor the method applies after the sum); `reads`: what it read
    for this note, in one line ("'dog' 2.1, 'breed' 1.4", "turn 'I adopted Miso...' cosine 0.62"); `meaning`: what
    the signal is, in plain words, one line (every view shows it beside the name).
    """

    name: str
    contribution: float
    value: float | None = None
    weight: float | None = None
    reads: str = ""
    meaning: str = ""


def signals_total(signals: Sequence[Signal]) -> float:
    return math.fsum(s.contribution for s in signals)


def adds_up(signals: Sequence[Signal], score: float) -> bool:
    """Whether the contributions of `signals` add up to `score` (within SUM_RTOL of the larger magnitude)."""
    total = signals_total(signals)
    return abs(total - score) <= SUM_RTOL * max(abs(total), abs(score), 1e-12)


@dataclass(frozen=True)
class Gap:
    """One signal of a note beside the same signal of a rival: their contributions and the rival's lead."""

    name: str
    note: float
    rival: float

    @property
    def lead(self) -> float:
        return self.rival - self.note


@dataclass(frozen=True)
class Rival:
    """A note ranked above the explained one: where, by how much (`margin` = its score - the note's), signal by
    signal (`gaps`, largest lead first), the signal that decided (the largest lead; None when no signal favours
    it: a tie broken by note order) and what each signal read for it (`reads`)."""

    note_id: str
    session_id: str
    rank: int
    score: float
    margin: float
    gaps: list[Gap]
    decided_by: str | None
    reads: dict[str, str] = field(default_factory=dict)


@dataclass
class Contrast:
    """A note's signals (`signals`) beside those of the notes ranked above it (`rivals`: rank 1 first; `left_out`:
    the ranks above it not contrasted, between the first RIVALS and the one just above it) and what each signal
    means (`meanings`, from both sides' signals)."""

    note_id: str
    rank: int | None
    score: float
    signals: list[Signal]
    rivals: list[Rival]
    left_out: list[int] = field(default_factory=list)
    meanings: dict[str, str] = field(default_factory=dict)

    def left_out_text(self) -> str:
        """'and 3 more notes above it, ranks 9-11, not shown' ('' when none is left out)."""
        if not self.left_out:
            return ""
        span = (f"rank {self.left_out[0]}" if len(self.left_out) == 1
                else f"ranks {self.left_out[0]}-{self.left_out[-1]}")
        return f"and {len(self.left_out)} more note{'s' if len(self.left_out) > 1 else ''} above it, {span}, not shown"

    def table(self) -> Any:
        """A tidy DataFrame: one row per rival and signal (rival, rank, signal, this note, rival, lead, reads)."""
        import pandas as pd

        mine = {s.name: s.reads for s in self.signals}
        return pd.DataFrame([{"rival": r.note_id, "rank": r.rank, "signal": g.name, "this note": g.note,
                              "rival's": g.rival, "lead": g.lead, "decided": g.name == r.decided_by,
                              "this note read": mine.get(g.name, ""), "rival read": r.reads.get(g.name, ""),
                              "meaning": self.meanings.get(g.name, "")}
                             for r in self.rivals for g in r.gaps], columns=list(TABLE_COLUMNS))

    def lines(self, shown: int = 3) -> list[str]:
        """The contrast in plain text: per rival, its rank, margin, the deciding signal with what each note read,
        and its `shown` largest gaps."""
        out = []
        for r in self.rivals:
            if r.decided_by is None:
                out.append(f"note {r.note_id} (rank {r.rank}) ties it at {_num(r.score)}: above it by note order")
                continue
            mine = {s.name: s.reads for s in self.signals}
            gaps = ", ".join(f"{g.name} {_num(g.rival)} vs {_num(g.note)}" for g in r.gaps[:shown])
            out.append(f"note {r.note_id} (rank {r.rank}) scores {_num(r.score)} (+{_num(r.margin)}): decided by "
                       f"{r.decided_by} ({lead_words(r)}); {gaps}")
            said = r.reads.get(r.decided_by, "")
            own = mine.get(r.decided_by, "")
            if said or own:
                out.append(f"  {r.decided_by} read: rank {r.rank}: {said or '-'} | this note: {own or 'nothing'}")
        if self.left_out:
            out.append(self.left_out_text())
        return out


# the notebook table's columns and what each holds (its column help)
TABLE_COLUMNS = {"rival": "a note ranked above this one", "rank": "the rival's rank",
                 "signal": "the signal (see meaning)", "this note": "the signal's part of this note's score, in points",
                 "rival's": "the same part of the rival's score", "lead": "rival's minus this note's: > 0 favours it",
                 "decided": "the signal with the rival's largest lead", "this note read": "what it read for this note",
                 "rival read": "what it read for the rival", "meaning": "what the signal is, in plain words"}


def plain_number(x: float, digits: int = 4) -> str:
    """`x` to `digits` significant digits as a plain decimal, never in scientific notation: 0.00001463, 12345,
    26.47, 7.5 (below 1e-9: '0'; NaN and infinities as Python writes them)."""
    x = float(x)
    if x == 0 or not math.isfinite(x):
        return f"{x:g}"
    decimals = min(max(digits - 1 - math.floor(math.log10(abs(x))), 0), 9)
    text = f"{x:.{decimals}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text  # 7.5, not 7.500, as 4 significant digits write it


def _num(x: float) -> str:
    return plain_number(x)


def lead_words(r: Rival) -> str:
    """The deciding signal's lead beside the margin: '+8.519, more than the whole margin +8.383: the other signals
    favour this note by 0.136' when the part is larger than the whole."""
    lead = r.gaps[0].lead
    if lead <= r.margin:
        return f"+{_num(lead)} of the +{_num(r.margin)}"
    return (f"+{_num(lead)}, more than the whole margin +{_num(r.margin)}: the other signals favour this note by "
            f"{_num(lead - r.margin)}")


def gaps_of(note: Sequence[Signal], rival: Sequence[Signal]) -> list[Gap]:
    """Every signal of either, the rival's largest lead first (signal order breaks ties)."""
    mine, theirs = {s.name: s.contribution for s in note}, {s.name: s.contribution for s in rival}
    names = list(dict.fromkeys([*theirs, *mine]))
    gaps = [Gap(n, mine.get(n, 0.0), theirs.get(n, 0.0)) for n in names]
    return sorted(gaps, key=lambda g: -g.lead)


def contrast(note_id: str, rank: int | None, score: float, signals: list[Signal],
             ranking: Sequence[tuple[int, float]], signals_of: Callable[[int], list[Signal]],
             ids: Callable[[int], tuple[str, str]], rivals: int = RIVALS) -> Contrast:
    """The contrast of a note (`signals`, ranked `rank` with `score`) with the first `rivals` notes of `ranking`
    ((note index, score) in rank order) and the one just above it; `signals_of(index)` gives a note's signals and
    `ids(index)` its (note id, session id). Every note above it is contrasted up to `rivals` of them; beyond, the
    first `rivals` and the one just above it, the ranks between named in `Contrast.left_out`."""
    above = min((rank or len(ranking) + 1) - 1, len(ranking))
    places = sorted({*range(min(rivals, above)), *([above - 1] if above else [])})
    left_out = [place + 1 for place in range(above) if place not in places]
    meanings = {s.name: s.meaning for s in signals if s.meaning}
    out = []
    for place in places:
        index, rival_score = ranking[place]
        theirs = signals_of(index)
        gaps = gaps_of(signals, theirs)
        decided = gaps[0].name if gaps and gaps[0].lead > 0 else None
        note, session = ids(index)
        out.append(Rival(note, session, place + 1, rival_score, rival_score - score, gaps, decided,
                         {s.name: s.reads for s in theirs}))
        meanings.update({s.name: s.meaning for s in theirs if s.meaning and s.name not in meanings})
    return Contrast(note_id, rank, score, signals, out, left_out, meanings)
