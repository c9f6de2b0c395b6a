"""Run folders: every result saved with its configuration, data checksum and commit.

A run folder holds summary.csv, per_type.csv, rankings.csv, timings.csv,
stores.csv, report.md, report.html and run.json.
"""

from __future__ import annotations

import json
import platform
import subprocess
import sys
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Any

import pandas as pd

from taggraph.config import REPO_ROOT
from taggraph.atomic import atomic_write

PACKAGES = ["taggraph", "numpy", "scipy", "pandas", "networkx", "rank-bm25", "ir-measures", "spacy",
            "sentence-transformers", "torch", "model2vec", "ollama"]


def git_commit() -> str:
    """HEAD of the repository, with '+dirty' when the work tree has changes; 'unknown' outside git."""
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO_ROOT, capture_output=True, text=True,
                              check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=REPO_ROOT,
                               capture_output=True, text=True).stdout.strip()
        return head + ("+dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def versions() -> dict[str, str]:
    out = {"python": sys.version.split()[0], "platform": platform.platform()}
    for pkg in PACKAGES:
        try:
            out[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            pass
    return out


def run_record(config: dict[str, Any], data: dict[str, Any]) -> dict[str, Any]:
    return {"created": datetime.now(timezone.utc).isoformat(timespec="seconds"), "git_commit": git_commit(),
            "data": data, "config": config, "versions": versions()}


def write_csv(df: pd.DataFrame, path: Path) -> None:
    """CSV with list cells joined by single spaces, written atomically."""
    flat = df.copy()
    for col in flat.columns:
        if flat[col].map(lambda v: isinstance(v, list)).any():
            flat[col] = flat[col].map(lambda v: " ".join(map(str, v)) if isinstance(v, list) else v)
    atomic_write(path, flat.to_csv(index=False))


def save_tables(out: Path, tables: dict[str, pd.DataFrame], record: dict[str, Any]) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    for name, df in tables.items():
        write_csv(df, out / f"{name}.csv")
    atomic_write(out / "run.json", json.dumps(record, indent=1, default=str))
    return out


RANKINGS_FIRST = ["question_id", "question_type", "method", "ranked_session_ids", "gold_session_ids",
                  "reciprocal_rank"]


def benchmark_name(data_path: Path) -> str | None:
    """The paper's Table 1 benchmark a LongMemEval file corresponds to, if any."""
    name = data_path.name.lower()
    if "oracle" in name:
        return "LongMemEval (oracle)"
    if "longmemeval_s" in name:
        return "LongMemEval-S"
    return None


def save_bench(result, out: Path, data_path: Path, checksum: str) -> Path:
    """Write a bench result as a run folder (see module docstring)."""
    from taggraph.viz.report import html_report, markdown_report

    rankings = result.rankings[RANKINGS_FIRST + [c for c in result.rankings.columns if c not in RANKINGS_FIRST]]
    record = run_record(result.config, {"path": str(data_path), "sha256": checksum})
    save_tables(out, {"summary": result.summary, "per_type": result.per_type, "rankings": rankings,
                      "timings": result.timings, "stores": result.stores, **result.extra}, record)
    title = f"taggraph bench: {data_path.name or data_path}"
    md = markdown_report(result, title, str(data_path), benchmark_name(data_path))
    atomic_write(out / "report.md", md)
    atomic_write(out / "report.html", html_report(result, title, md))
    return out
