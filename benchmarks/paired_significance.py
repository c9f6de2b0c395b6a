"""Paired per-question significance of each method against a baseline, from a bench run folder.

    python benchmarks/paired_significance.py RUN_FOLDER --baseline TagGraph-Fusion [--metric Success@1]

Reads rankings.csv and prints `taggraph.evaluation.significance.compare` as markdown: per
method its mean, the mean difference to the baseline with its 95% bootstrap interval, and
the paired randomization p-value over the judged questions both methods answered.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from taggraph.evaluation.significance import compare


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_folder", type=Path)
    parser.add_argument("--baseline", required=True)
    parser.add_argument("--metric", default="RR")
    args = parser.parse_args()
    rankings = pd.read_csv(args.run_folder / "rankings.csv")
    print(compare(rankings, args.baseline, args.metric).round(4).to_markdown(index=False))


if __name__ == "__main__":
    main()
