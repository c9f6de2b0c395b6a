
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
    if (n.kind === "file") {  /* an unlabelled note keeps its ring; its ranks are in its tooltip */
      var r = n.sessionRanks[method], top = r !== undefined && r <= DATA.top_k, tie = top && !!n.ties[method];
      var g = n.goldRank[method];
      if (n.baseLabel) { label += (top ? "\nsession #" + r + (tie ? " tie order" : "") : "") + (g ? "\n★ " + g : ""); }
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
function arrange(all, t) {  /* the view's layout t: its positions, labels on its DATA.tiers[t] most telling nodes */
  var key = all ? "whole" : "sub", count = DATA.tiers[key][t];
  nodes.update(nodes.get().map(function (n) {
    var shown = (all ? n.wholeRank : n.labelRank) < count;
    return {id: n.id, x: n.at[key][t][0], y: n.at[key][t][1], baseLabel: shown ? (all ? n.wholeLabel : n.wrapped) : ""};
  }));
  highlight(select.value);
}
function fitLegible() {  /* fitted in the frame: the first layout whose labels it draws at DATA.legiblePx or more */
  var all = whole.checked || !DATA.sub, tiers = DATA.tiers[all ? "whole" : "sub"];
  for (var t = 0; t < tiers.length; t++) {
    arrange(all, t);
    network.fit();
    if (network.getScale() * DATA.labelPx >= DATA.legiblePx) { return; }
  }
}
function view() {  /* the subgraph that explains the miss, or the whole drawing */
  var all = whole.checked || !DATA.sub;
  nodes.clear(); edges.clear();
  nodes.add(DATA.nodes.filter(function (n) { return all ? n.whole : n.sub; }).map(function (n) {
    var label = all ? n.label : n.wrapped;
    return Object.assign({}, n, {x: all ? n.x : n.sx, y: all ? n.y : n.sy, label: label, baseLabel: label,
                                 wholeLabel: n.label, baseSize: n.size, baseWidth: n.borderWidth});
  }));
  edges.add(DATA.edges.filter(function (e) { return all ? e.whole : e.sub; }).map(function (e) {
    return Object.assign({}, e, {kind: e.title, baseDashes: e.dashes});
  }));
  document.getElementById("shown").textContent = all ? DATA.shownWhole : DATA.shownSub;
  highlight(select.value);
  fitLegible();
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
    msg.textContent = "No note \u201c" + id + "\u201d on this page (#note=" + id + ")"
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
  setTimeout(function () { fitLegible(); openLinked(); }, 0);
});
var settled = false;  /* the reader zoomed or dragged: a resize keeps their view */
network.on("zoom", function () { settled = true; });
network.on("dragEnd", function () { settled = true; });
network.on("resize", function () {  /* a window or frame that changes size is fitted again (vis keeps the old view) */
  if (!settled) {  /* a linked note is focused again; the side panel keeps the note the reader clicked */
    setTimeout(function () { fitLegible(); if (location.hash.indexOf("#note=") === 0) { openLinked(); } }, 0);
  }
});
