"""The base tag-topic-file graph shared by every graph method (paper, section 3.2).

Node kinds and ids:

- ``concept:<path>`` for every ontology path and every ancestor of one. Kind
  ``tag`` when some note carries the path itself, else ``ontology`` (a pure
  taxonomy node such as ``activity`` above ``activity/yoga``).
- ``topic:<n>``: **our definition of the paper's loose "topic"**: one distinct
  5W+Extra frame, i.e. the set of (category, path) tags of an extraction.
  Notes whose extractions give the same frame share a topic. Untagged notes
  have no topic (no tag entry point), exactly as in the paper.
- ``file:<note_id>``: one Markdown note.

Edges (all stored in both directions, weight 1, attribute ``kind``):
``ontology`` parent-child, ``tag_topic``, ``topic_file``, ``similar`` between
topics sharing at least SIMILARITY_MIN (category, path) tags. Chronological
file edges are not part of the base graph; ``chronological_pairs`` gives them
to the methods that opt in (AdaptiveGraph).

The graph grows note by note (``add_note``); nothing is ever rebuilt. It takes the notes in when it is
first read, not as they arrive: a store loaded for methods without a graph (BM25) never builds one (at 20,000
notes building it was two thirds of `MemoryStore.load`); a loaded store's graph starts from its snapshot
(``index/base_graph.npz``, `state`/`load_state`) where one covers the first notes. Every link a note adds has at
least one end that the note added (its file, its new topic, a new concept), so a method that numbers the nodes in
order (``nodes``) sees each link append to the lists of neighbours of the nodes it had.

Nodes and links are kept as numbers in numpy arrays (a node's kind, what it stands for; each link's two ends and
kind), not as a networkx graph: networkx's dicts of dicts with an attribute dict per node and per edge cost ~12 KB per
note at 20,000 notes, and the methods read numbers. `g` builds the networkx graph on first read (the views walk it)
and extends it as notes come.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from itertools import chain

import networkx as nx
import numpy as np

from taggraph._infra.growing import GrowingArray
from taggraph.core.notes import Note
from taggraph.core.ontology import parent, prefixes
from taggraph.core.snapshot import pack_runs, pack_strings, unpack_runs, unpack_strings

SIMILARITY_MIN = 3  # paper: topics sharing at least three attributes across the 5W categories

Frame = frozenset[tuple[str, str]]

ONTOLOGY, TAG, TOPIC, FILE = range(4)  # node kinds, as numbers
KIND_NAMES = ("ontology", "tag", "topic", "file")
LINK_KINDS = ("ontology", "tag_topic", "topic_file", "similar")


def concept_node(path: str) -> str:
    return f"concept:{path}"


def file_node(note_id: str) -> str:
    return f"file:{note_id}"


def topic_node(topic: int) -> str:
    return f"topic:{topic}"


class _TopicOfFrame(Mapping):
    """frame -> its topic's node id, over the graph's frame -> topic number."""

    def __init__(self, numbers: dict[Frame, int]) -> None:
        self._numbers = numbers

    def __getitem__(self, frame: Frame) -> str:
        return topic_node(self._numbers[frame])

    def __iter__(self) -> Iterator[Frame]:
        return iter(self._numbers)

    def __len__(self) -> int:
        return len(self._numbers)


class _FrameOfTopic(Mapping):
    """topic node id -> its frame, over the graph's frames by topic number."""

    def __init__(self, frames: list[Frame]) -> None:
        self._frames = frames

    def __getitem__(self, topic: str) -> Frame:
        kind, _, number = topic.partition(":")
        if kind != "topic" or not number.isdigit() or int(number) >= len(self._frames):
            raise KeyError(topic)
        return self._frames[int(number)]

    def __iter__(self) -> Iterator[str]:
        return (topic_node(t) for t in range(len(self._frames)))

    def __len__(self) -> int:
        return len(self._frames)


class _EdgeLog(Sequence):
    """Every undirected link as (node id, node id, kind), in order added, read from the graph's arrays."""

    def __init__(self, graph: "BaseGraph") -> None:
        self._graph = graph

    def __len__(self) -> int:
        return len(self._graph._link_kind)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        g = self._graph
        a, b, kind = g.link_ends[0][i], g.link_ends[1][i], g.link_kinds[i]
        return g.node_name(int(a)), g.node_name(int(b)), LINK_KINDS[kind]


class BaseGraph:
    STATE_VERSION = 1  # `taggraph.core.snapshot`'s protocol: bump when what `state` holds changes meaning

    def __init__(self, restore=None) -> None:
        self._kind = GrowingArray(np.int8)  # per node: ONTOLOGY, TAG, TOPIC or FILE
        self._item = GrowingArray(np.int64)  # per node: its concept's place in _paths, its topic or its file number
        self._concept: dict[str, int] = {}  # concept path -> its node
        self._paths: list[str] = []  # the concepts' paths, in order made
        self._topic_of_frame: dict[Frame, int] = {}  # frame -> its topic number
        self._frames: list[Frame] = []  # per topic number: its frame
        self._topic_node = GrowingArray(np.int64)  # per topic number: its node
        self._topics_with_tag: dict[tuple[str, str], set[int]] = {}  # (category, path) -> topic numbers
        self._files: list[Note] = []  # per file number (the notes in order taken in): its note
        self._file_node = GrowingArray(np.int64)  # per file number: its node
        self._link_from, self._link_to = GrowingArray(np.int32), GrowingArray(np.int32)  # each link's ends ...
        self._link_kind = GrowingArray(np.int8)  # ... and kind (LINK_KINDS), in order added
        self._nx: nx.DiGraph | None = None  # `g`, once read: networkx's copy of the first _nx_nodes, _nx_links
        self._nx_nodes = self._nx_links = 0
        self._retagged: list[int] = []  # ontology nodes turned tag since `g` was last read
        self._pending: list[Note] = []  # added, not taken in yet ...
        self._started = 0  # ... but for the first _started (an interrupt mid-way resumes after them)
        self._restore = restore  # called with the graph on its first read, before any note is taken in

    def add_note(self, note: Note) -> None:
        """Add `note` (taken in on the graph's next read)."""
        self._pending.append(note)

    def _current(self) -> "BaseGraph":
        """The graph with every added note taken in, in order (the first ones from a snapshot, if `restore` finds
        one that fits)."""
        if self._restore is not None:
            restore, self._restore = self._restore, None
            if not self._files and not self._started:
                restore(self)
        while self._started < len(self._pending):
            self._started += 1
            self._take(self._pending[self._started - 1])
        self._pending.clear()
        self._started = 0
        return self

    @property
    def g(self) -> nx.DiGraph:
        """The graph as a networkx DiGraph (node ids and attributes, every link both ways with its kind and weight
        1), made on first read and extended with what came since."""
        self._current()
        if self._nx is None:
            self._nx = nx.DiGraph()
        kinds, items = self._kind.view, self._item.view
        for node in range(self._nx_nodes, len(kinds)):
            self._nx.add_node(self.node_name(node), **self._attributes(int(kinds[node]), int(items[node])))
        for node in self._retagged:  # concepts first seen as an ancestor only, tagged since
            if node < self._nx_nodes:
                self._nx.nodes[self.node_name(node)]["kind"] = "tag"
        self._retagged.clear()
        ends, link_kinds = self.link_ends, self.link_kinds
        for a, b, kind in zip(ends[0][self._nx_links:].tolist(), ends[1][self._nx_links:].tolist(),
                              link_kinds[self._nx_links:].tolist()):
            a, b, kind = self.node_name(a), self.node_name(b), LINK_KINDS[kind]
            self._nx.add_edge(a, b, kind=kind, weight=1.0)
            self._nx.add_edge(b, a, kind=kind, weight=1.0)
        self._nx_nodes, self._nx_links = len(kinds), len(link_kinds)
        return self._nx

    def _attributes(self, kind: int, item: int) -> dict:
        if kind in (ONTOLOGY, TAG):
            return {"kind": KIND_NAMES[kind], "path": self._paths[item]}
        if kind == TOPIC:
            return {"kind": "topic", "size": len(self._frames[item])}
        note = self._files[item]
        return {"kind": "file", "note_id": note.note_id, "session_id": note.session_id, "index": note.index}

    @property
    def topic_of_frame(self) -> Mapping[Frame, str]:
        return _TopicOfFrame(self._current()._topic_of_frame)

    @property
    def frame_of_topic(self) -> Mapping[str, Frame]:
        return _FrameOfTopic(self._current()._frames)

    @property
    def topics_with_tag(self) -> dict[tuple[str, str], set[int]]:
        """(category, path) -> the numbers of the topics whose frame holds it."""
        return self._current()._topics_with_tag

    @property
    def node_kinds(self) -> np.ndarray:
        """Per node, in order added (a node's position is its number for the methods): ONTOLOGY, TAG, TOPIC or FILE."""
        return self._current()._kind.view

    @property
    def file_nodes(self) -> np.ndarray:
        """Per note taken in, in order: its file node's number."""
        return self._current()._file_node.view

    @property
    def topic_nodes(self) -> np.ndarray:
        """Per topic number: its node's number."""
        return self._current()._topic_node.view

    @property
    def link_ends(self) -> tuple[np.ndarray, np.ndarray]:
        """Each undirected link's two end nodes, in order added."""
        self._current()
        return self._link_from.view, self._link_to.view

    @property
    def link_kinds(self) -> np.ndarray:
        """Each link's kind (its place in LINK_KINDS), in order added."""
        return self._current()._link_kind.view

    @property
    def edge_log(self) -> Sequence[tuple[str, str, str]]:
        """Every undirected link as (node id, node id, kind), in order added."""
        return _EdgeLog(self._current())

    def node_name(self, node: int) -> str:
        """The id of node number `node` (module docstring)."""
        kind, item = int(self._kind.view[node]), int(self._item.view[node])
        if kind in (ONTOLOGY, TAG):
            return concept_node(self._paths[item])
        return topic_node(item) if kind == TOPIC else file_node(self._files[item].note_id)

    def concept_number(self, path: str) -> int | None:
        """The node number of the concept `path`; None when the graph has none."""
        return self._current()._concept.get(path)

    @property
    def file_order(self) -> list[str]:
        """The file nodes' ids, in note order."""
        return [file_node(note.note_id) for note in self._current()._files]

    def _add_node(self, kind: int, item: int) -> int:
        self._kind.append(kind)
        self._item.append(item)
        return len(self._kind) - 1

    def _link(self, a: int, b: int, kind: int) -> None:
        self._link_from.append(a)
        self._link_to.append(b)
        self._link_kind.append(kind)

    def _add_concept(self, path: str, used: bool) -> int:
        """Add `path` and its ancestors with parent-child edges; its node."""
        for pre in prefixes(path):
            if pre not in self._concept:
                self._concept[pre] = self._add_node(ONTOLOGY, len(self._paths))
                self._paths.append(pre)
                up = parent(pre)
                if up is not None:
                    self._link(self._concept[up], self._concept[pre], 0)
        node = self._concept[path]
        if used and self._kind.view[node] == ONTOLOGY:
            self._kind.view[node] = TAG
            self._retagged.append(node)
        return node

    def _take(self, note: Note) -> None:
        fnode = self._add_node(FILE, len(self._files))
        self._files.append(note)
        self._file_node.append(fnode)
        pairs = note.tag_pairs()  # note order, so the graph is the same whatever the hash seed
        frame: Frame = frozenset(pairs)
        if not frame:
            return
        topic = self._topic_of_frame.get(frame)
        if topic is None:
            topic = len(self._frames)
            self._topic_of_frame[frame] = topic
            self._frames.append(frame)
            tnode = self._add_node(TOPIC, topic)
            self._topic_node.append(tnode)
            for other in self._similar_topics(frame):
                self._link(tnode, int(self._topic_node.view[other]), 3)
            for pair in pairs:
                self._topics_with_tag.setdefault(pair, set()).add(topic)
            for path in note.paths():
                self._link(self._add_concept(path, used=True), tnode, 1)
        self._link(int(self._topic_node.view[topic]), fnode, 2)

    @property
    def taken(self) -> int:
        """How many notes the graph holds (0 until it is first read: notes are taken in then)."""
        return len(self._files)

    def state(self) -> dict[str, np.ndarray]:
        """The graph as arrays (`taggraph.core.snapshot`): what `load_state` rebuilds it from without taking in
        a note; what follows from them (concept and frame lookups, the topics of each tag) is not kept."""
        self._current()
        pairs = list(dict.fromkeys(chain.from_iterable(sorted(frame) for frame in self._frames)))
        pair_number = {pair: i for i, pair in enumerate(pairs)}
        pair_bytes, pair_offsets = pack_strings([f"{category}\x1f{path}" for category, path in pairs])
        path_bytes, path_offsets = pack_strings(self._paths)
        frame_sizes, frame_pairs = pack_runs([np.array(sorted(pair_number[p] for p in frame), dtype=np.int64)
                                              for frame in self._frames], np.int64)
        return {"kind": self._kind.view, "item": self._item.view, "paths": path_bytes, "path_offsets": path_offsets,
                "pairs": pair_bytes, "pair_offsets": pair_offsets, "frame_sizes": frame_sizes,
                "frame_pairs": frame_pairs, "topic_node": self._topic_node.view, "file_node": self._file_node.view,
                "link_from": self._link_from.view, "link_to": self._link_to.view, "link_kind": self._link_kind.view}

    def load_state(self, arrays: dict[str, np.ndarray], notes: int) -> None:
        """Become the graph `state` described over the first `notes` notes added (read, not yet taken in);
        ValueError for arrays that do not describe one, and then the graph is left as it was."""
        kind, item, topic_nodes, file_nodes = (arrays[k] for k in ("kind", "item", "topic_node", "file_node"))
        ends, link_kind = (arrays["link_from"], arrays["link_to"]), arrays["link_kind"]
        paths = unpack_strings(arrays["paths"], arrays["path_offsets"])
        pairs = [tuple(p.split("\x1f", 1)) for p in unpack_strings(arrays["pairs"], arrays["pair_offsets"])]
        frame_runs = unpack_runs(arrays["frame_sizes"], arrays["frame_pairs"], np.int64, increasing=True)
        n, topics = len(kind), len(frame_runs)
        typed = [(kind, np.int8), (item, np.int64), (topic_nodes, np.int64), (file_nodes, np.int64),
                 (ends[0], np.int32), (ends[1], np.int32), (link_kind, np.int8)]
        if any(a.dtype != t or a.ndim != 1 for a, t in typed) or len(item) != n or len(file_nodes) != notes \
                or notes > len(self._pending) or len(topic_nodes) != topics or len(ends[1]) != len(ends[0]) \
                or len(link_kind) != len(ends[0]) or any(len(p) != 2 for p in pairs):
            raise ValueError("BaseGraph state: arrays of the wrong type or length")
        concept = np.flatnonzero((kind == ONTOLOGY) | (kind == TAG))
        if not np.all((kind >= ONTOLOGY) & (kind <= FILE)) or np.any(topic_nodes >= n) or np.any(file_nodes >= n) \
                or not np.array_equal(kind[topic_nodes], np.full(topics, TOPIC)) \
                or not np.array_equal(item[topic_nodes], np.arange(topics)) \
                or not np.array_equal(kind[file_nodes], np.full(notes, FILE)) \
                or not np.array_equal(item[file_nodes], np.arange(notes)) \
                or not np.array_equal(item[concept], np.arange(len(paths))) \
                or (len(ends[0]) and (min(ends[0].min(), ends[1].min()) < 0 or max(ends[0].max(), ends[1].max()) >= n
                                      or link_kind.min() < 0 or link_kind.max() >= len(LINK_KINDS))) \
                or (topics and not 0 <= int(arrays["frame_pairs"].min())
                    <= int(arrays["frame_pairs"].max()) < len(pairs)):
            raise ValueError("BaseGraph state: nodes, topics, files or links out of place")
        frames = [frozenset(pairs[i] for i in run.tolist()) for run in frame_runs]
        topics_with_tag: dict[tuple[str, str], set[int]] = {}
        for topic, frame in enumerate(frames):
            for pair in frame:
                topics_with_tag.setdefault(pair, set()).add(topic)
        self._kind = GrowingArray.of(kind.copy())  # written into when a concept turns tag
        self._item, self._topic_node, self._file_node = (GrowingArray.of(a) for a in (item, topic_nodes, file_nodes))
        self._link_from, self._link_to, self._link_kind = (GrowingArray.of(a) for a in (*ends, link_kind))
        self._paths, self._concept = paths, dict(zip(paths, concept.tolist()))
        self._frames, self._topic_of_frame = frames, {frame: t for t, frame in enumerate(frames)}
        self._topics_with_tag, self._files, self._started = topics_with_tag, self._pending[:notes], notes

    def _similar_topics(self, frame: Frame) -> list[int]:
        """The topics so far sharing at least SIMILARITY_MIN (category, path) tags with `frame`, in id order (of
        their ids as text: "topic:10" before "topic:2").

        Exact without reading every topic of the most common tags (``who:user`` is on most notes, which made
        building a store quadratic in its history): a topic sharing SIMILARITY_MIN tags shares one outside
        any SIMILARITY_MIN - 1 of them, so only topics of the rarer tags are candidates. Their shared tags are
        counted in C (Counter over the rarer tags' topics, then set intersections with the common tags'):
        3x faster at 20,000 notes than intersecting each candidate's frame."""
        if len(frame) < SIMILARITY_MIN:
            return []
        postings = self._topics_with_tag
        ranked = sorted(frame, key=lambda pair: -len(postings.get(pair, ())))
        shared = Counter(chain.from_iterable(postings.get(pair, ()) for pair in ranked[SIMILARITY_MIN - 1:]))
        for pair in ranked[:SIMILARITY_MIN - 1]:
            shared.update(shared.keys() & postings.get(pair, set()))
        return sorted((t for t, n in shared.items() if n >= SIMILARITY_MIN), key=str)

    def chronological_pairs(self, since: int = 0) -> list[tuple[str, str]]:
        """(earlier, later) file nodes of consecutive notes, from the pair (note `since`, note `since` + 1) on."""
        files = self.file_order[since:]
        return list(zip(files, files[1:]))

    def to_networkx(self, chronological: bool = False) -> nx.DiGraph:
        """A copy of the graph, optionally with chronological edges (both directions)."""
        g = self.g.copy()
        if chronological:
            for a, b in self.chronological_pairs():
                g.add_edge(a, b, kind="chronological", weight=1.0)
                g.add_edge(b, a, kind="chronological", weight=1.0)
        return g

    def files_of_concept(self, path: str) -> list[str]:
        """File nodes reached by concept -> topic -> file, in the order the links were made."""
        node = self.concept_number(path)
        if node is None:
            return []
        (a, b), kinds = self.link_ends, self.link_kinds
        topics = b[(a == node) & (kinds == 1)].tolist()
        files = (kinds == 2) & np.isin(a, topics)
        by_topic: dict[int, list[str]] = {t: [] for t in topics}
        for topic, f in zip(a[files].tolist(), b[files].tolist()):
            by_topic[topic].append(self.node_name(f))
        return list(chain.from_iterable(by_topic.values()))

    def stats(self) -> dict[str, int]:
        kinds = Counter(KIND_NAMES[k] for k in self.node_kinds.tolist())
        links = Counter(LINK_KINDS[k] for k in self.link_kinds.tolist())
        return {**{f"nodes_{k}": v for k, v in sorted(kinds.items())},
                **{f"edges_{k}": v for k, v in sorted(links.items())}}
