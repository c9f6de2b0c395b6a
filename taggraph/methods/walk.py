"""The walk AdaptiveGraph diffuses over: the base graph's 0/1 adjacency as csr arrays, grown note by note and kept
once per store (`walk_of`), so every AdaptiveGraph over a store (the method, TagGraph-Fusion's graph part) reads one.

The structure is the base graph's links (both directions), plus the chronological links between consecutive files
when asked for; nodes are numbered as the base graph numbers them. A note's links are appended to the rows in one
pass (`grown`); each node's 1/out-degree is kept beside them, and the matrices the methods read are made from these
arrays once per state (`Walk.cached`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np
import scipy.sparse as sp

from taggraph.core.graph import file_node
from taggraph.core.notes import Note


def grown(indptr: np.ndarray, indices: np.ndarray, nodes: int, rows: np.ndarray,
          cols: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(indptr, indices) of the 0/1 csr structure `indptr`, `indices` (sorted rows, no repeats) widened to `nodes`
    rows and columns, with the entries (`rows`, `cols`) added: a repeated or present entry is one entry.

    An entry whose column is a node new to the structure goes to the end of its row, where the copy costs one
    pass over the arrays and no sort (the base graph's links always reach a new node: taggraph.core.graph)."""
    old = len(indptr) - 1
    entry = np.sort(rows * nodes + cols)  # not np.unique: numpy 2.4 hashes int64 keys, ~60x slower on 800k distinct
    entry = entry[np.diff(entry, prepend=-1) != 0]  # keys are >= 0
    rows, cols = np.divmod(entry, nodes)
    ptr = np.append(indptr, np.full(nodes - old, indptr[-1]))
    at = ptr[rows + 1]  # the end of each entry's row
    inside = np.flatnonzero((rows < old) & (cols < old))
    if len(inside):  # a link between two nodes the structure had: find its place within the row
        present_keys = np.repeat(np.arange(old), np.diff(indptr)) * nodes + indices  # sorted: rows in order
        at[inside] = np.searchsorted(present_keys, entry[inside])
        keep = np.ones(len(entry), dtype=bool)
        keep[inside[np.isin(entry[inside], present_keys)]] = False
        rows, cols, at = rows[keep], cols[keep], at[keep]
    total = len(indices) + len(cols)
    dtype = np.int32 if max(total, nodes) < np.iinfo(np.int32).max else np.int64
    indices = np.insert(indices.astype(dtype, copy=False), at, cols.astype(dtype))
    ptr = ptr.astype(dtype, copy=False)
    ptr[1:] += np.cumsum(np.bincount(rows, minlength=nodes), dtype=dtype)
    return ptr, indices


class Walk:
    """The 0/1 adjacency of a store's base graph (with its chronological links or without) as csr arrays, grown
    from the graph's links on `sync`; `version` counts the states it went through."""

    def __init__(self, store, chronological: bool) -> None:
        self.store, self.chronological = store, chronological
        self.indptr, self.indices = np.zeros(1, dtype=np.int32), np.zeros(0, dtype=np.int32)
        self.inverse_degree = np.zeros(0)
        self.dangling = np.zeros(0, dtype=np.int64)
        self._ones = np.ones(0)
        self._links_seen = self.files = 0
        self.version = 0  # bumped whenever the structure grows: the key of everything cached
        self._cached: dict[str, tuple[int, Any]] = {}  # name -> (version, value)

    def add(self, note: Note) -> None:
        """Nothing yet: the structure grows from the base graph on the next `sync`."""

    @property
    def nodes(self) -> int:
        return len(self.indptr) - 1

    def sync(self) -> None:
        """Append the links (and nodes) the base graph gained since the last sync: nothing is rebuilt (`grown`)."""
        g = self.store.graph
        kinds, files, (a, b) = g.node_kinds, g.file_nodes, g.link_ends
        if len(kinds) == self.nodes and len(a) == self._links_seen and len(files) == self.files:
            return
        a, b = a[self._links_seen:], b[self._links_seen:]
        if self.chronological:
            chained = files[max(self.files - 1, 0):]
            a, b = np.concatenate([a, chained[:-1]]), np.concatenate([b, chained[1:]])
        self._links_seen, self.files = len(g.link_kinds), len(files)
        n = len(kinds)
        a, b = a.astype(np.int64), b.astype(np.int64)
        self.indptr, self.indices = grown(self.indptr, self.indices, n, np.concatenate([a, b]), np.concatenate([b, a]))
        out = np.diff(self.indptr).astype(np.float64)
        self.inverse_degree = np.divide(1.0, out, out=np.zeros(n), where=out > 0)
        self.dangling = np.flatnonzero(out == 0)
        if len(self._ones) < len(self.indices):
            self._ones = np.ones(2 * len(self.indices))
        self.version += 1

    def cached(self, name: str, make):
        """`make()`, computed once per state of the structure."""
        hit = self._cached.get(name)
        if hit is None or hit[0] != self.version:
            hit = self._cached[name] = (self.version, make())
        return hit[1]

    def adjacency(self) -> sp.csr_matrix:
        """The 0/1 adjacency A (symmetric: every link both ways, a repeated link once), synced on demand."""
        self.sync()
        n = self.nodes
        return self.cached("adjacency", lambda: sp.csr_matrix((self._ones[:len(self.indices)], self.indices,
                                                               self.indptr), shape=(n, n)))


def walk_of(store, chronological: bool) -> Walk:
    """The store's shared Walk (with chronological links or without), created and attached on first use."""
    return store.shared_index("walk+chronological" if chronological else "walk", lambda: Walk(store, chronological))


class NodeIndex(Mapping):
    """Node id -> its number, for the first `nodes()` nodes of the store's base graph, looked up in the graph (a
    concept by its path, a file by its note, a topic by its number): no dict of every node's id is kept."""

    def __init__(self, store, nodes) -> None:
        self._store, self._nodes = store, nodes

    def __getitem__(self, node: str) -> int:
        kind, _, rest = node.partition(":")
        graph, found = self._store.graph, None
        if kind == "concept":
            found = graph.concept_number(rest)
        elif kind == "file" and rest in self._store.by_id:
            note = self._store.by_id[rest]
            found = int(graph.file_nodes[note.index]) if file_node(note.note_id) == node else None
        elif kind == "topic" and rest.isdigit() and int(rest) < len(graph.topic_nodes):
            found = int(graph.topic_nodes[int(rest)])
        if found is None or found >= self._nodes():
            raise KeyError(node)
        return found

    def __iter__(self) -> Iterator[str]:
        return (self._store.graph.node_name(i) for i in range(self._nodes()))

    def __len__(self) -> int:
        return self._nodes()
