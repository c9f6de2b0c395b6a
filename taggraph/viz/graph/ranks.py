"""Where each method ranks the notes the graph page draws, by `evaluation.placement`'s rules (each session once,
where its best note ranks; a top-k place owed to tie order told apart)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from taggraph.evaluation import placement
from taggraph.evaluation.placement import SessionPlace
from taggraph.methods.base import DEFAULT_DEPTH
from taggraph.core.store import MemoryStore


def ranks_by_method(results_by_method: Mapping[str, Sequence] | None) -> dict[str, dict[str, int]]:
    """method -> note id -> 1-based rank; accepts ranked note ids or `Result`s."""
    out: dict[str, dict[str, int]] = {}
    for method, results in (results_by_method or {}).items():
        ranks: dict[str, int] = {}
        for i, r in enumerate(results, 1):
            ranks.setdefault(r if isinstance(r, str) else r.note_id, getattr(r, "rank", i))
        out[method] = ranks
    return out


Ranking = list  # (note id, score or None when unknown) in rank order


def rankings_by_method(results_by_method: Mapping[str, Sequence] | None) -> dict[str, Ranking]:
    """method -> (note id, score) in rank order; accepts ranked note ids (score unknown) or `Result`s."""
    return {m: [(r, None) if isinstance(r, str) else (r.note_id, r.score) for r in results]
            for m, results in (results_by_method or {}).items()}


def indexed(store: MemoryStore, ranking: Ranking) -> list[tuple[int, float | None]]:
    """A ranking of note ids as `evaluation.placement` reads rankings: (note index, score)."""
    return [(store.by_id[n].index, s) for n, s in ranking]


def session_ranks(store: MemoryStore, ranking: Ranking, k: int) -> tuple[dict[str, int], set[str]]:
    """(note id -> its session's rank, for the best-ranked note of each session: each session counted once, as
    the metrics and the run report count; those of the top `k` sessions placed there only by tie order,
    `tie_order_only` on sessions, none when the scores are unknown)."""
    ranks: dict[str, int] = {}
    seen: set[str] = set()
    for n, _ in ranking:
        sid = store.by_id[n].session_id
        if sid not in seen:
            seen.add(sid)
            ranks[n] = len(seen)
    ties = {n for n, r in ranks.items()
            if r <= k and placement.ranking_place(indexed(store, ranking), store, {store.by_id[n].session_id}, k, len(ranking)).tie}
    return ranks, ties


def gold_rank(store: MemoryStore, ranking: Ranking, note_id: str, k: int, depth: int = DEFAULT_DEPTH) -> dict:
    """One note's place in a ranking: ``note`` (its rank among notes), ``session`` (its session's rank,
    each session counted once where its best note ranks, as the metrics count: None when that note is
    beyond `depth`, the run's retrieval depth), ``tie`` (that session is in the top `k` only by tie order,
    `tie_order_only`) and ``text``, which also tells a rank that rests on tie order as the explain page's verdict
    does (outside the top `k` only by tie order, or a tie-averaged RR other than its own); ranks None when not
    ranked."""
    notes = [n for n, _ in ranking]
    if note_id not in notes:
        return {"note": None, "session": None, "tie": False,
                "text": f"{note_id}: not among the {len(notes)} notes ranked"}
    place = placement.ranking_place(indexed(store, ranking), store, {store.by_id[note_id].session_id}, k, depth)
    score = "" if place.score is None else " (score 0)" if place.score == 0 else f" (score {place.score:.4g})"
    tie = ""
    if place.tie:
        tie = " only by tie order" + score
    elif place.tie_outside:
        tie = f", outside the top {k} only by tie order{score}"
    elif place.rr_tieavg is not None:
        tie = (f" (it rests on tie order: tied with {place.tied_with} other session(s), tie-averaged RR "
               f"{place.rr_tieavg:.3f}, not {1 / place.rank:.3f})")
    session = (f"session rank {place.rank}" if place.rank is not None else
               f"session not ranked: its best note is beyond the depth of {depth} notes, as the metrics count")
    return {"note": notes.index(note_id) + 1, "session": place.rank, "tie": place.tie,
            "text": f"{note_id}: note rank {notes.index(note_id) + 1}, {session}{tie}"}
