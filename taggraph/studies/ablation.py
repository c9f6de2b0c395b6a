"""Component ablation (paper, section 5.1 and appendix F, Table 3), for any method with ablations.

AdaptiveGraph's (the paper's): each ablation removes one component with the graph
and query seeds fixed: -Diffusion (PPR iterations = 0: ranks by the teleport
vector), -Chronological (no file-to-file time edges), -File seeding (no TF-IDF mass
on file nodes). Another method's ablations are its registry entries named
``<method>-no<Part>`` (one component off each; `retrieval.registry.ablations_of`).
A table cell is MRR(ablation) - MRR(full) over the same questions: negative means
the component was contributing; beside it, ``<cell> p`` is the paired randomization
test's p-value over those questions (`evaluation.significance`), and ``<cell> p_holm`` and ``<cell> p_bh`` adjust
it over the ablations compared (Holm's decides the verdicts). MRR is the
session-level mean reciprocal rank of `run_bench` over questions with gold
sessions (abstention and, on ATANT, questions no note strictly matches are left out).

`evaluation.verdicts.component_verdicts` says in one sentence per removed component whether it earns
its keep.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from taggraph._infra.config import DEFAULT_EXTRACTOR
from taggraph.datasets import Case
from taggraph.errors import ConfigError
from taggraph.evaluation.significance import compare
from taggraph.runs.bench import BenchResult, run_bench
from taggraph.evaluation.verdicts import FULL, ablation_columns
from taggraph.methods import DEFAULT_DEPTH, check_methods, method_names


@dataclass
class AblationResult:
    table: pd.DataFrame  # Table 3: dataset, n, full (MRR), one MRR delta per removed component
    summary: pd.DataFrame  # dataset x method: n, MRR, R@1/3/5, ...
    runs: dict[str, BenchResult]  # per dataset
    config: dict[str, Any]


def declared_ablations(method: str) -> dict[str, str]:
    """`method`'s ablations (`ablation_columns`); ConfigError, before any work, for an unknown method or one that
    declares none (its run would be a table of `full` alone)."""
    check_methods([method])  # an unknown name: its own ConfigError, naming the known methods
    columns = ablation_columns(method)
    if not columns:
        having = [m for m in method_names() if ablation_columns(m)]
        raise ConfigError(f"{method} declares no ablations; methods that do: {', '.join(having)}")
    return columns


def component_ablation(cases: Sequence[Case] | Mapping[str, Sequence[Case]], extractor: str = DEFAULT_EXTRACTOR,
                       dataset: str = "data", depth: int = DEFAULT_DEPTH, workers: int = 1,
                       backend: str = "loky", method: str = FULL) -> AblationResult:
    """Run `method` and its ablations per dataset (`cases` as {name: cases}, or one list named `dataset`)."""
    by_dataset = dict(cases) if isinstance(cases, Mapping) else {dataset: cases}
    columns = declared_ablations(method)
    methods = [method, *columns]
    runs, rows, summaries = {}, [], []
    for name, items in by_dataset.items():
        run = run_bench(list(items), methods, extractor=extractor, depth=depth, workers=workers, backend=backend)
        runs[name] = run
        mrr = run.summary.set_index("method")["MRR"]
        tests = compare(run.rankings, method).set_index("method")
        row = {"dataset": name, "method": method, "n": int(run.summary["n"].iloc[0]), "full": mrr[method]}
        for m, col in columns.items():
            row[col] = mrr[m] - mrr[method]
            for shown, column in (("p", "p_value"), ("p_holm", "p_holm"), ("p_bh", "p_bh")):
                row[f"{col} {shown}"] = tests[column].get(m, float("nan"))
        rows.append(row)
        summaries.append(run.summary.assign(dataset=name))
    summary = pd.concat(summaries, ignore_index=True)
    summary = summary[["dataset", *[c for c in summary.columns if c != "dataset"]]]
    config = {"experiment": "component_ablation", "method": method, "datasets": list(by_dataset), "extractor": extractor,
              "depth": depth, "workers": workers, "backend": backend,
              "methods": next(iter(runs.values())).config["methods"] if runs else {}}
    return AblationResult(pd.DataFrame(rows), summary, runs, config)


def ablation_intervals(result: AblationResult) -> pd.DataFrame:
    """Per dataset and removed component: n, the MRR change, its bootstrap confidence interval and the
    paired randomization p-value, over the per-question RR differences (`evaluation.significance.compare`), with
    its Holm and BH adjustments over the ablations compared."""
    method = result.config["method"]
    columns = ablation_columns(method)
    rows = []
    for name, run in result.runs.items():
        for test in compare(run.rankings, method).to_dict("records"):
            if test["method"] in columns:
                rows.append({"dataset": name, "removed": columns[test["method"]], "n": test["n"],
                             "MRR change": test["diff"], "CI low": test["ci_low"], "CI high": test["ci_high"],
                             "p": test["p_value"], "p_holm": test["p_holm"], "p_bh": test["p_bh"]})
    return pd.DataFrame(rows, columns=["dataset", "removed", "n", "MRR change", "CI low", "CI high", "p", "p_holm",
                                       "p_bh"])
