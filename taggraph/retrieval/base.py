"""The common backend interface: ``remember(interaction)`` and ``query(text, k)``.

A `Retriever` indexes one `MemoryStore` and keeps its index current as the
store grows (the store calls ``add(note)`` for each new note). Results carry an
`Explanation`; ``explain(query, note_id)`` also answers for notes that were not
retrieved.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from taggraph.store import Interaction, MemoryStore
from taggraph.notes import Note

DEFAULT_DEPTH = 40  # paper, appendix E: retrieval depth fixed at 40


@dataclass
class Explanation:
    """Why a note ranked where it did, in one method's own terms.

    `reason` is one human sentence: the rank among the store's notes and the evidence
    in words (each method's ``evidence`` detail), a fallback the method took (its
    ``fallback`` detail), or what the note lacks (``missing``). `details` holds the
    structured evidence (matched terms, graph paths, seed mass, component scores, ...).
    """

    method: str
    note_id: str
    retrieved: bool
    rank: int | None
    score: float
    reason: str
    details: dict[str, Any] = field(default_factory=dict)


@dataclass
class Result:
    note_id: str
    score: float
    session_id: str
    rank: int
    explanation: Explanation | None = None


class Retriever:
    """Base class of every retrieval method. Subclasses set `name` and implement
    `add`, `score` and `_explain_details`."""

    name: ClassVar[str] = ""

    def __init__(self, store: MemoryStore, **params: Any) -> None:
        self.store = store
        self.params = params
        for note in store.notes:
            self.add(note)
        store.attach(self)

    def config(self) -> dict[str, Any]:
        """The method's parameters, as recorded in run.json."""
        return {"method": self.name, **self.params}

    def ask_on(self, now: str | None) -> None:
        """Answer later queries as asked on date `now` (a view of one case's question: its
        ``question_date``). Only methods with time rules use it (``uses_question_date``)."""

    def add(self, note: Note) -> None:
        raise NotImplementedError

    def score(self, text: str) -> dict[int, float]:
        """Scores of candidate notes by note index; notes absent were not reached."""
        raise NotImplementedError

    def rank(self, text: str, k: int = DEFAULT_DEPTH) -> list[tuple[int, float]]:
        """Top-k (note index, score): score descending, ties by earlier note first."""
        return self._order(self.score(text))[:k]

    @staticmethod
    def _order(scores: dict[int, float]) -> list[tuple[int, float]]:
        return sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))

    def remember(self, interaction: Interaction) -> Note:
        return self.store.remember(interaction)

    def query(self, text: str, k: int = DEFAULT_DEPTH, explain: bool = False) -> list[Result]:
        ranked = self.rank(text, k)
        if explain:
            scores = self.score(text)
            full = self._order(scores)
        out = []
        for r, (idx, s) in enumerate(ranked, 1):
            note = self.store.notes[idx]
            exp = self._explain(text, note, k, scores, full) if explain else None
            out.append(Result(note.note_id, float(s), note.session_id, r, exp))
        return out

    def explain(self, text: str, note_id: str, k: int = DEFAULT_DEPTH) -> Explanation:
        """Why `note_id` was (not) retrieved for `text` at depth `k`."""
        note = self.store.by_id.get(note_id)
        if note is None:
            raise KeyError(f"no note {note_id!r} in case {self.store.case_id!r}")
        scores = self.score(text)
        return self._explain(text, note, k, scores, self._order(scores))

    def _explain(self, text: str, note: Note, k: int, scores: dict[int, float],
                 full: list[tuple[int, float]]) -> Explanation:
        rank = next((r for r, (idx, _) in enumerate(full, 1) if idx == note.index), None)
        retrieved = rank is not None and rank <= k
        details = self._explain_details(text, note)
        score = float(scores.get(note.index, 0.0))
        evidence = details.get("evidence") or f"score {score:.4g}"
        if retrieved:
            reason = f"ranked {rank} of {len(self.store)} notes: {evidence}"
            if score == 0 and "missing" in details:
                reason = (f"ranked {rank} of {len(self.store)} notes only by tie order (earlier notes first), "
                          f"with score 0: {details.pop('missing')}")
        elif rank is None or (score == 0 and "missing" in details):
            reason = details.pop("missing", "not reached by this method")
        else:
            cut_idx, cut_score = full[k - 1]
            reason = (f"reached ({evidence}) but ranked {rank}, below the depth cut-off {k}; "
                      f"the last retrieved note {self.store.notes[cut_idx].note_id!r} scored {cut_score:.4g}")
        if details.get("fallback"):
            reason += f" (fallback: {details['fallback']})"
        if rank is not None and rank > 1:
            top_idx, top_score = full[0]
            details.setdefault("outranked_by", {
                "note_id": self.store.notes[top_idx].note_id, "score": float(top_score),
                "margin": float(top_score - score)})
        return Explanation(self.name, note.note_id, retrieved, rank, score, reason, details)

    def _explain_details(self, text: str, note: Note) -> dict[str, Any]:
        """Method-specific evidence for `note`; key 'missing' says what it lacks when unreached."""
        return {}
