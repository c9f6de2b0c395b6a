"""AdaptiveGraph component ablation (paper, section 5.1 and appendix F, Table 3).

Each ablation removes one component with the graph and query seeds fixed:
-Diffusion (PPR iterations = 0: ranks by the teleport vector), -Chronological
(no file-to-file time edges), -File seeding (no TF-IDF mass on file nodes).
A table cell is MRR(ablation) - MRR(AdaptiveGraph) over the same questions:
negative means the component was contributing. MRR is the session-level mean
reciprocal rank of `run_bench` over questions with gold sessions (abstention
and, on ATANT, questions no note strictly matches are left out).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from taggraph.datasets import Case
from taggraph.experiments.bench import BenchResult, run_bench
from taggraph.retrieval import DEFAULT_DEPTH

FULL = "AdaptiveGraph"
ABLATION_COLUMNS = {"AdaptiveGraph-noDiffusion": "-Diffusion", "AdaptiveGraph-noChronological": "-Chronological",
                    "AdaptiveGraph-noFileSeeding": "-File seeding"}


@dataclass
class AblationResult:
    table: pd.DataFrame  # Table 3: dataset, n, full (MRR), one MRR delta per removed component
    summary: pd.DataFrame  # dataset x method: n, MRR, R@1/3/5, ...
    runs: dict[str, BenchResult]  # per dataset
    config: dict[str, Any]


def component_ablation(cases: Sequence[Case] | Mapping[str, Sequence[Case]], extractor: str = "offline",
                       dataset: str = "data", depth: int = DEFAULT_DEPTH, workers: int = 1,
                       backend: str = "loky") -> AblationResult:
    """Run AdaptiveGraph and its three ablations per dataset (`cases` as {name: cases}, or one list named `dataset`)."""
    by_dataset = dict(cases) if isinstance(cases, Mapping) else {dataset: cases}
    methods = [FULL, *ABLATION_COLUMNS]
    runs, rows, summaries = {}, [], []
    for name, items in by_dataset.items():
        run = run_bench(list(items), methods, extractor=extractor, depth=depth, workers=workers, backend=backend)
        runs[name] = run
        mrr = run.summary.set_index("method")["MRR"]
        rows.append({"dataset": name, "n": int(run.summary["n"].iloc[0]), "full": mrr[FULL],
                     **{col: mrr[m] - mrr[FULL] for m, col in ABLATION_COLUMNS.items()}})
        summaries.append(run.summary.assign(dataset=name))
    summary = pd.concat(summaries, ignore_index=True)
    summary = summary[["dataset", *[c for c in summary.columns if c != "dataset"]]]
    config = {"experiment": "component_ablation", "datasets": list(by_dataset), "extractor": extractor,
              "depth": depth, "workers": workers, "backend": backend,
              "methods": next(iter(runs.values())).config["methods"] if runs else {}}
    return AblationResult(pd.DataFrame(rows), summary, runs, config)


def ablation_intervals(result: AblationResult, confidence: float = 0.95, seed: int = 0) -> pd.DataFrame:
    """Per dataset and removed component: n, the MRR change and its bootstrap confidence interval
    (`scipy.stats.bootstrap`, percentile method, over the per-question paired RR differences)."""
    from scipy.stats import bootstrap

    rows = []
    for name, run in result.runs.items():
        judged = run.rankings[run.rankings["RR"].notna() & ~run.rankings["abstention"].astype(bool)]
        rr = judged.pivot(index="question_id", columns="method", values="RR")
        for method, col in ABLATION_COLUMNS.items():
            diff = (rr[method] - rr[FULL]).dropna().to_numpy()
            if len(diff) > 1 and diff.min() < diff.max():
                ci = bootstrap((diff,), np.mean, confidence_level=confidence, method="percentile",
                               rng=np.random.default_rng(seed)).confidence_interval  # percentile: stable at small n
                low, high = float(ci.low), float(ci.high)
            else:  # no spread to resample: the interval is the single value
                low = high = float(diff.mean()) if len(diff) else float("nan")
            rows.append({"dataset": name, "removed": col, "n": len(diff), "MRR change": float(diff.mean()),
                         "CI low": low, "CI high": high})
    return pd.DataFrame(rows)
