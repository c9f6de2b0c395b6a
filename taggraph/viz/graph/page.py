"""Interactive, offline HTML view of one store's base graph (pyvis data, vis-network drawing).

Node kinds keep one colour and shape each (tag: blue dot, ontology: grey diamond,
topic: orange triangle, file: teal square). Gold notes are drawn as gold stars, with their note and
session rank under the chosen method; a drop-down picks the method whose top-k sessions get a red ring
on their best note and the session rank in its label, as the metrics count (a purple ring and
'session #4 tie order' for a session there only by tie order, `placement.tie_order_only`); concepts the
question's tokens match get a black ring. Every node is named by `taggraph.viz.names` (as on the
explain page). With a question and gold notes the page opens on `explained_subgraph` (the question's
concepts, the gold notes, the notes the missing methods rank above them, each method's own walk and
the question's possible paths), laid out left to right by `columns_layout`; a check box shows the
whole drawing. Under the chosen method its own walk to the note the header tells of is thick (the edges its
evidence names, ``detail['walk']``, each route told in the header), its walks to the other drawn notes thin in
the same colour, the question's paths it did not take dashed and lighter, and where its walks stopped
(``detail['walk_breaks']``) is marked ✕, each mark told in the header; a method that walks no graph
(BM25, dense, Fusion) draws nothing thick and the header gives its own evidence. Hovering a node shows its
details; for a file node its tag line and a snippet of the conversation; clicking a file node (or opening the page
as ``page.html#note=ID``, which also centres and zooms on it) shows, in the side panel, why the
chosen method did (not) retrieve it (when `retrievers` are given); the page opens on the note that
gives the chosen method's first gold session its rank (`placement.focus`, the explain page's default note).
Clicking a tag or topic node lists its notes and says whether the chosen method's walk stopped there. When the whole graph is trimmed
to `max_nodes`, the shortest paths from the question's concepts to the gold and top-ranked notes are
kept first.

Safety: every string from data is ``html.escape``-d before it enters a tooltip, the header or the legend.
Tooltips are turned into DOM elements from that escaped HTML (vis-network 9 would otherwise print markup as text),
and the node/edge JSON has ``<`` and ``>`` written as ``\\u003c``/``\\u003e``, so no data can close the
``<script>`` element.

The page is assembled here from its parts: `search` (what is read and drawn of the base graph),
`ranks` (the methods' rankings), `subgraph` (the subgraph that explains a miss),
`layout` (positions), `labels` (its words) and `template` (its HTML and script)."""

from __future__ import annotations

import html
import json
import shlex
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from taggraph._infra.atomic import atomic_write
from taggraph.errors import ConfigError
from taggraph.core.graph import file_node
from taggraph.methods.base import DEFAULT_DEPTH, Retriever
from taggraph.core.store import MemoryStore
from taggraph.viz.explain import links_html
from taggraph.viz.graph.labels import (WRAP_CHARS, gold_text, tooltip, walk_lines, why_by_method,
                                           wrap_label)
from taggraph.viz.graph.layout import LABEL_PX, LEGIBLE_PX, RING_GROWTH, label_tiers, spring_positions
from taggraph.evaluation.placement import first_gold_giver, focus
from taggraph.runs.retrieval import file_explanations, full_rankings
from taggraph.viz.graph.ranks import (Ranking, gold_rank, indexed,
                                          rankings_by_method, ranks_by_method, session_ranks)
from taggraph.viz.graph.search import (EXPLAINED_DRAWN, MAX_DRAWN, SEARCH_BUDGET, matched_concepts, notes_under,
                                           paths_to, select_nodes, undirected)
from taggraph.viz.graph.subgraph import explained_subgraph
from taggraph.viz.graph.template import fill_template
from taggraph.viz.names import node_names

__all__ = ["DENSE_LABELS", "EXPLAINED_DRAWN", "KIND_STYLE", "MAX_DRAWN", "WRAP_CHARS", "GraphPage", "Ranking",
           "explained_subgraph", "gold_rank", "graph_html", "graph_page",
           "save_graph_html", "wrap_label"]

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
ANCHOR_BORDER = "#2e7d32"  # the note whose date dated the question's time window (TagGraph-Fusion's anchor clause)
ANCHOR_MARK = "⏱ dated the time window"
EDGE_STYLE = {  # kind -> (colour, dashes)
    "ontology": ("#c7c7c7", False),
    "tag_topic": ("#a6c8e8", False),
    "topic_file": ("#f7c58f", False),
    "similar": ("#f58518", True),
    "chronological": ("#8fd1cc", True),
}


# Free choice: above this many drawn nodes only the telling nodes keep a label, so labels do not pile up
# (hover shows every name): concepts the question matches, gold notes, every method's top_k notes, and the
# topics and notes on the kept paths from the question to them. Other tag, ontology, topic and file nodes
# are drawn without one.
DENSE_LABELS = 60
# Free choice: a whole drawing of up to this many nodes is laid out in columns like the subgraph (labels measured, none
# overlapping: 70 nodes of demo_q12 read at 8.3 px with 57 overlapping label boxes by the spring layout); a larger
# one by the spring layout, which stays fast up to MAX_DRAWN.
COLUMNS_DRAWN = 250


@dataclass(frozen=True)
class GraphPage:
    """A drawn graph page and the ids of the notes it draws (in its subgraph or its whole drawing): those its
    ``#note=`` links can open, and the gold note it opens on (`placement.focus`; None without a question or gold):
    the note its explain page explains."""
    html: str
    notes: frozenset[str]
    focus: str | None = None


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
    ug = undirected(store, chronological, budget)
    names = node_names(store)
    ranks = ranks_by_method(results_by_method)
    rankings = rankings_by_method(results_by_method)
    if retrievers and question:
        full = full_rankings({m: retrievers[m] for m in rankings if m in retrievers}, store, question, asked_on)
        rankings.update({m: [(store.notes[i].note_id, s) for i, s in r] for m, r in full.items()})
    gold_order = [n for n in dict.fromkeys(gold_note_ids) if n in store.by_id]
    gold = set(gold_order)
    matched = set(matched_concepts(store, question)) if question else set()
    by_session = {m: session_ranks(store, r, top_k) for m, r in rankings.items()}
    highlighted = {file_node(n) for n in gold} | {  # each method's top-k sessions' best notes, top-k notes, and
        # the note just above each gold note: every note the explain page lists
        file_node(n) for r, _ in by_session.values() for n, k in r.items() if k <= top_k} | {
        file_node(n) for r in rankings.values() for n, _ in r[:top_k]} | {
        file_node(r[i - 1][0]) for r in rankings.values() for i, (n, _) in enumerate(r) if n in gold and i}
    seeds = None
    if neighbourhood_of is not None:
        seeds = set(matched_concepts(store, neighbourhood_of)) | highlighted
    # highlighted files in priority order (gold, then by best rank): their paths survive trimming
    targets = sorted(highlighted, key=lambda f: (f[len("file:"):] not in gold,
                                                 min((r.get(f[len("file:"):], top_k + 1) for r in ranks.values()),
                                                     default=0), f))
    paths = paths_to(ug, matched, targets, budget)
    keep = select_nodes(ug, seeds, hops, max_nodes, highlighted | matched, paths, budget)
    near_top = {n for r in rankings.values() for n, _ in r[:top_k + len(gold)]}
    by_index = {m: indexed(store, r) for m, r in rankings.items()}
    best = {m: first_gold_giver(r, store, gold_order) for m, r in by_index.items()}
    told = gold | near_top | set(best.values())
    nearest = told | {*[ug.nodes[n]["note_id"] for n in keep if ug.nodes[n]["kind"] == "file"][:EXPLAINED_DRAWN]}
    wanted = [n.note_id for n in store.notes if n.note_id in nearest]
    explanations = file_explanations(store, question, retrievers, wanted, asked_on) if retrievers and question else None
    explained = (explained_subgraph(store, ug, sorted(matched), gold_order, rankings, explanations, top_k, best,
                                    budget) if question and gold else None)
    anchors = time_anchors(explanations)
    dating = [file_node(n) for n in anchors if file_node(n) in ug]  # drawn in both views
    keep = list(dict.fromkeys([*keep, *dating]))
    sub = list(dict.fromkeys([*explained.nodes, *dating])) if explained else []
    places = {m: {n: gold_rank(store, r, n, top_k, depth) for n in gold_order} for m, r in rankings.items()}
    ties = {m: t for m, (_, t) in by_session.items()}
    short = {m: {n: "not ranked" if p["note"] is None else f"note {p['note']} · session {p['session'] or '–'}"
                 + ("\n(tie order)" if p["tie"] else "") for n, p in by.items()} for m, by in places.items()}
    tied = set().union(*ties.values())
    drawn = list(dict.fromkeys([*keep, *sub]))
    wrapped = {n: names[n] + (f"\n{ANCHOR_MARK}" if ug.nodes[n].get("note_id") in anchors else "")
               if ug.nodes[n]["kind"] == "file" else wrap_label(names[n]) for n in drawn}  # ids whole
    widest = {n: ("✕ " if explained and n in explained.breaks else "") + wrapped[n]  # with a rank and gold's ranks
              + ("\nsession #00" if ug.nodes[n]["kind"] == "file" else "")
              + (" tie order" if ug.nodes[n].get("note_id") in tied else "")
              + (max(("\n★ " + s[ug.nodes[n]["note_id"]] for s in short.values()), key=len, default="")
                 if ug.nodes[n].get("note_id") in gold else "") for n in drawn}
    sizes = {n: _size(ug.nodes[n], n in matched, gold) for n in drawn}
    kinds = {n: ug.nodes[n]["kind"] for n in drawn}
    on_path = set(paths)

    def telling(n: str) -> int:
        """How much a node's label tells, 0 most: gold and dating notes, then the ranked notes and the question's
        concepts, then where walks stop, the paths' nodes and the notes that give a rank, then the rest."""
        note = ug.nodes[n].get("note_id")
        return (0 if note in gold or note in anchors else 1 if n in highlighted or n in matched
                else 2 if (explained and n in explained.breaks) or n in on_path or note in best.values() else 3)

    order = sorted(drawn, key=lambda n: (telling(n), -ug.degree(n), names[n]))

    def tiers(view: list[str]) -> list[tuple[int, dict]]:
        """`label_tiers` of a view: fewer labels each, the most telling kept."""
        ordered = [n for n in order if n in set(view)]
        return label_tiers(ug.subgraph(view), kinds, matched, widest, sizes, ordered,
                           sum(telling(n) == 0 for n in ordered))

    sub_tiers = tiers(sub)
    columns = len(keep) <= COLUMNS_DRAWN  # the whole drawing in columns too, labels measured, none overlapping
    whole_tiers = tiers(keep) if columns else [(len(keep), spring_positions(ug.subgraph(keep)))]
    sub_pos, pos = (sub_tiers[0][1] if sub_tiers else {}), whole_tiers[0][1]
    rank_in = {view: {n: i for i, n in enumerate(n for n in order if n in set(members))}
               for view, members in (("sub", sub), ("whole", keep))}

    nodes: list[dict] = []
    dense = len(keep) > DENSE_LABELS and not columns
    for node in dict.fromkeys([*keep, *sub]):
        data = ug.nodes[node]
        kind = data["kind"]
        colour, shape, _ = KIND_STYLE[kind]
        note_ranks = {m: r[data["note_id"]] for m, r in ranks.items() if data.get("note_id") in r}
        if kind == "file" and data["note_id"] in gold:
            colour, shape = GOLD
        border, width = (MATCH_BORDER, 3) if node in matched else (ANCHOR_BORDER, 3) if data.get(
            "note_id") in anchors else (colour, 1)
        fixed = {"background": colour, "border": border}  # the same on hover and selection: gold stays gold
        told = node in matched or (kind in ("topic", "file") and (node in highlighted or node in on_path))
        quiet = dense and not told  # its name is in the tooltip; " ": pyvis turns "" into the id
        label = " " if quiet else wrapped[node] if columns else names[node]
        x, y = pos.get(node, (None, None))
        sx, sy = sub_pos.get(node, (None, None))
        nodes.append(dict(color={**fixed, "hover": fixed, "highlight": fixed}, full=names[node],
                          wrapped=wrapped.get(node, names[node]), x=x, y=y, sx=sx,
                     sy=sy, whole=node in pos, sub=node in sub_pos, labelRank=rank_in["sub"].get(node, -1),
                     wholeRank=rank_in["whole"].get(node, -1),
                     at={view: [[round(p[node][0], 1), round(p[node][1], 1)] if node in p else None
                                for _, p in view_tiers] for view, view_tiers in (("sub", sub_tiers),
                                                                                ("whole", whole_tiers))},
                     title=tooltip(store, node, data, ranks, gold, names[node]) + (
                         f"<br><b style='color:{ANCHOR_BORDER}'>{html.escape(anchors[data['note_id']])}</b>"
                         if data.get("note_id") in anchors else ""), kind=kind, bg=colour,
                     ranks=note_ranks, ties={m: True for m, t in ties.items() if data.get("note_id") in t},
                     sessionRanks={m: r[data["note_id"]] for m, (r, _) in by_session.items()
                                   if data.get("note_id") in r},
                     breaks=explained.breaks.get(node, {}) if explained else {}, border0=border,
                     notes=[] if kind == "file" else notes_under(ug, node),
                     size=sizes[node], borderWidth=width,
                     goldRank={m: s[data["note_id"]] for m, s in short.items()} if data.get("note_id") in gold else {},
                     why=why_by_method(store, explanations, rankings, data.get("note_id"), top_k, depth)
                     if kind == "file" else {},
                     id=node, label=label, shape=shape))  # pyvis's node keys, in its order
    whole_edges = {tuple(sorted(e)) for e in ug.subgraph(keep).edges}
    sub_edges = {tuple(sorted(e)) for e in ug.subgraph(sub).edges} | set(explained.walked if explained else ())
    edges: list[dict] = []
    for a, b in sorted(whole_edges | sub_edges):
        kind = ug.edges[a, b]["kind"] if ug.has_edge(a, b) else "chronological"  # AdaptiveGraph walks those too
        colour, dashes = EDGE_STYLE[kind]
        edges.append(dict(id=f"{a}|{b}", color=colour, base=colour, dashes=dashes, title=kind, width=1,
                          whole=(a, b) in whole_edges, sub=(a, b) in sub_edges,
                          walk=explained.paths.get((a, b), []) if explained else [],
                          walked=explained.walked.get((a, b), []) if explained else [],
                          walkOnly=not ug.has_edge(a, b),  # drawn only under the method that walked it
                          possible=bool(explained) and (a, b) in explained.possible, **{"from": a, "to": b}))
    options = {"physics": {"enabled": False}, "edges": {"smooth": False},
               "interaction": {"hover": True, "tooltipDelay": 120},
               "nodes": {"font": {"size": LABEL_PX, "strokeWidth": 4, "strokeColor": "#ffffff",
                                  "background": "rgba(255, 255, 255, 0.8)"},  # an edge passes under a label
                         # a label that would be drawn under LEGIBLE_PX is not drawn (vis: under the threshold
                         # minus 1 px, faded in over that last pixel): its name is in the tooltip
                         "scaling": {"label": {"drawThreshold": LEGIBLE_PX}}}}

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
    if anchors:
        legend.append(ring(ANCHOR_BORDER, f"{ANCHOR_MARK}: TagGraph-Fusion dated a clause of the question "
                                          "('before the marathon') by this note, the one that matches it best"))
    legend.append(f"Labels: as many as fit at {LEGIBLE_PX} px or more (gold, dating, ranked notes and the question's "
                  "concepts first); hover a node for its name")
    edges_legend = [" ".join("<span class='kind'>{}</span>".format(line(2, "dashed" if d else "solid", c,
                                                                       k.replace("_", "–")))
                             for k, (c, d) in EDGE_STYLE.items() if k != "chronological" or chronological
                             or any(not ug.has_edge(a, b) for a, b in whole_edges | sub_edges)),
                    line(4, "solid", PATH_COLOUR, "the chosen method's own walk to the note the header tells of"),
                    line(1, "solid", PATH_COLOUR, "its walks to the other drawn notes"),
                    line(2, "dashed", POSSIBLE_COLOUR, "a path from the question the chosen method did not take")]
    chosen, focus_note = focus(by_index, store, gold_order, top_k) if explained else (None, None)
    options_html = "".join(f"<option{' selected' if m == chosen else ''}>{html.escape(m)}</option>" for m in ranks)
    options_html += "<option value=''>(none)</option>"
    walk_texts = {m: walk_lines(store, names, m, (explanations or {}).get(m, {}).get(best[m]), best[m], gold_order,
                               rankings[m], top_k, explained, depth) for m in rankings} if explained else {}
    payload = {"nodes": nodes, "edges": edges, "options": options, "hit": HIT_BORDER, "tie": TIE_BORDER,
               "path": PATH_COLOUR, "possibleColour": POSSIBLE_COLOUR, "brk": BREAK_BORDER, "bestGold": best,
               "ringGrowth": RING_GROWTH, "labelPx": LABEL_PX, "legiblePx": LEGIBLE_PX,
               "tiers": {"sub": [count for count, _ in sub_tiers], "whole": [count for count, _ in whole_tiers]},
               "walkText": walk_texts, "unexplained": (  # the page adds the clicked note's id
                   f"not explained on this page, which explains the gold and top-ranked notes and the "
                   f"{EXPLAINED_DRAWN} drawn notes nearest the question; this explains it: taggraph explain "
                   f"--question {shlex.quote(question_id) if question_id else 'QUESTION_ID'} --note "),
               "methods": list(ranks), "top_k": top_k, "sub": bool(sub), "shownWhole": shown, "shownSub": shown_sub, "gold": gold_order,
               "goldText": {m: gold_text(list(by.values())) for m, by in places.items()}}
    page = fill_template(heading, question or "", shown=html.escape(shown_sub if sub and not whole_graph else shown),
                         legend=_items(legend), edges=_items(edges_legend), options=options_html,
                         links=links_html(links), whole="" if sub else " hidden",
                         checked=" checked" if whole_graph or not sub else "", data=script_json(payload))
    return GraphPage(page,
                     frozenset(n["id"].removeprefix("file:") for n in nodes if n["kind"] == "file"), focus_note)


def time_anchors(explanations: Mapping[str, Mapping[str, Explanation]] | None) -> dict[str, str]:
    """note id -> what it dated, of the notes whose date gave a question's time window its edge (the explanations'
    ``details['time_anchors']``, TagGraph-Fusion's anchor clauses: "before the Chicago Marathon")."""
    out = {}
    for by_note in (explanations or {}).values():
        for e in by_note.values():
            for a in e.details.get("time_anchors") or []:
                out[a["note_id"]] = (f"⏱ dated the time window: '{a['direction']} {a['clause']}' is read as "
                                     f"{a['direction']} {a['date']}, this note's date")
    return out


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
