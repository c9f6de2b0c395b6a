"""Whether each removed component earns its keep, from a run's paired tests.

`component_verdicts` says in one sentence per removed component whether it earns its keep: removing it must
cost at least EARNS_KEEP MRR at a Holm-adjusted p < ALPHA (adjusted over the ablations compared: with eleven of
them, a raw p of 0.034 is no finding), the paper's open question "when does the graph earn its keep?" asked
of every component. A component off by default (weight 0 or no part left to remove) is
said to be so, not to fail, when removing it changes no question. Here, below both `runs.bench` (whose results
print the verdicts) and `studies.ablation` (which runs the ablations), so neither imports the other.
"""

from __future__ import annotations

import pandas as pd

from taggraph.evaluation.significance import compare
from taggraph.methods import ablations_of
from taggraph.methods import method as registered

FULL = "AdaptiveGraph"
EARNS_KEEP = 0.005  # MRR that removing a component must cost, at Holm-adjusted p < ALPHA, for it to earn its keep
ALPHA = 0.05
ABLATION_COLUMNS = {"AdaptiveGraph-noDiffusion": "-Diffusion", "AdaptiveGraph-noChronological": "-Chronological",
                    "AdaptiveGraph-noFileSeeding": "-File seeding"}


def ablation_columns(method: str = FULL) -> dict[str, str]:
    """Ablation method -> its table column: the paper's names for AdaptiveGraph, else "-<Part>"."""
    if method == FULL:
        return dict(ABLATION_COLUMNS)
    return {name: "-" + registered(name).component for name in ablations_of(method)}


def verdict(removed: str, change: float, ci_low: float, ci_high: float, p: float, p_holm: float) -> str:
    """One plain sentence on a removed component (`removed`: its column, "-Graph"), from the paired test: its
    raw `p`, shown, and `p_holm`, adjusted over the ablations compared, which decides."""
    part = f"the {removed.lstrip('-').lower()} component"
    if change == ci_low == ci_high == 0:  # every paired difference is 0
        return f"Without {part}: no question's reciprocal rank changes. It does not earn its keep here."
    stats = f"MRR {change:+.3f} (95% CI [{ci_low:+.3f}, {ci_high:+.3f}], p = {p:.3f}, p_holm = {p_holm:.3f})"
    if change <= -EARNS_KEEP and p_holm < ALPHA:
        return f"Without {part}: {stats}. It earns its keep."
    if change > 0 and p_holm < ALPHA:
        return f"Without {part}: {stats}. It hurts here: removing it helps."
    return (f"Without {part}: {stats}. It does not earn its keep here (that takes a cost of at least "
            f"{EARNS_KEEP} MRR at p_holm < {ALPHA}).")


def component_verdicts(rankings: pd.DataFrame) -> dict[str, list[str]]:
    """Method -> a `verdict` per registered ablation of it in `rankings` (scored rows, question x method),
    for every method whose ablations are there, its p adjusted over those ablations."""
    methods = list(dict.fromkeys(rankings["method"]))
    out = {}
    for method in methods:
        columns = {m: c for m, c in ablation_columns(method).items() if m in methods}
        if not columns:
            continue
        tests = compare(rankings[rankings["method"].isin([method, *columns])], method)
        out[method] = [verdict(columns[t["method"]], t["diff"], t["ci_low"], t["ci_high"], t["p_value"],
                               t["p_holm"]) for t in tests.to_dict("records")]
    return out
