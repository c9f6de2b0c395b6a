"""Interactive, offline HTML view of one store's base graph (pyvis data, vis-network drawing).

Node kinds keep one colour and shape each (tag: blue dot, ontology: grey diamond,
topic: orange triangle, file: teal square). Gold notes are drawn as gold stars;
a drop-down picks which method's top-k notes get a red ring and their rank in
the label; concepts the question's tokens match get a black ring. Topic nodes
are named by their most telling tags (`topic_name`: those fewest notes carry, never one
on more than half the notes). Hovering a node shows its details; for a file node its
tag line and a snippet of the conversation; clicking a file node (or opening the page as ``page.html#note=ID``)
shows, in the side panel, why the chosen method did (not) retrieve it (when
`retrievers` are given). When the graph
is trimmed to `max_nodes`, the shortest paths from the question's concepts to
the gold and top-ranked notes are kept first.

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
from taggraph.retrieval import DEFAULT_DEPTH, Explanation, Retriever
from taggraph.store import MemoryStore
from taggraph.text import query_tokens
from taggraph.viz.explain import evidence_text, links_html, verdict

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


def _paths_to(ug: nx.Graph, sources: Iterable[str], targets: Sequence[str]) -> list[str]:
    """Nodes on a shortest path from the nearest of `sources` to each target, in target order
    (a target no source reaches is kept alone)."""
    sources = [s for s in sources if s in ug]
    paths = nx.multi_source_dijkstra_path(ug, sources) if sources else {}
    return list(dict.fromkeys(n for t in targets if t in ug for n in paths.get(t, [t])))


def _select(ug: nx.Graph, seeds: Iterable[str] | None, hops: int, max_nodes: int,
            first: set[str], keep: Sequence[str] = ()) -> list[str]:
    """Nodes to draw, at most max_nodes: `keep` first (in order), then those within `hops` of `seeds`
    (all nodes when None), nearest first."""
    if seeds is None:
        ranked = sorted(ug, key=lambda n: (n not in first, -ug.degree(n), n))
    else:
        seeds = [s for s in seeds if s in ug]
        dist = nx.multi_source_dijkstra_path_length(ug, seeds, cutoff=hops) if seeds else {}
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
        lines = [f"<b>{html.escape(topic_name(store, node))}</b> ({html.escape(node)}, one 5W frame)"] + [
            f"#{html.escape(c)}:{html.escape(p)}" for c, p in sorted(frame)]
    else:
        path = data["path"]
        lines = [f"<b>{html.escape(path)}</b>",
                 f"{kind} node, carried by {store.ontology.counts.get(path, 0)} note(s)"]
    return "<br>".join(lines)


def topic_name(store: MemoryStore, topic: str, n: int = 2) -> str:
    """A topic named by its `n` most telling tags, last segments joined by ' · '.

    Tags more than half the store's notes carry (``who:user`` on most notes) tell nothing and are left
    out unless nothing else is left. The rest go fewest notes first; ties: a non-``when`` tag before a
    temporal one, then the longer last segment ('registration_fee' before 'october'), then the path.
    """
    frame = store.graph.frame_of_topic[topic]
    count = store.ontology.counts
    temporal = {p for c, p in frame if c == "when"}
    paths = sorted({p for _, p in frame}, key=lambda p: (count.get(p, 0), p in temporal,
                                                         -len(p.rsplit("/", 1)[-1]), p))
    telling = [p for p in paths if count.get(p, 0) <= len(store) / 2] or paths
    return " · ".join(p.rsplit("/", 1)[-1] for p in telling[:n]) or topic.replace(":", " ")


def _label(store: MemoryStore, node: str, data: dict) -> str:
    kind = data["kind"]
    if kind == "file":
        return data["note_id"]
    if kind == "topic":
        return topic_name(store, node)
    return data["path"].rsplit("/", 1)[-1]


def _why(explanations: Mapping[str, Mapping[str, Explanation]] | None, note_id: str, k: int, depth: int,
         n_notes: int) -> dict:
    """method -> {verdict, cls, text} of one note for the side panel (plain text, shown as text), judged
    like the explain page (`explain.verdict`): by the cut-off `k` and the run's retrieval `depth`, a
    score-0 note in the top k placed by tie order (class ``tie``), not as a hit."""
    out = {}
    for method, by_note in (explanations or {}).items():
        e = by_note.get(note_id)
        if e is not None:
            words, cls = verdict(e, k, depth, n_notes)
            fallback = e.evidence.fallback
            out[method] = {"verdict": words, "cls": cls,
                           "text": evidence_text(e) + (f" (fallback: {fallback})" if fallback else "")}
    return out


def file_explanations(store: MemoryStore, question: str, retrievers: Mapping[str, Retriever],
                      note_ids: Iterable[str] | None = None, asked_on: str | None = None
                      ) -> dict[str, dict[str, Explanation]]:
    """method -> note id -> `Explanation` of every note (or of `note_ids`) for `question` asked on
    `asked_on`: one ranking with explanations per method, `explain` for the notes it did not reach."""
    wanted = list(note_ids) if note_ids is not None else [n.note_id for n in store.notes]
    out = {}
    for method, r in retrievers.items():
        ranked = {x.note_id: x.explanation for x in r.query(question, max(len(store), 1), asked_on=asked_on,
                                                            explain=True)}
        out[method] = {n: ranked[n] if n in ranked else r.explain(question, n, asked_on=asked_on) for n in wanted}
    return out


# Free choice: above this many drawn nodes only the telling nodes keep a label, so labels do not pile up
# (hover shows every name): concepts the question matches, gold notes, every method's top_k notes, and the
# topics and notes on the kept paths from the question to them. Other tag, ontology, topic and file nodes
# are drawn without one.
DENSE_LABELS = 60


def graph_html(store: MemoryStore, question: str | None = None,
               results_by_method: Mapping[str, Sequence] | None = None, gold_note_ids: Iterable[str] = (),
               neighbourhood_of: str | None = None, hops: int = 2, max_nodes: int = 400, top_k: int = 5,
               chronological: bool = False, title: str | None = None,
               retrievers: Mapping[str, Retriever] | None = None, depth: int = DEFAULT_DEPTH,
               asked_on: str | None = None, links: Mapping[str, str] | None = None) -> str:
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
    retrievers: method -> retriever; when given with `question`, each drawn file node is explained
        (`file_explanations`) and clicking it shows the chosen method's verdict (by `top_k`) and
        evidence in the side panel; `depth` is the run's retrieval depth the verdict judges by.
    asked_on: the date the question is asked (the case's), passed to every method.
    links: {label: href} of the question's other pages (its explain page, the run's report).
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
    # highlighted files in priority order (gold, then by best rank): their paths survive trimming
    targets = sorted(highlighted, key=lambda f: (f[len("file:"):] not in gold,
                                                 min((r.get(f[len("file:"):], top_k + 1) for r in ranks.values()),
                                                     default=0), f))
    paths = _paths_to(ug, matched, targets)
    keep = _select(ug, seeds, hops, max_nodes, highlighted | matched, paths)
    sub = ug.subgraph(keep)
    drawn = [g.nodes[n]["note_id"] for n in keep if g.nodes[n]["kind"] == "file"]
    explanations = file_explanations(store, question, retrievers, drawn, asked_on) if retrievers and question else None
    pos = _layout(sub)

    net = Network(height="100%", width="100%", cdn_resources="in_line")
    dense, on_path = len(keep) > DENSE_LABELS, set(paths)
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
        fixed = {"background": colour, "border": border}  # the same on hover and selection: gold stays gold
        told = node in matched or (kind in ("topic", "file") and (node in highlighted or node in on_path))
        quiet = dense and not told  # its name is in the tooltip; " ": pyvis turns "" into the id
        net.add_node(node, label=" " if quiet else _label(store, node, data), shape=shape, x=pos[node][0],
                     y=pos[node][1],
                     title=_title(store, node, data, ranks, gold), kind=kind, bg=colour, ranks=note_ranks,
                     size=size, borderWidth=width, color={**fixed, "hover": fixed, "highlight": fixed},
                     why=_why(explanations, data.get("note_id"), top_k, depth, len(store)) if kind == "file" else {})
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
    edges_legend = " ".join(f"<span class='edge' style='border-top:2px {'dashed' if d else 'solid'} {c}'></span>"
                            f" {k.replace('_', '–')}" for k, (c, d) in EDGE_STYLE.items()
                            if k != "chronological" or chronological)
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
              "SHOWN": html.escape(shown), "LEGEND": legend, "EDGES": edges_legend, "OPTIONS": options_html,
              "LINKS": links_html(links),
              "DATA": script_json(payload)}
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


_PLACEHOLDER = re.compile(r"__(VIS_CSS|VIS_JS|HEADING|QUESTION|SHOWN|LEGEND|EDGES|OPTIONS|DATA|LINKS)__")
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
main { flex: 1; display: flex; min-height: 300px; }
#graph { flex: 1; }
#why { width: 320px; overflow-y: auto; border-left: 1px solid #ddd; padding: 6px 10px; font-size: 12px; }
#why .hit { color: #1a7f37; } #why .near { color: #b26a00; } #why .miss { color: #c0392b; } #why .tie { color: #6f42c1; }
div.vis-tooltip { max-width: 460px; white-space: normal; font-size: 12px; }
</style></head>
<body>
<header>
<h1>__HEADING__</h1>
<div><b>Question:</b> <span id="question">__QUESTION__</span> · <span>__SHOWN__</span></div>
<div>Highlight <select id="method">__OPTIONS__</select> · __LEGEND__</div>
<div>Edges: __EDGES__</div>
__LINKS__
</header>
<main><div id="graph"></div>
<aside id="why"><b id="why-title">Click a note</b><p id="why-verdict"></p><p id="why-text"></p></aside></main>
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
var shown = null;
function why(id) {  /* textContent only: the explanation is data, never markup */
  shown = id;
  var n = nodes.get(id), e = n && n.why ? n.why[select.value] : null;
  document.getElementById("why-title").textContent = n ? n.id.slice(5) + " · " + (select.value || "no method") : "Click a note";
  var v = document.getElementById("why-verdict");
  v.textContent = e ? e.verdict : (n && n.kind === "file" ? "no explanation for this method" : "");
  v.className = e ? e.cls : "";
  document.getElementById("why-text").textContent = e ? e.text : "";
}
network.on("click", function (p) {
  var id = p.nodes[0];
  if (id !== undefined && nodes.get(id).kind === "file") { why(id); }
});
select.addEventListener("change", function () { highlight(select.value); if (shown) { why(shown); } });
highlight(select.value);
if (location.hash.indexOf("#note=") === 0) {  /* page.html#note=ID opens that note's explanation */
  var linked = "file:" + decodeURIComponent(location.hash.slice(6));
  if (nodes.get(linked)) { network.selectNodes([linked]); why(linked); }
}
network.fit();
</script>
</body></html>
"""
