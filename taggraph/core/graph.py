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

The graph grows note by note (``add_note``); nothing is ever rebuilt. Every link a note adds has at least one
end that the note added (its file, its new topic, a new concept), so a method that numbers the nodes in order
(``nodes``) sees each link append to the lists of neighbours of the nodes it had.
"""

from __future__ import annotations

from collections import Counter

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
        self.g = nx.DiGraph()
        self.topic_of_frame: dict[Frame, str] = {}
        self.frame_of_topic: dict[str, Frame] = {}
        self.topics_with_tag: dict[tuple[str, str], set[str]] = {}
        self.nodes: list[str] = []  # every node, in order added (a node's position is its number for the methods)
        self.file_order: list[str] = []
        self.edge_log: list[tuple[str, str, str]] = []  # every undirected link, in order added

    def _add_node(self, node: str, **attributes) -> None:
        self.nodes.append(node)
        self.g.add_node(node, **attributes)

    def _link(self, a: str, b: str, kind: str) -> None:
        self.edge_log.append((a, b, kind))
        self.g.add_edge(a, b, kind=kind, weight=1.0)
        self.g.add_edge(b, a, kind=kind, weight=1.0)

    def _add_concept(self, path: str, used: bool) -> None:
        """Add `path` and its ancestors with parent-child edges."""
        for pre in prefixes(path):
            node = concept_node(pre)
            if node not in self.g:
                self._add_node(node, kind="ontology", path=pre)
                up = parent(pre)
                if up is not None:
                    self._link(concept_node(up), node, "ontology")
        if used:
            self.g.nodes[concept_node(path)]["kind"] = "tag"

    def add_note(self, note: Note) -> None:
        fnode = file_node(note.note_id)
        self._add_node(fnode, kind="file", note_id=note.note_id, session_id=note.session_id,
                        index=note.index)
        self.file_order.append(fnode)
        pairs = note.tag_pairs()  # note order, so the graph is the same whatever the hash seed
        frame: Frame = frozenset(pairs)
        if not frame:
            return
        topic = self.topic_of_frame.get(frame)
        if topic is None:
            topic = f"topic:{len(self.topic_of_frame)}"
            self.topic_of_frame[frame] = topic
            self.frame_of_topic[topic] = frame
            self._add_node(topic, kind="topic", size=len(frame))
            for other in self.similar_topics(frame):
                self._link(topic, other, "similar")
            for pair in pairs:
                self.topics_with_tag.setdefault(pair, set()).add(topic)
            for path in note.paths():
                self._add_concept(path, used=True)
                self._link(concept_node(path), topic, "tag_topic")
        self._link(topic, fnode, "topic_file")

    def similar_topics(self, frame: Frame) -> list[str]:
        """The topics so far sharing at least SIMILARITY_MIN (category, path) tags with `frame`, in id order.

        Exact without reading every topic of the most common tags (``who:user`` is on most notes, which made
        building a store quadratic in its history): a topic sharing SIMILARITY_MIN tags shares one outside
        any SIMILARITY_MIN - 1 of them, so only topics of the rarer tags are candidates, then counted."""
        if len(frame) < SIMILARITY_MIN:
            return []
        common = set(sorted(frame, key=lambda pair: -len(self.topics_with_tag.get(pair, ())))[:SIMILARITY_MIN - 1])
        candidates = set().union(*(self.topics_with_tag.get(pair, ()) for pair in frame - common))
        return sorted(t for t in candidates if len(frame & self.frame_of_topic[t]) >= SIMILARITY_MIN)

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
