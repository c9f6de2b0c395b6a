"""Why TagGraph-Fusion scored a note what it did: its score split into signals that add up to it, each with what it
read (the query terms and their BM25 weights, the turn the dense part matched best, the graph route behind the
PPR mass, the time rule with both dates). The retriever is `taggraph.methods.fusion.method`; the arithmetic
`fusion.signals.fused_parts`."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

import numpy as np

from taggraph.core.graph import file_node
from taggraph.core.notes import Note
from taggraph.methods.base import Evidence
from taggraph.methods.fusion.features import dense_text, request_text, turn_speakers, turn_texts
from taggraph.methods.fusion.signal_table import MEANINGS
from taggraph.methods.fusion.signals import COMPONENTS, SESSION_FEATURES, TIME_FEATURES, shown_date, window_label
from taggraph.methods.signals import Signal, plain_number as num
from taggraph.core.text import snippet

EXCERPT = 70  # characters of a turn quoted in what a signal read
TERMS = 4  # query terms (or stems) named in what a lexical signal read


def fusion_evidence(fusion: Any, text: str, note: Note, asked_on: datetime | None) -> Evidence:
    """TagGraph-Fusion's `Evidence` for `note`: its signals (`Signal`, adding up to the score), a summary, the graph
    part's walk to the note (drawn on the graph page as the method's own edges) and the time rule's dates."""
    ev = fusion.signals(text, asked_on)
    _, _, windows, teleport, _ = fusion._memo
    i, w = note.index, fusion._weights(ev)
    rel, bonus, features, factor = fusion.parts(ev)
    f = float(factor[i])
    reached = teleport is not None and not np.isnan(ev.raw[i, COMPONENTS.index("graph")])
    walk = _walk(fusion, teleport, note) if reached else []  # the graph part's route, read once: signal and page
    signals = []
    for j, c in enumerate(COMPONENTS):
        if getattr(w, c) and _computed(fusion, c):
            value = float(ev.components[i, j])
            reads = _reads(fusion, c, text, note, ev, walk)
            signals.append(Signal(c, value * getattr(w, c), value, getattr(w, c), reads, MEANINGS[c]))
    if bonus is not None:
        signals.append(Signal("session", float(bonus[i]), float(bonus[i]) / w.session, w.session,
                              _session_reads(fusion, ev, rel, i), MEANINGS["session"]))
    for j, c in enumerate(SESSION_FEATURES):
        if features is not None and getattr(w, c) and fusion.uses(c):
            value = float(ev.session_features[i, j])
            signals.append(Signal(c, value * getattr(w, c), value, getattr(w, c), _best_turn_reads(fusion, ev, i),
                                  MEANINGS[c]))
    if fusion.params.time and w.time().any():
        base = float(rel[i]) + (float(bonus[i]) if bonus is not None else 0.0) + (
            float(features[i]) if features is not None else 0.0)
        signals.append(Signal("time", base * (f - 1), f, None, _time_reads(ev, w, i, base, f, note),
                              MEANINGS["time"]))
    detail: dict[str, Any] = {"question_date": shown_date(asked_on), "time_windows": [window_label(x) for x in windows],
                              "request": ev.request}
    anchors = [vars(x.anchor) | {"matched": list(x.anchor.matched)} for x in windows if x.anchor is not None]
    if anchors:  # the notes that dated a window: the graph page marks them
        detail["time_anchors"] = anchors
    if teleport is not None:  # the graph part ran: its walk (none where no PPR mass reached the note)
        detail["walk"] = walk
    out = Evidence(detail=detail, signals=signals)
    shown = [s for s in sorted(signals, key=lambda s: -abs(s.contribution)) if round(s.contribution, 3)]
    if shown:
        out.summary = "weighted evidence (" + " + ".join(f"{s.name} {num(s.contribution, 3)}" for s in shown) + ")" + (
            f", time: the other signals' sum times {num(f)} (the time rules' factor; question date "
            f"{shown_date(asked_on)})" if round(f, 3) != 1 else "") + "".join(
            f"; time window {window_label(x)}" for x in windows) + (
            " (a request for suggestions: dense over every note's raw turn, OpenClaw's 0.7 / 0.3)" if ev.request else "")
    if fusion.embedder is not None:
        detail["in_dense_pool"] = bool(not np.isnan(ev.raw[i, COMPONENTS.index("dense")]))
        if not detail["in_dense_pool"] and ev.components[i].any():
            out.summary += (f"; outside the dense pool, so {fusion.embedder.name} never read it (the pool: the "
                            f"{fusion.params.pool} best notes of each lexical list and of a first PPR)")
    if not ev.components[i].any():
        out.missing = ("no lexical, dense or graph evidence: no positive BM25 term, outside the "
                       "dense pool and unreached by PPR")
    return out


def _computed(fusion: Any, component: str) -> bool:
    """Whether the retriever computes `component` (its switch on; a weight of the request route counts too)."""
    parts = {"note_bm25": fusion.note_bm25, "raw_bm25": fusion.raw_bm25, "dense": fusion.embedder,
             "graph": fusion.graph}
    return parts[component] is not None if component in parts else fusion.uses(component)


def _reads(fusion: Any, component: str, text: str, note: Note, ev: Any, walk: list[list[str]]) -> str:
    """What one component read for `note`, in one line (`walk`: the graph part's route to it)."""
    i, raw = note.index, ev.raw[note.index, COMPONENTS.index(component)]
    if component in ("note_bm25", "raw_bm25", "note_stem", "raw_stem"):
        part = getattr(fusion, component)
        detail = part.evidence(text, note).detail
        matched = detail.get("matched_terms", detail.get("matched_stems", {}))
        where = "note" if component.startswith("note") else "raw turn"
        words = _stem_words(part, text) if "stem" in component else {}
        return (", ".join(f"'{t}'" + (f" (from '{words[t]}')" if words.get(t, t) != t else "") + f" {num(v, 3)}"
                          for t, v in list(matched.items())[:TERMS])
                + (f" (+{len(matched) - TERMS} more)" if len(matched) > TERMS else "")
                + f" in the {where}") if matched else f"no query {'stem' if 'stem' in component else 'term'}"
    if np.isnan(raw):
        return "outside the dense pool: not embedded" if component != "graph" else "no PPR mass"
    if component == "graph":
        route = [walk[0][0], walk[0][1]] if walk else []
        for a, b in walk[1:]:
            if a != route[-1]:
                break
            route.append(b)
        return f"PPR mass {num(raw, 3)}" + (", most of it over " + " → ".join(map(_node, route)) if route else "")
    if component == "dense":
        read = request_text(note) if ev.request else dense_text(note)
        return f"'{snippet(' '.join(read.split()), EXCERPT)}' cosine {raw:.3f}"
    if component in ("turns", "speaker"):
        q = fusion._query_vector(text)
        cos = fusion.turn_vectors.rows(i) @ q
        turns = turn_texts(note)
        if component == "speaker":
            names = fusion.named_speakers(text)
            cos = np.array([c if who in names else -np.inf for c, who in zip(cos, turn_speakers(note))])
        best = int(np.argmax(cos))
        return f"turn '{snippet(' '.join(turns[best].split()), EXCERPT)}' cosine {float(cos[best]):.3f}"
    return num(raw, 3)


def _stem_words(index: Any, text: str) -> dict[str, str]:
    """Each stem of the question as `index` tokenizes it, with the question's word it came from ('befor' <- 'before')."""
    stemmer = index.tokenizer.stemmer
    return {stemmer(word): word for word in re.findall(r"\w+", text.lower())} if stemmer else {}


def _session_reads(fusion: Any, ev: Any, rel: np.ndarray, i: int) -> str:
    """The session's notes after its best, whose relevance its notes share (each further one halved)."""
    mates = np.flatnonzero(ev.sessions == ev.sessions[i])
    ordered = sorted(mates.tolist(), key=lambda j: (-rel[j], j))[1:]
    named = [f"{fusion.store.notes[j].note_id} {num(rel[j], 3)}" for j in ordered if rel[j] > 0]
    session = fusion.store.notes[i].session_id
    return (f"session {session}'s further notes: " + ", ".join(named[:3]) + (" …" if len(named) > 3 else "")
            if named else f"session {session} has no further note with evidence")


def _best_turn_reads(fusion: Any, ev: Any, i: int) -> str:
    """The note of the session whose turn matched best, and its turn score."""
    column = ev.components[:, COMPONENTS.index("turns")]
    mates = np.flatnonzero(ev.sessions == ev.sessions[i])
    best = int(mates[np.argmax(column[mates])])
    if column[best] <= 0:
        return "no turn of its session was embedded (outside the pool)"
    return f"best turn of its session: note {fusion.store.notes[best].note_id} ({num(column[best], 3)})"


def _time_reads(ev: Any, w: Any, i: int, base: float, factor: float, note: Note) -> str:
    """The time rule that applied to the note, in words: the factor as 1 + each weighted feature, on the other
    signals' sum, and the note's date (the question's date and its windows are said once, in the summary)."""
    weights = w.time()
    fired = [f"{num(weights[j], 3)} x {name} {num(ev.time[i, j], 3)}" for j, name in enumerate(TIME_FEATURES)
             if ev.time[i, j]]
    dated = f"note {note.timestamp or 'undated'}"
    if not fired:
        return f"no time rule applies ({dated})"
    return (f"factor {num(factor)} = 1 + " + " + ".join(fired) + f", times the other signals' {num(base)}: adds "
            f"{num(base * (factor - 1))} ({dated})")


def _node(node: str) -> str:
    """A graph node in a line of text: 'concept:pet/dog' -> 'pet/dog', 'file:s1#0' -> 'note s1#0'."""
    kind, _, rest = node.partition(":")
    return {"concept": rest, "topic": f"topic {rest}", "file": f"note {rest}"}.get(kind, node)


def _walk(fusion: Any, teleport: np.ndarray, note: Note) -> list[list[str]]:
    """The edges that carried most of the graph part's PPR mass to `note` (AdaptiveGraph's `flow_walk` over
    Fusion's own teleport)."""
    walk, _, _ = fusion.graph.flow_walk(teleport, fusion.graph.node_index[file_node(note.note_id)],
                                        step=fusion.walk_step())
    return walk
