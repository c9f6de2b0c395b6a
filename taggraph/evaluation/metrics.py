"""Session-level retrieval metrics for LongMemEval (paper, section 4.4).

Protocol: each retrieved note maps to its source session; the ranked list of
sessions is de-duplicated (first occurrence wins) through retrieval depth 40
and judged against the gold session ids. Per question:

- ``RR``: 1 / rank of the first gold session in that list, 0 if none (MRR is its mean).
- ``R@k`` (k = 1, 3, 5): 1 if any gold session is among the first k sessions, else 0
  (LongMemEval's recall_any; the paper's per-type "recall@k").
- ``recall_all@k`` (k = 5, 10): 1 if every gold session is among the first k.
- ``ndcg_any@k`` (k = 5, 10): nDCG@k with binary relevance of each gold session.

Computed with ir-measures (trec-eval semantics) on the de-duplicated session
run; questions without gold sessions (abstention, ``_abs``) have no
relevant item and are left out of every metric by the caller.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import ir_measures
from ir_measures import RR, R, Success, nDCG

RECALL_KS = (1, 3, 5)
OFFICIAL_KS = (5, 10)
_MEASURES = [RR, *(Success @ k for k in RECALL_KS), *(R @ k for k in OFFICIAL_KS), *(nDCG @ k for k in OFFICIAL_KS)]


def dedupe_sessions(session_ids: Iterable[str], depth: int = 40) -> list[str]:
    """Sessions of the first `depth` retrieved notes, in rank order, first occurrence kept."""
    out: dict[str, None] = {}
    for i, sid in enumerate(session_ids):
        if i >= depth:
            break
        out.setdefault(sid, None)
    return list(out)


def session_metrics(runs: dict[str, Sequence[str]], golds: dict[str, Sequence[str]]) -> dict[str, dict[str, float]]:
    """Per question id: RR, R@1/3/5, recall_all@5/10, ndcg_any@5/10.

    `runs` maps a question id to its de-duplicated ranked session ids, `golds` to
    its gold session ids (non-empty). A question with an empty run scores 0 everywhere.
    """
    qrels = {q: {sid: 1 for sid in gold} for q, gold in golds.items()}
    run = {q: {sid: float(len(ranked) - r) for r, sid in enumerate(ranked)} for q, ranked in runs.items() if ranked}
    out = {q: {"RR": 0.0, **{f"R@{k}": 0.0 for k in RECALL_KS},
               **{f"recall_all@{k}": 0.0 for k in OFFICIAL_KS}, **{f"ndcg_any@{k}": 0.0 for k in OFFICIAL_KS}}
           for q in golds}
    for m in ir_measures.iter_calc(_MEASURES, qrels, run):
        name = str(m.measure)
        if name.startswith("Success@"):
            out[m.query_id]["R@" + name.split("@")[1]] = m.value
        elif name.startswith("R@"):
            out[m.query_id]["recall_all@" + name.split("@")[1]] = float(m.value >= 1.0 - 1e-12)
        elif name.startswith("nDCG@"):
            out[m.query_id]["ndcg_any@" + name.split("@")[1]] = m.value
        else:
            out[m.query_id]["RR"] = m.value
    return out
