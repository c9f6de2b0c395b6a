"""`GrowingArray`: a numpy array that appends in amortized O(1), for indexes that grow one note at a time.

numpy has no append that keeps its buffer (`np.append` copies everything); Python lists do, but every query
would then convert them (O(length) per query). Capacity doubles, as a list's does, and `view` is the filled
part without a copy.
"""

from __future__ import annotations

import numpy as np


class GrowingArray:
    """A 1-d numpy array of `dtype` with cheap appends; `view` is the filled part (no copy)."""

    __slots__ = ("_data", "_size")

    def __init__(self, dtype, capacity: int = 4) -> None:
        self._data = np.empty(capacity, dtype=dtype)
        self._size = 0

    @classmethod
    def of(cls, values: np.ndarray) -> "GrowingArray":
        """A GrowingArray holding `values` without a copy (a view of a larger array too: the first append moves
        it to a buffer of its own, so nothing is ever written into `values`)."""
        grown = cls.__new__(cls)
        grown._data, grown._size = values, len(values)
        return grown

    def __len__(self) -> int:
        return self._size

    def append(self, value) -> None:
        if self._size == len(self._data):
            self._reserve(self._size + 1)
        self._data[self._size] = value
        self._size += 1

    def extend(self, values) -> None:
        values = np.asarray(values, dtype=self._data.dtype)
        end = self._size + len(values)
        if end > len(self._data):
            self._reserve(end)
        self._data[self._size:end] = values
        self._size = end

    def _reserve(self, size: int) -> None:
        data = np.empty(max(size, 2 * len(self._data)), dtype=self._data.dtype)
        data[:self._size] = self._data[:self._size]
        self._data = data

    @property
    def view(self) -> np.ndarray:
        """The values appended so far; valid until the next append (a view of the buffer, not a copy)."""
        return self._data[:self._size]
