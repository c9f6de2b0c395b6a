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
notes building it was two thirds of `MemoryStore.load`). Every link a note adds has at least one end that the note
added (its file, its new topic, a new concept), so a method that numbers the nodes in order (``nodes``) sees each
link append to the lists of neighbours of the nodes it had.
"""

from __future__ import annotations

from collections import Counter
from itertools import chain

import networkx as nx

from taggraph.core.notes import Note
from taggraph.core.ontology import parent, prefixes

SIMILARITY_MIN = 3  # paper: topics sharing at least three attributes across the 5W categories

Frame = frozenset[tuple[str, str]]


def concept_node(path: str) -> str:
    return f"concept:{path}"


def file_node(note_id: str) -> str:
    return f"file:{note_id}"


class BaseGraph:
    def __init__(self) -> None:
        self._g = nx.DiGraph()
        self._topic_of_frame: dict[Frame, str] = {}
        self._frame_of_topic: dict[str, Frame] = {}
        self._topics_with_tag: dict[tuple[str, str], set[str]] = {}
        self._nodes: list[str] = []  # every node, in order added (a node's position is its number for the methods)
        self._file_order: list[str] = []
        self._edge_log: list[tuple[str, str, str]] = []  # every undirected link, in order added
        self._pending: list[Note] = []  # added, not taken in yet ...
        self._started = 0  # ... but for the first _started (an interrupt mid-way resumes after them)

    def add_note(self, note: Note) -> None:
        """Add `note` (taken in on the graph's next read)."""
        self._pending.append(note)

    def _current(self) -> "BaseGraph":
        """The graph with every added note taken in, in order."""
        while self._started < len(self._pending):
            self._started += 1
            self._take(self._pending[self._started - 1])
        self._pending.clear()
        self._started = 0
        return self

    @property
    def g(self) -> nx.DiGraph:
        return self._current()._g

    @property
    def topic_of_frame(self) -> dict[Frame, str]:
        return self._current()._topic_of_frame

    @property
    def frame_of_topic(self) -> dict[str, Frame]:
        return self._current()._frame_of_topic

    @property
    def topics_with_tag(self) -> dict[tuple[str, str], set[str]]:
        return self._current()._topics_with_tag

    @property
    def nodes(self) -> list[str]:
        """Every node, in order added: a node's position is its number for the methods."""
        return self._current()._nodes

    @property
    def file_order(self) -> list[str]:
        return self._current()._file_order

    @property
    def edge_log(self) -> list[tuple[str, str, str]]:
        """Every undirected link, in order added."""
        return self._current()._edge_log

    def _add_node(self, node: str, **attributes) -> None:
        self._nodes.append(node)
        self._g.add_node(node, **attributes)

    def _link(self, a: str, b: str, kind: str) -> None:
        self._edge_log.append((a, b, kind))
        self._g.add_edge(a, b, kind=kind, weight=1.0)
        self._g.add_edge(b, a, kind=kind, weight=1.0)

    def _add_concept(self, path: str, used: bool) -> None:
        """Add `path` and its ancestors with parent-child edges."""
        for pre in prefixes(path):
            node = concept_node(pre)
            if node not in self._g:
                self._add_node(node, kind="ontology", path=pre)
                up = parent(pre)
                if up is not None:
                    self._link(concept_node(up), node, "ontology")
        if used:
            self._g.nodes[concept_node(path)]["kind"] = "tag"

    def _take(self, note: Note) -> None:
        fnode = file_node(note.note_id)
        self._add_node(fnode, kind="file", note_id=note.note_id, session_id=note.session_id,
                       index=note.index)
        self._file_order.append(fnode)
        pairs = note.tag_pairs()  # note order, so the graph is the same whatever the hash seed
        frame: Frame = frozenset(pairs)
        if not frame:
            return
        topic = self._topic_of_frame.get(frame)
        if topic is None:
            topic = f"topic:{len(self._topic_of_frame)}"
            self._topic_of_frame[frame] = topic
            self._frame_of_topic[topic] = frame
            self._add_node(topic, kind="topic", size=len(frame))
            for other in self._similar_topics(frame):
                self._link(topic, other, "similar")
            for pair in pairs:
                self._topics_with_tag.setdefault(pair, set()).add(topic)
            for path in note.paths():
                self._add_concept(path, used=True)
                self._link(concept_node(path), topic, "tag_topic")
        self._link(topic, fnode, "topic_file")

    def _similar_topics(self, frame: Frame) -> list[str]:
        """The topics so far sharing at least SIMILARITY_MIN (category, path) tags with `frame`, in id order.

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
        return sorted(t for t, n in shared.items() if n >= SIMILARITY_MIN)

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
        """File nodes reached by concept -> topic -> file."""
        node = concept_node(path)
        if node not in self.g:
            return []
        out = []
        for topic in self.g.successors(node):
            if self.g.nodes[topic]["kind"] == "topic":
                out.extend(f for f in self.g.successors(topic) if self.g.nodes[f]["kind"] == "file")
        return out

    def stats(self) -> dict[str, int]:
        kinds = Counter(k for _, k in self.g.nodes(data="kind"))
        edges = Counter(k for _, _, k in self.g.edges(data="kind"))
        return {**{f"nodes_{k}": v for k, v in sorted(kinds.items())},
                **{f"edges_{k}": v // 2 for k, v in sorted(edges.items())}}
