"""Why a note was (not) retrieved for a question, side by side for several methods.

Each method's `Retriever.explain` gives a reason and structured details; this
module renders them as a table (`explain_table`) and as a self-contained HTML
page (`explain_html`): the paths from the query to the note (TagGraph: token ->
concept -> ontology hops -> topic -> note; AdaptiveGraph: seed tag, its teleport
mass and the main diffusion paths; BM25: per-term contributions; OpenClaw:
dense and keyword components) or what is missing (no helpful tag, a token
dropped as a stopword, the note that outranked it and by how much), then the
note itself. Verdicts judge the note's session rank by the metric's cut-off k (``METRIC_K``), as
Success@k and the run report count (`session_place`, `tie_order_only`), not by the depth. All text
from data is ``html.escape``-d; the page has no script.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Collection, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, NamedTuple
from urllib.parse import quote

import pandas as pd

from taggraph.datasets import Case
from taggraph.errors import ConfigError
from taggraph.evaluation.metrics import session_scores, tie_averaged
from taggraph.core.notes import Note
from taggraph.methods import DEFAULT_DEPTH, Explanation, Result, Retriever, build_retrievers
from taggraph.methods.base import same_score
from taggraph.methods.signals import Contrast
from taggraph.core.store import MemoryStore
from taggraph.core.text import snippet
from taggraph.viz.names import node_name

if TYPE_CHECKING:  # the pages take a question opened by the experiments room; they never open one
    from taggraph.runs.question import OpenQuestion

_KIND_COLOUR = {"concept": "#4c78a8", "topic": "#f58518", "file": "#2a8f87"}

Methods = Sequence[str] | Mapping[str, Retriever]
METRIC_K = 5  # verdicts use Success@5, the paper's headline recall@5
SIGNALS_SHOWN = 5  # free choice: the largest signals named in a one-line summary


def retrieve_all(store: MemoryStore, question: str, methods: Methods, k: int = DEFAULT_DEPTH,
                 explain: bool = False, asked_on: datetime | None = None) -> dict[str, list[Result]]:
    """Method name -> its top-k results for `question` asked on date `asked_on` (a case's
    ``question_date``, as the bench asks it), with explanations when `explain`."""
    return {m: r.query(question, k, asked_on=asked_on, explain=explain)
            for m, r in build_retrievers(store, methods).items()}


def gold_notes(case: Case, store: MemoryStore) -> list[str]:
    """The case's gold notes in note order, as its dataset's loader set them (LongMemEval: the notes
    holding a ``has_answer`` turn), else every note of its gold sessions
    (`taggraph.studies.diagnostics.gold_note_ids`); the data file is not read again."""
    from taggraph.datasets.base import gold_note_ids

    return gold_note_ids(case, store)


def rank_table(results_by_method: Mapping[str, Sequence[Result]], note_ids: Sequence[str]) -> pd.DataFrame:
    """Rank of each note (rows) under each method (columns); empty where not retrieved."""
    ranks = {m: {r.note_id: r.rank for r in res} for m, res in results_by_method.items()}
    table = pd.DataFrame({m: [r.get(n) for n in note_ids] for m, r in ranks.items()}, index=list(note_ids))
    return table.rename_axis("note_id").astype("Int64")


def top_table(results_by_method: Mapping[str, Sequence[Result]], gold: Sequence[str], k: int = 5,
              store: MemoryStore | None = None) -> pd.DataFrame:
    """The first k results of each method: method, rank, note_id, session_id, score, gold, and
    `summarize` of the explanation when the results carry one (nodes named as in `store`'s graph view)."""
    gold = set(gold)
    return pd.DataFrame([{"method": m, "rank": r.rank, "note_id": r.note_id, "session_id": r.session_id,
                          "score": round(r.score, 4), "gold": r.note_id in gold,
                          "evidence": summarize(r.explanation, store) if r.explanation else ""}
                         for m, res in results_by_method.items() for r in res[:k]])


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


def _number(x: Any) -> str:
    return f"{float(x):.4g}"


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
        parts.append(f"file seed mass {_number(d['file_seed_mass'])}")
    if d.get("matched_terms"):
        parts.append("terms " + ", ".join(f"{t} {_number(v)}" for t, v in list(d["matched_terms"].items())[:4]))
    if "contributions" in d:
        parts.append(" + ".join(f"{k} {_number(v)}" for k, v in d["contributions"].items()))
    if exp.evidence.signals:  # a method that scores by signals: the largest parts of its score
        shown = [x for x in sorted(exp.evidence.signals, key=lambda x: -abs(x.contribution)) if round(x.contribution, 3)]
        parts.append(" + ".join(f"{x.name} {_number(x.contribution)}" for x in shown[:SIGNALS_SHOWN])
                     + (" + …" if len(shown) > SIGNALS_SHOWN else "") + f" = {_number(exp.score)}")
    if "tfidf_overlap" in d:
        parts.append(f"tf-idf overlap {_number(d['tfidf_overlap'])}")
    if d.get("dropped_as_stopwords"):
        parts.append(f"dropped as stopwords: {', '.join(d['dropped_as_stopwords'])}")
    if not parts and exp.evidence.summary:  # a method the views know nothing of speaks for itself
        parts.append(exp.evidence.summary)
    if exp.contrast is not None and exp.contrast.rivals:
        parts.append("; ".join(exp.contrast.lines()[:1]))
    elif exp.outranked_by:
        o = exp.outranked_by[-1]
        margin = "tie: above it by note order" if same_score(o["score"], exp.score) else f"+{_number(o['margin'])}"
        parts.append(f"just above it: note {o['note_id']} (rank {o['rank']}) scores {_number(o['score'])} ({margin})")
    return "; ".join(parts)


def explanations(store: MemoryStore, question: str, note_id: str, methods: Methods,
                 depth: int = DEFAULT_DEPTH, asked_on: datetime | None = None) -> dict[str, Explanation]:
    """Method name -> its `Retriever.explain` of `note_id` for `question` asked on `asked_on`, at `depth`."""
    if note_id not in store.by_id:
        raise ConfigError(f"no note {note_id!r} in case {store.case_id!r}; its first notes: "
                         f"{[n.note_id for n in store.notes[:3]]}")
    return {m: r.explain(question, note_id, depth, asked_on=asked_on) for m, r in build_retrievers(store, methods).items()}


def _row(method: str, e: Explanation, store: MemoryStore) -> dict[str, Any]:
    return {"method": method, "retrieved": e.retrieved, "rank": e.rank, "score": round(e.score, 4),
            "reason": e.reason, "key details": summarize(e, store)}


def explain_table(store: MemoryStore, question: str, note_id: str, methods: Methods,
                  asked_on: datetime | None = None) -> pd.DataFrame:
    """One row per method: retrieved, rank, score, reason, key details (asked on `asked_on`)."""
    rows = [_row(m, e, store) for m, e in explanations(store, question, note_id, methods, asked_on=asked_on).items()]
    return pd.DataFrame(rows).astype({"rank": "Int64"})


def explain_misses(units: pd.DataFrame, stores: Mapping[str, MemoryStore], methods: Sequence[str],
                   k: int = 5) -> pd.DataFrame:
    """`explain_table` rows of every gold note in `units` (`failure_diagnostics(...).units`) under
    every method that does not rank its session in its top k sessions, or ranks it there only by tie
    order (`session_place`, as the verdict judges); `stores` maps question id -> store."""
    rows, built, ranked = [], {}, {}  # each question's retrievers and rankings, built once
    for u in units.drop_duplicates(["question_id", "note_id"]).itertuples():
        store = stores[u.question_id]
        if u.question_id not in built:
            built[u.question_id] = build_retrievers(store, methods)
        retrievers = built[u.question_id]
        for m, e in explanations(store, u.question, u.note_id, retrievers).items():
            if (u.question_id, m) not in ranked:
                ranked[u.question_id, m] = retrievers[m].rank(u.question, len(store))
            ranking = ranked[u.question_id, m]
            place = ranking_place(ranking, store, {store.by_id[u.note_id].session_id}, k)
            if place.rank is None or place.rank > k or place.tie:
                rows.append({"question_id": u.question_id, "note_id": u.note_id, "category": u.category,
                             **_row(m, e, store)})
    return pd.DataFrame(rows, columns=["question_id", "note_id", "category", "method", "rank", "reason",
                                       "key details"]).astype({"rank": "Int64"})


# -- HTML -----------------------------------------------------------------------------

def _chain(nodes: Sequence[str], store: MemoryStore) -> str:
    spans = [f"<span class='node' style='border-color:{_KIND_COLOUR.get(n.partition(':')[0], '#999')}'>"
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


def _value_html(key: str, value: Any, store: MemoryStore) -> str:
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
        items = [f"<li>seed <b>{html.escape(_concept(p['seed'], store))}</b> (teleport mass {_number(p['seed_mass'])}, "
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
                       f"{html.escape(v) if isinstance(v, str) else _number(v)}</td></tr>" for k, v in items)
        return f"<table>{rows}</table>"
    if isinstance(value, (Mapping, list)) and not value:
        return "<i>none</i>"
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return html.escape(", ".join(value)) or "<i>none</i>"
    if isinstance(value, str):
        return f"<code>{html.escape(value)}</code>"
    if isinstance(value, (int, float)) and not isinstance(value, bool):  # numpy numbers arrive as Python's
        return _number(value)
    return f"<pre>{html.escape(json.dumps(value, indent=1, ensure_ascii=False))}</pre>"


def _note_html(note: Note) -> str:
    return (f"<p><code>{html.escape(note.tag_line)}</code></p>"
            + (f"<p><i>summary:</i> {html.escape(note.summary)}</p>" if note.summary else "")
            + f"<h3>User</h3><pre>{html.escape(note.user)}</pre>"
            f"<h3>Assistant</h3><pre>{html.escape(note.assistant)}</pre>")


# The one tie-order rule (README, tie-aware columns): a top-k place is owed to tie order when some order
# of the items tied at equal scores would leave it out of the top k, i.e. Success@k_tieavg < 1.
def tie_order_only(scores: Sequence[float], relevant: Sequence[bool], k: int) -> bool:
    """Whether the top `k` of a ranking (`scores` descending) holds a `relevant` item only by tie order: one
    is there, yet some order of the items with equal scores leaves every relevant one out
    (``Success@k_tieavg`` < 1, `metrics.tie_averaged`). The run report's miss table counts sessions so; the
    explain verdict, `taggraph explain`, the graph page's gold ranks and its top-k ring judge sessions
    (`session_place`); `gold_rank_chart` judges notes."""
    return any(relevant[:k]) and tie_averaged(scores, relevant, (k,))[f"Success@{k}_tieavg"] < 1


class SessionPlace(NamedTuple):
    """Where the first of some sessions ranks, as the metrics count (`session_place`)."""

    rank: int | None  # among the sessions, each once at its best note; None beyond the depth
    score: float | None  # that session's score (its best note's)
    tie: bool  # in the top k only by tie order (`tie_order_only`)
    tie_outside: bool = False  # outside the top k only by tie order: some order of the ties brings it in
    tied_with: int = 0  # other sessions sharing its score, when its rank rests on their order (RR != RR_tieavg)
    rr_tieavg: float | None = None  # then the expected RR over every order of those ties


def placed(scores: Sequence[float], relevant: Sequence[bool], first: int, k: int, known: bool) -> SessionPlace:
    """The place of the first `relevant` session, at `first` (0-based) of the sessions' `scores` (descending);
    its ties judged (one `tie_averaged` pass) only when every score is `known`."""
    if not known:
        return SessionPlace(first + 1, scores[first], False)
    expected = tie_averaged(scores, relevant, (k,))
    hit, rr = expected[f"Success@{k}_tieavg"], expected["RR_tieavg"]
    moved = abs(rr - 1 / (first + 1)) > 1e-12  # some order of the ties moves its reciprocal rank
    return SessionPlace(first + 1, scores[first], first < k and hit < 1, first >= k and hit > 0,
                        sum(same_score(x, scores[first]) for x in scores) - 1 if moved else 0, rr if moved else None)


def session_place(session_ids: Sequence[str], scores: Sequence[float | None], targets: set[str], k: int,
                  depth: int = DEFAULT_DEPTH) -> SessionPlace:
    """The place of the first of `targets` among the sessions of a whole note ranking (`session_ids` and
    `scores` in rank order), each session counted once at its best note: its rank when that note is
    within `depth` (as `Success@k` and the run report count), its score, and whether a top-`k` place is
    owed to tie order (over every session, as the report's ``tied_beyond_depth`` does; never when a
    score is unknown)."""
    pairs = session_scores(session_ids, [0.0 if s is None else s for s in scores], len(session_ids))
    relevant = [sid in targets for sid, _ in pairs]
    first = next((i for i, rel in enumerate(relevant) if rel), None)
    if first is None or pairs[first][0] not in set(session_ids[:depth]):
        return SessionPlace(None, None, False)
    return placed([s for _, s in pairs], relevant, first, k, None not in scores)


def verdict(e: Explanation, place: SessionPlace, k: int, depth: int, n_notes: int) -> tuple[str, str]:
    """(words, css class) judging the note's session `place` by the metric's cut-off `k`, as Success@k and
    the run report count, with the note rank beside it: 'session rank 4 (note rank 11): in the top 5 by
    sessions' (hit), 'session rank 3 (note rank 4) only by tie order (score 0); not found by the method'
    (tie: `tie_order_only`; or 'session rank 9 (note rank 13), outside the top 5 only by tie order (score 0); not
    found by the method'), 'session rank 9 (note rank 12), outside the top 5' (near), 'not retrieved' (miss: its
    session is beyond the depth)."""
    note = f"note rank {e.rank or '–'}" + (f" of {n_notes}, beyond depth {depth}" if (e.rank or 0) > depth else "")
    if place.rank is None:
        return "not retrieved" + (f" (rank {e.rank} of {n_notes}, beyond depth {depth})" if e.rank else ""), "miss"
    ranks = f"session rank {place.rank} ({note})"
    why = ("(score 0); not found by the method" if place.score == 0
           else f"(score {_number(place.score)}, shared across the top-{k} cut-off)")
    if place.tie:
        return f"{ranks} only by tie order {why}", "tie"
    if place.tie_outside:
        return f"{ranks}, outside the top {k} only by tie order {why}", "tie"
    rests = (f"; the rank rests on tie order (score {_number(place.score)}, tied with {place.tied_with} other "
             f"session(s)): tie-averaged RR {place.rr_tieavg:.3f}, not {1 / place.rank:.3f}"
             if place.rr_tieavg is not None else "")
    if place.rank <= k:
        return f"{ranks}: in the top {k} by sessions{rests}", "hit"
    return f"{ranks}, outside the top {k}{rests}", "near"


# 'ranked R of N notes: ' and its tie-order form (the verdict says both)
_RANKED_PREFIX = re.compile(r"^ranked \d+ of \d+ notes( only by tie order \(earlier notes first\), with score 0)?: ")


def evidence_text(e: Explanation) -> str:
    """The reason without its leading 'ranked R of N notes: ' or 'ranked R of N notes only by tie order ...:
    ' (the verdict says that) and without the fallback (shown apart)."""
    text = _RANKED_PREFIX.sub("", e.reason)
    fallback = e.evidence.fallback
    return text.replace(f" (fallback: {fallback})", "") if fallback else text


def _outranked_html(ranking: Sequence[tuple[int, float]], store: MemoryStore, e: Explanation, k: int,
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
        margin = "tie" if same_score(score, e.score) else f"+{_number(score - e.score)}"
        return (f"<tr><td>{rank}</td><td>{name}</td>"
                f"<td>{html.escape(note.session_id)}</td><td class='text'>{html.escape(snippet(note.user, 90))}</td>"
                f"<td class='v'>{_number(score)}</td><td class='v'>{margin}</td></tr>")

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

    def cell(value: float, reads: str, decided: bool = False, lead: float | None = None) -> str:
        led = (f" <span class='{'lead' if lead > 0 else 'behind'}'>({'+' if lead >= 0 else ''}{_number(lead)})</span>"
               if lead is not None else "")
        return (f"<td class='v{' decided' if decided else ''}'>{_number(value)}{led}"
                + (f"<div class='reads'>{html.escape(reads)}</div>" if reads else "") + "</td>")

    head = "".join(f"<th>rank {r.rank}: <code>{html.escape(r.note_id)}</code></th>" for r in rivals)
    rows = []
    for n in names:
        own = mine.get(n)
        row = f"<tr><th>{html.escape(n)}</th>" + cell(own.contribution if own else 0.0, own.reads if own else "")
        for r in rivals:
            gap = next((g for g in r.gaps if g.name == n), None)
            row += cell(gap.rival if gap else 0.0, r.reads.get(n, ""), r.decided_by == n, gap.lead if gap else None)
        rows.append(row + "</tr>")
    totals = (f"<tr class='total'><th>score</th><td class='v'>{_number(contrast.score)}</td>"
              + "".join(f"<td class='v'>{_number(r.score)} (+{_number(r.margin)})</td>" for r in rivals) + "</tr>")
    decided = "".join(f"<li>rank {r.rank} <code>{html.escape(r.note_id)}</code>: "
                      + (f"decided by <b>{html.escape(r.decided_by)}</b> (+{_number(r.gaps[0].lead)} of the "
                         f"+{_number(r.margin)})" if r.decided_by else "a tie, above it by note order") + "</li>"
                      for r in rivals)
    return (f"<div class='contrast'><h3>Signal by signal, beside the notes above it</h3><ul>{decided}</ul>"
            f"<table class='contrast'><tr><th>signal</th><th>this note</th>{head}</tr>{''.join(rows)}{totals}</table>"
            "<p class='scale'>Each cell: the signal's part of the score (the parts add up to it), the rival's lead in "
            "brackets, and what the signal read.</p></div>")


def ranking_place(ranking: Sequence[tuple[int, float]], store: MemoryStore, sessions: set[str], k: int,
                  depth: int = DEFAULT_DEPTH) -> SessionPlace:
    """`session_place` of the first of `sessions` in `ranking` ((note index, score) in rank order, every note)."""
    return session_place([store.notes[i].session_id for i, _ in ranking], [s for _, s in ranking], sessions, k, depth)


def session_words(ranking: Sequence[tuple[int, float]], store: MemoryStore, own: SessionPlace,
                  gold: Sequence[str], k: int, depth: int) -> str:
    """The note's session rank `own` ('–': beyond the depth) and the first gold session's rank when another
    gold session ranks first (the report's number): '3 (first gold session: 2)'."""
    text = "–" if own.rank is None else str(own.rank)
    gold_sessions = {store.by_id[g].session_id for g in gold if g in store.by_id}
    first = ranking_place(ranking, store, gold_sessions, k, depth).rank if gold_sessions else None
    if first is not None and first != own.rank:
        text += f" (first gold session: {first})"
    return text


def rank_giver(ranking: Sequence[tuple[int, float]], store: MemoryStore, note_id: str, gold: Sequence[str]
               ) -> tuple[str, list[tuple[str, int | None]]]:
    """(the best-ranked note of gold note `note_id`'s session in `ranking`, the one that gives the session its
    rank as the metrics count sessions; the session's other gold notes with their note ranks, None when not
    ranked). A note that is not gold stands for itself, and so does `note_id` when no note of its session is ranked
    (the session has no rank to give)."""
    if note_id not in gold:
        return note_id, []
    sid = store.by_id[note_id].session_id
    order = {store.notes[i].note_id: r for r, (i, _) in enumerate(ranking, 1)}
    ranked = [n.note_id for n in store.notes if n.session_id == sid and n.note_id in order]
    best = min(ranked, key=order.get) if ranked else note_id
    return best, [(g, order.get(g)) for g in gold if g != best and store.by_id[g].session_id == sid]


def links_html(links: Mapping[str, str] | None) -> str:
    """'See also' links between a question's pages (explain, graph, the run's report): {label: href}."""
    if not links:
        return ""
    return ("<nav class='links'>See also: " + " · ".join(
        f"<a href='{html.escape(href, quote=True)}'>{html.escape(label)}</a>" for label, href in links.items())
        + "</nav>")


def _gold_html(note_id: str, gold: Sequence[str]) -> str:
    if not gold:
        return "<b>gold notes</b> not known for this question"
    others = ", ".join(f"<code>{html.escape(g)}</code>" for g in gold)
    mark = "<b class='gold'>★ this note is gold</b>" if note_id in gold else "<b>this note is not gold</b>"
    return f"{mark}; <b>gold notes</b> ({len(gold)}): {others}"


def explain_html(store: MemoryStore, question: str, note_id: str, methods: Methods, k: int = METRIC_K,
                 depth: int = DEFAULT_DEPTH, answer: str = "", gold: Sequence[str] = (),
                 asked_on: datetime | None = None, links: Mapping[str, str] | None = None,
                 question_id: str = "", graph_notes: Collection[str] | None = None) -> str:
    """A self-contained page (no script, no external resource) explaining `note_id` for every method.

    Verdicts use the metric's cut-off `k` (Success@k); `depth` is how many notes each method
    retrieves; `answer` and `gold` (the question's gold notes) are shown when given; the question is
    asked on date `asked_on`; `links` ({label: href}) lead to the question's other pages, a note to its place on
    the "graph page" when that page draws it (`graph_notes`, `graphview.GraphPage.notes`; None: every note); `question_id`
    names the question (else the page names the store, which several questions may share, as in LoCoMo)."""
    retrievers = build_retrievers(store, methods)
    exps = explanations(store, question, note_id, retrievers, depth, asked_on)
    note, n = store.by_id[note_id], len(store)
    rows, sections = [], []
    for m, e in exps.items():
        ranking = retrievers[m].rank(question, n, asked_on=asked_on)
        shown_id, others = rank_giver(ranking, store, note_id, gold)
        if shown_id != note_id:  # the session's rank comes from another of its gold notes: explain that one
            e = retrievers[m].explain(question, shown_id, depth, asked_on=asked_on)
        place = ranking_place(ranking, store, {note.session_id}, k, depth)
        words, cls = verdict(e, place, k, depth, n)
        giver = (f"explains <code>{html.escape(shown_id)}</code>{' (gold)' if shown_id in gold else ''}, the "
                 f"best-ranked note of gold session {html.escape(note.session_id)}: it gives the session its rank"
                 + ("; " if others else "") if shown_id != note_id else "")
        giver += (f"the session's {'other ' if shown_id in gold else ''}gold notes: " + ", ".join(
            f"<code>{html.escape(o)}</code> (note rank {r or '–'})" for o, r in others) if others else "")
        giver_html = f"<p class='giver'>{giver}</p>" if giver else ""
        sessions = html.escape(session_words(ranking, store, place, gold, k, depth))
        fallback = e.evidence.fallback
        fb_html = f"<p class='fallback'><b>Fallback:</b> {html.escape(fallback)}</p>" if fallback else ""
        rows.append(f"<tr class='{cls}'><td>{html.escape(m)}</td><td class='verdict'>{html.escape(words)}</td>"
                    f"<td class='v'>{e.rank or '–'}"
                    + (f" ({html.escape(shown_id)})" if shown_id != note_id else "")
                    + f"</td><td class='v session'>{sessions}</td>"
                    f"<td class='v'>{_number(e.score)}</td><td>{html.escape(evidence_text(e))}"
                    + (f" <span class='fb'>(fallback: {html.escape(fallback)})</span>" if fallback else "")
                    + "</td></tr>")
        details = "".join(f"<dt>{html.escape(key.replace('_', ' '))}</dt><dd>{_value_html(key, v, store)}</dd>"
                          for key, v in e.details.items()) + _outranked_html(ranking, store, e, k,
                                                                             (links or {}).get("graph page"), graph_notes)
        sections.append(f"<section class='{cls}'><h2>{html.escape(m)}: {html.escape(words)}</h2>"
                        f"<p class='ranks'>note rank {e.rank or '–'} · session rank {sessions}</p>{giver_html}"
                        f"<p><b>{'Evidence' if e.evidence.summary else 'Why'}:</b> "
                        f"{html.escape(evidence_text(e))}</p>{fb_html}{contrast_html(e.contrast)}"
                        f"<details{'' if cls == 'hit' else ' open'}><summary>all details</summary>"
                        f"<dl>{details}</dl></details></section>")
    title = f"Why note {note_id} for: {question}"
    legend = " ".join(f"<span class='node' style='border-color:{c}'>{kind}</span>" for kind, c in _KIND_COLOUR.items())
    named = f"<b>Question</b> {html.escape(question_id)}:" if question_id else \
        f"<b>Memory</b> {html.escape(store.case_id)} · <b>question</b>"
    context = (f"<p>{named} {html.escape(question)}"
               + (f" · <b>answer</b> {html.escape(answer)}" if answer else "") + "</p>"
               f"<p>{_gold_html(note_id, list(gold))}</p>"
               f"<p class='scale'>The store holds <b>{n}</b> notes; each method retrieves its first <b>{depth}</b> "
               f"(the depth). Verdicts use <b>k = {k}</b> on the note's session rank, as Success@{k} (the paper's "
               f"recall@{k}) and the run report count: <span class='hit'>in the top {k} by sessions</span>, "
               f"<span class='tie'>in the top {k} only by tie order (sessions with equal scores, in another order, "
               f"would leave it out: Success@{k}_tieavg &lt; 1; score 0: the method did not find it), or outside "
               f"it only by tie order (another order would bring it in)</span>, "
               f"<span class='near'>retrieved but outside the top {k}</span>, <span class='miss'>not retrieved</span>.</p>"
               f"<p class='scale'><b>Note rank</b> counts notes; <b>session rank</b> counts sessions, as the metrics "
               f"and the run report do: each session once, where its best note ranks (within the depth), so it is "
               f"smaller than the note rank when two notes above it share a session.</p>"
               f"<p class='scale'>Path boxes: {legend} (token → concept → ontology hops → topic → note).</p>")
    return ("<!doctype html><html><head><meta charset='utf-8'>"
            f"<title>{html.escape(title)}</title><style>{_CSS}</style></head><body>"
            f"<h1>Why (not) note <code>{html.escape(note_id)}</code>?</h1>{links_html(links)}{context}"
            "<table class='summary'><tr><th>method</th><th>verdict</th><th>note rank</th><th>session rank</th>"
            "<th>score</th><th>evidence</th></tr>"
            f"{''.join(rows)}</table><section class='note'><h2>The note</h2>{_note_html(note)}</section>"
            f"{''.join(sections)}</body></html>")


_CSS = """
body { font: 14px system-ui, sans-serif; margin: 1.5em; max-width: 70em; }
table { border-collapse: collapse; }
td, th { border: 1px solid #ddd; padding: 3px 8px; text-align: left; vertical-align: top; }
th { background: #f3f3f3; }
.hit > td.verdict, .hit > h2, span.hit { color: #1a7f37; } .near > td.verdict, .near > h2, span.near { color: #b26a00; }
.miss > td.verdict, .miss > h2, span.miss { color: #c0392b; } .gold { color: #b8860b; }
.tie > td.verdict, .tie > h2, span.tie { color: #6f42c1; } section.tie { border-color: #6f42c1; }
.fb, .fallback { color: #8a5a00; } .fallback { background: #fff6e0; padding: .3em .5em; }
p.scale { color: #444; }
section { border-left: 4px solid #ccc; padding: 0 1em; margin: 1.2em 0; }
section.hit { border-color: #1a7f37; } section.near { border-color: #e08e0b; } section.miss { border-color: #c0392b; }
summary { cursor: pointer; color: #555; }
dt { font-weight: bold; margin-top: .4em; } dd { margin-left: 1.5em; }
.node { border: 2px solid; border-radius: 4px; padding: 0 4px; white-space: nowrap; }
pre, td.v { white-space: pre-wrap; } pre { background: #f6f6f6; padding: .5em; }
table.contrast td { max-width: 22em; } .reads { color: #555; font-size: 12px; } td.decided { background: #fdecea; }
.lead { color: #c0392b; } .behind { color: #1a7f37; } tr.total { font-weight: bold; }
"""


def explain_text(opened: OpenQuestion, note_id: str, depth: int = DEFAULT_DEPTH, k: int = METRIC_K) -> str:
    """`taggraph explain`'s terminal text for note `note_id` of the `opened` question: question, answer, whether
    the note is gold and the gold notes, store size and depth, then per method the page's verdict at `k` (the
    session rank, when the verdict does not give it), its score and reason, and the key details."""
    case, store, retrievers, gold = opened.case, opened.store, opened.retrievers, opened.gold
    lines = [f"question {case.case_id}: {case.question}", f"answer: {case.answer}",
             f"note {note_id}: {'gold' if note_id in gold else 'not gold'}; gold notes ({len(gold)}): "
             + (", ".join(gold) or "not known"),
             f"store: {len(store)} notes; each method retrieves {depth}; verdicts at k = {k} (Success@{k})", ""]
    for m, e in explanations(store, case.question, note_id, retrievers, depth, case.asked_on).items():
        ranking = retrievers[m].rank(case.question, len(store), asked_on=case.asked_on)
        shown_id, others = rank_giver(ranking, store, note_id, gold)
        if shown_id != note_id:  # as the page: the note that gives the gold session its rank
            e = retrievers[m].explain(case.question, shown_id, depth, asked_on=case.asked_on)
        place = ranking_place(ranking, store, {store.by_id[note_id].session_id}, k, depth)
        words, _ = verdict(e, place, k, depth, len(store))
        sessions = session_words(ranking, store, place, gold, k, depth)
        more = "" if sessions == str(place.rank) else f"; session rank {sessions}"  # else the verdict says it
        lines.append(f"{m}: {words}{more}; score {_number(e.score)}; {_RANKED_PREFIX.sub('', e.reason)}")
        if shown_id != note_id:
            lines.append(f"    explains {shown_id}, the best-ranked note of gold session {store.by_id[note_id].session_id}"
                         + "; the session's gold notes: " + ", ".join(f"{o} (note rank {r or '–'})" for o, r in others))
        if e.contrast is not None and e.contrast.rivals:
            lines += [f"    {line}" for line in e.contrast.lines()]
        elif summarize(e, store):
            lines.append(f"    {summarize(e, store)}")
    return "\n".join(lines)
