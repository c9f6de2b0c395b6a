"""Does a faster embedder cost TagGraph-Fusion quality? Its MRR with `--embedder` beside minilm's, on each dev set.

    python -m benchmarks.embedder_check --embedder minilm-int8 \
        --longmemeval ../shared/data/longmemeval/longmemeval_s_dev.json.gz \
        --locomo ../shared/data/locomo/locomo_dev.json --realmem ../shared/data/realmem --out /tmp/embedder_check

The check, written and committed before its first run (lab study 34):
- Data: LongMemEval-S dev, LoCoMo dev and RealMem's three tuning personas (protocol 9's `TUNING`; the two
  confirmation personas are not read). Nothing is fitted: TagGraph-Fusion runs with its defaults, once with
  minilm and once with the embedder under test (`--param TagGraph-Fusion.embedder=...`), through `taggraph bench`,
  beside BM25 and BM25-stem; `taggraph compare` pairs the two Fusion runs question by question.
- Rule: the embedder is quality-neutral if, on each of the three, Fusion's MRR with it is at least its MRR with
  minilm - 0.005, and no LoCoMo category of Fusion with it falls below BM25-stem's. Only then may it become
  Fusion's default; otherwise it stays a switch. The verdict is printed; the script changes nothing.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd

from benchmarks.realmem_protocol import CONFIRMATION, UNSEEN

FUSION = "TagGraph-Fusion"
TOLERANCE = 0.005
TUNING = [p for p in [*UNSEEN, "Oliver_Smith"] if p not in CONFIRMATION]  # protocol 9's tuning personas
CLI = [sys.executable, "-c", "from taggraph.cli import app; app()"]


def bench(data: Path, out: Path, methods: str, *extra: str) -> pd.DataFrame:
    """The summary of a `taggraph bench` run (kept when `out` already holds one)."""
    if not (out / "summary.csv").exists():
        subprocess.run([*CLI, "bench", "--data", str(data), "--methods", methods,
                        "--miss-pages", "0", "--force", "--out", str(out), *extra], check=True)
    return pd.read_csv(out / "summary.csv").set_index("method")


def realmem_tuning(folder: Path, out: Path) -> Path:
    """A folder of links to the tuning personas' files only."""
    links = out / "realmem-tuning"
    links.mkdir(parents=True, exist_ok=True)
    for persona in TUNING:
        (source,) = folder.glob(f"{persona}_dialogues*.json")
        if not (links / source.name).exists():
            (links / source.name).symlink_to(source.resolve())
    return links


def dev_sets(parser: argparse.ArgumentParser) -> tuple[argparse.Namespace, dict[str, Path]]:
    """The parsed options, with the three dev sets' options added, and {name: data path} of the three."""
    parser.add_argument("--longmemeval", type=Path, required=True)
    parser.add_argument("--locomo", type=Path, required=True)
    parser.add_argument("--realmem", type=Path, required=True, help="the realmem folder (tuning personas read)")
    parser.add_argument("--out", type=Path, default=Path("/tmp/embedder_check"))
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    return args, {"LongMemEval-S dev": args.longmemeval, "LoCoMo dev": args.locomo,
                  "RealMem tuning": realmem_tuning(args.realmem, args.out)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--embedder", default="minilm-int8")
    args, sets = dev_sets(parser)
    rows, neutral = [], True
    for name, data in sets.items():
        key = name.split()[0].lower()
        base = bench(data, args.out / f"{key}-minilm", f"BM25,BM25-stem,{FUSION}")
        other = bench(data, args.out / f"{key}-{args.embedder}", FUSION, "--param", f"{FUSION}.embedder={args.embedder}")
        compared = args.out / f"{key}-compare"
        subprocess.run([*CLI, "compare", str(args.out / f"{key}-minilm"),
                        str(args.out / f"{key}-{args.embedder}"), "--pair", f"1:{FUSION}=2:{FUSION}", "--force",
                        "--out", str(compared)], check=True, stdout=subprocess.DEVNULL)
        pair = pd.read_csv(compared / "pairs.csv").iloc[0]
        delta = other.loc[FUSION, "MRR"] - base.loc[FUSION, "MRR"]
        ok = delta >= -TOLERANCE
        rows.append({"data": name, "n": int(base.loc[FUSION, "n"]), "BM25": base.loc["BM25", "MRR"],
                     "BM25-stem": base.loc["BM25-stem", "MRR"], "Fusion minilm": base.loc[FUSION, "MRR"],
                     f"Fusion {args.embedder}": other.loc[FUSION, "MRR"], "Δ": delta, "p_holm": pair.get("p_holm"),
                     "within 0.005": ok})
        neutral &= ok
        if key == "locomo":
            types = pd.read_csv(args.out / f"{key}-{args.embedder}" / "per_type.csv")
            stem = pd.read_csv(args.out / f"{key}-minilm" / "per_type.csv")
            mine = types[types.method == FUSION].set_index("question_type").MRR
            floor = stem[stem.method == "BM25-stem"].set_index("question_type").MRR
            below = mine[mine < floor.reindex(mine.index)]
            print("LoCoMo categories, Fusion with", args.embedder, "vs BM25-stem:\n",
                  pd.DataFrame({args.embedder: mine, "BM25-stem": floor}).round(3).to_string())
            neutral &= below.empty
    print(pd.DataFrame(rows).round(4).to_markdown(index=False))
    print(f"verdict: {args.embedder} is {'quality-neutral' if neutral else 'NOT quality-neutral'} by the rule")


if __name__ == "__main__":
    os.environ.setdefault("TQDM_DISABLE", "1")
    main()
