"""Retrieval metrics, per question and as run summaries (paper, section 4.4).

Protocol (LongMemEval, session level): each retrieved note maps to its source
session; the ranked sessions are de-duplicated (first occurrence wins) through
retrieval depth 40 and judged against the gold session ids. Note level (LoCoMo
evidence) judges the ranked note ids against the gold note ids, without de-duplication.

Per question, named as ir-measures names them:

- ``RR``: 1 / rank of the first relevant item, 0 if none (its mean is ``MRR``).
- ``Success@k`` (k = 1, 3, 5): 1 if any relevant item is among the first k, else 0.
  LongMemEval calls this recall_any@k; **the paper's per-type "recall@k" is Success@k**.
- ``R@k`` (k = 5, 10): the share of the relevant items among the first k (ir-measures
  recall; some call it Recall@k).
- ``nDCG@k`` (k = 5, 10): ir-measures/trec_eval nDCG with binary relevance; rank i is
  discounted by log2(i + 1).

and LongMemEval's two official measures, computed exactly as its
``src/retrieval/eval_utils.py`` computes them:

- ``recall_all@k`` (k = 5, 10): 1 if every gold session is among the first k.
- ``ndcg_any@k`` (k = 5, 10): DCG = rel_1 + sum over i >= 2 of rel_i / log2(i), so
  ranks 1 and 2 both get full weight; divided by the DCG of the ideal ordering.

RR, Success, R and nDCG are computed by ir-measures (trec_eval semantics).
Abstention questions (LongMemEval ``_abs``, no relevant items) are left out of every
metric; any other question without relevant items is a miss, 0 in every metric (`score_rankings`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import ir_measures
import pandas as pd
from ir_measures import RR, R, Success, nDCG

SUCCESS_KS = (1, 3, 5)
OFFICIAL_KS = (5, 10)
QUESTION_METRICS = ["RR", *(f"Success@{k}" for k in SUCCESS_KS), *(f"R@{k}" for k in OFFICIAL_KS),
                    *(f"nDCG@{k}" for k in OFFICIAL_KS), *(f"recall_all@{k}" for k in OFFICIAL_KS),
                    *(f"ndcg_any@{k}" for k in OFFICIAL_KS)]
# Summary columns: the mean of each per-question metric; RR's mean is named MRR.
SUMMARY_METRICS = ["MRR", *QUESTION_METRICS[1:]]


def dedupe_sessions(session_ids: Iterable[str], depth: int = 40) -> list[str]:
    """Sessions of the first `depth` retrieved notes, in rank order, first occurrence kept."""
    out: dict[str, None] = {}
    for i, sid in enumerate(session_ids):
        if i >= depth:
            break
        out.setdefault(sid, None)
    return list(out)


def longmemeval_dcg(relevances: Sequence[float], k: int) -> float:
    """LongMemEval's DCG@k: rel_1 + sum_{i=2..k} rel_i / log2(i)."""
    rel = list(relevances)[:k]
    return rel[0] + sum(r / math.log2(i) for i, r in enumerate(rel[1:], 2)) if rel else 0.0


def ndcg_any(ranked: Sequence[str], gold: Iterable[str], k: int) -> float:
    """LongMemEval's ndcg_any@k with binary relevance (every gold item assumed in the corpus)."""
    gold = set(gold)
    ideal = longmemeval_dcg([1.0] * len(gold), k)
    return longmemeval_dcg([float(s in gold) for s in ranked], k) / ideal if ideal else 0.0


def recall_all(ranked: Sequence[str], gold: Iterable[str], k: int) -> float:
    """LongMemEval's recall_all@k: 1.0 when every gold item is among the first k."""
    return float(set(gold) <= set(ranked[:k]))


def question_metrics(runs: dict[str, Sequence[str]], golds: dict[str, Sequence[str]],
                     recall_ks: Sequence[int] = OFFICIAL_KS) -> dict[str, dict[str, float]]:
    """Per question id: every metric of QUESTION_METRICS (see the module docstring), with
    R@k for each k of `recall_ks`.

    `runs` maps a question id to its ranked item ids (sessions already de-duplicated),
    `golds` to its relevant ids (non-empty). A question with an empty run scores 0 everywhere.
    """
    measures = [RR, *(Success @ k for k in SUCCESS_KS), *(R @ k for k in recall_ks), *(nDCG @ k for k in OFFICIAL_KS)]
    names = [n for n in QUESTION_METRICS if not n.startswith("R@")] + [f"R@{k}" for k in recall_ks]
    qrels = {q: {item: 1 for item in gold} for q, gold in golds.items()}
    run = {q: {item: float(len(ranked) - r) for r, item in enumerate(ranked)} for q, ranked in runs.items() if ranked}
    out = {q: dict.fromkeys(names, 0.0) for q in golds}
    for m in ir_measures.iter_calc(measures, qrels, run):
        out[m.query_id][str(m.measure)] = float(m.value)
    for q, gold in golds.items():
        ranked = list(runs.get(q, ()))
        for k in OFFICIAL_KS:
            out[q][f"recall_all@{k}"] = recall_all(ranked, gold, k)
            out[q][f"ndcg_any@{k}"] = ndcg_any(ranked, gold, k)
    return out


def score_rankings(rankings: pd.DataFrame, ranked: str = "ranked_session_ids",
                   gold: str = "gold_session_ids") -> pd.DataFrame:
    """`rankings` with the per-question metrics of its `ranked` column against `gold` added: NaN for
    abstention rows (``abstention`` true), 0 for a non-abstention row without gold (a miss by
    construction, as `taggraph.datasets.input_warnings` says), or NaN for every row without gold when
    `rankings` has no ``abstention`` column."""
    judged = {str(i): (r, g) for i, r, g in zip(rankings.index, rankings[ranked], rankings[gold]) if len(g)}
    metrics = question_metrics({i: r for i, (r, _) in judged.items()}, {i: g for i, (_, g) in judged.items()})
    if "abstention" in rankings:
        metrics.update({str(i): dict.fromkeys(QUESTION_METRICS, 0.0) for i, g, abstention
                        in zip(rankings.index, rankings[gold], rankings["abstention"]) if not len(g) and not abstention})
    table = pd.DataFrame.from_dict(metrics, orient="index", columns=QUESTION_METRICS)
    table.index = table.index.astype(rankings.index.dtype) if len(table) else table.index
    return rankings.join(table)


def summarize(scored: pd.DataFrame, by: Sequence[str] = ("method",), order: Sequence[str] | None = None) -> pd.DataFrame:
    """Mean of every metric over the judged rows (non-abstention, with gold) per `by` group,
    with ``n`` questions; `order` fixes the order of the methods."""
    judged = scored[scored["RR"].notna()]
    if "abstention" in judged:
        judged = judged[~judged["abstention"].astype(bool)]
    agg = {"n": ("question_id", "size"), "MRR": ("RR", "mean"), **{c: (c, "mean") for c in QUESTION_METRICS[1:]}}
    summary = judged.groupby(list(by), sort=False).agg(**agg).reset_index()
    if order is not None and "method" in by:
        summary["_order"] = summary["method"].map({m: i for i, m in enumerate(order)})
        summary = summary.sort_values([*[b for b in by if b != "method"], "_order"], kind="stable")
        summary = summary.drop(columns="_order").reset_index(drop=True)
    return summary


def per_type(scored: pd.DataFrame) -> pd.DataFrame:
    """MRR and Success@1/3/5 per question type and method (the paper's appendix G shape)."""
    judged = scored[scored["RR"].notna() & ~scored["abstention"].astype(bool)]
    return (judged.groupby(["question_type", "method"], sort=True)
            .agg(n=("question_id", "size"), MRR=("RR", "mean"),
                 **{f"Success@{k}": (f"Success@{k}", "mean") for k in SUCCESS_KS})
            .reset_index())
