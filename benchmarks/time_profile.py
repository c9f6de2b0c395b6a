"""Where a bench run's time went, from its run folder's timings.csv.

    python benchmarks/time_profile.py runs/s_dev

Prints one markdown row per (stage, method): total seconds summed over cases and
workers, share of that total, and the median per case. "extract+store" is the
extraction and note store of each case; "index" builds a method over the store
(for OpenClaw and OC-notes: chunking, embedding or reading the embedding cache,
the FTS5 table); "query" answers the case's question.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd


def profile(run_folder: Path) -> pd.DataFrame:
    timings = pd.read_csv(run_folder / "timings.csv").fillna({"method": ""})
    table = (timings.groupby(["stage", "method"], sort=False)["seconds"]
             .agg(total="sum", per_case_p50="median").reset_index())
    table["share"] = (100 * table["total"] / table["total"].sum()).round(1).astype(str) + "%"
    return table.round({"total": 1, "per_case_p50": 3}).sort_values("total", ascending=False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_folder", type=Path)
    args = parser.parse_args()
    print(profile(args.run_folder).to_markdown(index=False))


if __name__ == "__main__":
    main()
