"""The graph page's HTML, style and script, with vis-network's own inlined: the page is self-contained and our own
template, not pyvis's (which links Bootstrap from a CDN even with ``cdn_resources="in_line"``)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

import pyvis

VIS_DIR = Path(pyvis.__file__).parent / "templates" / "lib" / "vis-9.1.2"
PLACEHOLDER = re.compile(r"__(VIS_CSS|VIS_JS|HEADING|QUESTION|SHOWN|LEGEND|EDGES|OPTIONS|DATA|LINKS|WHOLE|CHECKED)__")
TEMPLATE = """<!doctype html>
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
/* as tall under every method: choosing one never shrinks the drawing; a longer walk scrolls inside it */
#told { line-height: 1.3em; height: 6.5em; overflow-y: auto; }
#told .line + .line, #walk .line { margin-top: 1px; }
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
<div><b>Question:</b> <span id="question">__QUESTION__</span> · Highlight <select id="method">__OPTIONS__</select>
<label__WHOLE__>· <input type="checkbox" id="whole"__CHECKED__> whole graph</label></div>
<div id="told"__WHOLE__><div id="gold-rank" class="line"></div><div id="walk"></div></div>
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
    var on = e.walk.indexOf(method) >= 0, other = !on && e.walked.indexOf(method) >= 0;
    var maybe = !on && !other && e.possible && !!method;
    return {id: e.id, hidden: e.walkOnly && !on && !other, width: on ? 4 : maybe ? 2 : 1,
            color: on || other ? DATA.path : maybe ? DATA.possibleColour : e.base,
            dashes: on || other ? false : maybe ? [6, 4] : e.baseDashes,
            title: on ? method + "'s own walk" : other ? method + "'s walk to another drawn note"
              : maybe ? "a path from the question " + method + " did not take" : e.kind};
  }));
  var gold = DATA.goldText[method];
  document.getElementById("gold-rank").textContent = gold ? "Gold under " + method + ": " + gold : "";
  var walk = document.getElementById("walk");
  walk.replaceChildren.apply(walk, (DATA.walkText[method] || []).map(function (text) {
    var line = document.createElement("div");
    line.className = "line";
    line.textContent = text;
    return line;
  }));
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


def fill_template(values: Mapping[str, str]) -> str:
    """The page with each placeholder replaced by `values` and vis-network's CSS and JS, in one pass over the
    template: inserted text is never searched for placeholders again."""
    values = {**values, "VIS_CSS": (VIS_DIR / "vis-network.css").read_text(encoding="utf-8"),
              "VIS_JS": (VIS_DIR / "vis-network.min.js").read_text(encoding="utf-8")}
    return PLACEHOLDER.sub(lambda m: values[m.group(1)], TEMPLATE)
