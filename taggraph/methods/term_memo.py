"""`TermMemo`: what a lexical method computed per query term, kept until its index grows (BM25, BM25-stem)."""

from __future__ import annotations

from typing import Any

MAX_VALUES = 1 << 22  # free choice: at most 2^22 values (32 MB of float64 arrays) kept, then the memo starts again


class TermMemo:
    """term -> a value computed from the index as it stood (e.g. each note's contribution of the term), kept while
    the index stays at one state `at` (its number of notes, ...): a warm query reads them, any add clears them.
    What each entry holds counts towards MAX_VALUES as it comes (a sum per query would cost a pass over every term)."""

    def __init__(self) -> None:
        self._values: dict[Any, Any] = {}
        self._at: Any = None
        self._held = 0

    def at(self, state: Any) -> "TermMemo":
        """This memo for the index in `state`: emptied if the index changed since, or if it holds too much."""
        if state != self._at or self._held > MAX_VALUES:
            self._values, self._at, self._held = {}, state, 0
        return self

    def get(self, term: Any) -> Any:
        return self._values.get(term)

    def put(self, term: Any, value: Any, size: int) -> Any:
        """Keep `value` for `term`, counted as `size` values (at least 1), and return it."""
        self._values[term] = value
        self._held += max(size, 1)
        return value
