"""`Scores`: a method's scores {note index: score} held as two numpy arrays, and their rank order.

A method that scores with numpy returns one from `Retriever.score` (taggraph.methods.base) instead of a dict: the
first k are then found by `np.argpartition`, and nothing is made per reached note in Python.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

import numpy as np


class Scores(Mapping):
    """What `Retriever.score` returns as arrays: note `index[i]` (int64, strictly ascending) scored `value[i]`
    (float64). A read-only mapping {note index: score}, so every reader of a dict reads it; the ranking reads the
    arrays. Notes absent were not reached."""

    __slots__ = ("index", "value")

    def __init__(self, index: np.ndarray, value: np.ndarray) -> None:
        self.index, self.value = np.asarray(index), np.asarray(value)

    @classmethod
    def of_dense(cls, values: np.ndarray, reached: np.ndarray | None = None) -> "Scores":
        """The scores of a vector over every note: the notes where `reached` (default: where the value is not 0)."""
        values = np.asarray(values, dtype=np.float64)
        index = np.flatnonzero(values if reached is None else reached)
        return cls(index, values[index])

    def dense(self, notes: int, fill: float = 0.0) -> np.ndarray:
        """The scores as a vector over `notes` notes, `fill` where a note was not reached."""
        out = np.full(notes, fill, dtype=np.float64)
        out[self.index] = self.value
        return out

    def __len__(self) -> int:
        return len(self.index)

    def __iter__(self) -> Iterator[int]:
        return iter(self.index.tolist())

    def _position(self, idx: int) -> int | None:
        """Where note `idx` sits in `index` (binary search: it is ascending), None when it was not reached."""
        at = int(np.searchsorted(self.index, idx))
        return at if at < len(self.index) and self.index[at] == idx else None

    def __getitem__(self, idx: int) -> float:
        at = self._position(idx)
        if at is None:
            raise KeyError(idx)
        return float(self.value[at])

    def items(self):
        return zip(self.index.tolist(), self.value.tolist())

    def top(self, k: int | None = None) -> list[tuple[int, float]]:
        """The first `k` (all when None) as (note index, score): score descending, ties by earlier note first,
        the order of sorting every pair by (-score, index), found by `np.argpartition` when k is smaller."""
        index, value = self.index, self.value
        if k is not None and k < len(value):
            cut = np.partition(value, len(value) - k)[len(value) - k]  # the k-th largest score
            keep = value >= cut  # it, and every note tied with it, of which the earliest are taken
            index, value = index[keep], value[keep]
        order = np.lexsort((index, -value))[:k]
        return list(zip(index[order].tolist(), value[order].tolist()))

    def place(self, idx: int) -> int | None:
        """The rank `top` gives note `idx` (1 = first), None when it was not reached."""
        at = self._position(idx)
        if at is None:
            return None
        score = self.value[at]
        return int((self.value > score).sum() + ((self.value == score) & (self.index < idx)).sum()) + 1


def summed(postings: list[tuple[np.ndarray, np.ndarray]], n: int) -> np.ndarray:
    """Per note (n of them), the sum of the values `postings` give it: each a (note indexes, each distinct; values)
    pair, summed in list order. One pass: bincount adds each note's values from 0 in that order, bit for bit as a
    loop of ``scores[docs] += values`` per pair would, without a gather and a scatter per pair."""
    if not postings:
        return np.zeros(n)
    return np.bincount(np.concatenate([d for d, _ in postings]), np.concatenate([v for _, v in postings]), n)
