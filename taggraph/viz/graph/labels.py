"""What the graph page says: node names wrapped for their labels, tooltips, the header's gold ranks and the chosen
method's walk, and the side panel's verdict on a note. Every data string in HTML is escaped."""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence

from taggraph.methods.base import DEFAULT_DEPTH, Explanation
from taggraph.core.store import MemoryStore
from taggraph.core.text import snippet
from taggraph.viz.explain import evidence_text, verdict
from taggraph.viz.explain_evidence import walk_routes
from taggraph.evaluation.placement import ranking_place
from taggraph.viz.graph.ranks import Ranking, gold_rank, indexed
from taggraph.viz.graph.subgraph import Explained, edge_key, walk_of

SNIPPET_CHARS = 240


def note_snippet(text: str, n: int = SNIPPET_CHARS) -> str:
    """`text` on one line, cut at a word boundary (`taggraph.core.text.snippet`), escaped."""
    return html.escape(snippet(" ".join(text.split()), n))


def tooltip(store: MemoryStore, node: str, data: dict, ranks: dict[str, dict[str, int]], gold: set[str],
            name: str) -> str:
    """Tooltip HTML; every data string is escaped."""
    kind = data["kind"]
    if kind == "file":
        note = store.by_id[data["note_id"]]
        lines = [f"<b>note {html.escape(note.note_id)}</b>"
                 + (" <b style='color:#b8860b'>★ gold</b>" if note.note_id in gold else ""),
                 f"session {html.escape(note.session_id)} · {html.escape(note.timestamp)}",
                 f"<code>{html.escape(note.tag_line)}</code>",
                 f"<i>User:</i> {note_snippet(note.user)}", f"<i>Assistant:</i> {note_snippet(note.assistant)}"]
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


def why_by_method(store: MemoryStore, explanations: Mapping[str, Mapping[str, Explanation]] | None,
                  rankings: Mapping[str, Ranking], note_id: str, k: int, depth: int) -> dict:
    """method -> {verdict, cls, text} of one note for the side panel (plain text, shown as text), judged
    like the explain page (`explain.verdict`): its session rank in the method's ranking by the cut-off `k`
    and the run's retrieval `depth`, a top-k place owed to tie order (class ``tie``) not as a hit."""
    out = {}
    for method, by_note in (explanations or {}).items():
        e, ranking = by_note.get(note_id), rankings.get(method)
        if e is not None and ranking is not None:
            place = ranking_place(indexed(store, ranking), store, {store.by_id[note_id].session_id}, k, depth)
            words, cls = verdict(e, place, k, depth, len(store))
            fallback = e.evidence.fallback
            contrast = e.contrast.lines()[:1] if e.contrast is not None else []
            out[method] = {"verdict": words, "cls": cls,
                           "text": evidence_text(e) + (f" (fallback: {fallback})" if fallback else "")
                           + "".join(f"; {line}" for line in contrast)}
    return out


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


def walk_lines(store: MemoryStore, names: Mapping[str, str], method: str, e: Explanation | None, note: str | None,
              gold: Sequence[str], ranking: Ranking, k: int, explained: Explained, depth: int = DEFAULT_DEPTH,
              shown: int = 8) -> list[str]:
    """The header's lines for `method` under its line of gold ranks: the note that gives its first gold session its
    rank (`rank_giver`) and the session's other gold notes where that line does not say it, then each route of its
    own walk to that note (thick), each place marked ✕ under it and why, or, for a method that does not walk the
    graph, its own evidence."""
    if note is None:
        return []
    same = [g for g in gold if g != note and store.by_id[g].session_id == store.by_id[note].session_id]
    head = []
    if same or note not in gold:
        place = gold_rank(store, ranking, note, k, depth)['text'].split(': ', 1)[1]
        head = [f"Note {note} gives gold session {store.by_id[note].session_id} its rank ({place})"
                + ("; the session's " + ("other " if note in gold else "") + "gold notes: " + ", ".join(
                    f"{g} (note rank {gold_rank(store, ranking, g, k, depth)['note'] or '–'})" for g in same)
                   if same else "") + "."]
    walk = walk_of(e)
    if e is None:
        return head
    contrast = e.contrast.lines() if e.contrast is not None else []
    if walk is None:
        return [*head, f"{method} does not walk the graph: no edge is its own. Its evidence: {evidence_text(e)}",
                *contrast]
    routes = [" → ".join(names.get(n, n) for n in r) for r in walk_routes(walk)]
    own = "Its graph signal's route" if e.evidence.signals else "Its own walk (thick), route"
    lines = head + contrast + [f"{own} {i} of {len(routes)}: {route}" for i, route in enumerate(routes[:shown], 1)]
    if e.evidence.signals and routes:
        lines.append("(thick; its score's other signals are not drawn)")
    if len(routes) > shown:
        lines.append(f"… {len(routes) - shown} more route(s), drawn thick")
    if not routes:
        lines.append(f"{method} walked no edge to it.")
    stops = {b["node"]: b["why"] for b in e.details.get("walk_breaks") or []}
    passed = {a for a, _ in walk}
    told = [f"✕ {names.get(n, n)}: {why}" + (" (its walk passes through it from another node)" if n in passed else "")
            for n, why in stops.items()]
    told += [f"✕ {names.get(n, n)}, on its walk to another drawn note: {by[method]}"
             for n, by in explained.breaks.items() if method in by and n not in stops]
    lines += told[:shown]
    if len(told) > shown:
        lines.append(f"… {len(told) - shown} more stop(s), marked ✕")
    if any(method in ms and method not in explained.paths.get(edge, []) for edge, ms in explained.walked.items()):
        lines.append(f"Thin solid: {method}'s walks to the other drawn notes.")
    if explained.possible - set(map(lambda ab: edge_key(*ab), walk)):
        lines.append(f"Dashed: the question's paths {method} did not take.")
    return lines


def gold_text(places: Sequence[dict], shown: int = 3) -> str:
    """The header's line of gold ranks (`gold_rank` texts), at most `shown` of them: best session rank first, as
    the metrics count (the first gold session gives RR), then by note rank."""
    places = sorted(places, key=lambda p: (p["session"] is None, p["session"] or 0, p["note"] is None, p["note"] or 0))
    more = len(places) - shown
    return "; ".join(p["text"] for p in places[:shown]) + (
        f"; {more} more gold note(s), their ranks on their labels" if more > 0 else "")
