"""One question put to several methods at once: each one's top results (`retrieve_all`) or its explanation of
one note (`explanations`), as the explain page, the graph page and the notebooks show them side by side."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime

from taggraph.core.store import MemoryStore
from taggraph.errors import ConfigError
from taggraph.methods.base import DEFAULT_DEPTH, Explanation, Result, Retriever
from taggraph.methods.registry import build_retrievers

Methods = Sequence[str] | Mapping[str, Retriever]


def retrieve_all(store: MemoryStore, question: str, methods: Methods, k: int = DEFAULT_DEPTH,
                 explain: bool = False, asked_on: datetime | None = None) -> dict[str, list[Result]]:
    """Method name -> its top-k results for `question` asked on date `asked_on` (a case's
    ``question_date``, as the bench asks it), with explanations when `explain`."""
    return {m: r.query(question, k, asked_on=asked_on, explain=explain)
            for m, r in build_retrievers(store, methods).items()}


def explanations(store: MemoryStore, question: str, note_id: str, methods: Methods,
                 depth: int = DEFAULT_DEPTH, asked_on: datetime | None = None) -> dict[str, Explanation]:
    """Method name -> its `Retriever.explain` of `note_id` for `question` asked on `asked_on`, at `depth`."""
    if note_id not in store.by_id:
        raise ConfigError(f"no note {note_id!r} in case {store.case_id!r}; its first notes: "
                         f"{[n.note_id for n in store.notes[:3]]}")
    return {m: r.explain(question, note_id, depth, asked_on=asked_on) for m, r in build_retrievers(store, methods).items()}
