"""One question put to several methods for the pages and notebooks: the retrievers built (`build_retrievers`),
their top results (`retrieve_all`), each method's ranking of every note (`full_rankings`), its explanation of one
note (`explanations`), of the note that gives that note's session its rank (`explain_note`), of every drawn note
(`file_explanations`) and of the gold notes a method misses (`missed_explanations`). The views draw what these
give; they build no retriever and rank nothing themselves."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import datetime
from typing import Any, NamedTuple

from taggraph.core.store import MemoryStore
from taggraph.errors import ConfigError
from taggraph.evaluation.placement import rank_giver, ranking_place
from taggraph.methods.base import DEFAULT_DEPTH, Explanation, Result, Retriever, check_k, question_date
from taggraph.methods.registry import build_retrievers

__all__ = ["ExplainedNote", "Methods", "ScoredRanking", "build_retrievers", "explain_note", "explanations",
           "file_explanations", "full_rankings", "missed_explanations", "retrieve_all", "scored_ranking"]

Methods = Sequence[str] | Mapping[str, Retriever]  # method names, or retrievers already built by name
Ranking = list[tuple[int, float]]  # (note index, score) in rank order, every note


def retrieve_all(store: MemoryStore, question: str, methods: Methods, k: int = DEFAULT_DEPTH,
                 explain: bool = False, asked_on: datetime | None = None) -> dict[str, list[Result]]:
    """Method name -> its top-k results for `question` asked on date `asked_on` (a case's
    ``question_date``, as the bench asks it), with explanations when `explain`."""
    return {m: r.query(question, k, asked_on=asked_on, explain=explain)
            for m, r in build_retrievers(store, methods).items()}


def known_note(store: MemoryStore, note_id: str) -> None:
    """ConfigError unless `store` holds note `note_id`."""
    if note_id not in store.by_id:
        raise ConfigError(f"no note {note_id!r} in case {store.case_id!r}; its first notes: "
                         f"{[n.note_id for n in store.notes[:3]]}")


def explanations(store: MemoryStore, question: str, note_id: str, methods: Methods,
                 depth: int = DEFAULT_DEPTH, asked_on: datetime | None = None) -> dict[str, Explanation]:
    """Method name -> its `Retriever.explain` of `note_id` for `question` asked on `asked_on`, at `depth`."""
    known_note(store, note_id)
    return {m: r.explain(question, note_id, depth, asked_on=asked_on) for m, r in build_retrievers(store, methods).items()}


class ScoredRanking(NamedTuple):
    """One method's scores for one question and its ranking of every note they reach, from which any note is
    explained without scoring again (as `Retriever.explain` explains from its one scoring)."""

    retriever: Retriever
    question: str
    asked_on: datetime | None
    scores: Mapping[int, float]
    ranking: Ranking

    def explain(self, note_id: str, depth: int = DEFAULT_DEPTH) -> Explanation:
        """`Retriever.explain` of `note_id` at `depth`, from these scores."""
        r = self.retriever
        return r._explain(self.question, r.store.by_id[note_id], check_k(depth), self.scores, self.ranking,
                          self.asked_on)


def scored_ranking(retriever: Retriever, question: str, asked_on: datetime | None = None) -> ScoredRanking:
    """`retriever`'s one scoring of `question` asked on `asked_on`, and its ranking of every note."""
    when = question_date(asked_on)
    scores = retriever.scored(question, asked_on=when)
    return ScoredRanking(retriever, question, when, scores, retriever._order(scores))


class ExplainedNote(NamedTuple):
    """One method's view of a note: its ranking of every note, the note shown (the one that gives a gold note's
    session its rank, `rank_giver`, else the note itself), that note's explanation, and the session's other gold
    notes with their note ranks."""

    ranking: Ranking
    shown_id: str
    explanation: Explanation
    others: list[tuple[str, int | None]]


def full_rankings(retrievers: Mapping[str, Retriever], store: MemoryStore, question: str,
                  asked_on: datetime | None = None) -> dict[str, Ranking]:
    """Method -> its ranking of every note of `store` for `question` asked on `asked_on`."""
    return {m: r.rank(question, len(store), asked_on=asked_on) for m, r in retrievers.items()}


def explain_note(store: MemoryStore, question: str, note_id: str, methods: Methods, depth: int = DEFAULT_DEPTH,
                 asked_on: datetime | None = None, gold: Sequence[str] = ()) -> dict[str, ExplainedNote]:
    """Method -> `ExplainedNote` of `note_id` for `question` asked on `asked_on` at `depth`: when another note of
    a gold note's session ranks better, that note is explained, as the metrics count sessions. Each method scores
    the question once; its ranking and explanation are read from those scores."""
    known_note(store, note_id)
    out = {}
    for m, r in build_retrievers(store, methods).items():
        ranked = scored_ranking(r, question, asked_on)
        shown_id, others = rank_giver(ranked.ranking, store, note_id, gold)
        out[m] = ExplainedNote(ranked.ranking, shown_id, ranked.explain(shown_id, depth), others)
    return out


def file_explanations(store: MemoryStore, question: str, retrievers: Mapping[str, Retriever],
                      note_ids: Iterable[str] | None = None, asked_on: datetime | None = None
                      ) -> dict[str, dict[str, Explanation]]:
    """method -> note id -> `Explanation` of every note (or of `note_ids`) for `question` asked on
    `asked_on`: one ranking with explanations per method, `explain` for the notes it did not reach."""
    wanted = list(note_ids) if note_ids is not None else [n.note_id for n in store.notes]
    out = {}
    for method, r in retrievers.items():  # as `query(explain=True)` and `explain` do, one ranking for every note
        ranked = scored_ranking(r, question, asked_on)
        reached = {store.notes[i].note_id for i, _ in ranked.ranking}
        out[method] = {n: ranked.explain(n, max(len(store), 1) if n in reached else DEFAULT_DEPTH) for n in wanted}
    return out


def missed_explanations(units: Any, stores: Mapping[str, MemoryStore], methods: Sequence[str], k: int = 5
                        ) -> Iterator[tuple[Any, str, Explanation]]:
    """(unit, method, explanation) of every gold note in `units` (rows of `failure_diagnostics(...).units`) under
    every method that does not rank its session in its top k sessions, or ranks it there only by tie order
    (`ranking_place`, as the verdict judges); `stores` maps question id -> store."""
    built, ranked = {}, {}  # each question's retrievers, and each method's one scoring of it
    for u in units.drop_duplicates(["question_id", "note_id"]).itertuples():
        store = stores[u.question_id]
        known_note(store, u.note_id)
        if u.question_id not in built:
            built[u.question_id] = build_retrievers(store, methods)
        for m, r in built[u.question_id].items():
            if (u.question_id, m) not in ranked:
                ranked[u.question_id, m] = scored_ranking(r, u.question)
            scored = ranked[u.question_id, m]
            place = ranking_place(scored.ranking, store, {store.by_id[u.note_id].session_id}, k)
            if place.rank is None or place.rank > k or place.tie:
                yield u, m, scored.explain(u.note_id)
