"""A method's explanation of one note in words and HTML: the one-line summary (`summarize`), its details drawn
(paths as chains of node names, score maps as tables: `value_html`), the notes that outrank it (`outranked_html`)
and its signals beside theirs (`contrast_html`). All text from data is ``html.escape``-d."""

from __future__ import annotations

import html
import json
from collections.abc import Collection, Mapping, Sequence
from typing import Any
from urllib.parse import quote

from taggraph.core.notes import Note
from taggraph.core.store import MemoryStore
from taggraph.core.text import snippet
from taggraph.methods.base import Explanation, same_score
from taggraph.methods.signals import Contrast, lead_words, plain_number
from taggraph.viz.names import node_name

KIND_COLOUR = {"concept": "#4c78a8", "topic": "#f58518", "file": "#2a8f87"}
SIGNALS_SHOWN = 5  # free choice: the largest signals named in a one-line summary


def node_text(node: str, store: MemoryStore | None = None) -> str:
    """A base-graph node id for people: its name in `store` as the graph page shows it
    (`names.node_names`: 'where:city/berkeley', 'cedar_street · home_office', 's11#1'); without a store
    'concept:a/b' -> 'a/b', 'topic:3' -> 'topic 3', 'file:x' -> 'note x'."""
    if store is not None:
        return node_name(store, node)
    kind, _, rest = node.partition(":")
    return {"concept": rest, "topic": f"topic {rest}", "file": f"note {rest}"}.get(kind, node)


def _concept(path: str, store: MemoryStore) -> str:
    """A concept path by its name in `store` (`node_text`)."""
    return node_text(f"concept:{path}", store)


def number_text(x: Any) -> str:
    """A score or weight to 4 significant digits as a plain decimal (never 1.463e-05), as every line and cell of the
    explain page shows it."""
    return plain_number(x)


def summarize(exp: Explanation, store: MemoryStore | None = None) -> str:
    """One line of the most telling evidence in an explanation's details (nodes named by `node_text`)."""
    d = exp.details
    parts = []
    if d.get("paths"):
        p = d["paths"][0]
        parts.append(f"'{p['token']}' -> " + " -> ".join(node_text(n, store) for n in p["path"]))
    if d.get("main_paths"):
        p = d["main_paths"][0]
        parts.append(f"seed {_concept(p['seed'], store)} ({float(p['share']):.0%} of the mass) -> "
                     + " -> ".join(node_text(n, store) for n in p["path"][1:]))
    if "file_seed_mass" in d:
        parts.append(f"file seed mass {number_text(d['file_seed_mass'])}")
    if d.get("matched_terms"):
        parts.append("terms " + ", ".join(f"{t} {number_text(v)}" for t, v in list(d["matched_terms"].items())[:4]))
    if "contributions" in d:
        parts.append(" + ".join(f"{k} {number_text(v)}" for k, v in d["contributions"].items()))
    if exp.evidence.signals:  # a method that scores by signals: the largest parts of its score
        shown = [x for x in sorted(exp.evidence.signals, key=lambda x: -abs(x.contribution)) if round(x.contribution, 3)]
        parts.append(" + ".join(f"{x.name} {number_text(x.contribution)}" for x in shown[:SIGNALS_SHOWN])
                     + (" + …" if len(shown) > SIGNALS_SHOWN else "") + f" = {number_text(exp.score)}")
    if "tfidf_overlap" in d:
        parts.append(f"tf-idf overlap {number_text(d['tfidf_overlap'])}")
    if d.get("dropped_as_stopwords"):
        parts.append(f"dropped as stopwords: {', '.join(d['dropped_as_stopwords'])}")
    if not parts and exp.evidence.summary:  # a method the views know nothing of speaks for itself
        parts.append(exp.evidence.summary)
    if exp.contrast is not None and exp.contrast.rivals:
        parts.append("; ".join(exp.contrast.lines()[:1]))
    elif exp.outranked_by:
        o = exp.outranked_by[-1]
        margin = "tie: above it by note order" if same_score(o["score"], exp.score) else f"+{number_text(o['margin'])}"
        parts.append(f"just above it: note {o['note_id']} (rank {o['rank']}) scores {number_text(o['score'])} ({margin})")
    return "; ".join(parts)


def _chain(nodes: Sequence[str], store: MemoryStore) -> str:
    spans = [f"<span class='node' style='border-color:{KIND_COLOUR.get(n.partition(':')[0], '#999')}'>"
             f"{html.escape(node_text(n, store))}</span>" for n in nodes]
    return " → ".join(spans)


def walk_routes(edges: Sequence[Sequence[str]]) -> list[list[str]]:
    """A walk's (from, to) edges as routes of nodes, an edge that starts where the last route ended extending it."""
    routes: list[list[str]] = []
    for a, b in edges:
        if routes and routes[-1][-1] == a:
            routes[-1].append(b)
        else:
            routes.append([a, b])
    return routes


def value_html(key: str, value: Any, store: MemoryStore) -> str:
    """Render one details entry; path lists as chains of `store`'s node names, score maps as tables, the rest
    as JSON (as is a built-in key's value in another shape: a method of one's own may use the same key)."""
    try:
        return _drawn_value_html(key, value, store)
    except (KeyError, TypeError, ValueError, AttributeError, IndexError):
        return f"<pre>{html.escape(json.dumps(value, indent=1, ensure_ascii=False))}</pre>"


def _drawn_value_html(key: str, value: Any, store: MemoryStore) -> str:
    if key == "paths":
        items = [f"<li>token <b>{html.escape(p['token'])}</b> matches <b>{html.escape(_concept(p['matched'], store))}</b>"
                 + (f", reaching <b>{html.escape(_concept(p['concept'], store))}</b> at {p['hops']} ontology hop(s)"
                    if p["hops"] else "")
                 + f" ({html.escape(p['expansion'])}): {_chain(p['path'], store)}</li>" for p in value]
        return f"<ul>{''.join(items)}</ul>" if items else "<i>none</i>"
    if key == "main_paths":
        items = [f"<li>seed <b>{html.escape(_concept(p['seed'], store))}</b> (teleport mass {number_text(p['seed_mass'])}, "
                 f"brought {float(p['share']):.1%} of the note's mass; its shortest path): {_chain(p['path'], store)}</li>"
                 for p in value]
        return f"<ul>{''.join(items)}</ul>" if items else "<i>no seed tag connects to the note</i>"
    if key == "walk":  # the method's own walk: its (from, to) edges, read as routes
        routes = walk_routes(value)
        return "<ul>" + "".join(f"<li>{_chain(r, store)}</li>" for r in routes) + "</ul>" if routes else \
            "<i>no edge walked to this note</i>"
    if key == "walk_breaks":
        items = [f"<li>✕ {_chain([b['node']], store)}: {html.escape(b['why'])}</li>" for b in value]
        return f"<ul>{''.join(items)}</ul>" if items else "<i>none</i>"
    if isinstance(value, Mapping) and value and all(isinstance(v, (int, float, str)) for v in value.values()):
        items = value.items()
        if all(isinstance(v, (int, float)) for v in value.values()):  # a score map: largest first
            items = sorted(items, key=lambda kv: -float(kv[1]))
        rows = "".join(f"<tr><td>{html.escape(str(k))}</td><td class='v'>"
                       f"{html.escape(v) if isinstance(v, str) else number_text(v)}</td></tr>" for k, v in items)
        return f"<table>{rows}</table>"
    if isinstance(value, (Mapping, list)) and not value:
        return "<i>none</i>"
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return html.escape(", ".join(value)) or "<i>none</i>"
    if isinstance(value, str):
        return f"<code>{html.escape(value)}</code>"
    if isinstance(value, (int, float)) and not isinstance(value, bool):  # numpy numbers arrive as Python's
        return number_text(value)
    return f"<pre>{html.escape(json.dumps(value, indent=1, ensure_ascii=False))}</pre>"


def note_html(note: Note) -> str:
    return (f"<p><code>{html.escape(note.tag_line)}</code></p>"
            + (f"<p><i>summary:</i> {html.escape(note.summary)}</p>" if note.summary else "")
            + f"<h3>User</h3><pre>{html.escape(note.user)}</pre>"
            f"<h3>Assistant</h3><pre>{html.escape(note.assistant)}</pre>")


def outranked_html(ranking: Sequence[tuple[int, float]], store: MemoryStore, e: Explanation, k: int,
                    graph_href: str | None = None, graph_notes: Collection[str] | None = None) -> str:
    """The notes ranked above this one (`ranking`: the method's (note index, score) in rank order) up to
    `k`, then, when more lie between, their count and the note just above it; with session, the start of
    the note's text, score and margin ('tie' at an equal score: there by note order); each note links to
    it on the graph page when `graph_href` is given and the page draws it (`graph_notes`; None: every note).
    For a note not ranked at all: the top k."""
    above = ranking[:e.rank - 1] if e.rank else ranking[:k]
    if not above:
        return ""
    gap = len(above) > k + 2  # a single note between the first k and the one just above is shown, not counted
    shown = [*enumerate(above[:k], 1)] + [(len(above), above[-1])] if gap else [*enumerate(above, 1)]

    def row(rank: int, idx: int, score: float) -> str:
        note = store.notes[idx]
        name = f"<code>{html.escape(note.note_id)}</code>"
        if graph_href and (graph_notes is None or note.note_id in graph_notes):
            name = f"<a href='{html.escape(graph_href + '#note=' + quote(note.note_id), quote=True)}'>{name}</a>"
        margin = "tie" if same_score(score, e.score) else f"+{number_text(score - e.score)}"
        return (f"<tr><td>{rank}</td><td>{name}</td>"
                f"<td>{html.escape(note.session_id)}</td><td class='text'>{html.escape(snippet(note.user, 90))}</td>"
                f"<td class='v'>{number_text(score)}</td><td class='v'>{margin}</td></tr>")

    rows = [row(r, i, s) for r, (i, s) in shown]
    if gap:
        rows.insert(k, f"<tr class='gap'><td colspan='6'>… {len(above) - k - 1} more notes, ranks {k + 1}–"
                       f"{len(above) - 1}</td></tr>")
    what = (f"the top {k}" if e.rank is None else f"the notes above it: the first {k} and the one just above it"
            if gap else "the notes above it")
    return (f"<dt>outranked by ({what})</dt><dd><table class='outranked'><tr><th>rank</th><th>note</th>"
            f"<th>session</th><th>text</th><th>score</th><th>margin</th></tr>{''.join(rows)}</table></dd>")


def contrast_html(contrast: Contrast | None) -> str:
    """The note's signals beside those of the notes above it (rank 1 first), each cell the signal's part of the
    score and what it read; the row of the signal that decided against each rival marked; signals that add nothing
    to any of them left out."""
    if contrast is None or not contrast.rivals:
        return ""
    rivals = contrast.rivals
    names = [x.name for x in contrast.signals] + [g.name for r in rivals for g in r.gaps]
    mine = {x.name: x for x in contrast.signals}
    names = [n for n in dict.fromkeys(names) if (n in mine and mine[n].contribution)
             or any(g.name == n and g.rival for r in rivals for g in r.gaps)]

    meanings = contrast.meanings

    def cell(value: float, reads: str, decided: bool = False, lead: float | None = None) -> str:
        led = (f" <span class='{'lead' if lead > 0 else 'behind'}'>({'+' if lead >= 0 else ''}{number_text(lead)})</span>"
               if lead is not None else "")
        return (f"<td class='v{' decided' if decided else ''}'>{number_text(value)}{led}"
                + (f"<div class='reads'>{html.escape(reads)}</div>" if reads else "") + "</td>")

    head = "".join(f"<th>rank {r.rank}: <code>{html.escape(r.note_id)}</code></th>" for r in rivals)
    rows = []
    for n in names:
        own = mine.get(n)
        row = (f"<tr><th title='{html.escape(meanings.get(n, ''), quote=True)}'>{html.escape(n)}</th>"
               + cell(own.contribution if own else 0.0, own.reads if own else ""))
        for r in rivals:
            gap = next((g for g in r.gaps if g.name == n), None)
            row += cell(gap.rival if gap else 0.0, r.reads.get(n, ""), r.decided_by == n, gap.lead if gap else None)
        rows.append(row + "</tr>")
    totals = (f"<tr class='total'><th>score</th><td class='v'>{number_text(contrast.score)}</td>"
              + "".join(f"<td class='v'>{number_text(r.score)} (+{number_text(r.margin)})</td>" for r in rivals) + "</tr>")
    decided = "".join(f"<li>rank {r.rank} <code>{html.escape(r.note_id)}</code>: "
                      + (f"decided by <b>{html.escape(r.decided_by)}</b> ({html.escape(lead_words(r))})"
                         if r.decided_by else "a tie, above it by note order") + "</li>"
                      for r in rivals) + (f"<li class='left-out'>{html.escape(contrast.left_out_text())}</li>"
                                          if contrast.left_out else "")
    return (f"<div class='contrast'><h3>Signal by signal, beside the notes above it</h3><ul>{decided}</ul>"
            f"<table class='contrast'><tr><th>signal</th><th>this note</th>{head}</tr>{''.join(rows)}{totals}</table>"
            "<p class='scale'>Each cell: the signal's part of the score in points (the parts add up to it), the "
            "rival's lead in brackets (<span class='lead'>red: the rival leads</span>, <span class='behind'>green: "
            "this note leads</span>), and what the signal read; <span class='decided-key'>shaded</span>: the signal "
            f"that decided against that rival.</p>{legend_html(names, meanings)}</div>")


def legend_html(names: Sequence[str], meanings: Mapping[str, str]) -> str:
    """The signals' legend: each name shown with its meaning (every signal of the contrast that has one)."""
    rows = "".join(f"<dt><code>{html.escape(n)}</code></dt><dd>{html.escape(meanings[n])}</dd>"
                   for n in names if meanings.get(n))
    return f"<details class='legend' open><summary>What each signal means</summary><dl>{rows}</dl></details>" \
        if rows else ""
