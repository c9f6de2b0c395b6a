"""Paired per-question significance of each method against a baseline, from a bench run folder.

    python benchmarks/paired_significance.py /tmp/runs/fusion_dev_ablation --baseline TagGraph-Fusion

Reads rankings.csv (judged questions only), pairs the methods' `reciprocal_rank`
(or `--metric`, e.g. R@1) by question, and prints one markdown row per method:
its mean, the mean difference to the baseline with its 95% bootstrap interval
and the paired randomization p-value (taggraph.evaluation.significance).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from taggraph.evaluation.significance import paired_test, significant


def compare(rankings: pd.DataFrame, baseline: str, metric: str = "reciprocal_rank") -> pd.DataFrame:
    judged = rankings[~rankings["abstention"].astype(bool) & rankings[metric].notna()]
    table = judged.pivot(index="question_id", columns="method", values=metric)
    rows = []
    for method in table.columns:
        if method == baseline:
            continue
        t = paired_test(table[method].to_numpy(), table[baseline].to_numpy())
        rows.append({"method": method, "n": len(table), metric: round(table[method].mean(), 4),
                     f"diff vs {baseline}": round(t.mean_diff, 4),
                     "95% CI": f"[{t.ci_low:.4f}, {t.ci_high:.4f}]", "p": round(t.p_value, 4),
                     "p < 0.05": "yes" if significant(t) else "no"})
    return pd.DataFrame(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_folder", type=Path)
    parser.add_argument("--baseline", required=True)
    parser.add_argument("--metric", default="reciprocal_rank")
    args = parser.parse_args()
    rankings = pd.read_csv(args.run_folder / "rankings.csv")
    print(compare(rankings, args.baseline, args.metric).to_markdown(index=False))


if __name__ == "__main__":
    main()
