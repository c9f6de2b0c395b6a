"""Evaluation: every metric in one room, named as ir-measures names them.

- `metrics`: session and note level per-question metrics (RR, Success@k, R@k, nDCG@k) and
  LongMemEval's official recall_all@k / ndcg_any@k; run summaries.
- `benchmarks`: ATANT's strict/permissive content-match MRR, LoCoMo's evidence recall.
- `answers`: token F1 and containment of generated answers.
- `score`: rankings written by another system, scored with the same metrics.
- `paper`: the paper's published numbers.
"""

from taggraph.evaluation.metrics import (QUESTION_METRICS, SUMMARY_METRICS, dedupe_sessions, question_metrics,
                                         score_rankings, summarize)

__all__ = ["QUESTION_METRICS", "SUMMARY_METRICS", "dedupe_sessions", "question_metrics", "score_rankings", "summarize"]
