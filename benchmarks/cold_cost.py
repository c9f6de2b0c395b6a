"""The CPU seconds of a cold `taggraph bench` run, this checkout beside an earlier commit, in one run.

    python benchmarks/cold_cost.py --data ../shared/data/longmemeval/longmemeval_s_dev.json.gz \
        --base 3c7aa44 --methods BM25,TagGraph-Fusion --out /tmp/cold_cost

Both runs start from an empty cache (`TAGGRAPH_CACHE` of their own), one worker each, side by side on the same
machine at the same time (one core and one thread each), so the load of the machine weighs on both alike. The earlier commit is
checked out with `git worktree` and imported ahead of this checkout (`PYTHONPATH`), in the same venv. Printed:
wall and CPU seconds (user + system, from `os.wait4`) and peak RSS of each, their ratio, and whether the two runs
rank every question alike (`taggraph compare` of the two run folders). `--param` sets a method parameter in this
checkout's run only (a switch the earlier commit lacks).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BENCH = "from taggraph.cli import app; app()"
# one thread per run: two runs side by side on two cores, and no thread spinning at a barrier counted as work
THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")


def start(name: str, source: Path, args: argparse.Namespace) -> tuple[subprocess.Popen, float]:
    """A cold bench run of the code at `source` into `args.out / name`."""
    cache = args.out / f"cache-{name}"
    shutil.rmtree(cache, ignore_errors=True)
    env = {**os.environ, "TAGGRAPH_CACHE": str(cache), "PYTHONPATH": str(source), "TQDM_DISABLE": "1",
           **{var: "1" for var in THREAD_VARIABLES}}
    command = [sys.executable, "-c", BENCH, "bench", "--data", str(args.data), "--methods", args.methods,
               "--workers", "1", "--miss-pages", "0", "--force", "--out", str(args.out / name)]
    if args.limit:
        command += ["--limit", str(args.limit)]
    if name == "now":
        command += [arg for param in args.param for arg in ("--param", param)]
    log = open(args.out / f"{name}.log", "w")
    return subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT, cwd=source), time.time()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--base", default="3c7aa44", help="the earlier commit")
    parser.add_argument("--methods", default="BM25,TagGraph-Fusion")
    parser.add_argument("--limit", type=int, default=0, help="the first N questions only (0: all)")
    parser.add_argument("--param", action="append", default=[],
                        help="METHOD.KEY=VALUE for this checkout's run only, e.g. TagGraph-Fusion.embedder=minilm-int8")
    parser.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()) / "cold_cost")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    args.data = args.data.resolve()
    base = args.out / "base-checkout"
    if not base.exists():
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(base), args.base], check=True)
    runs = {"base": start("base", base, args), "now": start("now", ROOT, args)}
    rows, by_pid = {}, {proc.pid: name for name, (proc, _) in runs.items()}
    while by_pid:  # whichever ends first
        pid, status, usage = os.wait4(-1, 0)
        name = by_pid.pop(pid)
        if os.waitstatus_to_exitcode(status):
            sys.exit(f"the {name} run failed; see {args.out / f'{name}.log'}")
        rows[name] = (time.time() - runs[name][1], usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1e6)
    print("| run | wall s | CPU s | peak RSS GB |\n|---|---|---|---|")
    for name, (wall, cpu, rss) in rows.items():
        print(f"| {name} ({args.base if name == 'base' else 'this checkout'}) | {wall:.0f} | {cpu:.0f} | {rss:.2f} |")
    print(f"\nCPU now / base: {rows['now'][1] / rows['base'][1]:.3f}")
    compare = subprocess.run([sys.executable, "-c", BENCH, "compare", str(args.out / "base"), str(args.out / "now")],
                             capture_output=True, text=True, cwd=ROOT)
    print(compare.stdout[-3000:], compare.stderr[-1000:])


if __name__ == "__main__":
    main()
