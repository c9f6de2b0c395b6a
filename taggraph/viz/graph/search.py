"""The graph page's reading of the base graph, bounded by what it draws: the question's concepts, searches from them
that stop after a budget of nodes, and the nodes the whole drawing keeps.

The base graph is read through a view (copied only when it is small) and every search from the question stops after
``SEARCH_BUDGET`` x `max_nodes` nodes (at most MAX_DRAWN), so the work is bounded by what is drawn, whatever the
history's size."""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Sequence

import networkx as nx

from taggraph.core.graph import concept_node
from taggraph.core.store import MemoryStore
from taggraph.core.text import query_tokens


def matched_concepts(store: MemoryStore, text: str) -> list[str]:
    """Concept nodes whose last path segment contains a token of `text` (TagGraph's entry points)."""
    from taggraph.methods.index import concept_matcher

    matcher = concept_matcher(store)
    return sorted({concept_node(p) for t in dict.fromkeys(query_tokens(text)) for p in matcher.match(t)})


# Free choices: at most MAX_DRAWN nodes are drawn (their spring layout grows faster than their number: 3,900 nodes
# took 72 s of a 107 s page on a 2,000-session history, 2,000 nodes make a 14 s page), and besides the gold and
# top-ranked notes the page explains the EXPLAINED_DRAWN drawn notes nearest the question (an AdaptiveGraph
# explanation reads the whole graph: 2,000 of them took 27 s there).
MAX_DRAWN = 2000
EXPLAINED_DRAWN = 100
# Free choice: a search from the question (or the seeds) stops after reaching this many nodes per node the page
# may draw (`max_nodes`), so its work is bounded by what is drawn, whatever the history's size. Base graphs this
# small (nodes and links) are copied and searched whole, as before.
SEARCH_BUDGET = 50


def undirected(store: MemoryStore, chronological: bool, budget: int) -> nx.Graph:
    """The base graph, undirected (every link is stored in both directions): a copy when it has at most
    `budget` nodes and links or chronological links are asked for (those copy the whole graph), else a
    read-only view."""
    g = store.graph.g
    if len(g) + len(store.graph.edge_log) <= budget or chronological:
        return nx.Graph(store.graph.to_networkx(chronological=chronological))
    return g.to_undirected(as_view=True)


def bounded_search(ug: nx.Graph, sources: Iterable[str], budget: int, cutoff: int | None = None,
                   targets: Iterable[str] = (), follows=None) -> dict[str, list[str]]:
    """node -> a shortest path to it from the nearest of `sources` (unit-weight Dijkstra's paths: breadth first,
    neighbours in the graph's order), for nodes at most `cutoff` edges away; it stops once every one of
    `targets` (when given) is reached or `budget` nodes are. `follows(a, b)`: whether edge a-b is walked from a."""
    paths = {s: [s] for s in sorted(sources) if s in ug}  # sorted: sources come in sets, whose order is the hash seed's
    wanted = {t for t in targets if t in ug} - paths.keys()
    stop_when_found = bool(wanted)
    frontier, hops = list(paths), 0
    while frontier and (cutoff is None or hops < cutoff) and len(paths) < budget and (wanted or not stop_when_found):
        ahead = []
        for a in frontier:
            for b in ug[a]:
                if b not in paths and (follows is None or follows(a, b)):
                    paths[b] = [*paths[a], b]
                    ahead.append(b)
                    wanted.discard(b)
                    if len(paths) >= budget:
                        return paths
        frontier, hops = ahead, hops + 1
    return paths


def paths_to(ug: nx.Graph, sources: Iterable[str], targets: Sequence[str], budget: int) -> list[str]:
    """Nodes on a shortest path from the nearest of `sources` to each target, in target order
    (a target no source reaches within the search's `budget` is kept alone)."""
    paths = bounded_search(ug, sources, budget, targets=targets)
    return list(dict.fromkeys(n for t in targets if t in ug for n in paths.get(t, [t])))


def select_nodes(ug: nx.Graph, seeds: Iterable[str] | None, hops: int, max_nodes: int,
                 first: set[str], keep: Sequence[str] = (), budget: int | None = None) -> list[str]:
    """Nodes to draw, at most max_nodes: `keep` first (in order), then those within `hops` of `seeds`
    (all nodes when None; the nearest `budget` when given), nearest first."""
    if seeds is None:
        ranked = heapq.nsmallest(max_nodes, ug, key=lambda n: (n not in first, -ug.degree(n), n))
    else:
        dist = {n: len(p) - 1 for n, p in bounded_search(ug, seeds, budget or len(ug), cutoff=hops).items()}
        ranked = sorted(dist, key=lambda n: (dist[n], n not in first, -ug.degree(n), n))
    return list(dict.fromkeys([*keep, *ranked]))[:max_nodes]


def notes_under(ug: nx.Graph, node: str, shown: int = 30) -> list[str]:
    """The notes a tag or topic node leads to (through its topics), at most `shown` of them."""
    topics = [node] if node.startswith("topic:") else [t for t in ug[node] if t.startswith("topic:")]
    return sorted({f[len("file:"):] for t in topics for f in ug[t] if f.startswith("file:")})[:shown]
