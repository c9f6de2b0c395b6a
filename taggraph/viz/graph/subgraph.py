"""The subgraph that explains a question's misses on the graph page: the question's concepts, the gold notes, the
notes the missing methods rank above them, each method's own walk (the edges its explanation names) and where it
stopped, and the question's possible paths to those notes."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import networkx as nx

from taggraph.core.graph import file_node
from taggraph.methods.base import Explanation
from taggraph.core.store import MemoryStore
from taggraph.evaluation.placement import missed_by
from taggraph.viz.graph.ranks import Ranking, indexed
from taggraph.viz.graph.search import bounded_search


def walk_of(e: Explanation | None, note: str | None = None) -> list[tuple[str, str]] | None:
    """The (from, to) edges a method's explanation says it walked (`Evidence.detail['walk']`), None for a method
    that does not walk the graph; with `note`, only its first route: up to the first edge that reaches it."""
    walk = (e.details if e is not None else {}).get("walk")
    if walk is None:
        return None
    edges = [(a, b) for a, b in walk]
    if note is not None:
        end = next((i for i, (_, b) in enumerate(edges) if b == note), len(edges) - 1)
        edges = edges[:end + 1]
    return edges


def edge_key(a: str, b: str) -> tuple[str, str]:
    return tuple(sorted((a, b)))


@dataclass
class Explained:
    """The subgraph that explains a question's misses (`explained_subgraph`)."""

    nodes: list[str]  # matched concepts, then the gold notes and the notes above them with the nodes linking them
    paths: dict[tuple[str, str], list[str]]  # edge (sorted pair) -> the methods whose walk to the told note uses it
    methods: list[str]  # the methods explained: those that miss, else every method
    targets: dict[str, list[str]]  # method -> the notes it ranks above its first gold note, top k of them
    possible: set[tuple[str, str]] = field(default_factory=set)  # the question's links to those notes
    breaks: dict[str, dict[str, str]] = field(default_factory=dict)  # node -> method -> why its walk stops there
    walked: dict[tuple[str, str], list[str]] = field(default_factory=dict)  # edge -> methods walking it to any note


def explained_subgraph(store: MemoryStore, ug: nx.Graph, matched: Iterable[str], gold: Sequence[str],
                       rankings: Mapping[str, Ranking],
                       explanations: Mapping[str, Mapping[str, Explanation]] | None, k: int,
                       givers: Mapping[str, str | None] | None = None, budget: int | None = None) -> Explained:
    """The nodes that explain why the methods that miss (`missed_by`; every method when none does) rank
    the gold notes where they do: the question's matched concepts, every gold note, the best note of each
    of the first `k` sessions each such method ranks above its first gold session (what its rings mark), each
    method's walk (its explanation's ``walk``: all of it to the gold notes; to each of those other notes, whichever
    method ranks them there, its first route and every walked edge that leads on from a matched concept through no
    other note) and where its walk to any of these notes stopped (``walk_breaks``), and, for every one of these
    notes, a shortest path from the matched concepts (the question's possible link, 'question concept -> tag ->
    topic -> note') or else its topic. The edges of a method's walk to the note the header tells of (its giver, else
    the gold notes) are ``paths``; every edge it walked to any drawn note is in ``walked``, so a drawn edge a method
    walked is never shown as a path it did not take. `givers`: method -> the note that gives its first gold session
    its rank (`rank_giver`), walked like a gold note. `budget`: at most so many nodes searched for the question's
    links (every node when None)."""
    gold = [g for g in gold if g in store.by_id]
    methods = missed_by({m: indexed(store, r) for m, r in rankings.items()}, store, gold, k) or list(rankings)
    matched = [c for c in matched if c in ug]
    nodes: list[str] = [*matched, *(file_node(g) for g in gold)]
    gold_sessions = {store.by_id[g].session_id for g in gold}
    targets = {m: sessions_above(store, [n for n, _ in rankings[m]], gold_sessions, k) for m in methods}
    ringed = list(dict.fromkeys(n for t in targets.values() for n in t))  # every ringed note, not only its own
    for m in rankings:
        by_note = (explanations or {}).get(m, {})
        giver = (givers or {}).get(m)
        for note in dict.fromkeys([*gold, *([giver] if giver else []), *ringed]):
            e = by_note.get(note)
            walked = walk_of(e) or []
            drawn = walked if note in gold or note == giver else [*(walk_of(e, file_node(note)) or []),
                                                                   *_from_the_question(walked, note, matched)]
            nodes.extend(n for edge in drawn for n in edge)
            nodes.extend(b["node"] for b in (e.details.get("walk_breaks") or [] if e is not None else []))
    notes = list(dict.fromkeys([file_node(g) for g in gold] + [file_node(n) for n in (givers or {}).values() if n]
                               + [file_node(n) for n in ringed]))
    linked = _question_links(ug, matched, notes, budget or len(ug))
    possible: set[tuple[str, str]] = set()
    for note in notes:
        if note in linked:
            nodes.extend(linked[note])
            possible.update(edge_key(a, b) for a, b in zip(linked[note], linked[note][1:]))
        else:
            nodes.extend([note, *sorted(t for t in ug[note] if ug.nodes[t]["kind"] == "topic")])
    nodes = [n for n in dict.fromkeys(nodes) if n in ug]
    shown = set(nodes)
    paths: dict[tuple[str, str], list[str]] = {}
    walked: dict[tuple[str, str], list[str]] = {}
    breaks: dict[str, dict[str, str]] = {}
    headed = {file_node(g) for g in gold} | {file_node(n) for n in (givers or {}).values() if n}
    drawn_notes = dict.fromkeys([*notes, *(n for n in nodes if n.startswith("file:"))])
    for m in rankings:  # what each method's explanation of a drawn note says, wherever the drawing shows it
        by_note = (explanations or {}).get(m, {})
        told = {file_node((givers or {})[m])} if (givers or {}).get(m) else {file_node(g) for g in gold}
        for note in drawn_notes:
            e = by_note.get(note.removeprefix("file:"))
            for a, b in walk_of(e) or []:
                if a in shown and b in shown:
                    for edges in ([walked, paths] if note in told else [walked]):
                        edges.setdefault(edge_key(a, b), []).append(m)
            for b in (e.details.get("walk_breaks") or []) if e is not None else []:
                # a stop at a note itself ('no walk starts') is marked on the notes the header tells of, not on rings
                if b["node"] in shown and (not b["node"].startswith("file:") or b["node"] in headed):
                    breaks.setdefault(b["node"], {}).setdefault(m, b["why"])
    return Explained(nodes, _deduplicated(paths), methods, targets, possible, breaks, _deduplicated(walked))


def _deduplicated(edges: dict[tuple[str, str], list[str]]) -> dict[tuple[str, str], list[str]]:
    return {e: list(dict.fromkeys(ms)) for e, ms in edges.items()}


def _from_the_question(walked: Sequence[tuple[str, str]], note: str, matched: Sequence[str]) -> list[tuple[str, str]]:
    """The edges of a walk to `note` that lead on from the question's `matched` concepts, through no other note."""
    ahead: dict[str, list[str]] = {}
    for a, b in walked:
        ahead.setdefault(a, []).append(b)
    reached = [c for c in matched if c in ahead]
    seen, edges = set(reached), []
    for a in reached:  # grows as it goes: breadth first
        for b in ahead.get(a, []):
            if b.startswith("file:") and b != file_node(note):
                continue
            edges.append((a, b))
            if b not in seen:
                seen.add(b)
                reached.append(b)
    return edges


def sessions_above(store: MemoryStore, ranking: Sequence[str], gold_sessions: set[str], k: int) -> list[str]:
    """The best note of each of the first `k` sessions `ranking` (note ids) puts above its first gold session: the
    notes the top-k rings mark, as the metrics count sessions."""
    best: dict[str, str] = {}
    for note in ranking:
        session = store.by_id[note].session_id
        if session in gold_sessions or len(best) == k:
            break
        best.setdefault(session, note)
    return list(best.values())


def _question_links(ug: nx.Graph, matched: Sequence[str], notes: Sequence[str], budget: int,
                    ontology_hops: int = 2) -> dict[str, list[str]]:
    """node -> a shortest path to it from a matched concept that reads 'concept -> at most `ontology_hops`
    parent/child hops -> tag -> topic -> note' (TagGraph's walk), for the nodes so reached before all of
    `notes` are, or `budget` nodes."""
    order = ("concept", "topic", "file")

    def follows(a: str, b: str) -> bool:  # ontology links both ways, the others towards the note
        kind = ug[a][b]["kind"]
        return kind == "ontology" or (kind in ("tag_topic", "topic_file")
                                      and order.index(a.partition(":")[0]) < order.index(b.partition(":")[0]))

    walkable = [c for c in matched if any(ug[c][n]["kind"] in ("ontology", "tag_topic") for n in ug[c])]
    return bounded_search(ug, walkable, budget, cutoff=ontology_hops + 2, targets=notes, follows=follows)
