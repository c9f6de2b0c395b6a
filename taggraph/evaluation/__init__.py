"""Evaluation: metric definitions (metrics) and run tables."""

from taggraph.evaluation.metrics import dedupe_sessions, session_metrics

__all__ = ["dedupe_sessions", "session_metrics"]
