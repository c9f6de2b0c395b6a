"""Each benchmark's own metric tables, beside the LongMemEval session metrics.

Both take `rankings` as `run_bench(...).rankings` over `cases` and use the metric
definitions of `taggraph.evaluation.metrics` (ir-measures names). As in trec_eval,
a question without a relevant item under a criterion or level is left out of it.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from taggraph.evaluation.metrics import ndcg_any, question_metrics, recall_all


def _per_question(rankings: pd.DataFrame, golds: dict[str, Sequence[str]], ranked: str,
                  recall_ks: Sequence[int] = (5, 10)) -> dict:
    """(question_id, method) -> metrics of the `ranked` column against `golds` (judged rows only)."""
    keys = [(r.question_id, r.method, getattr(r, ranked)) for r in rankings.itertuples(index=False)
            if len(golds.get(r.question_id) or ())]
    scores = question_metrics({str(i): run for i, (_, _, run) in enumerate(keys)},
                              {str(i): golds[q] for i, (q, _, _) in enumerate(keys)}, recall_ks)
    return {(q, m): scores[str(i)] for i, (q, m, _) in enumerate(keys)}


def atant_metrics(rankings: pd.DataFrame, cases: Sequence) -> pd.DataFrame:
    """MRR per split, category (and "all") and method under ATANT's two content-match criteria.

    A note is strictly relevant when it contains every expected substring (the case's
    ``gold_session_ids``; one note per session) and permissively relevant when it
    contains at least one (``permissive_session_ids``). ``MRR_strict`` and
    ``MRR_permissive`` are means of RR over the questions with a relevant note under
    that criterion, counted by ``n_strict`` and ``n_permissive``.
    """
    by_id = {c.case_id: c for c in cases}
    strict = _per_question(rankings, {q: c.gold_session_ids for q, c in by_id.items()}, "ranked_session_ids")
    permissive = _per_question(rankings, {q: c.permissive_session_ids for q, c in by_id.items()}, "ranked_session_ids")
    rows = []
    for r in rankings.itertuples(index=False):
        c, key = by_id[r.question_id], (r.question_id, r.method)
        rows.append({"split": c.split, "category": c.category, "method": r.method,
                     "rr_strict": strict[key]["RR"] if key in strict else float("nan"),
                     "rr_permissive": permissive[key]["RR"] if key in permissive else float("nan")})
    per_q = pd.DataFrame(rows)
    per_q = pd.concat([per_q, per_q.assign(category="all")])
    out = (per_q.groupby(["split", "category", "method"], sort=False)
           .agg(n_questions=("method", "size"), n_strict=("rr_strict", "count"),
                MRR_strict=("rr_strict", "mean"), n_permissive=("rr_permissive", "count"),
                MRR_permissive=("rr_permissive", "mean"))
           .reset_index())
    out["_not_all"] = out["category"] != "all"
    return out.sort_values(["split", "_not_all", "category"], kind="stable").drop(columns="_not_all") \
        .reset_index(drop=True)


def locomo_metrics(rankings: pd.DataFrame, cases: Sequence, ks: Sequence[int] = (1, 5, 10)) -> pd.DataFrame:
    """MRR, Success@1/5/10 and R@k (k in `ks`) per level (note, session), category (and "all") and method.

    Note level judges ``ranked_note_ids`` against the evidence notes (``gold_note_ids``):
    its R@k is LoCoMo's evidence recall. Session level judges the de-duplicated
    ``ranked_session_ids`` against ``gold_session_ids``. Questions whose evidence names
    no turn of the conversation have no relevant item and are left out, as are abstention questions (your own
    data's; their gold is not judged), and so is a method that ranks no note for any question (a session-level
    run read from a file): it has no note level, not RR 0.
    """
    by_id = {c.case_id: c for c in cases if not c.is_abstention}
    ranks_notes = rankings.groupby("method", sort=False)["ranked_note_ids"].transform(
        lambda notes: any(len(n) for n in notes)).astype(bool)
    levels = {"note": _per_question(rankings[ranks_notes], {q: c.gold_note_ids for q, c in by_id.items()},
                                    "ranked_note_ids", ks),
              "session": _per_question(rankings, {q: c.gold_session_ids for q, c in by_id.items()},
                                       "ranked_session_ids", ks)}
    metrics = ["RR", "Success@1", "Success@5", "Success@10", *(f"R@{k}" for k in ks)]
    rows = [{"level": level, "category": by_id[q].question_type, "method": m, **{k: v[k] for k in metrics}}
            for level, table in levels.items() for (q, m), v in table.items()]
    per_q = pd.DataFrame(rows, columns=["level", "category", "method", *metrics])
    per_q = pd.concat([per_q.assign(category="all"), per_q])
    return (per_q.groupby(["level", "category", "method"], sort=False)
            .agg(n=("RR", "size"), MRR=("RR", "mean"), **{m: (m, "mean") for m in metrics[1:]}).reset_index())


REALMEM_KS = (5, 10, 20)  # the cut-offs of RealMemBench's eval/compute_auto_metrics_for_realmem.py


def realmem_metrics(rankings: pd.DataFrame, cases: Sequence, ks: Sequence[int] = REALMEM_KS) -> pd.DataFrame:
    """recall_any@k, recall_all@k and ndcg_any@k (k in `ks`) per category (and "all") and method, as RealMemBench's
    own evaluation computes them over the de-duplicated ``ranked_session_ids`` (ndcg_any: LongMemEval's, every
    gold session in the corpus); questions without gold sessions are left out."""
    by_id = {c.case_id: c for c in cases if c.gold_session_ids and not c.is_abstention}
    rows = []
    for r in rankings.itertuples(index=False):
        if r.question_id not in by_id:
            continue
        gold, ranked = set(by_id[r.question_id].gold_session_ids), list(r.ranked_session_ids)
        rows.append({"category": by_id[r.question_id].question_type, "method": r.method,
                     **{f"recall_any@{k}": float(bool(gold & set(ranked[:k]))) for k in ks},
                     **{f"recall_all@{k}": recall_all(ranked, gold, k) for k in ks},
                     **{f"ndcg_any@{k}": ndcg_any(ranked, gold, k) for k in ks}})
    metrics = [f"{name}@{k}" for name in ("recall_any", "recall_all", "ndcg_any") for k in ks]
    per_q = pd.DataFrame(rows, columns=["category", "method", *metrics])
    per_q = pd.concat([per_q.assign(category="all"), per_q])
    return (per_q.groupby(["category", "method"], sort=False)
            .agg(questions=("method", "size"), **{m: (m, "mean") for m in metrics}).reset_index())
