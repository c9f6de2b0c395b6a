"""Why a note was (not) retrieved for a question, side by side for several methods.

Each method's `Retriever.explain` gives a reason and structured details; this module renders them as tables
(`explain_table`, `explain_misses`), as a self-contained HTML page (`explain_html`; the evidence drawn by
`explain_evidence`) and as `taggraph explain`'s terminal text (`explain_text`). Verdicts judge the note's session
rank by the metric's cut-off k (``METRIC_K``), as Success@k and the run report count
(`placement.session_place`, `placement.tie_order_only`), not by the depth. All text from data is
``html.escape``-d; the page has no script.
"""

from __future__ import annotations

import html
import re
from collections.abc import Collection, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

import pandas as pd

from taggraph.core.store import MemoryStore
from taggraph.evaluation.placement import SessionPlace, ranking_place
from taggraph.methods.base import DEFAULT_DEPTH, Explanation, Result
from taggraph.runs.retrieval import Methods, explain_note, explanations, missed_explanations
from taggraph.viz.explain_evidence import (KIND_COLOUR, contrast_html, note_html, number_text, outranked_html,
                                           summarize, value_html)
from taggraph.viz.page_shell import shell_page, static

if TYPE_CHECKING:  # the pages take a question opened by the runs room; they never open one
    from taggraph.runs.question import OpenQuestion

METRIC_K = 5  # verdicts use Success@5, the paper's headline recall@5


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
                          "evidence": evidence_cell(r.explanation, store) if r.explanation else ""}
                         for m, res in results_by_method.items() for r in res[:k]])


def evidence_cell(e: Explanation, store: MemoryStore | None = None) -> str:
    """`summarize` of `e`, or why it has nothing to show (a score of 0: nothing of the question reached the note)."""
    if text := summarize(e, store):
        return text
    if e.score == 0:
        return "(score 0: nothing of the question reached this note; it ranks here only by note order among equal scores)"
    return f"(no key detail recorded; {evidence_text(e)})" if e.reason else "(no key detail recorded)"


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
    rows = [{"question_id": u.question_id, "note_id": u.note_id, "category": u.category, **_row(m, e, stores[u.question_id])}
            for u, m, e in missed_explanations(units, stores, methods, k)]
    return pd.DataFrame(rows, columns=["question_id", "note_id", "category", "method", "rank", "reason",
                                       "key details"]).astype({"rank": "Int64"})


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
           else f"(score {number_text(place.score)}, shared across the top-{k} cut-off)")
    if place.tie:
        return f"{ranks} only by tie order {why}", "tie"
    if place.tie_outside:
        return f"{ranks}, outside the top {k} only by tie order {why}", "tie"
    rests = (f"; the rank rests on tie order (score {number_text(place.score)}, tied with {place.tied_with} other "
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
    the "graph page" when that page draws it (`graph_notes`, `viz.graph.page.GraphPage.notes`; None: every note); `question_id`
    names the question (else the page names the store, which several questions may share, as in LoCoMo)."""
    note, n = store.by_id[note_id], len(store)
    rows, sections = [], []
    for m, (ranking, shown_id, e, others) in explain_note(store, question, note_id, methods, depth, asked_on,
                                                          gold).items():
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
                    f"<td class='v'>{number_text(e.score)}</td><td>{html.escape(evidence_text(e))}"
                    + (f" <span class='fb'>(fallback: {html.escape(fallback)})</span>" if fallback else "")
                    + "</td></tr>")
        details = "".join(f"<dt>{html.escape(key.replace('_', ' '))}</dt><dd>{value_html(key, v, store)}</dd>"
                          for key, v in e.details.items()) + outranked_html(ranking, store, e, k,
                                                                             (links or {}).get("graph page"), graph_notes)
        sections.append(f"<section class='{cls}'><h2>{html.escape(m)}: {html.escape(words)}</h2>"
                        f"<p class='ranks'>note rank {e.rank or '–'} · session rank {sessions}</p>{giver_html}"
                        f"<p><b>{'Evidence' if e.evidence.summary else 'Why'}:</b> "
                        f"{html.escape(evidence_text(e))}</p>{fb_html}{contrast_html(e.contrast)}"
                        f"<details{'' if cls == 'hit' else ' open'}><summary>all details</summary>"
                        f"<dl>{details}</dl></details></section>")
    title = f"Why note {note_id} for: {question}"
    legend = " ".join(f"<span class='node' style='border-color:{c}'>{kind}</span>" for kind, c in KIND_COLOUR.items())
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
    return shell_page(title, f"<h1>Why (not) note <code>{html.escape(note_id)}</code>?</h1>{links_html(links)}{context}"
            "<table class='summary'><tr><th>method</th><th>verdict</th><th>note rank</th><th>session rank</th>"
            "<th>score</th><th>evidence</th></tr>"
            f"{''.join(rows)}</table><section class='note'><h2>The note</h2>{note_html(note)}</section>"
            f"{''.join(sections)}", static("explain.css"))


def explain_text(opened: OpenQuestion, note_id: str, depth: int = DEFAULT_DEPTH, k: int = METRIC_K) -> str:
    """`taggraph explain`'s terminal text for note `note_id` of the `opened` question: question, answer, whether
    the note is gold and the gold notes, store size and depth, then per method the page's verdict at `k` (the
    session rank, when the verdict does not give it), its score and reason, and the key details."""
    case, store, retrievers, gold = opened.case, opened.store, opened.retrievers, opened.gold
    lines = [f"question {case.case_id}: {case.question}", f"answer: {case.answer}",
             f"note {note_id}: {'gold' if note_id in gold else 'not gold'}; gold notes ({len(gold)}): "
             + (", ".join(gold) or "not known"),
             f"store: {len(store)} notes; each method retrieves {depth}; verdicts at k = {k} (Success@{k})", ""]
    for m, (ranking, shown_id, e, others) in explain_note(store, case.question, note_id, retrievers, depth,
                                                          case.asked_on, gold).items():
        place = ranking_place(ranking, store, {store.by_id[note_id].session_id}, k, depth)
        words, _ = verdict(e, place, k, depth, len(store))
        sessions = session_words(ranking, store, place, gold, k, depth)
        more = "" if sessions == str(place.rank) else f"; session rank {sessions}"  # else the verdict says it
        lines.append(f"{m}: {words}{more}; score {number_text(e.score)}; {_RANKED_PREFIX.sub('', e.reason)}")
        if shown_id != note_id:
            lines.append(f"    explains {shown_id}, the best-ranked note of gold session {store.by_id[note_id].session_id}"
                         + "; the session's gold notes: " + ", ".join(f"{o} (note rank {r or '–'})" for o, r in others))
        if e.contrast is not None and e.contrast.rivals:
            lines += [f"    {line}" for line in e.contrast.lines()]
        elif summarize(e, store):
            lines.append(f"    {summarize(e, store)}")
    return "\n".join(lines)
