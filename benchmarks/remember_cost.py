"""`Memory.remember` per call against the memory's size, and a build through `remember` against `remember_many`.

    python -m benchmarks.remember_cost --data ../shared/data/longmemeval/longmemeval_s_dev.json.gz \
        [--sizes 1000,5000,20000] [--calls 30] [--build 20000] [--extractor offline-v2]

The interactions are LongMemEval-S dev's distinct sessions (each session id once, its turns as the first question
holding it has them) in date order. Their extraction is cached on disk first (spaCy reads each interaction once,
outside every timing), so the figures are what `remember` costs beyond extraction: tag reuse against the ontology,
the note, the base graph. Prints two markdown tables of CPU time (`time.process_time`, this process): the p50 and
p95 of `--calls` `remember` calls at each size (the memory is grown to each size with `remember_many`), and the CPU
seconds of building `--build` notes into a fresh memory one `remember` at a time against one `remember_many` call.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from taggraph import Memory
from taggraph.core.store import Interaction
from taggraph.datasets import load_dataset
from taggraph.extractors import get_extractor


def distinct_interactions(path: Path) -> list[Interaction]:
    """Each session of the file once, with its turns as the first question holding it has them, sessions in
    order of their first turn's timestamp (file order on ties)."""
    sessions: dict[str, list[Interaction]] = {}
    for case in load_dataset(path):
        of_case: dict[str, list[Interaction]] = {}
        for interaction in case.interactions:
            of_case.setdefault(interaction.session_id, []).append(interaction)
        for session_id, turns in of_case.items():
            sessions.setdefault(session_id, turns)
    ordered = sorted(sessions.values(), key=lambda turns: turns[0].timestamp)
    return [i for turns in ordered for i in turns]


def as_item(interaction: Interaction) -> dict[str, str]:
    """`Memory.remember`'s arguments for `interaction`."""
    return {"user": interaction.user, "assistant": interaction.assistant, "session": interaction.session_id,
            "timestamp": interaction.timestamp}


def cpu(fn, *args, **kwargs) -> float:
    """CPU seconds of one call."""
    start = time.process_time()
    fn(*args, **kwargs)
    return time.process_time() - start


def per_call(items: list[dict], sizes: list[int], calls: int, extractor: str) -> list[dict]:
    """p50/p95 CPU ms of `remember` at each size, on one memory grown with `remember_many` between sizes."""
    memory, rows, at = Memory(extractor), [], 0
    for size in sizes:
        memory.remember_many(items[at:size])
        times = [cpu(memory.remember, **item) for item in items[size:size + calls]]
        at = size + calls
        rows.append({"notes": size, "p50_ms": 1000 * statistics.median(times),
                     "p95_ms": 1000 * statistics.quantiles(times, n=20)[-1]})
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, required=True, help="longmemeval_s_dev.json.gz")
    ap.add_argument("--sizes", default="1000,5000,20000", help="comma-separated note counts")
    ap.add_argument("--calls", type=int, default=30, help="remember calls timed at each size")
    ap.add_argument("--build", type=int, default=None, help="notes of the build comparison (default: largest size; "
                                                             "0 skips it)")
    ap.add_argument("--extractor", default="offline-v2")
    args = ap.parse_args()
    sizes = sorted(int(s) for s in args.sizes.split(","))
    build = sizes[-1] if args.build is None else args.build
    items = [as_item(i) for i in distinct_interactions(args.data)]
    needed = max(sizes[-1] + args.calls, build)
    if len(items) < needed:
        raise SystemExit(f"{args.data}: {len(items)} distinct interactions, {needed} needed")
    items = items[:needed]
    extractor = get_extractor(args.extractor)
    extract_many = getattr(extractor, "extract_many", None)
    if extract_many is not None:  # fills the disk cache (the ontology-free part of extraction)
        extract_many([(i["user"], i["assistant"]) for i in items], [])

    print(f"remember per call, CPU ms ({args.extractor}, extraction cached, {args.calls} calls per size)\n")
    rows = per_call(items, sizes, args.calls, args.extractor)
    print("| notes | p50 ms | p95 ms | p50 / first size |\n|---:|---:|---:|---:|")
    for row in rows:
        print(f"| {row['notes']:,} | {row['p50_ms']:.2f} | {row['p95_ms']:.2f} | "
              f"{row['p50_ms'] / rows[0]['p50_ms']:.2f} |")
    if build:
        one_by_one = cpu(lambda: [m.remember(**i) for m in [Memory(args.extractor)] for i in items[:build]])
        batch = cpu(lambda: Memory(args.extractor).remember_many(items[:build]))
        print(f"\nbuilding {build:,} notes, CPU s\n\n| remember | remember_many | ratio |\n|---:|---:|---:|\n"
              f"| {one_by_one:.1f} | {batch:.1f} | {one_by_one / batch:.2f} |")


if __name__ == "__main__":
    main()
