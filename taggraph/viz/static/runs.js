
var RUNS = JSON.parse(document.getElementById("runs-data").textContent);
document.getElementById("filter").addEventListener("input", function (e) {
  var text = e.target.value.toLowerCase();
  document.querySelectorAll("table.runs tbody tr").forEach(function (row) {
    row.style.display = row.textContent.toLowerCase().indexOf(text) >= 0 ? "" : "none"; });
});
var SYMBOLS = ["circle", "diamond", "square", "triangle-up", "x", "star"];
var COLOURS = ["#4c78a8", "#f58518", "#54a24b", "#e45756", "#72b7b2", "#b279a2", "#eeca3b", "#9d755d", "#bab0ac"];
function ticked() {
  return Array.from(document.querySelectorAll("input.pick:checked")).map(function (b) { return +b.value; })
    .sort(function (a, b) { return a - b; });
}
function showPicked(picked) {
  var out = document.getElementById("picked");
  out.textContent = "";
  if (picked.length !== 2) {
    out.textContent = picked.length ? picked.length + " run(s) ticked; tick two for their compare page."
                                    : "No run ticked.";
    return;
  }
  var a = RUNS.runs[picked[0]], b = RUNS.runs[picked[1]], page = RUNS.compare[picked[0] + "-" + picked[1]];
  var differ = document.createElement("div");  /* as the compare page's line: b's settings otherwise than a's */
  differ.textContent = "What differs: " + difference(a, b);
  out.appendChild(differ);
  if (page) {
    var link = document.createElement("a");
    link.href = page; link.textContent = "compare page: " + a.name + " → " + b.name;
    out.appendChild(link);
  } else {
    out.appendChild(document.createTextNode("No compare page for these two (other data, or no method in common): "));
    var code = document.createElement("code");
    code.textContent = "taggraph compare '" + a.path + "' '" + b.path + "' --other-data";
    out.appendChild(code);
  }
}
function difference(a, b) {
  var items = Object.keys(b.params).filter(function (k) { return k in a.params && a.params[k] !== b.params[k]; })
    .map(function (k) { return k + "=" + b.params[k]; });
  return items.length ? b.name + ": " + items.join(", ") : "the runs record the same settings";
}
function overlay(picked) {
  var traces = [], colour = {};  // a method keeps its colour across runs, a run its marker
  picked.forEach(function (i, n) {
    var run = RUNS.runs[i], methods = {};
    run.per_type.forEach(function (r) { (methods[r.method] = methods[r.method] || []).push(r); });
    Object.keys(methods).forEach(function (m) {
      traces.push({type: "scatter", mode: "markers", name: run.name + ": " + m, offsetgroup: run.name + m,
                   x: methods[m].map(function (r) { return r.question_type; }),
                   y: methods[m].map(function (r) { return r.MRR; }),
                   cliponaxis: false, marker: {symbol: SYMBOLS[n % SYMBOLS.length], size: 9,
                            color: colour[m] = colour[m] || COLOURS[Object.keys(colour).length % COLOURS.length]}});
    });
  });
  var plot = document.getElementById("overlay");
  Plotly.react(plot, picked.length >= 2 ? traces : [], plot.layout);
}
function refresh() { var picked = ticked(); showPicked(picked); overlay(picked); }
document.querySelectorAll("input.pick").forEach(function (box) { box.addEventListener("change", refresh); });
/* after Back the browser restores the ticks, not what they showed: rebuild from the boxes */
window.addEventListener("pageshow", refresh);
refresh();
