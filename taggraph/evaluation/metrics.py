"""Retrieval metrics, per question and as run summaries (paper, section 4.4).

Protocol (LongMemEval, session level): each retrieved note maps to its source
session; the ranked sessions are de-duplicated (first occurrence wins) through
retrieval depth 40 and judged against the gold session ids. Note level (LoCoMo
evidence) judges the ranked note ids against the gold note ids, without de-duplication.

Per question, named as ir-measures names them:

- ``RR``: 1 / rank of the first relevant item, 0 if none (its mean is ``MRR``).
- ``Success@k`` (k = 1, 3, 5, 10): 1 if any relevant item is among the first k, else 0.
  LongMemEval calls this recall_any@k; **the paper's per-type "recall@k" is Success@k** (k = 1, 3, 5; Success@10
  stands beside R@10 for the "Recall@10" other systems report as any gold in the first 10).
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

Beside them, when the rows carry the scores of their ranked notes (``ranked_scores``), the
tie-aware columns (`tie_averaged`): ``RR_tieavg`` and ``Success@k_tieavg``, the expected RR and
Success@k when sessions with equal scores are put in random order (McSherry & Najork 2008), and
``first_gold_tied``: the first gold session shares its score with a non-gold session, so its
rank rests partly on note order. Summaries add ``MRR_tieavg`` and ``MRR_from_tie_order`` =
MRR - MRR_tieavg, and beside ``n`` (the questions every mean is over) ``n_judged``: those with gold to judge against.
Abstention questions (LongMemEval ``_abs``: the answer is not in the history; the sessions they name are not
judged) are left out of every metric; any other question without relevant items is a miss, 0 in every metric
(`score_rankings`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from itertools import groupby, repeat

import ir_measures
import pandas as pd
from ir_measures import RR, R, Success, nDCG

from taggraph.methods.base import same_score

SUCCESS_KS = (1, 3, 5, 10)
PER_TYPE_KS = (1, 3, 5)  # the paper's appendix G
OFFICIAL_KS = (5, 10)
QUESTION_METRICS = ["RR", *(f"Success@{k}" for k in SUCCESS_KS), *(f"R@{k}" for k in OFFICIAL_KS),
                    *(f"nDCG@{k}" for k in OFFICIAL_KS), *(f"recall_all@{k}" for k in OFFICIAL_KS),
                    *(f"ndcg_any@{k}" for k in OFFICIAL_KS)]
# Summary columns: the mean of each per-question metric; RR's mean is named MRR.
SUMMARY_METRICS = ["MRR", *QUESTION_METRICS[1:]]
TIE_METRICS = ["RR_tieavg", *(f"Success@{k}_tieavg" for k in SUCCESS_KS)]


def dedupe_sessions(session_ids: Iterable[str], depth: int = 40) -> list[str]:
    """Sessions of the first `depth` retrieved notes, in rank order, first occurrence kept."""
    return [sid for sid, _ in session_scores(session_ids, repeat(0.0), depth)]


def session_scores(session_ids: Iterable[str], scores: Iterable[float], depth: int = 40) -> list[tuple[str, float]]:
    """(session, score) of `dedupe_sessions`: a session's score is that of its first note, its best one
    since notes come score-descending."""
    out: dict[str, float] = {}
    for i, (sid, score) in enumerate(zip(session_ids, scores)):
        if i >= depth:
            break
        out.setdefault(sid, float(score))
    return list(out.items())


def tie_averaged(scores: Sequence[float], relevant: Sequence[bool], ks: Sequence[int] = SUCCESS_KS) -> dict[str, float]:
    """Expected RR and Success@k of a ranking (`scores` descending) when every group of equal scores is
    put in random order, all orders equally likely; exact (McSherry & Najork 2008, ECIR).

    Only the group holding the first relevant item matters: with s items above it, n in it and r of
    them relevant, the first relevant one sits at s + i with probability C(n-i, r-1) / C(n, r), and no
    relevant one is among the group's first m = k - s with probability C(n-r, m) / C(n, m).
    Written here because ir-measures and ranx break ties (trec_eval: by document id), and the one
    package that averages them (tie-aware-retrieval-metrics, 0.1.1 of April 2026) is too new to pin.
    """
    if any(a < b for a, b in zip(scores, scores[1:])):
        raise ValueError("scores must be in descending order")
    out = {"RR_tieavg": 0.0, **{f"Success@{k}_tieavg": 0.0 for k in ks}}
    above = 0
    for _, group in groupby(zip(tie_groups(scores), relevant), key=lambda x: x[0]):
        flags = [bool(rel) for _, rel in group]
        n, r = len(flags), sum(flags)
        if r:
            orders = math.comb(n, r)
            out["RR_tieavg"] = sum(math.comb(n - i, r - 1) / orders / (above + i) for i in range(1, n - r + 2))
            for k in ks:
                m = min(max(k - above, 0), n)
                out[f"Success@{k}_tieavg"] = 1 - math.comb(n - r, m) / math.comb(n, m)
            return out
        above += n
    return out


def first_gold_tied(scores: Sequence[float], relevant: Sequence[bool], placed: int | None = None) -> bool:
    """Whether the first relevant item among the first `placed` (default: all) shares its score with a
    non-relevant item anywhere in the list, above or below it: its rank then rests partly on tie
    order. False when none of them is relevant."""
    first = next((i for i, rel in enumerate(relevant[:placed]) if rel), None)
    return first is not None and any(same_score(s, scores[first]) and not rel for s, rel in zip(scores, relevant))


def tie_groups(scores: Sequence[float]) -> list[int]:
    """The tie group of each of `scores` (descending), numbered from 0: a score `same_score` as its group's first
    joins the group."""
    groups, group, head = [], -1, None
    for s in scores:
        if head is None or not same_score(s, head):
            group, head = group + 1, s
        groups.append(group)
    return groups


def tie_metrics(sessions: Sequence[str], scores: Sequence[float], gold: Iterable[str],
                tied_beyond: Iterable[str] = (), cut: float | None = None) -> dict[str, float | bool]:
    """`tie_averaged` and `first_gold_tied` of the de-duplicated `sessions` with their `scores`
    (`session_scores`) against `gold`.

    `tied_beyond`: sessions not retrieved that hold a note beyond the depth tied with the last retrieved
    note, whose score is `cut`. They join the ranking at `cut`, so a tie group cut by the depth counts
    whole (the ranking is then not cut at the depth): 50 all-zero sessions of which 5 fit the depth
    would otherwise give a gold session among those 5 an expected RR of ~0.46 instead of ~0.09.
    """
    gold = set(gold)
    rows = list(zip(sessions, map(float, scores)))
    placed = len(rows)
    if cut is not None:
        seen = set(sessions)
        rows += [(sid, float(cut)) for sid in dict.fromkeys(tied_beyond) if sid not in seen]
    values = [s for _, s in rows]
    relevant = [sid in gold for sid, _ in rows]
    return {**tie_averaged(values, relevant), "first_gold_tied": first_gold_tied(values, relevant, placed)}


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
    `rankings` has no ``abstention`` column. Rows with ``ranked_session_scores`` (the runner's) also get
    the tie-aware columns (`tie_columns`)."""
    abstains = rankings["abstention"].astype(bool) if "abstention" in rankings else pd.Series(False, rankings.index)
    judged = {str(i): (r, g) for i, r, g, no in zip(rankings.index, rankings[ranked], rankings[gold], abstains)
              if len(g) and not no}  # LongMemEval's _abs questions name gold sessions, yet no metric counts them
    metrics = question_metrics({i: r for i, (r, _) in judged.items()}, {i: g for i, (_, g) in judged.items()})
    if "abstention" in rankings:
        metrics.update({str(i): dict.fromkeys(QUESTION_METRICS, 0.0) for i, g, abstention
                        in zip(rankings.index, rankings[gold], rankings["abstention"]) if not len(g) and not abstention})
    table = pd.DataFrame.from_dict(metrics, orient="index", columns=QUESTION_METRICS).astype(float)  # float if empty
    table.index = table.index.astype(rankings.index.dtype) if len(table) else table.index
    out = rankings.join(table)
    return out.join(tie_columns(out, ranked, gold)) if "ranked_session_scores" in rankings else out


def tie_columns(scored: pd.DataFrame, ranked: str = "ranked_session_ids", gold: str = "gold_session_ids") -> pd.DataFrame:
    """TIE_METRICS and ``first_gold_tied`` per row of `scored` (`tie_metrics` of ``ranked_session_scores``,
    ``tied_beyond_depth`` and the last of ``ranked_scores`` as the cut score); NaN where RR is NaN
    (abstention) or the row has no scores (another system's rankings), 0 and False where RR is 0 for want
    of gold."""
    rows = {}
    for i, row in zip(scored.index, scored.to_dict("records")):
        scores, notes = row.get("ranked_session_scores"), row.get("ranked_scores")
        if pd.isna(row["RR"]) or not isinstance(scores, (list, tuple)):
            continue
        cut = notes[-1] if isinstance(notes, (list, tuple)) and notes else None
        beyond = row.get("tied_beyond_depth")
        rows[i] = tie_metrics(row[ranked], scores, row[gold], beyond if isinstance(beyond, (list, tuple)) else (), cut)
    columns = [*TIE_METRICS, "first_gold_tied"]
    return pd.DataFrame.from_dict(rows, orient="index", columns=columns).reindex(scored.index)


def without_abstention(rankings: pd.DataFrame) -> pd.DataFrame:
    """The rows of `rankings` whose question is no abstention question (all of them without that column)."""
    return rankings[~rankings["abstention"].astype(bool)] if "abstention" in rankings else rankings


def judged_rows(scored: pd.DataFrame) -> pd.DataFrame:
    """The rows of `scored` every metric counts: with an RR (gold sessions, scored) and not an abstention."""
    return without_abstention(scored[scored["RR"].notna()])


def summarize(scored: pd.DataFrame, by: Sequence[str] = ("method",), order: Sequence[str] | None = None,
              gold: str = "gold_session_ids") -> pd.DataFrame:
    """Mean of every metric over the judged rows (`judged_rows`) per `by` group, with ``n`` questions and
    ``n_judged``, those of them with `gold` items (the others, no abstention, count as misses: 0), then the tie-aware means (MRR_tieavg, Success@k_tieavg) and MRR_from_tie_order when `scored` has them; `order` fixes
    the order of the methods."""
    judged = judged_rows(scored)
    judged = judged.assign(_with_gold=judged[gold].map(len) > 0 if gold in judged else True)
    agg = {"n": ("question_id", "size"), "n_judged": ("_with_gold", "sum"), "MRR": ("RR", "mean"),
           **{c: (c, "mean") for c in QUESTION_METRICS[1:]}, **_tie_means(scored)}
    summary = _with_tie_share(judged.groupby(list(by), sort=False).agg(**agg).reset_index())
    if order is not None and "method" in by:
        summary["_order"] = summary["method"].map({m: i for i, m in enumerate(order)})
        summary = summary.sort_values([*[b for b in by if b != "method"], "_order"], kind="stable")
        summary = summary.drop(columns="_order").reset_index(drop=True)
    return summary


def _tie_means(scored: pd.DataFrame, ks: Sequence[int] = SUCCESS_KS) -> dict[str, tuple[str, str]]:
    """Aggregations of the tie-aware means (MRR_tieavg, Success@k_tieavg), when `scored` has the columns."""
    if "RR_tieavg" not in scored:
        return {}
    return {"MRR_tieavg": ("RR_tieavg", "mean"), **{f"Success@{k}_tieavg": (f"Success@{k}_tieavg", "mean") for k in ks}}


def _with_tie_share(summary: pd.DataFrame) -> pd.DataFrame:
    """``MRR_from_tie_order`` = MRR - MRR_tieavg, when the summary has MRR_tieavg."""
    if "MRR_tieavg" in summary:
        summary["MRR_from_tie_order"] = summary["MRR"] - summary["MRR_tieavg"]
    return summary


def per_type(scored: pd.DataFrame) -> pd.DataFrame:
    """MRR and Success@1/3/5 per question type and method (the paper's appendix G shape), then the
    tie-aware means and MRR_from_tie_order when `scored` has them."""
    judged = judged_rows(scored)
    return _with_tie_share(judged.groupby(["question_type", "method"], sort=True)
                           .agg(n=("question_id", "size"), MRR=("RR", "mean"),
                                **{f"Success@{k}": (f"Success@{k}", "mean") for k in PER_TYPE_KS},
                                **_tie_means(scored, PER_TYPE_KS))
                           .reset_index())
