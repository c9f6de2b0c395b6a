"""`Postings`: key -> (note indexes, term frequencies) for an inverted index that grows one note at a time and is
read back whole from a snapshot.

Each key's two int32 arrays grow in place (`GrowingArray`). A snapshot's postings stay as the two packed arrays
they were read as: a key gets arrays of its own only when a note adds to it, so a load makes no object per key
(at 20,000 notes, ~150k keys: two objects each cost more time and memory than their values).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterator

import numpy as np

from taggraph._infra.growing import GrowingArray


class Postings:
    """key -> (note indexes, tfs); keys in the order first seen."""

    def __init__(self) -> None:
        self._slot: dict[Hashable, int] = {}  # key -> its place, in the order first seen
        self._grown: dict[int, tuple[GrowingArray, GrowingArray]] = {}  # place -> arrays of its own
        self._starts = np.zeros(1, np.int64)  # packed places 0..len-2: docs/tfs[starts[p]:starts[p + 1]]
        self._docs = self._tfs = np.zeros(0, np.int32)

    @classmethod
    def packed(cls, keys: list, counts: np.ndarray, docs: np.ndarray, tfs: np.ndarray) -> "Postings":
        """The postings of `keys` (distinct), key i's `counts[i]` entries end to end in `docs` and `tfs`."""
        postings = cls()
        postings._slot = dict(zip(keys, range(len(keys))))
        postings._starts = np.concatenate([[0], np.cumsum(counts)])
        postings._docs, postings._tfs = docs, tfs
        return postings

    def __len__(self) -> int:
        return len(self._slot)

    def __contains__(self, key: Hashable) -> bool:
        return key in self._slot

    def keys(self) -> Iterator[Hashable]:
        return iter(self._slot)

    def get(self, key: Hashable) -> tuple[np.ndarray, np.ndarray] | None:
        """(note indexes, tfs) of `key`, views valid until its next `append`; None for a key never added."""
        slot = self._slot.get(key)
        if slot is None:
            return None
        grown = self._grown.get(slot)
        if grown is not None:
            return grown[0].view, grown[1].view
        start, end = self._starts[slot], self._starts[slot + 1]
        return self._docs[start:end], self._tfs[start:end]

    def append(self, key: Hashable, doc: int, tf: int) -> None:
        """Note `doc` holds `key` `tf` times (notes come in increasing order)."""
        slot = self._slot.setdefault(key, len(self._slot))
        grown = self._grown.get(slot)
        if grown is None:
            if slot < len(self._starts) - 1:  # a packed key: its values move to arrays of its own (no copy until then)
                docs, tfs = self.get(key)
                grown = (GrowingArray.of(docs), GrowingArray.of(tfs))
            else:
                grown = (GrowingArray(np.int32, 1), GrowingArray(np.int32, 1))
            self._grown[slot] = grown
        grown[0].append(doc)
        grown[1].append(tf)
