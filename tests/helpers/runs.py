"""Two demo run folders to compare (`two_demo_runs`), shared by the compare tests and the compare page's browser
tests."""

from __future__ import annotations

from pathlib import Path

from taggraph._infra.config import DEMO_DATA
from taggraph.datasets import load_dataset
from taggraph.runs.bench import run_bench
from taggraph.runs.folders import data_record, save_bench

METHODS = ["BM25", "TagGraph-Basic"]


def two_demo_runs(root: Path) -> tuple[Path, Path]:
    """Two demo runs of BM25 and TagGraph-Basic under `root`: `base`, and `tuned` with BM25's k1 = 5 and epsilon = 0
    (which moves demo_q07, demo_q08, demo_q11 and demo_q13), plus a hand-made explain page for demo_q07 in `tuned`."""
    cases = load_dataset(DEMO_DATA)
    base = save_bench(run_bench(cases, METHODS, extractor="none", backend=None), root / "base", data_record(DEMO_DATA))
    tuned = save_bench(run_bench(cases, METHODS, extractor="none", backend=None, method_params={"BM25": {"k1": 5.0, "epsilon": 0.0}}),
                       root / "tuned", data_record(DEMO_DATA))
    (tuned / "misses").mkdir()
    (tuned / "misses" / "demo_q07.explain.html").write_text("<html><body>why demo_q07</body></html>")
    return base, tuned
