"""Interactive, offline HTML view of one store's base graph (pyvis data, vis-network drawing).

Node kinds keep one colour and shape each (tag: blue dot, ontology: grey diamond,
topic: orange triangle, file: teal square). Gold notes are drawn as gold stars, with their note and
session rank under the chosen method; a drop-down picks the method whose top-k sessions get a red ring
on their best note and the session rank in its label, as the metrics count (a purple ring and
'session #4 tie order' for a session there only by tie order, `explain.tie_order_only`); concepts the
question's tokens match get a black ring. Every node is named by `taggraph.viz.names` (as on the
explain page). With a question and gold notes the page opens on `explained_subgraph` (the question's
concepts, the gold notes, the notes the missing methods rank above them, each method's own walk and
the question's possible paths), laid out left to right by `_columns_layout`; a check box shows the
whole drawing. Under the chosen method only its own walk is thick (the edges its evidence names,
``detail['walk']``), the question's paths it did not take are dashed and lighter, and where its walk
stopped (``detail['walk_breaks']``) is marked ✕ and told in the header; a method that walks no graph
(BM25, dense, Fusion) draws nothing thick and the header gives its own evidence. Hovering a node shows its
details; for a file node its tag line and a snippet of the conversation; clicking a file node (or opening the page
as ``page.html#note=ID``, which also centres and zooms on it) shows, in the side panel, why the
chosen method did (not) retrieve it (when `retrievers` are given); the page opens on the note that
gives the chosen method's first gold session its rank (`rank_giver`). Clicking a tag or topic node
lists its notes and says whether the chosen method's walk stopped there. When the whole graph is trimmed
to `max_nodes`, the shortest paths from the question's concepts to the gold and top-ranked notes are
kept first.

The work is bounded by what is drawn, whatever the history's size: the base graph is read through a
view (copied only when it is small), every search from the question stops after ``SEARCH_BUDGET`` x
`max_nodes` nodes (at most MAX_DRAWN), only the gold and top-ranked notes and the EXPLAINED_DRAWN drawn
notes nearest the question are explained, and each ranking's sessions are read once. What remains linear
in the history is one ranking per method and a pass over the notes.

Safety and portability:

- every string from data is ``html.escape``-d before it enters a tooltip, the
  header or the legend. Tooltips are turned into DOM elements from that
  escaped HTML (vis-network 9 would otherwise print markup as text), and the
  node/edge JSON has ``<`` and ``>`` written as ``\\u003c``/``\\u003e``, so no
  data can close the ``<script>`` element.
- the page is self-contained: vis-network's JS and CSS are inlined from the
  pyvis package; the page is our own template, not pyvis's (which links
  Bootstrap from a CDN even with ``cdn_resources="in_line"``).
- physics is off: positions come from ``spring_layout(seed=0)``, so the same
  store always draws the same picture and large graphs open instantly
  (``kamada_kawai_layout`` took ~2 s for 116 nodes here, spring ~0.3 s; 400 nodes ~0.5 s).
"""

from __future__ import annotations

import heapq
import html
import itertools
import json
import math
import re
import shlex
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import networkx as nx
import pyvis

from taggraph.graph import concept_node, file_node
from taggraph.atomic import atomic_write
from taggraph.errors import ConfigError
from taggraph.evaluation.metrics import session_scores
from taggraph.retrieval import DEFAULT_DEPTH, Explanation, Retriever
from taggraph.store import MemoryStore
from taggraph.text import query_tokens, snippet
from taggraph.viz.explain import SessionPlace, evidence_text, links_html, placed, verdict, walk_routes
from taggraph.viz.names import node_names

VIS_DIR = Path(pyvis.__file__).parent / "templates" / "lib" / "vis-9.1.2"
KIND_STYLE = {  # kind -> (colour, vis shape, legend symbol)
    "tag": ("#4c78a8", "dot", "●"),
    "ontology": ("#9d9da1", "diamond", "◆"),
    "topic": ("#f58518", "triangle", "▲"),
    "file": ("#54a6a0", "square", "■"),
}
GOLD = ("#f2b701", "star")
HIT_BORDER = "#d62728"
TIE_BORDER = "#6f42c1"  # a top-k place owed to tie order, the explain page's 'tie' colour
PATH_COLOUR = "#c2185b"  # the chosen method's own walk
POSSIBLE_COLOUR = "#e8a7c4"  # the question's paths the chosen method did not take: lighter, dashed
BREAK_BORDER = "#d95f02"  # where the chosen method's walk stops
MATCH_BORDER = "#111111"
EDGE_STYLE = {  # kind -> (colour, dashes)
    "ontology": ("#c7c7c7", False),
    "tag_topic": ("#a6c8e8", False),
    "topic_file": ("#f7c58f", False),
    "similar": ("#f58518", True),
    "chronological": ("#8fd1cc", True),
}
SNIPPET_CHARS = 240


def _snippet(text: str, n: int = SNIPPET_CHARS) -> str:
    """`text` on one line, cut at a word boundary (`taggraph.text.snippet`), escaped."""
    return html.escape(snippet(" ".join(text.split()), n))


def _ranks(results_by_method: Mapping[str, Sequence] | None) -> dict[str, dict[str, int]]:
    """method -> note id -> 1-based rank; accepts ranked note ids or `Result`s."""
    out: dict[str, dict[str, int]] = {}
    for method, results in (results_by_method or {}).items():
        ranks: dict[str, int] = {}
        for i, r in enumerate(results, 1):
            ranks.setdefault(r if isinstance(r, str) else r.note_id, getattr(r, "rank", i))
        out[method] = ranks
    return out


def matched_concepts(store: MemoryStore, text: str) -> list[str]:
    """Concept nodes whose last path segment contains a token of `text` (TagGraph's entry points)."""
    from taggraph.retrieval.index import concept_matcher

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


def _undirected(store: MemoryStore, chronological: bool, budget: int) -> nx.Graph:
    """The base graph, undirected (every link is stored in both directions): a copy when it has at most
    `budget` nodes and links or chronological links are asked for (those copy the whole graph), else a
    read-only view."""
    g = store.graph.g
    if len(g) + len(store.graph.edge_log) <= budget or chronological:
        return nx.Graph(store.graph.to_networkx(chronological=chronological))
    return g.to_undirected(as_view=True)


def _search(ug: nx.Graph, sources: Iterable[str], budget: int, cutoff: int | None = None,
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


def _paths_to(ug: nx.Graph, sources: Iterable[str], targets: Sequence[str], budget: int) -> list[str]:
    """Nodes on a shortest path from the nearest of `sources` to each target, in target order
    (a target no source reaches within the search's `budget` is kept alone)."""
    paths = _search(ug, sources, budget, targets=targets)
    return list(dict.fromkeys(n for t in targets if t in ug for n in paths.get(t, [t])))


def _select(ug: nx.Graph, seeds: Iterable[str] | None, hops: int, max_nodes: int,
            first: set[str], keep: Sequence[str] = (), budget: int | None = None) -> list[str]:
    """Nodes to draw, at most max_nodes: `keep` first (in order), then those within `hops` of `seeds`
    (all nodes when None; the nearest `budget` when given), nearest first."""
    if seeds is None:
        ranked = heapq.nsmallest(max_nodes, ug, key=lambda n: (n not in first, -ug.degree(n), n))
    else:
        dist = {n: len(p) - 1 for n, p in _search(ug, seeds, budget or len(ug), cutoff=hops).items()}
        ranked = sorted(dist, key=lambda n: (dist[n], n not in first, -ug.degree(n), n))
    return list(dict.fromkeys([*keep, *ranked]))[:max_nodes]


def _layout(g: nx.Graph) -> dict[str, tuple[float, float]]:
    """Deterministic positions in pixels, spread by the graph's size, wider than tall (screens are).

    Components are tied to a hidden hub so they do not drift apart; nodes without
    any edge (untagged notes) go in rows under the drawing.
    """
    lone = sorted(n for n in g if g.degree(n) == 0)
    linked = nx.Graph()  # sorted: the layout depends on node order, the base graph's order on hash seeds
    linked.add_nodes_from(sorted(n for n in g if g.degree(n)))
    linked.add_edges_from(sorted(tuple(sorted(e)) for e in g.edges))
    hub = "\0hub"
    for comp in list(nx.connected_components(linked)):
        linked.add_edge(hub, min(comp, key=lambda n: (-linked.degree(n), n)))  # best-connected, ties by id
    pos = nx.spring_layout(linked, seed=0) if len(linked) else {}
    pos.pop(hub, None)
    scale = 60 * math.sqrt(max(len(g), 1))
    out = {n: (float(x) * scale * 1.6, float(y) * scale) for n, (x, y) in pos.items()}
    bottom = max((y for _, y in out.values()), default=0.0) + 80
    per_row = max(int(math.sqrt(len(lone))) * 2, 8)
    for i, n in enumerate(lone):
        out[n] = (scale * 1.6 * (2 * (i % per_row) / per_row - 1), bottom + 60 * (i // per_row))
    return out


def _title(store: MemoryStore, node: str, data: dict, ranks: dict[str, dict[str, int]], gold: set[str],
           name: str) -> str:
    """Tooltip HTML; every data string is escaped."""
    kind = data["kind"]
    if kind == "file":
        note = store.by_id[data["note_id"]]
        lines = [f"<b>note {html.escape(note.note_id)}</b>"
                 + (" <b style='color:#b8860b'>★ gold</b>" if note.note_id in gold else ""),
                 f"session {html.escape(note.session_id)} · {html.escape(note.timestamp)}",
                 f"<code>{html.escape(note.tag_line)}</code>",
                 f"<i>User:</i> {_snippet(note.user)}", f"<i>Assistant:</i> {_snippet(note.assistant)}"]
        hits = [f"{html.escape(m)} #{r[note.note_id]}" for m, r in ranks.items() if note.note_id in r]
        if hits:
            lines.append("ranks: " + ", ".join(hits))
    elif kind == "topic":
        frame = store.graph.frame_of_topic[node]
        lines = [f"<b>{html.escape(name)}</b> ({html.escape(node)}, one 5W frame)"] + [
            f"#{html.escape(c)}:{html.escape(p)}" for c, p in sorted(frame)]
    else:
        path = data["path"]
        lines = [f"<b>{html.escape(name)}</b>" + (f" ({html.escape(path)})" if not name.endswith(path) else ""),
                 f"{kind} node, carried by {store.ontology.counts.get(path, 0)} note(s)"]
    return "<br>".join(lines)


def _why(store: MemoryStore, explanations: Mapping[str, Mapping[str, Explanation]] | None,
         rankings: Mapping[str, Ranking], note_id: str, k: int, depth: int) -> dict:
    """method -> {verdict, cls, text} of one note for the side panel (plain text, shown as text), judged
    like the explain page (`explain.verdict`): its session rank in the method's ranking by the cut-off `k`
    and the run's retrieval `depth`, a top-k place owed to tie order (class ``tie``) not as a hit."""
    out = {}
    for method, by_note in (explanations or {}).items():
        e, ranking = by_note.get(note_id), rankings.get(method)
        if e is not None and ranking is not None:
            words, cls = verdict(e, _place(store, ranking, {store.by_id[note_id].session_id}, k, depth), k, depth,
                                 len(store))
            fallback = e.evidence.fallback
            out[method] = {"verdict": words, "cls": cls,
                           "text": evidence_text(e) + (f" (fallback: {fallback})" if fallback else "")}
    return out


def file_explanations(store: MemoryStore, question: str, retrievers: Mapping[str, Retriever],
                      note_ids: Iterable[str] | None = None, asked_on: datetime | None = None
                      ) -> dict[str, dict[str, Explanation]]:
    """method -> note id -> `Explanation` of every note (or of `note_ids`) for `question` asked on
    `asked_on`: one ranking with explanations per method, `explain` for the notes it did not reach."""
    wanted = list(note_ids) if note_ids is not None else [n.note_id for n in store.notes]
    out = {}
    for method, r in retrievers.items():  # as `query(explain=True)` and `explain` do, one ranking for every note
        full = r.ranking(question, asked_on=asked_on)
        scores, reached = dict(full), {store.notes[i].note_id for i, _ in full}
        out[method] = {n: r._explain(question, store.by_id[n], max(len(store), 1) if n in reached else DEFAULT_DEPTH,
                                     scores, full, asked_on) for n in wanted}
    return out


class Ranking(list):
    """(note id, score or None when unknown) in rank order; its sessions are read once (`place`)."""

    _sessions: tuple | None = None

    def place(self, store: MemoryStore, sessions: set[str], k: int, depth: int) -> SessionPlace:
        """`explain.session_place` of the first of `sessions`: the same place (a test holds them equal), the
        ranking's sessions read once per ranking, its ties once per call."""
        if self._sessions is None:
            ids = [store.by_id[n].session_id for n, _ in self]
            pairs = session_scores(ids, [0.0 if s is None else s for _, s in self], len(ids))
            first_note: dict[str, int] = {}
            for i, sid in enumerate(ids):
                first_note.setdefault(sid, i)
            self._sessions = (pairs, {sid: i for i, (sid, _) in enumerate(pairs)}, first_note,
                              all(s is not None for _, s in self))
        pairs, order, first_note, known = self._sessions
        first = min((order[s] for s in sessions if s in order), default=None)
        if first is None or first_note[pairs[first][0]] >= depth:
            return SessionPlace(None, None, False)
        return placed([x for _, x in pairs], [sid in sessions for sid, _ in pairs], first, k, known)


def _rankings(results_by_method: Mapping[str, Sequence] | None) -> dict[str, Ranking]:
    """method -> (note id, score) in rank order; accepts ranked note ids (score unknown) or `Result`s."""
    return {m: Ranking((r, None) if isinstance(r, str) else (r.note_id, r.score) for r in results)
            for m, results in (results_by_method or {}).items()}


def _place(store: MemoryStore, ranking: Ranking, sessions: set[str], k: int, depth: int) -> SessionPlace:
    """`explain.session_place` of the first of `sessions` in a ranking of note ids."""
    return (ranking if isinstance(ranking, Ranking) else Ranking(ranking)).place(store, sessions, k, depth)


def session_ranks(store: MemoryStore, ranking: Ranking, k: int) -> tuple[dict[str, int], set[str]]:
    """(note id -> its session's rank, for the best-ranked note of each session: each session counted once, as
    the metrics and the run report count; those of the top `k` sessions placed there only by tie order,
    `tie_order_only` on sessions, none when the scores are unknown)."""
    ranks: dict[str, int] = {}
    seen: set[str] = set()
    for n, _ in ranking:
        sid = store.by_id[n].session_id
        if sid not in seen:
            seen.add(sid)
            ranks[n] = len(seen)
    ties = {n for n, r in ranks.items() if r <= k and _place(store, ranking, {store.by_id[n].session_id}, k,
                                                               len(ranking)).tie}
    return ranks, ties


def gold_rank(store: MemoryStore, ranking: Ranking, note_id: str, k: int, depth: int = DEFAULT_DEPTH) -> dict:
    """One note's place in a ranking: ``note`` (its rank among notes), ``session`` (its session's rank,
    each session counted once where its best note ranks, as the metrics count: None when that note is
    beyond `depth`, the run's retrieval depth), ``tie`` (that session is in the top `k` only by tie order,
    `tie_order_only`) and ``text``; ranks None when not ranked."""
    notes = [n for n, _ in ranking]
    if note_id not in notes:
        return {"note": None, "session": None, "tie": False,
                "text": f"{note_id}: not among the {len(notes)} notes ranked"}
    place = _place(store, ranking, {store.by_id[note_id].session_id}, k, depth)
    tie = (" only by tie order" + (" (score 0)" if place.score == 0 else f" (score {place.score:.4g})")
           if place.tie else "")
    session = (f"session rank {place.rank}" if place.rank is not None else
               f"session not ranked: its best note is beyond the depth of {depth} notes, as the metrics count")
    return {"note": notes.index(note_id) + 1, "session": place.rank, "tie": place.tie,
            "text": f"{note_id}: note rank {notes.index(note_id) + 1}, {session}{tie}"}


def missed_by(store: MemoryStore, rankings: Mapping[str, Ranking], gold: Iterable[str], k: int) -> list[str]:
    """The methods that miss: no gold session in their first `k` sessions, or one there only by tie order
    (`tie_order_only` on sessions), as the run report counts."""
    sessions = {store.by_id[g].session_id for g in gold if g in store.by_id}
    out = []
    for method, ranking in rankings.items():
        place = _place(store, ranking, sessions, k, len(ranking))
        if place.rank is None or place.rank > k or place.tie:
            out.append(method)
    return out


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


def _edge(a: str, b: str) -> tuple[str, str]:
    return tuple(sorted((a, b)))


def rank_giver(store: MemoryStore, ranking: Ranking, gold: Sequence[str]) -> str | None:
    """The note that gives the first gold session its rank: the best-ranked note of any of the `gold` notes'
    sessions (gold or not, as the metrics count sessions); the first gold note when none is ranked."""
    sessions = {store.by_id[g].session_id for g in gold}
    return next((n for n, _ in ranking if store.by_id[n].session_id in sessions), gold[0] if gold else None)


@dataclass
class Explained:
    """The subgraph that explains a question's misses (`explained_subgraph`)."""

    nodes: list[str]  # matched concepts, then the gold notes and the notes above them with the nodes linking them
    paths: dict[tuple[str, str], list[str]]  # edge (sorted pair) -> the methods whose own walk uses it
    methods: list[str]  # the methods explained: those that miss, else every method
    targets: dict[str, list[str]]  # method -> the notes it ranks above its first gold note, top k of them
    possible: set[tuple[str, str]] = field(default_factory=set)  # the question's links to those notes
    breaks: dict[str, dict[str, str]] = field(default_factory=dict)  # node -> method -> why its walk stops there


def explained_subgraph(store: MemoryStore, ug: nx.Graph, matched: Iterable[str], gold: Sequence[str],
                       rankings: Mapping[str, Ranking],
                       explanations: Mapping[str, Mapping[str, Explanation]] | None, k: int,
                       givers: Mapping[str, str | None] | None = None, budget: int | None = None) -> Explained:
    """The nodes that explain why the methods that miss (`missed_by`; every method when none does) rank
    the gold notes where they do: the question's matched concepts, every gold note, the best note of each
    of the first `k` sessions each such method ranks above its first gold session (what its rings mark), the edges each method says it walked (its
    explanation's ``walk``: all of them to the gold notes, the first route to each of those other notes, whichever
    method ranks them there: a drawn note a method reached is never shown as a path it did not take) and where its
    walk to a gold note stopped (``walk_breaks``), and, for every one of these notes, a shortest path from
    the matched concepts (the question's possible link, 'question concept -> tag -> topic -> note') or
    else its topic. `givers`: method -> the note that gives its first gold session its rank (`rank_giver`),
    walked like a gold note. `budget`: at most so many nodes searched for the question's links (every node when None)."""
    gold = [g for g in gold if g in store.by_id]
    methods = missed_by(store, rankings, gold, k) or list(rankings)
    matched = [c for c in matched if c in ug]
    nodes: list[str] = [*matched, *(file_node(g) for g in gold)]
    paths: dict[tuple[str, str], list[str]] = {}
    breaks: dict[str, dict[str, str]] = {}

    def walk(edges: Iterable[tuple[str, str]], method: str) -> None:
        for a, b in edges:
            nodes.extend((a, b))
            paths.setdefault(_edge(a, b), []).append(method)

    gold_sessions = {store.by_id[g].session_id for g in gold}
    targets = {m: _sessions_above(store, [n for n, _ in rankings[m]], gold_sessions, k) for m in methods}
    for m in rankings:
        by_note = (explanations or {}).get(m, {})
        giver = (givers or {}).get(m)
        for note in dict.fromkeys([*gold, *([giver] if giver else [])]):
            walk(walk_of(by_note.get(note)) or [], m)
            for b in (by_note[note].details.get("walk_breaks") or []) if note in by_note else []:
                if b["node"] in ug:
                    nodes.append(b["node"])
                    breaks.setdefault(b["node"], {}).setdefault(m, b["why"])
        for note in dict.fromkeys(n for t in targets.values() for n in t):  # every ringed note, not only its own
            walk(walk_of(by_note.get(note), file_node(note)) or [], m)
    notes = list(dict.fromkeys([file_node(g) for g in gold] + [file_node(n) for n in (givers or {}).values() if n]
                               + [file_node(n) for t in targets.values() for n in t]))
    linked = _question_links(ug, matched, notes, budget or len(ug))
    possible: set[tuple[str, str]] = set()
    for note in notes:
        if note in linked:
            nodes.extend(linked[note])
            possible.update(_edge(a, b) for a, b in zip(linked[note], linked[note][1:]))
        else:
            nodes.extend([note, *sorted(t for t in ug[note] if ug.nodes[t]["kind"] == "topic")])
    return Explained(list(dict.fromkeys(nodes)), {e: list(dict.fromkeys(ms)) for e, ms in paths.items()},
                     methods, targets, possible, breaks)


def _sessions_above(store: MemoryStore, ranking: Sequence[str], gold_sessions: set[str], k: int) -> list[str]:
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
    return _search(ug, walkable, budget, cutoff=ontology_hops + 2, targets=notes, follows=follows)


# Advance widths in ems of vis's label font (arial; Liberation Sans here, the same metrics) by character class:
# a digit-heavy note id is a third wider than a name of the same length. Other characters count as 0.556 em,
# characters outside Latin-1 (★, ✕, CJK) as 1 em.
EM_WIDTHS = {**dict.fromkeys("ijl'", 0.222), **dict.fromkeys("ftI/:;.,!| ·", 0.278), **dict.fromkeys("r()-", 0.333),
             **dict.fromkeys("ckszvxyJ", 0.5), **dict.fromkeys("mw", 0.833), **dict.fromkeys("MW", 0.9)}
LABEL_PX = 14  # the page's label font size at scale 1


def _label_width(label: str) -> float:
    """Pixels a label takes at the page's font (its longest line, `EM_WIDTHS`): 0.94-1.03 times Chromium's
    width, median 1.00, over 322 labels of demo and LongMemEval pages."""
    def line(text: str) -> float:
        return sum(EM_WIDTHS.get(ch, 0.667 if ch.isupper() else 0.556 if ord(ch) < 256 else 1.0) for ch in text)
    return LABEL_PX * max(map(line, label.split("\n")))


WRAP_CHARS = 16  # free choice: a longer name is drawn on two lines, so that one name does not widen its column
# Where a name breaks, the first of these it holds: between a topic's names, after a tag's parent, and only in a
# name without either inside a word ('redwood_regional_ / park · stream_trail' read as a name 'park').
SEPARATORS = (" · ", "/", "_")


def wrap_label(name: str, chars: int = WRAP_CHARS) -> str:
    """`name` on two lines when it is longer than `chars`: broken after the first of SEPARATORS it holds (the
    separator ends the first line), where the longer line is shortest; as it is when it holds none."""
    if len(name) <= chars:
        return name
    for sep in SEPARATORS:
        ends = [i + len(sep) for i in range(1, len(name) - len(sep)) if name.startswith(sep, i)]
        if ends:
            cut = min(ends, key=lambda e: max(len(name[:e].rstrip()), len(name) - e))
            return name[:cut].rstrip() + "\n" + name[cut:]
    return name


CANVAS = (1015, 530)  # the drawing's room in a 1280 x 800 window (1280 x 657 of page) beside the side panel
LAYOUT_TRIES = 4096  # splits of the columns tried one by one (each well under 1 ms); more are searched greedily
MAX_SUBCOLUMNS = 6  # a tall column (40 notes on LongMemEval pages) zigzags over at most this many sub-columns
COLUMN_GAP, SUB_GAP = 30, 14  # pixels between columns, and between the sub-columns of a zigzag column
LINE_PX, ROW_GAP = 14, 14  # a label line's height at the 14 px font (measured in Chromium), the room under a label
RING_GROWTH = 6  # pixels a ringed note's size grows by (the page's highlight())


def _columns_layout(g: nx.Graph, kinds: Mapping[str, str], matched: set[str], labels: Mapping[str, str],
                    sizes: Mapping[str, int]) -> dict[str, tuple[float, float]]:
    """Positions that read left to right, question to notes: the matched concepts, the concepts
    further ontology hops away, topics, then notes; within a column nodes sit under one another in the
    mean order of their neighbours on the left (fewer crossings), spaced by their sizes and widest
    `labels` (drawn under the node) so that no two overlap. A column too tall for `CANVAS` zigzags over
    up to MAX_SUBCOLUMNS sub-columns, whichever split of the columns fits the whole largest (tried one by
    one up to LAYOUT_TRIES splits, else grown greedily)."""
    concepts = [n for n in g if kinds[n] in ("tag", "ontology")]
    onto = g.subgraph(concepts)
    sources = [c for c in matched if c in onto]
    hops = nx.multi_source_dijkstra_path_length(onto, sources) if sources else {}
    deepest = max(hops.values(), default=0)
    column = {n: int(hops.get(n, 1)) if n in concepts else int(deepest) + (2 if kinds[n] == "file" else 1) for n in g}
    columns = [sorted(n for n in g if column[n] == c) for c in range(max(column.values(), default=-1) + 1)]
    columns = [c for c in columns if c]
    if not columns:
        return {}
    row: dict[str, int] = {}
    for members in columns:
        placed = {n: [row[m] for m in g[n] if m in row] for n in members}
        members.sort(key=lambda n: (sum(placed[n]) / len(placed[n]) if placed[n] else math.inf, labels[n]))
        row.update((n, i) for i, n in enumerate(members))
    # a node's slot: its shape (a note grows by RING_GROWTH when ringed), its label's lines, then ROW_GAP
    height = {n: 2 * (sizes[n] + RING_GROWTH * (kinds[n] == "file")) + LINE_PX * (1 + labels[n].count("\n")) + ROW_GAP
              for n in g}
    width = {n: _label_width(labels[n]) for n in g}

    def place(splits: list[int]) -> tuple[dict[str, tuple[float, float]], float]:
        """Positions with column c over splits[c] sub-columns, and the scale at which they fit CANVAS."""
        pos, left, top, bottom = {}, 0.0, 0.0, 0.0
        for members, m in zip(columns, splits):
            hs = [height[n] for n in members]
            # row i and row i + m share a sub-column: every step between them is at least the taller over m
            steps = [max(hs[max(i - m + 1, 0):i + m + 1]) / m for i in range(len(hs))]
            sub = [max(width[n] for n in members[j::m]) for j in range(m)]  # each sub-column as wide as its widest
            xs = [left + sum(sub[:j]) + j * SUB_GAP + sub[j] / 2 for j in range(m)]
            y = -sum(steps) / 2
            for i, n in enumerate(members):
                pos[n] = (xs[i % m], y)
                top, bottom = min(top, y - hs[i] / 2), max(bottom, y + hs[i] / 2)
                y += steps[i]
            left += sum(sub) + (m - 1) * SUB_GAP + COLUMN_GAP
        return pos, min(CANVAS[0] / (1.1 * (left - COLUMN_GAP)), CANVAS[1] / (1.1 * (bottom - top)), 1.0)

    choices = [range(1, min(MAX_SUBCOLUMNS, (len(members) + 1) // 2) + 1) for members in columns]
    if math.prod(map(len, choices)) <= LAYOUT_TRIES:  # every split, the best fit
        return max((place(list(splits)) for splits in itertools.product(*choices)), key=lambda r: r[1])[0]
    splits = [1] * len(columns)
    best = place(splits)
    while True:  # greedy: one column one sub-column more at a time
        tries = [splits[:c] + [splits[c] + 1] + splits[c + 1:] for c in range(len(columns))
                 if splits[c] + 1 in choices[c]]
        found = max((place(t) + (t,) for t in tries), key=lambda r: r[1], default=None)
        if found is None or found[1] <= best[1] + 0.01:
            return best[0]
        best, splits = found[:2], found[2]


# Free choice: above this many drawn nodes only the telling nodes keep a label, so labels do not pile up
# (hover shows every name): concepts the question matches, gold notes, every method's top_k notes, and the
# topics and notes on the kept paths from the question to them. Other tag, ontology, topic and file nodes
# are drawn without one.
DENSE_LABELS = 60


@dataclass(frozen=True)
class GraphPage:
    """A drawn graph page and the ids of the notes it draws (in its subgraph or its whole drawing): those its
    ``#note=`` links can open."""
    html: str
    notes: frozenset[str]


def graph_html(*args, **kwargs) -> str:
    """`graph_page`'s HTML (same parameters)."""
    return graph_page(*args, **kwargs).html


def graph_page(store: MemoryStore, question: str | None = None,
               results_by_method: Mapping[str, Sequence] | None = None, gold_note_ids: Iterable[str] = (),
               neighbourhood_of: str | None = None, hops: int = 2, max_nodes: int = 400, top_k: int = 5,
               chronological: bool = False, title: str | None = None,
               retrievers: Mapping[str, Retriever] | None = None, depth: int = DEFAULT_DEPTH,
               asked_on: datetime | None = None, links: Mapping[str, str] | None = None,
               whole_graph: bool = False, question_id: str = "") -> GraphPage:
    """A self-contained HTML page drawing `store`'s base graph, and the notes it draws.

    question: shown in the header; its matched concepts get a black ring. `question_id` names it in the
        heading (else the heading names the store, which several questions may share, as in LoCoMo).
    results_by_method: method -> ranked note ids (or `Result`s); the page's drop-down
        shows one method at a time, ringing the best note of each of its first `top_k` sessions in red and
        giving each gold note's note and session rank.
    gold_note_ids: notes drawn as gold stars.
    With a question and gold notes the page opens on `explained_subgraph`, every node labelled with its
    `names.node_names` name, the chosen method's own walk drawn thick and the question's paths it did not
    take dashed; a check box (or `whole_graph`) shows the whole drawing:
    neighbourhood_of: when given (e.g. the question), only nodes within `hops` edges
        of the concepts its tokens match and of the highlighted files (gold + each
        method's top_k) are drawn. Either way at most `max_nodes` nodes are kept,
        nearest (or, for the whole graph, highlighted then best-connected) first.
    chronological: also draw AdaptiveGraph's links between consecutive notes.
    retrievers: method -> retriever; when given with `question`, the ranks are over every note, each
        drawn file node is explained (`file_explanations`) and clicking it shows the chosen method's
        verdict (by `top_k`) and evidence in the side panel; `depth` is the run's retrieval depth the
        verdict judges by.
    asked_on: the date the question is asked (the case's), passed to every method.
    links: {label: href} of the question's other pages (its explain page, the run's report).
    """
    if not 0 < max_nodes <= MAX_DRAWN:
        raise ConfigError(f"max_nodes={max_nodes}: draw 1 to {MAX_DRAWN:,} nodes (a larger drawing takes minutes to "
                          f"lay out and a browser pans it slowly); the subgraph that explains a miss needs far fewer")
    budget = SEARCH_BUDGET * max_nodes
    ug = _undirected(store, chronological, budget)
    names = node_names(store)
    ranks = _ranks(results_by_method)
    rankings = _rankings(results_by_method)
    if retrievers and question:
        rankings.update({m: Ranking((store.notes[i].note_id, s) for i, s in retrievers[m].rank(question, len(store),
                                                                                              asked_on=asked_on))
                         for m in rankings if m in retrievers})
    gold_order = [n for n in dict.fromkeys(gold_note_ids) if n in store.by_id]
    gold = set(gold_order)
    matched = set(matched_concepts(store, question)) if question else set()
    by_session = {m: session_ranks(store, r, top_k) for m, r in rankings.items()}
    highlighted = {file_node(n) for n in gold} | {
        file_node(n) for r, _ in by_session.values() for n, k in r.items() if k <= top_k}
    seeds = None
    if neighbourhood_of is not None:
        seeds = set(matched_concepts(store, neighbourhood_of)) | highlighted
    # highlighted files in priority order (gold, then by best rank): their paths survive trimming
    targets = sorted(highlighted, key=lambda f: (f[len("file:"):] not in gold,
                                                 min((r.get(f[len("file:"):], top_k + 1) for r in ranks.values()),
                                                     default=0), f))
    paths = _paths_to(ug, matched, targets, budget)
    keep = _select(ug, seeds, hops, max_nodes, highlighted | matched, paths, budget)
    near_top = {n for r in rankings.values() for n, _ in r[:top_k + len(gold)]}
    best = {m: rank_giver(store, r, gold_order) for m, r in rankings.items()}
    told = gold | near_top | set(best.values())
    nearest = told | {*[ug.nodes[n]["note_id"] for n in keep if ug.nodes[n]["kind"] == "file"][:EXPLAINED_DRAWN]}
    wanted = [n.note_id for n in store.notes if n.note_id in nearest]
    explanations = file_explanations(store, question, retrievers, wanted, asked_on) if retrievers and question else None
    explained = (explained_subgraph(store, ug, sorted(matched), gold_order, rankings, explanations, top_k, best,
                                    budget) if question and gold else None)
    sub = explained.nodes if explained else []
    places = {m: {n: gold_rank(store, r, n, top_k, depth) for n in gold_order} for m, r in rankings.items()}
    ties = {m: t for m, (_, t) in by_session.items()}
    short = {m: {n: "not ranked" if p["note"] is None else f"note {p['note']} · session {p['session'] or '–'}"
                 + ("\n(tie order)" if p["tie"] else "") for n, p in by.items()} for m, by in places.items()}
    tied = set().union(*ties.values())
    wrapped = {n: names[n] if ug.nodes[n]["kind"] == "file" else wrap_label(names[n]) for n in sub}  # ids whole
    widest = {n: ("✕ " if explained and n in explained.breaks else "") + wrapped[n]  # with a rank and gold's ranks
              + ("\nsession #00" if ug.nodes[n]["kind"] == "file" else "")
              + (" tie order" if ug.nodes[n].get("note_id") in tied else "")
              + (max(("\n★ " + s[ug.nodes[n]["note_id"]] for s in short.values()), key=len, default="")
                 if ug.nodes[n].get("note_id") in gold else "") for n in sub}
    sizes = {n: _size(ug.nodes[n], n in matched, gold) for n in dict.fromkeys([*keep, *sub])}
    sub_pos = _columns_layout(ug.subgraph(sub), {n: ug.nodes[n]["kind"] for n in sub}, matched, widest, sizes)
    pos = _layout(ug.subgraph(keep))

    nodes: list[dict] = []
    dense, on_path = len(keep) > DENSE_LABELS, set(paths)
    for node in dict.fromkeys([*keep, *sub]):
        data = ug.nodes[node]
        kind = data["kind"]
        colour, shape, _ = KIND_STYLE[kind]
        note_ranks = {m: r[data["note_id"]] for m, r in ranks.items() if data.get("note_id") in r}
        if kind == "file" and data["note_id"] in gold:
            colour, shape = GOLD
        border, width = (MATCH_BORDER, 3) if node in matched else (colour, 1)
        fixed = {"background": colour, "border": border}  # the same on hover and selection: gold stays gold
        told = node in matched or (kind in ("topic", "file") and (node in highlighted or node in on_path))
        quiet = dense and not told  # its name is in the tooltip; " ": pyvis turns "" into the id
        x, y = pos.get(node, (None, None))
        sx, sy = sub_pos.get(node, (None, None))
        nodes.append(dict(color={**fixed, "hover": fixed, "highlight": fixed}, full=names[node],
                          wrapped=wrapped.get(node, names[node]), x=x, y=y, sx=sx,
                     sy=sy, whole=node in pos, sub=node in sub_pos,
                     title=_title(store, node, data, ranks, gold, names[node]), kind=kind, bg=colour,
                     ranks=note_ranks, ties={m: True for m, t in ties.items() if data.get("note_id") in t},
                     sessionRanks={m: r[data["note_id"]] for m, (r, _) in by_session.items()
                                   if data.get("note_id") in r},
                     breaks=explained.breaks.get(node, {}) if explained else {}, border0=border,
                     notes=[] if kind == "file" else _notes_under(ug, node),
                     size=sizes[node], borderWidth=width,
                     goldRank={m: s[data["note_id"]] for m, s in short.items()} if data.get("note_id") in gold else {},
                     why=_why(store, explanations, rankings, data.get("note_id"), top_k, depth) if kind == "file" else {},
                     id=node, label=" " if quiet else names[node], shape=shape))  # pyvis's node keys, in its order
    whole_edges = {tuple(sorted(e)) for e in ug.subgraph(keep).edges}
    sub_edges = {tuple(sorted(e)) for e in ug.subgraph(sub).edges} | set(explained.paths if explained else ())
    edges: list[dict] = []
    for a, b in sorted(whole_edges | sub_edges):
        kind = ug.edges[a, b]["kind"] if ug.has_edge(a, b) else "chronological"  # AdaptiveGraph walks those too
        colour, dashes = EDGE_STYLE[kind]
        edges.append(dict(id=f"{a}|{b}", color=colour, base=colour, dashes=dashes, title=kind, width=1,
                          whole=(a, b) in whole_edges, sub=(a, b) in sub_edges,
                          walk=explained.paths.get((a, b), []) if explained else [],
                          walkOnly=not ug.has_edge(a, b),  # drawn only under the method that walked it
                          possible=bool(explained) and (a, b) in explained.possible, **{"from": a, "to": b}))
    options = {"physics": {"enabled": False}, "edges": {"smooth": False},
               "interaction": {"hover": True, "tooltipDelay": 120},
               "nodes": {"font": {"size": LABEL_PX, "strokeWidth": 4, "strokeColor": "#ffffff"},
                         "scaling": {"label": {"drawThreshold": 3}}}}

    heading = title or (f"TagGraph base graph · question {question_id}" if question_id
                        else f"TagGraph base graph · memory {store.case_id}")
    shown = f"{len(keep)} of {len(ug)} nodes"
    if seeds is not None:
        shown += f" (within {hops} hop(s) of the question)"
    shown_sub = (f"{len(sub)} of {len(ug)} nodes: the question's concepts, the paths walked, the gold notes and the "
                 f"notes {', '.join(explained.methods)} rank above them" if explained else "")
    ring = "<span class='ring' style='border-color:{}'></span> {}".format
    line = "<span class='edge' style='border-top:{}px {} {}'></span> {}".format
    legend = [" ".join(f"<span class='kind'><span style='color:{c}'>{sym}</span> {k}</span>"
                       for k, (c, _, sym) in KIND_STYLE.items()),
              f"<span style='color:{GOLD[0]}'>★</span> gold note (label: its ranks)",
              ring(HIT_BORDER, f"best note of a top-{top_k} session of the chosen method (label: its session rank)"),
              ring(TIE_BORDER, f"top-{top_k} session only by tie order (label: 'session #4 tie order')"),
              ring(BREAK_BORDER, "✕ where the chosen method's walk stops"),
              ring(MATCH_BORDER, "concept matched by the question")]
    edges_legend = [" ".join("<span class='kind'>{}</span>".format(line(2, "dashed" if d else "solid", c,
                                                                       k.replace("_", "–")))
                             for k, (c, d) in EDGE_STYLE.items() if k != "chronological" or chronological
                             or any(not ug.has_edge(a, b) for a, b in whole_edges | sub_edges)),
                    line(4, "solid", PATH_COLOUR, "the chosen method's own walk (the edges its explanation names)"),
                    line(2, "dashed", POSSIBLE_COLOUR, "a path from the question the chosen method did not take")]
    chosen = next((m for m in (explained.methods if explained else ()) if m in ranks), None)
    options_html = "".join(f"<option{' selected' if m == chosen else ''}>{html.escape(m)}</option>" for m in ranks)
    options_html += "<option value=''>(none)</option>"
    walk_texts = {m: walk_text(store, names, m, (explanations or {}).get(m, {}).get(best[m]), best[m], gold_order,
                               rankings[m], top_k, explained, depth) for m in rankings} if explained else {}
    payload = {"nodes": nodes, "edges": edges, "options": options, "hit": HIT_BORDER, "tie": TIE_BORDER,
               "path": PATH_COLOUR, "possibleColour": POSSIBLE_COLOUR, "brk": BREAK_BORDER, "bestGold": best,
               "ringGrowth": RING_GROWTH,
               "walkText": walk_texts, "unexplained": (  # the page adds the clicked note's id
                   f"not explained on this page, which explains the gold and top-ranked notes and the "
                   f"{EXPLAINED_DRAWN} drawn notes nearest the question; this explains it: taggraph explain "
                   f"--question {shlex.quote(question_id) if question_id else 'QUESTION_ID'} --note "),
               "methods": list(ranks), "top_k": top_k, "sub": bool(sub), "shownWhole": shown, "shownSub": shown_sub, "gold": gold_order,
               "goldText": {m: _gold_text(list(by.values())) for m, by in places.items()}}
    values = {"VIS_CSS": (VIS_DIR / "vis-network.css").read_text(encoding="utf-8"),
              "VIS_JS": (VIS_DIR / "vis-network.min.js").read_text(encoding="utf-8"),
              "HEADING": html.escape(heading), "QUESTION": html.escape(question or ""),
              "SHOWN": html.escape(shown_sub if sub and not whole_graph else shown), "LEGEND": _items(legend),
              "EDGES": _items(edges_legend), "OPTIONS": options_html, "LINKS": links_html(links),
              "WHOLE": "" if sub else " hidden", "CHECKED": " checked" if whole_graph or not sub else "",
              "DATA": script_json(payload)}
    # one pass over the template: inserted text is never searched for placeholders again
    return GraphPage(_PLACEHOLDER.sub(lambda m: values[m.group(1)], _TEMPLATE),
                     frozenset(n["id"].removeprefix("file:") for n in nodes if n["kind"] == "file"))


def walk_text(store: MemoryStore, names: Mapping[str, str], method: str, e: Explanation | None, note: str | None,
              gold: Sequence[str], ranking: Ranking, k: int, explained: Explained, depth: int = DEFAULT_DEPTH,
              shown: int = 4) -> str:
    """The header's line for `method`: the note that gives its first gold session its rank (`rank_giver`) and
    the session's other gold notes, then its own walk to that note (thick), where the walk stops (✕) and why,
    or, for a method that does not walk the graph, its own evidence."""
    if note is None:
        return ""
    same = [g for g in gold if g != note and store.by_id[g].session_id == store.by_id[note].session_id]
    head = (f"Under {method}, {'gold ' if note in gold else ''}note {note} gives gold session "
            f"{store.by_id[note].session_id} its rank ({gold_rank(store, ranking, note, k, depth)['text'].split(': ', 1)[1]})")
    if same:
        head += f"; the session's {'other ' if note in gold else ''}gold notes: " + ", ".join(
            f"{g} (note rank {gold_rank(store, ranking, g, k, depth)['note'] or '–'})" for g in same)
    walk = walk_of(e)
    if e is None:
        return head + "."
    if walk is None:
        return f"{head}. {method} does not walk the graph: no edge is its own. Its evidence: {evidence_text(e)}"
    routes = [" → ".join(names.get(n, n) for n in r) for r in walk_routes(walk)]
    text = (f"{head}. Its own walk to it (thick): " + "; ".join(routes[:shown])
            + (f"; … {len(routes) - shown} more route(s)" if len(routes) > shown else "")) if routes else \
        f"{head}. {method} walked no edge to it"
    stops = [(b["node"], b["why"]) for b in e.details.get("walk_breaks") or []]
    if stops:
        text += ". ✕ " + "; ✕ ".join(f"{names.get(n, n)}: {why}" for n, why in stops[:shown]) + (
            f"; … {len(stops) - shown} more stop(s)" if len(stops) > shown else "")
    if explained.possible - set(map(lambda ab: _edge(*ab), walk)):
        text += f". Dashed: the question's paths {method} did not take."
    return text


def _notes_under(ug: nx.Graph, node: str, shown: int = 30) -> list[str]:
    """The notes a tag or topic node leads to (through its topics), at most `shown` of them."""
    topics = [node] if node.startswith("topic:") else [t for t in ug[node] if t.startswith("topic:")]
    return sorted({f[len("file:"):] for t in topics for f in ug[t] if f.startswith("file:")})[:shown]


def _gold_text(places: Sequence[dict], shown: int = 3) -> str:
    """The header's line of gold ranks (`gold_rank` texts), at most `shown` of them: best session rank first, as
    the metrics count (the first gold session gives RR), then by note rank."""
    places = sorted(places, key=lambda p: (p["session"] is None, p["session"] or 0, p["note"] is None, p["note"] or 0))
    more = len(places) - shown
    return "; ".join(p["text"] for p in places[:shown]) + (
        f"; {more} more gold note(s), their ranks on their labels" if more > 0 else "")


def _size(data: dict, matched: bool, gold: set[str]) -> int:
    """A node's drawn size: gold stars 24, matched concepts 13, notes and topics 12, other concepts 9."""
    if data.get("note_id") in gold:
        return 24
    return 13 if matched else {"file": 12, "topic": 12}.get(data["kind"], 9)


def _items(parts: Sequence[str]) -> str:
    """The side panel's key: each entry on lines of its own."""
    return "".join(f"<span class='item'>{part}</span>" for part in parts)


def script_json(value) -> str:
    """JSON safe to place inside a <script> element: no '<', '>' or line separators as such."""
    text = json.dumps(value, ensure_ascii=False)
    for ch, esc in (("<", "\\u003c"), (">", "\\u003e"), ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        text = text.replace(ch, esc)
    return text


def save_graph_html(path: str | Path, store: MemoryStore, **kwargs) -> Path:
    """Write `graph_html(store, **kwargs)` to `path` atomically; returns the path."""
    path = Path(path)
    atomic_write(path, graph_html(store, **kwargs))
    return path


_PLACEHOLDER = re.compile(r"__(VIS_CSS|VIS_JS|HEADING|QUESTION|SHOWN|LEGEND|EDGES|OPTIONS|DATA|LINKS|WHOLE|CHECKED)__")
_TEMPLATE = """<!doctype html>
<html><head><meta charset="utf-8"><title>__HEADING__</title>
<style>__VIS_CSS__</style>
<style>
html, body { margin: 0; height: 100%; font: 13px system-ui, sans-serif; }
body { display: flex; flex-direction: column; }
header { padding: 6px 10px; border-bottom: 1px solid #ddd; }
header h1 { font-size: 15px; margin: 0 0 4px 0; }
.ring { display: inline-block; width: 9px; height: 9px; border: 3px solid; border-radius: 50%; vertical-align: middle; }
.edge { display: inline-block; width: 22px; vertical-align: middle; }
#gold-rank { color: #8a6d00; } #walk { color: #7a1040; }
#told { line-height: 1.3em; height: 3.9em; overflow-y: auto; }  /* as tall under every method: choosing one never shrinks the drawing */
h1 nav.links { float: right; font-size: 13px; font-weight: normal; } #note-msg { color: #c0392b; font-weight: bold; }
main { flex: 1; display: flex; min-height: 300px; }
#graph { flex: 1; }
#why { width: clamp(240px, 19vw, 320px); overflow-y: auto; border-left: 1px solid #ddd; padding: 6px 10px; font-size: 12px; }
#key { border-top: 1px solid #ddd; margin-top: 10px; padding-top: 4px; color: #444; line-height: 1.5; }
#key .item { display: block; } #key .kind { white-space: nowrap; margin-right: 0.5em; }
#why .hit { color: #1a7f37; } #why .near { color: #b26a00; } #why .miss { color: #c0392b; } #why .tie { color: #6f42c1; }
div.vis-tooltip { max-width: 460px; white-space: normal; font-size: 12px; }
</style></head>
<body>
<header>
<h1>__HEADING__ __LINKS__</h1>
<div><b>Question:</b> <span id="question">__QUESTION__</span></div>
<div>Highlight <select id="method">__OPTIONS__</select>
<label__WHOLE__>· <input type="checkbox" id="whole"__CHECKED__> whole graph</label></div>
<div id="told"__WHOLE__><div id="gold-rank"></div><div id="walk"></div></div>
<div id="note-msg" hidden></div>
</header>
<main><div id="graph"></div>
<aside id="why"><b id="why-title">Click a note</b><p id="why-verdict"></p><p id="why-text"></p>
<div id="key"><b>Drawn</b> <span id="shown">__SHOWN__</span><br><b>Key</b><div>__LEGEND__</div><div><b>Edges</b> __EDGES__</div></div></aside></main>
<script>__VIS_JS__</script>
<script>
var DATA = __DATA__;
DATA.nodes.forEach(function (n) {
  var div = document.createElement("div");
  div.innerHTML = n.title;  /* escaped server-side: only our own markup survives */
  n.title = div;
});
var nodes = new vis.DataSet(), edges = new vis.DataSet();
var network = new vis.Network(document.getElementById("graph"), {nodes: nodes, edges: edges}, DATA.options);
var select = document.getElementById("method"), whole = document.getElementById("whole");
function highlight(method) {
  /* the best note of each of the method's top-k sessions ringed (tie order apart) with its session rank, gold
     notes' ranks, the method's own walk thick, the question's paths it did not take dashed, its stops marked */
  nodes.update(nodes.get().map(function (n) {
    var brk = n.breaks[method], label = (brk ? "✕ " : "") + n.baseLabel, width = n.baseWidth, size = n.baseSize;
    var border = n.border0;
    if (n.kind === "file") {
      var r = n.sessionRanks[method], top = r !== undefined && r <= DATA.top_k, tie = top && !!n.ties[method];
      var g = n.goldRank[method];
      label += (top ? "\\nsession #" + r + (tie ? " tie order" : "") : "") + (g ? "\\n★ " + g : "");
      if (top) { width = 3; size = n.baseSize + DATA.ringGrowth; border = tie ? DATA.tie : DATA.hit; }
    }
    if (brk) { width = 4; border = DATA.brk; }
    var c = {background: n.bg, border: border};
    return {id: n.id, label: label, borderWidth: width, size: size, color: Object.assign({hover: c, highlight: c}, c),
            shapeProperties: {borderDashes: brk ? [5, 3] : false}};
  }));
  edges.update(edges.get().map(function (e) {
    var on = e.walk.indexOf(method) >= 0, maybe = !on && e.possible && !!method;
    return {id: e.id, hidden: e.walkOnly && !on, width: on ? 4 : maybe ? 2 : 1,
            color: on ? DATA.path : maybe ? DATA.possibleColour : e.base,
            dashes: on ? false : maybe ? [6, 4] : e.baseDashes,
            title: on ? method + "'s own walk" : maybe ? "a path from the question " + method + " did not take" : e.kind};
  }));
  var gold = DATA.goldText[method];
  document.getElementById("gold-rank").textContent = gold ? "Gold under " + method + ": " + gold : "";
  document.getElementById("walk").textContent = DATA.walkText[method] || "";
}
function view() {  /* the subgraph that explains the miss, or the whole drawing */
  var all = whole.checked || !DATA.sub;
  nodes.clear(); edges.clear();
  nodes.add(DATA.nodes.filter(function (n) { return all ? n.whole : n.sub; }).map(function (n) {
    var label = all ? n.label : n.wrapped;
    return Object.assign({}, n, {x: all ? n.x : n.sx, y: all ? n.y : n.sy, label: label, baseLabel: label,
                                 baseSize: n.size, baseWidth: n.borderWidth});
  }));
  edges.add(DATA.edges.filter(function (e) { return all ? e.whole : e.sub; }).map(function (e) {
    return Object.assign({}, e, {kind: e.title, baseDashes: e.dashes});
  }));
  document.getElementById("shown").textContent = all ? DATA.shownWhole : DATA.shownSub;
  highlight(select.value);
  network.fit();
}
var shown = null, picked = false;
function why(id) {  /* textContent only: the explanation is data, never markup */
  shown = id;
  var n = nodes.get(id), e = n && n.why ? n.why[select.value] : null, brk = n ? n.breaks[select.value] : null;
  var title = document.getElementById("why-title"), v = document.getElementById("why-verdict");
  var text = document.getElementById("why-text");
  if (n && n.kind !== "file") {  /* a tag, ontology or topic node: where the walk stops, and its notes */
    title.textContent = n.full + " · " + (select.value || "no method");
    v.textContent = brk ? "✕ " + brk : "";
    v.className = brk ? "miss" : "";
    text.textContent = n.notes.length ? "Notes under it (" + n.notes.length + (n.notes.length >= 30 ? "+" : "")
      + "): " + n.notes.join(", ") : "No note carries it directly.";
    return;
  }
  title.textContent = n ? n.id.slice(5) + " · " + (select.value || "no method") : "Click a note";
  v.textContent = e ? e.verdict : (n ? (Object.keys(n.why).length ? "no explanation for this method"
                                                                   : DATA.unexplained + n.id.slice(5)) : "");
  v.className = e ? e.cls : "";
  text.textContent = (e ? e.text : "") + (brk ? " ✕ " + brk : "");
}
function bestGold() {  /* the gold note that gives the chosen method's first gold session its rank */
  var id = "file:" + (DATA.bestGold[select.value] || DATA.gold[0]);
  return DATA.gold.length && nodes.get(id) ? id : null;
}
function openLinked() {  /* page.html#note=ID: that note centred, zoomed, selected and explained */
  if (location.hash.indexOf("#note=") !== 0) {  /* else the side panel explains the best-ranked gold note */
    if (bestGold()) { why(bestGold()); }
    return;
  }
  var id = location.hash.slice(6), msg = document.getElementById("note-msg");
  try { id = decodeURIComponent(id); } catch (e) { /* a stray '%' (#note=50%off): the id as written */ }
  var node = "file:" + id;
  var known = DATA.nodes.some(function (n) { return n.id === node; });
  msg.hidden = known;
  if (!known) {
    var ids = DATA.nodes.filter(function (n) { return n.kind === "file"; }).map(function (n) { return n.id.slice(5); });
    msg.textContent = "No note \\u201c" + id + "\\u201d on this page (#note=" + id + ")"
      + (ids.length ? "; its notes have ids such as " + ids[0] + "." : ".");
    return;
  }
  if (!nodes.get(node)) { whole.checked = true; view(); }
  network.selectNodes([node]);
  why(node);
  network.focus(node, {scale: 1.5, animation: false});
  document.getElementById("graph").dataset.focused = id;
}
network.on("click", function (p) {
  var id = p.nodes[0];
  if (id !== undefined) { picked = true; why(id); }
});
select.addEventListener("change", function () {
  highlight(select.value);
  if (!picked && !location.hash && bestGold()) { why(bestGold()); } else if (shown) { why(shown); }
});
whole.addEventListener("change", view);
window.addEventListener("hashchange", openLinked);
view();
network.once("afterDrawing", function () {  /* once drawn, labels are measured: fit them too */
  setTimeout(function () { network.fit(); openLinked(); }, 0);
});
var settled = false;  /* the reader zoomed or dragged: a resize keeps their view */
network.on("zoom", function () { settled = true; });
network.on("dragEnd", function () { settled = true; });
network.on("resize", function () {  /* a window or frame that changes size is fitted again (vis keeps the old view) */
  if (!settled) {  /* a linked note is focused again; the side panel keeps the note the reader clicked */
    setTimeout(function () { network.fit(); if (location.hash.indexOf("#note=") === 0) { openLinked(); } }, 0);
  }
});
</script>
</body></html>
"""
