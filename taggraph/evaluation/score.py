"""Rankings written by another system, scored with exactly the metrics and protocol of `bench`.

Two file formats, detected per file:

- TREC run format, one line per retrieved item: ``question_id Q0 session_id rank score run_name``
  (whitespace-separated; items ordered by rank, ties by score descending). The run
  name (6th column) names the method.
- JSONL, one object per question: ``{"question_id": ..., "ranked_session_ids": [...]}``,
  optionally ``"ranked_note_ids"`` and ``"method"``; without "method" the file name
  (without suffix) names the method.

Each question's sessions are de-duplicated through `depth` ranks, as for taggraph's own
methods. A question of the dataset that a run does not answer gets an empty ranking
(it scores 0); a question id the dataset does not have is an InputError naming it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from taggraph.errors import InputError
from taggraph.evaluation.metrics import dedupe_sessions


def _read_trec(path: Path, lines: list[str]) -> dict[str, dict[str, list[str]]]:
    items: dict[str, dict[str, list[tuple[int, float, str]]]] = {}
    for lineno, line in enumerate(lines, 1):
        if not line.strip():
            continue
        parts = line.split()
        if len(parts) != 6:
            raise InputError(f"{path}:{lineno}: a TREC run line has 6 fields (qid Q0 docid rank score run), "
                             f"got {len(parts)}")
        qid, _, doc, rank, score, name = parts
        try:
            items.setdefault(name, {}).setdefault(qid, []).append((int(rank), -float(score), doc))
        except ValueError:
            raise InputError(f"{path}:{lineno}: rank must be an integer and score a number, got {rank!r} {score!r}") \
                from None
    return {name: {q: [d for *_, d in sorted(v)] for q, v in runs.items()} for name, runs in items.items()}


def _read_jsonl(path: Path, lines: list[str]) -> dict[str, dict[str, dict[str, list[str]]]]:
    out: dict[str, dict[str, dict[str, list[str]]]] = {}
    for lineno, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"{path}:{lineno}: invalid JSON: {exc.msg}") from None
        ranked = record.get("ranked_session_ids") if isinstance(record, dict) else None
        if not isinstance(record, dict) or not isinstance(record.get("question_id"), str) \
                or not isinstance(ranked, list) or not all(isinstance(s, str) for s in ranked):
            raise InputError(f"{path}:{lineno}: expected {{\"question_id\": str, \"ranked_session_ids\": [str, ...]}}")
        name = str(record.get("method") or path.name.split(".")[0])
        out.setdefault(name, {})[record["question_id"]] = {"sessions": ranked,
                                                          "notes": list(record.get("ranked_note_ids") or [])}
    return out


def read_runs(path: Path) -> dict[str, dict[str, dict[str, list[str]]]]:
    """method -> question_id -> {"sessions": ranked session ids, "notes": ranked note ids}."""
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: cannot read run file: {exc}") from None
    first = next((line for line in lines if line.strip()), "")
    if first.lstrip().startswith("{"):
        return _read_jsonl(path, lines)
    return {name: {q: {"sessions": docs, "notes": []} for q, docs in runs.items()}
            for name, runs in _read_trec(path, lines).items()}


def external_rankings(paths: Sequence[Path], cases: Sequence[Any], depth: int = 40) -> pd.DataFrame:
    """Ranking rows (the shape of `run_bench(...).rankings`, unscored) of every run in `paths`."""
    by_id = {c.case_id: c for c in cases}
    rows = []
    for path in paths:
        for method, runs in read_runs(path).items():
            unknown = [q for q in runs if q not in by_id]
            if unknown:
                raise InputError(f"{path}: run {method!r} ranks question(s) not in the dataset: {unknown[:5]}")
            for case in cases:
                ranked = runs.get(case.case_id, {"sessions": [], "notes": []})
                rows.append({"question_id": case.case_id, "question_type": case.question_type, "method": method,
                             "ranked_session_ids": dedupe_sessions(ranked["sessions"], depth),
                             "gold_session_ids": list(case.gold_session_ids),
                             "ranked_note_ids": ranked["notes"][:depth], "abstention": case.is_abstention})
    return pd.DataFrame(rows)
