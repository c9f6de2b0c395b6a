"""Interactive, offline HTML view of one store's base graph (pyvis data, vis-network drawing).

Node kinds keep one colour and shape each (tag: blue dot, ontology: grey diamond,
topic: orange triangle, file: teal square). Gold notes are drawn as gold stars;
a drop-down picks which method's top-k notes get a red ring and their rank in
the label; concepts the question's tokens match get a black ring. Hovering a
node shows its details; for a file node its tag line and a snippet of the
conversation.

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

import html
import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import networkx as nx
import pyvis
from pyvis.network import Network

from taggraph.graph import concept_node, file_node
from taggraph.atomic import atomic_write
from taggraph.store import MemoryStore
from taggraph.text import query_tokens

VIS_DIR = Path(pyvis.__file__).parent / "templates" / "lib" / "vis-9.1.2"
KIND_STYLE = {  # kind -> (colour, vis shape, legend symbol)
    "tag": ("#4c78a8", "dot", "●"),
    "ontology": ("#9d9da1", "diamond", "◆"),
    "topic": ("#f58518", "triangle", "▲"),
    "file": ("#54a6a0", "square", "■"),
}
GOLD = ("#f2b701", "star")
HIT_BORDER = "#d62728"
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
    text = " ".join(text.split())
    return html.escape(text if len(text) <= n else text[: n - 1] + "…")


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


def _select(ug: nx.Graph, seeds: Iterable[str] | None, hops: int, max_nodes: int,
            first: set[str]) -> list[str]:
    """Nodes to draw: within `hops` of `seeds` (all nodes when None), nearest first, at most max_nodes."""
    if seeds is None:
        ranked = sorted(ug, key=lambda n: (n not in first, -ug.degree(n), n))
    else:
        seeds = [s for s in seeds if s in ug]
        dist = nx.multi_source_dijkstra_path_length(ug, seeds, cutoff=hops) if seeds else {}
        ranked = sorted(dist, key=lambda n: (dist[n], n not in first, -ug.degree(n), n))
    return ranked[:max_nodes]


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


def _title(store: MemoryStore, node: str, data: dict, ranks: dict[str, dict[str, int]], gold: set[str]) -> str:
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
        lines = [f"<b>{html.escape(node)}</b> (one 5W frame)"] + [
            f"#{html.escape(c)}:{html.escape(p)}" for c, p in sorted(frame)]
    else:
        path = data["path"]
        lines = [f"<b>{html.escape(path)}</b>",
                 f"{kind} node, carried by {store.ontology.counts.get(path, 0)} note(s)"]
    return "<br>".join(lines)


def _label(node: str, data: dict) -> str:
    kind = data["kind"]
    if kind == "file":
        return data["note_id"]
    if kind == "topic":
        return node.replace(":", " ")
    return data["path"].rsplit("/", 1)[-1]


def graph_html(store: MemoryStore, question: str | None = None,
               results_by_method: Mapping[str, Sequence] | None = None, gold_note_ids: Iterable[str] = (),
               neighbourhood_of: str | None = None, hops: int = 2, max_nodes: int = 400, top_k: int = 5,
               chronological: bool = False, title: str | None = None) -> str:
    """A self-contained HTML page drawing `store`'s base graph.

    question: shown in the header; its matched concepts get a black ring.
    results_by_method: method -> ranked note ids (or `Result`s); the page's drop-down
        shows one method at a time, ringing its first `top_k` notes in red.
    gold_note_ids: notes drawn as gold stars.
    neighbourhood_of: when given (e.g. the question), only nodes within `hops` edges
        of the concepts its tokens match and of the highlighted files (gold + each
        method's top_k) are drawn. Either way at most `max_nodes` nodes are kept,
        nearest (or, for the whole graph, highlighted then best-connected) first.
    chronological: also draw AdaptiveGraph's links between consecutive notes.
    """
    g = store.graph.to_networkx(chronological=chronological)
    ug = nx.Graph(g)  # undirected view: every link is stored in both directions
    ranks = _ranks(results_by_method)
    gold = set(gold_note_ids)
    matched = set(matched_concepts(store, question)) if question else set()
    highlighted = {file_node(n) for n in gold} | {
        file_node(n) for r in ranks.values() for n, k in r.items() if k <= top_k}
    seeds = None
    if neighbourhood_of is not None:
        seeds = set(matched_concepts(store, neighbourhood_of)) | highlighted
    keep = _select(ug, seeds, hops, max_nodes, highlighted | matched)
    sub = ug.subgraph(keep)
    pos = _layout(sub)

    net = Network(height="100%", width="100%", cdn_resources="in_line")
    for node in keep:
        data = g.nodes[node]
        kind = data["kind"]
        colour, shape, _ = KIND_STYLE[kind]
        size = {"file": 12, "topic": 12}.get(kind, 9)
        note_ranks = {m: r[data["note_id"]] for m, r in ranks.items() if data.get("note_id") in r}
        if kind == "file" and data["note_id"] in gold:
            (colour, shape), size = GOLD, 24
        if node in matched:
            border, width, size = MATCH_BORDER, 3, 13
        else:
            border, width = colour, 1
        net.add_node(node, label=_label(node, data), shape=shape, x=pos[node][0], y=pos[node][1],
                     title=_title(store, node, data, ranks, gold), kind=kind, bg=colour, ranks=note_ranks,
                     size=size, borderWidth=width, color={"background": colour, "border": border})
    for a, b, kind in sorted((*sorted(e[:2]), e[2]) for e in sub.edges(data="kind")):
        colour, dashes = EDGE_STYLE[kind]
        net.add_edge(a, b, color=colour, dashes=dashes, title=kind, width=1)
    net.options = {"physics": {"enabled": False}, "edges": {"smooth": False},
                   "interaction": {"hover": True, "tooltipDelay": 120},
                   "nodes": {"font": {"size": 14}, "scaling": {"label": {"drawThreshold": 3}}}}
    nodes, edges, _, _, _, options = net.get_network_data()

    heading = title or f"TagGraph base graph · case {store.case_id}"
    shown = f"{len(keep)} of {len(ug)} nodes"
    if seeds is not None:
        shown += f" (within {hops} hop(s) of the question)"
    legend = " ".join(f"<span style='color:{c}'>{sym}</span> {k}" for k, (c, _, sym) in KIND_STYLE.items())
    legend += (f" <span style='color:{GOLD[0]}'>★</span> gold note"
               f" <span class='ring' style='border-color:{HIT_BORDER}'></span> top-{top_k} of the chosen method"
               f" (label: rank) <span class='ring' style='border-color:{MATCH_BORDER}'></span>"
               " concept matched by the question")
    options_html = "".join(f"<option>{html.escape(m)}</option>" for m in ranks) + "<option value=''>(none)</option>"
    payload = {"nodes": nodes, "edges": edges, "options": json.loads(options), "hit": HIT_BORDER,
               "methods": list(ranks), "top_k": top_k}
    values = {"VIS_CSS": (VIS_DIR / "vis-network.css").read_text(encoding="utf-8"),
              "VIS_JS": (VIS_DIR / "vis-network.min.js").read_text(encoding="utf-8"),
              "HEADING": html.escape(heading), "QUESTION": html.escape(question or ""),
              "SHOWN": html.escape(shown), "LEGEND": legend, "OPTIONS": options_html, "DATA": script_json(payload)}
    # one pass over the template: inserted text is never searched for placeholders again
    return _PLACEHOLDER.sub(lambda m: values[m.group(1)], _TEMPLATE)


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


_PLACEHOLDER = re.compile(r"__(VIS_CSS|VIS_JS|HEADING|QUESTION|SHOWN|LEGEND|OPTIONS|DATA)__")
_TEMPLATE = """<!doctype html>
<html><head><meta charset="utf-8"><title>__HEADING__</title>
<style>__VIS_CSS__</style>
<style>
html, body { margin: 0; height: 100%; font: 13px system-ui, sans-serif; }
body { display: flex; flex-direction: column; }
header { padding: 6px 10px; border-bottom: 1px solid #ddd; }
header h1 { font-size: 15px; margin: 0 0 4px 0; }
.ring { display: inline-block; width: 9px; height: 9px; border: 3px solid; border-radius: 50%; vertical-align: middle; }
#graph { flex: 1; min-height: 300px; }
div.vis-tooltip { max-width: 460px; white-space: normal; font-size: 12px; }
</style></head>
<body>
<header>
<h1>__HEADING__</h1>
<div><b>Question:</b> <span id="question">__QUESTION__</span> · <span>__SHOWN__</span></div>
<div>Highlight <select id="method">__OPTIONS__</select> · __LEGEND__</div>
</header>
<div id="graph"></div>
<script>__VIS_JS__</script>
<script>
var DATA = __DATA__;
DATA.nodes.forEach(function (n) {
  var div = document.createElement("div");
  div.innerHTML = n.title;  /* escaped server-side: only our own markup survives */
  n.title = div;
  n.baseLabel = n.label;
});
var nodes = new vis.DataSet(DATA.nodes);
var network = new vis.Network(document.getElementById("graph"),
                              {nodes: nodes, edges: new vis.DataSet(DATA.edges)}, DATA.options);
function highlight(method) {
  nodes.update(DATA.nodes.filter(function (n) { return n.kind === "file"; }).map(function (n) {
    var r = n.ranks[method], hit = r !== undefined && r <= DATA.top_k;
    return {id: n.id, label: hit ? n.baseLabel + "  #" + r : n.baseLabel, borderWidth: hit ? 3 : 1,
            size: hit ? n.size + 6 : n.size,
            color: {background: n.bg, border: hit ? DATA.hit : n.bg}};
  }));
}
var select = document.getElementById("method");
select.addEventListener("change", function () { highlight(select.value); });
highlight(select.value);
network.fit();
</script>
</body></html>
"""
