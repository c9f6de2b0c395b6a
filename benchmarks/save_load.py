"""What saving and loading a `Memory` of N notes costs: a full save, a save of 100 new notes, load, and load plus
a first query (BM25, TagGraph-TFIDF, AdaptiveGraph, TagGraph-Fusion), each step in a fresh process.

    python benchmarks/save_load.py --data ../shared/data/longmemeval/longmemeval_s_dev.json.gz --sizes 5000,20000 \
        --work /tmp/save_load [--repeats 3]

The memories hold the first N distinct interactions of the data (each session once, in file order), tagged by
offline-v2 (its extraction cache makes a rebuild cheap after the first). Per size, ``--work/base-N`` is built
once, asked one question by each method timed (so its folder holds their indexes, as a memory in daily use
does) and saved, then each repeat: ``full save`` (load base-N, save it to a new folder, the save timed),
``save of 100 new`` (load that folder, remember 100 more interactions, the save timed), ``load``,
``load + first <method>`` of the folder so saved (all timed from the call to
`Memory.load`, after `import taggraph`). Prints wall and CPU seconds (medians over the repeats) per step and
size, as a markdown table. Run it with ``PYTHONPATH`` at another checkout to time that code on the same data.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

QUESTION = "What did I say about my dog's vet appointment?"
ADDED = 100
FIRST = ("BM25", "TagGraph-TFIDF", "AdaptiveGraph", "TagGraph-Fusion")
STEPS = ("full save", "save of 100 new", "load", *(f"load + first {method}" for method in FIRST))


def interactions(data: Path, count: int) -> list:
    """The first `count` distinct interactions of `data` (a session's turns once, in file order)."""
    from taggraph.datasets import load_dataset

    seen: set[str] = set()
    out = []
    for case in load_dataset(data):
        sessions: dict[str, list] = {}
        for interaction in case.interactions:
            sessions.setdefault(interaction.session_id, []).append(interaction)
        for session, turns in sessions.items():
            if session not in seen:
                seen.add(session)
                out += turns
        if len(out) >= count:
            break
    return out[:count]


def child(step: str, data: Path, n: int, work: Path) -> dict:
    """Run `step` in this process; its wall and CPU seconds."""
    import taggraph as tg

    base, saved = work / f"base-{n}", work / f"saved-{n}"
    if step == "build":
        memory = tg.Memory(extractor="offline-v2")
        memory.store.remember_many(interactions(data, n))
        for method in FIRST:
            memory.query(QUESTION, method=method)
        memory.save(base)
        return {}
    memory = None
    if step in ("full save", "save of 100 new"):
        memory = tg.Memory.load(base if step == "full save" else saved)
        if step == "full save":
            shutil.rmtree(saved, ignore_errors=True)
        else:
            memory.store.remember_many(interactions(data, n + ADDED)[n:])
    wall, cpu = time.perf_counter(), time.process_time()
    if step == "full save":
        memory.save(saved)
    elif step == "save of 100 new":
        memory.save(saved)
    else:
        memory = tg.Memory.load(saved)
        if step != "load":
            memory.query(QUESTION, method=step.removeprefix("load + first "))
    return {"wall": time.perf_counter() - wall, "cpu": time.process_time() - cpu}


def run(step: str, args: argparse.Namespace, n: int) -> dict:
    out = subprocess.run([sys.executable, __file__, "--child", step, "--data", str(args.data), "--sizes", str(n),
                          "--work", str(args.work)], check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--sizes", default="5000,20000")
    parser.add_argument("--work", type=Path, required=True, help="a scratch folder (memories are built there)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    if args.child:
        print(json.dumps(child(args.child, args.data, sizes[0], args.work)))
        return
    rows = {}
    for n in sizes:
        if not (args.work / f"base-{n}" / "manifest.json").exists():
            run("build", args, n)
        for step in STEPS:
            runs = []
            for _ in range(args.repeats):
                if step == "save of 100 new":  # the same 100 notes each time: back to the folder the full save left
                    run("full save", args, n)
                runs.append(run(step, args, n))
            rows[step, n] = {k: statistics.median(r[k] for r in runs) for k in ("wall", "cpu")}
    print("| step | " + " | ".join(f"{n:,} notes: wall s | CPU s" for n in sizes) + " |")
    print("|---|" + "---|---|" * len(sizes))
    for step in STEPS:
        print(f"| {step} | " + " | ".join(f"{rows[step, n]['wall']:.2f} | {rows[step, n]['cpu']:.2f}" for n in sizes)
              + " |")


if __name__ == "__main__":
    main()
