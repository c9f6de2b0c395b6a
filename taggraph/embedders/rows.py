"""Per-note arrays that grow with the memory: `Growing` (one value or row per note, appended) and `NoteRows` (each
note's embedded pieces in one matrix, filled when the note is first embedded).

Both keep a buffer of spare capacity that doubles when full (amortized O(1) per append, as a list), so a query reads
a view and never rebuilds an N-sized array. `NoteRows.dots` gives each note's cosines with the bits a per-note
``rows @ q`` gave: numpy's stacked matmul runs the same BLAS call on each note's (pieces, dim) block (dot for one
piece, gemv for more) in C, where one matrix-vector product over all rows would round each row by its place in the
product's blocks (so equal texts could stop being a tie).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


class Growing:
    """An array of `dtype` rows (shape ``(len,) + tail``) appended to, read as `view`; `fill` pads `reserve`."""

    def __init__(self, dtype, tail: tuple[int, ...] = (), fill=0) -> None:
        self.fill = fill
        self._buffer = np.full((0, *tail), fill, dtype=dtype)
        self.size = 0

    def __len__(self) -> int:
        return self.size

    @property
    def view(self) -> np.ndarray:
        """The `size` rows so far (a view: valid until the next append)."""
        return self._buffer[:self.size]

    def reserve(self, size: int) -> None:
        """Room for `size` rows; new rows read `fill` until set."""
        if size > len(self._buffer):
            grown = np.full((max(size, 2 * len(self._buffer), 16), *self._buffer.shape[1:]), self.fill,
                            dtype=self._buffer.dtype)
            grown[:self.size] = self._buffer[:self.size]
            self._buffer = grown

    def resize(self, size: int) -> None:
        """`size` rows, those past the old size at `fill`."""
        self.reserve(size)
        self.size = max(self.size, size)

    def extend(self, rows) -> None:
        rows = np.asarray(rows, dtype=self._buffer.dtype)
        self.reserve(self.size + len(rows))
        self._buffer[self.size:self.size + len(rows)] = rows
        self.size += len(rows)

    def __setitem__(self, where, value) -> None:
        self.view[where] = value


class NoteRows:
    """Each note's vectors (its pieces: one text, or its turns or chunks) as contiguous rows of one float32 matrix,
    appended when the note is first embedded; a note not embedded yet has none. Each row may carry an int `label`
    (TagGraph-Fusion: the speaker heading a turn)."""

    def __init__(self) -> None:
        self.start = Growing(np.int64, fill=-1)  # per note index: its first row, -1 while not embedded
        self.count = Growing(np.int64)  # per note index: its rows
        self.matrix: Growing | None = None  # the rows, (rows, dim); made by the first vectors
        self.labels = Growing(np.int64)  # per row

    def missing(self, indexes) -> np.ndarray:
        """The notes of `indexes` that have no rows yet, in the order given."""
        indexes = np.asarray(indexes, dtype=np.int64)
        self.start.resize(int(indexes.max()) + 1 if len(indexes) else 0)
        return indexes[self.start.view[indexes] < 0]

    def put(self, indexes: np.ndarray, vectors: np.ndarray, counts: Sequence[int],
            labels: Sequence[int] | None = None) -> None:
        """Rows for the notes `indexes` (none of which has any yet): `counts[j]` rows of `vectors` each, in order
        (`labels`: one per row, else 0)."""
        if self.matrix is None:
            self.matrix = Growing(np.float32, (vectors.shape[1],))
        counts = np.asarray(counts, dtype=np.int64)
        size = int(indexes.max()) + 1 if len(indexes) else 0
        self.start.resize(size)
        self.count.resize(size)
        self.start[indexes] = len(self.matrix) + np.cumsum(counts) - counts
        self.count[indexes] = counts
        self.matrix.extend(vectors)
        self.labels.extend(np.zeros(len(vectors), dtype=np.int64) if labels is None else labels)

    def rows(self, i: int) -> np.ndarray:
        """Note `i`'s rows."""
        start = int(self.start.view[i])
        return self.matrix.view[start:start + int(self.count.view[i])]

    def row_ids(self, indexes: np.ndarray) -> np.ndarray:
        """The rows of the notes `indexes` (all embedded), note after note."""
        starts, counts = self.start.view[indexes], self.count.view[indexes]
        return np.repeat(starts - np.cumsum(counts) + counts, counts) + np.arange(int(counts.sum()))

    def dots(self, indexes: np.ndarray, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(each row of the notes `indexes` (all embedded) times `q`, float32, note after note; where each note's
        values start). Notes are grouped by their count, each group one stacked matmul over its (notes, count, dim)
        blocks, read in place when the group's rows lie in order in the matrix."""
        starts, counts = self.start.view[indexes], self.count.view[indexes]
        first = np.cumsum(counts) - counts
        out = np.empty(int(counts.sum()), dtype=np.float32)
        matrix = self.matrix.view
        for k in np.unique(counts).tolist():
            group = np.flatnonzero(counts == k)
            at = starts[group]
            if np.array_equal(at, at[0] + k * np.arange(len(at))):
                blocks = matrix[at[0]:at[0] + k * len(at)].reshape(len(at), k, -1)
            else:
                blocks = matrix[at[:, None] + np.arange(k)]
            out[first[group][:, None] + np.arange(k)] = (blocks @ q[:, None])[:, :, 0]
        return out, first
