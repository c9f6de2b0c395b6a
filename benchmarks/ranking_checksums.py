"""Per-method checksums of what a run ranked, to prove a refactoring changed no ranking.

    python benchmarks/ranking_checksums.py RUN_FOLDER [RUN_FOLDER ...]

For each method: sha256 over the rows (question_id, ranked_note_ids, ranked_session_ids)
of rankings.csv in file order. Metric columns are left out on purpose: their names
may change while the rankings must not.
"""

from __future__ import annotations

import argparse
import hashlib
from pathlib import Path

import pandas as pd

COLUMNS = ["question_id", "ranked_note_ids", "ranked_session_ids"]


def checksums(run_folder: Path) -> dict[str, str]:
    """method -> sha256 of its ranking rows."""
    rankings = pd.read_csv(run_folder / "rankings.csv", dtype=str, keep_default_na=False)
    return {method: hashlib.sha256(rows[COLUMNS].to_csv(index=False).encode()).hexdigest()
            for method, rows in rankings.groupby("method", sort=False)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_folders", type=Path, nargs="+")
    args = parser.parse_args()
    tables = {folder: checksums(folder) for folder in args.run_folders}
    methods = list(dict.fromkeys(m for t in tables.values() for m in t))
    print("| method | " + " | ".join(str(f) for f in tables) + " |")
    print("|---" * (len(tables) + 1) + "|")
    for m in methods:
        print(f"| {m} | " + " | ".join(t.get(m, "-")[:16] for t in tables.values()) + " |")


if __name__ == "__main__":
    main()
