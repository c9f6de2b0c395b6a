"""`NoteRows`: each note's embedded pieces (one text, or its turns or chunks) as rows of one growing matrix, filled
when the note is first embedded.

The rows live in a `GrowingArray` (capacity doubling, as a list's), so embedding a note appends and a query reads a
view: nothing N-sized is rebuilt. `dots` gives each note's cosines with the bits a per-note ``rows @ q`` gave:
numpy's stacked matmul runs the same BLAS call on each note's (pieces, dim) block (dot for one piece, gemv for more)
in C, where one matrix-vector product over all rows rounds each row by its place in the product's blocks (so that
two equal texts could stop being a tie).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from taggraph._infra.growing import GrowingArray


class NoteRows:
    """Each note's vectors as contiguous rows of one float32 matrix, appended when the note is first embedded; a
    note not embedded yet has none. Each row may carry an int label (TagGraph-Fusion: the speaker heading a turn)."""

    def __init__(self) -> None:
        self._start = GrowingArray(np.int64)  # per note index: its first row, -1 while not embedded
        self._count = GrowingArray(np.int64)  # per note index: its rows
        self._values = GrowingArray(np.float32)  # the rows, flat
        self._labels = GrowingArray(np.int64)  # per row
        self.dim = 0

    @property
    def matrix(self) -> np.ndarray:
        """The rows so far, (rows, dim) (a view)."""
        return self._values.view.reshape(-1, self.dim) if self.dim else np.zeros((0, 0), dtype=np.float32)

    @property
    def labels(self) -> np.ndarray:
        """Each row's label."""
        return self._labels.view

    @property
    def first_rows(self) -> np.ndarray:
        """Per note index, its first row (-1 while not embedded)."""
        return self._start.view

    def _cover(self, size: int) -> None:
        """Room in the per-note arrays for notes up to index `size` - 1."""
        if size > len(self._start):
            self._start.extend(np.full(size - len(self._start), -1))
            self._count.extend(np.zeros(size - len(self._count)))

    def missing(self, indexes) -> np.ndarray:
        """The notes of `indexes` that have no rows yet, in the order given."""
        indexes = np.asarray(indexes, dtype=np.int64)
        self._cover(int(indexes.max()) + 1 if len(indexes) else 0)
        return indexes[self._start.view[indexes] < 0]

    def put(self, indexes: np.ndarray, vectors: np.ndarray, counts: Sequence[int],
            labels: Sequence[int] | None = None) -> None:
        """Rows for the notes `indexes` (none of which has any yet): `counts[j]` rows of `vectors` each, in order
        (`labels`: one per row, else 0)."""
        counts = np.asarray(counts, dtype=np.int64)
        self._cover(int(indexes.max()) + 1 if len(indexes) else 0)
        self.dim = self.dim or vectors.shape[1]
        self._start.view[indexes] = len(self.matrix) + np.cumsum(counts) - counts
        self._count.view[indexes] = counts
        self._values.extend(np.asarray(vectors, dtype=np.float32).ravel())
        self._labels.extend(np.zeros(len(vectors)) if labels is None else labels)

    def rows(self, i: int) -> np.ndarray:
        """Note `i`'s rows."""
        start = int(self._start.view[i])
        return self.matrix[start:start + int(self._count.view[i])]

    def row_ids(self, indexes: np.ndarray) -> np.ndarray:
        """The rows of the notes `indexes` (all embedded), note after note."""
        starts, counts = self._start.view[indexes], self._count.view[indexes]
        return np.repeat(starts - np.cumsum(counts) + counts, counts) + np.arange(int(counts.sum()))

    def dots(self, indexes: np.ndarray, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(each row of the notes `indexes` (all embedded) times `q`, float32, note after note; where each note's
        values start). Notes are grouped by their count, each group one stacked matmul over its (notes, count, dim)
        blocks, read in place when the group's rows lie in order in the matrix (every note embedded at once)."""
        starts, counts = self._start.view[indexes], self._count.view[indexes]
        first = np.cumsum(counts) - counts
        out = np.empty(int(counts.sum()), dtype=np.float32)
        matrix = self.matrix
        for k in np.unique(counts).tolist():
            group = np.flatnonzero(counts == k)
            at = starts[group]
            if np.array_equal(at, at[0] + k * np.arange(len(at))):
                blocks = matrix[at[0]:at[0] + k * len(at)].reshape(len(at), k, -1)
            else:
                blocks = matrix[at[:, None] + np.arange(k)]
            out[first[group][:, None] + np.arange(k)] = (blocks @ q[:, None])[:, :, 0]
        return out, first
