"""Where the first of some sessions ranks, as the metrics count it (each session once, at its best note; a
top-k place owed to tie order told apart): in one ranking (`session_place`, `ranking_place`, the note that gives a
session its rank: `rank_giver`, `first_gold_giver`; the methods that miss: `missed_by`; the note
the pages open on: `focus`) and over a run's scored rankings (`first_gold_ranks`, `misses_table`). The explain
and graph pages, the charts and the run report judge by these."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import NamedTuple

import pandas as pd

from taggraph.core.store import MemoryStore
from taggraph.evaluation.metrics import judged_rows, session_scores, tie_averaged
from taggraph.methods import DEFAULT_DEPTH
from taggraph.methods.base import same_score


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


def ranking_place(ranking: Sequence[tuple[int, float]], store: MemoryStore, sessions: set[str], k: int,
                  depth: int = DEFAULT_DEPTH) -> SessionPlace:
    """`session_place` of the first of `sessions` in `ranking` ((note index, score) in rank order, every note)."""
    return session_place([store.notes[i].session_id for i, _ in ranking], [s for _, s in ranking], sessions, k, depth)


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


def first_gold_giver(ranking: Sequence[tuple[int, float | None]], store: MemoryStore, gold: Sequence[str]
                     ) -> str | None:
    """The note that gives the first gold session its rank in `ranking`: the best-ranked note of any of the `gold`
    notes' sessions (gold or not, as the metrics count sessions); the first gold note when none is ranked."""
    sessions = {store.by_id[g].session_id for g in gold}
    return next((store.notes[i].note_id for i, _ in ranking if store.notes[i].session_id in sessions),
                gold[0] if gold else None)


def missed_by(rankings: Mapping[str, Sequence[tuple[int, float | None]]], store: MemoryStore, gold: Sequence[str],
              k: int) -> list[str]:
    """The methods that miss: no gold session in their first `k` sessions (within the ranking's length), or one
    there only by tie order (`tie_order_only` on sessions), as the run report counts."""
    sessions = {store.by_id[g].session_id for g in gold if g in store.by_id}
    out = []
    for method, ranking in rankings.items():
        place = ranking_place(ranking, store, sessions, k, len(ranking))
        if place.rank is None or place.rank > k or place.tie:
            out.append(method)
    return out


def focus(rankings: Mapping[str, Sequence[tuple[int, float | None]]], store: MemoryStore, gold: Sequence[str],
          k: int) -> tuple[str | None, str | None]:
    """(method, gold note) the explain and graph pages open on, the same for both: the first method that misses
    (`missed_by`; else the first method) and the gold note of the session that gives its first gold session its
    rank (`first_gold_giver`: that note when gold, else the session's first gold note); the first gold note when
    no method ranks."""
    if not gold:
        return next(iter(rankings), None), None
    method = next(iter(missed_by(rankings, store, gold, k) or rankings), None)
    if method is None:
        return None, gold[0]
    giver = first_gold_giver(rankings[method], store, gold)
    session = store.by_id[giver].session_id
    return method, giver if giver in gold else next(g for g in gold if store.by_id[g].session_id == session)


def first_gold_ranks(rankings: pd.DataFrame) -> pd.DataFrame:
    """Judged rows with the rank of the first gold session (``first_gold``, None when not retrieved)."""
    judged = judged_rows(rankings).copy()
    judged["first_gold"] = judged["RR"].map(lambda rr: round(1 / rr) if rr > 0 else None).astype("Int64")
    return judged


def misses_table(rankings: pd.DataFrame, k: int = 5) -> pd.DataFrame:
    """One row per question some method did not rank in its top k: question_id, question_type and
    the first gold rank under each method (<NA>: not retrieved), in question order.

    A placement in the top k by tie order alone counts as a miss: the rank is there, and
    ``attrs["tie_only"]`` maps (question_id, method) to Success@k_tieavg (< 1: some order of the tied
    sessions leaves every gold session out of the top k; the pages' rule, `tie_order_only`, on
    the run's column), as it does a place outside the top k by tie order alone (> 0: some order brings one
    in). Needs the run's ``Success@k_tieavg`` column."""
    judged = first_gold_ranks(rankings)
    rows = judged.drop_duplicates(["question_id", "method"]).set_index(["question_id", "method"])
    table = (rows["first_gold"].unstack("method")
             .reindex(index=list(dict.fromkeys(judged["question_id"])), columns=list(dict.fromkeys(judged["method"]))))
    tie_col = f"Success@{k}_tieavg"
    tie_only = {}
    if tie_col in rows:
        inside = (rows["first_gold"] <= k).fillna(False) & (rows[tie_col] < 1)
        outside = (rows["first_gold"] > k).fillna(False) & (rows[tie_col] > 0)  # another order brings it in
        tie_only = {key: float(v) for key, v in rows[tie_col][inside | outside].items()}
    tied = pd.Series(False, index=table.index)
    for qid, _ in tie_only:
        tied[qid] = True
    missed = table.isna().any(axis=1) | (table > k).any(axis=1) | tied
    table.insert(0, "question_type", rows.reset_index().drop_duplicates("question_id")
                 .set_index("question_id")["question_type"])
    out = table[missed].rename_axis(index="question_id", columns=None).reset_index()
    out.attrs["tie_only"] = tie_only
    return out
