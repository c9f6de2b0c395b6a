"""Component ablation (paper, section 5.1 and appendix F, Table 3), for any method with ablations.

AdaptiveGraph's (the paper's): each ablation removes one component with the graph
and query seeds fixed: -Diffusion (PPR iterations = 0: ranks by the teleport
vector), -Chronological (no file-to-file time edges), -File seeding (no TF-IDF mass
on file nodes). Another method's ablations are its registry entries named
``<method>-no<Part>`` (one component off each; `retrieval.registry.ablations_of`).
A table cell is MRR(ablation) - MRR(full) over the same questions: negative means
the component was contributing; beside it, ``<cell> p`` is the paired randomization
test's p-value over those questions (`evaluation.significance`). MRR is the
session-level mean reciprocal rank of `run_bench` over questions with gold
sessions (abstention and, on ATANT, questions no note strictly matches are left out).

`component_verdicts` says in one sentence per removed component whether it earns its keep:
removing it must cost at least EARNS_KEEP MRR at p < 0.05 (the bar of issue 14), the paper's
open question "when does the graph earn its keep?" asked of every component.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from taggraph.config import DEFAULT_EXTRACTOR
from taggraph.datasets import Case
from taggraph.evaluation.significance import compare
from taggraph.experiments.bench import BenchResult, run_bench
from taggraph.retrieval import DEFAULT_DEPTH
from taggraph.retrieval import ablations_of
from taggraph.retrieval import method as registered

FULL = "AdaptiveGraph"
EARNS_KEEP = 0.005  # MRR that removing a component must cost, at p < ALPHA, for it to earn its keep (issue 14)
ALPHA = 0.05
ABLATION_COLUMNS = {"AdaptiveGraph-noDiffusion": "-Diffusion", "AdaptiveGraph-noChronological": "-Chronological",
                    "AdaptiveGraph-noFileSeeding": "-File seeding"}


def ablation_columns(method: str = FULL) -> dict[str, str]:
    """Ablation method -> its table column: the paper's names for AdaptiveGraph, else "-<Part>"."""
    if method == FULL:
        return dict(ABLATION_COLUMNS)
    return {name: "-" + registered(name).component for name in ablations_of(method)}


@dataclass
class AblationResult:
    table: pd.DataFrame  # Table 3: dataset, n, full (MRR), one MRR delta per removed component
    summary: pd.DataFrame  # dataset x method: n, MRR, R@1/3/5, ...
    runs: dict[str, BenchResult]  # per dataset
    config: dict[str, Any]


def component_ablation(cases: Sequence[Case] | Mapping[str, Sequence[Case]], extractor: str = DEFAULT_EXTRACTOR,
                       dataset: str = "data", depth: int = DEFAULT_DEPTH, workers: int = 1,
                       backend: str = "loky", method: str = FULL) -> AblationResult:
    """Run `method` and its ablations per dataset (`cases` as {name: cases}, or one list named `dataset`)."""
    by_dataset = dict(cases) if isinstance(cases, Mapping) else {dataset: cases}
    columns = ablation_columns(method)
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
            row[f"{col} p"] = tests["p_value"].get(m, float("nan"))
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
    paired randomization p-value, over the per-question RR differences (`evaluation.significance.compare`)."""
    method = result.config["method"]
    columns = ablation_columns(method)
    rows = []
    for name, run in result.runs.items():
        for test in compare(run.rankings, method).to_dict("records"):
            if test["method"] in columns:
                rows.append({"dataset": name, "removed": columns[test["method"]], "n": test["n"],
                             "MRR change": test["diff"], "CI low": test["ci_low"], "CI high": test["ci_high"],
                             "p": test["p_value"]})
    return pd.DataFrame(rows, columns=["dataset", "removed", "n", "MRR change", "CI low", "CI high", "p"])


def verdict(removed: str, change: float, ci_low: float, ci_high: float, p: float) -> str:
    """One plain sentence on a removed component (`removed`: its column, "-Graph"), from the paired test."""
    part = f"the {removed.lstrip('-').lower()} component"
    if change == ci_low == ci_high == 0:  # every paired difference is 0
        return f"Without {part}: no question's reciprocal rank changes. It does not earn its keep here."
    stats = f"MRR {change:+.3f} (95% CI [{ci_low:+.3f}, {ci_high:+.3f}], p = {p:.3f})"
    if change <= -EARNS_KEEP and p < ALPHA:
        return f"Without {part}: {stats}. It earns its keep."
    if change > 0 and p < ALPHA:
        return f"Without {part}: {stats}. It hurts here: removing it helps."
    return (f"Without {part}: {stats}. It does not earn its keep here (that takes a cost of at least "
            f"{EARNS_KEEP} MRR at p < {ALPHA}).")


def component_verdicts(rankings: pd.DataFrame) -> dict[str, list[str]]:
    """Method -> a `verdict` per registered ablation of it in `rankings` (scored rows, question x method),
    for every method whose ablations are there."""
    methods = list(dict.fromkeys(rankings["method"]))
    out = {}
    for method in methods:
        columns = {m: c for m, c in ablation_columns(method).items() if m in methods}
        if not columns:
            continue
        tests = compare(rankings[rankings["method"].isin([method, *columns])], method)
        out[method] = [verdict(columns[t["method"]], t["diff"], t["ci_low"], t["ci_high"], t["p_value"])
                       for t in tests.to_dict("records")]
    return out
