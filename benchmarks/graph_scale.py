"""The graph view's cost on a long history: wall time and peak memory.

    python benchmarks/graph_scale.py --sessions 50000 --dir /tmp/graphscale [--code /work/main] \
        [--methods BM25,TagGraph-TFIDF,AdaptiveGraph] [--cap-gb 8] [--timeout 1200]

Writes a synthetic LongMemEval-style history (our own template text with random WordNet nouns, no real
data) of `--sessions` one-exchange sessions and two questions, whose gold session is one of them, to ``--dir`` (kept
there, not in the repo; reused when it exists). Then runs, each in a fresh process with the
`taggraph` of `--code` (default: this checkout) first on the path:

- ``bench --miss-pages 0``: building the store and ranking, the floor the views add to;
- ``bench`` with its default miss pages (explain and graph pages of the missed question);
- ``graph``: `taggraph graph` of the question the methods miss;
- ``whole``: the same page opened on the whole graph at `--whole-nodes` drawn nodes (``--whole --max-nodes``).

and prints each one's wall time and peak resident memory (the child's ``ru_maxrss``). A child
above `--cap-gb` of resident memory or past `--timeout` seconds is stopped and reported as such.
Run it niced: ``nice -n 19 python benchmarks/graph_scale.py ...``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# No noun in the templates themselves: notes share tags only by chance, else every pair of topics would share three
# tags and the base graph's similar-topic links (and the store) would grow with the square of the history.
USER = [
    "Tell me about {a}, {b} and {c}.",
    "Is {a} better than {b} or {c}?",
    "I just bought {a}, so what goes with {b} and {c}?",
]
ASSISTANT = [
    "{a} goes well with {b}, less so with {c}.",
    "Some prefer {a}; others like {b} or {c}.",
]
GOLD_USER = "My cat is called Pickles and she loves {a}."
# The first question every method finds; the second shares no content word with the gold note, so the methods miss
# it and `bench` draws its miss pages.
QUESTIONS = {"scale_q01": "What is the name of my cat?", "scale_q02": "What do I call my pet?"}


def nouns(n: int, rng: random.Random) -> list[str]:
    """`n` one-word WordNet nouns (the lexicon taggraph's offline extractors read), so that few notes share tags."""
    from taggraph.extractors.lexicon import wordnet_dir

    with open(wordnet_dir() / "index.noun", encoding="utf-8") as f:
        words = sorted(w for w in (line.split(" ", 1)[0] for line in f if not line.startswith(" "))
                       if w.isalpha() and 4 <= len(w) <= 9)
    return rng.sample(words, n)


def session(rng: random.Random, words: list[str]) -> list[dict]:
    """One synthetic exchange (user, assistant): a template with three random nouns."""
    slots = dict(zip("abc", rng.sample(words, 3)))
    return [{"role": "user", "content": rng.choice(USER).format(**slots)},
            {"role": "assistant", "content": rng.choice(ASSISTANT).format(**slots)}]


def write_history(path: Path, sessions: int, seed: int = 0) -> Path:
    """A LongMemEval-style file: two questions (`QUESTIONS`) over one history of `sessions` synthetic sessions, the
    gold one in the middle."""
    rng = random.Random(seed)
    words = nouns(3000, rng)
    gold = sessions // 2
    haystack = [session(rng, words) for _ in range(sessions)]
    haystack[gold][0]["content"] = GOLD_USER.format(a=rng.choice(words))
    day = lambda i: f"2023/{1 + (i // 28) % 12:02d}/{1 + i % 28:02d} (Mon) {8 + i % 12:02d}:00"
    cases = [{"question_id": qid, "question_type": "single-session-user", "question": question,
              "answer": "Pickles", "question_date": "2024/01/02 (Tue) 10:00",
              "haystack_session_ids": [f"scale_s{i:06d}" for i in range(sessions)],
              "haystack_dates": [day(i) for i in range(sessions)], "haystack_sessions": haystack,
              "answer_session_ids": [f"scale_s{gold:06d}"]} for qid, question in QUESTIONS.items()]
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile("w", dir=path.parent, delete=False, encoding="utf-8") as f:
        json.dump(cases, f)
    os.replace(f.name, path)
    return path


CHILD = """import atexit, resource, sys
peak = sys.argv.pop(1)
atexit.register(lambda: open(peak, "w").write(str(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)))
from taggraph.cli import app
app()"""  # the child writes its own peak resident memory (kB) to the file named first


def resident_kb(pid: int) -> int:
    """Resident memory of `pid` in kB (0 when gone)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            return next((int(line.split()[1]) for line in f if line.startswith("VmRSS:")), 0)
    except OSError:
        return 0


def run(args: list[str], code: Path, cap_kb: int, timeout: float) -> dict:
    """Run `taggraph ARGS` with `code` first on the path: wall seconds, peak resident memory (GB) and how it
    ended; stopped above `cap_kb` or past `timeout` seconds (its peak then is the last one polled)."""
    env = {**os.environ, "PYTHONPATH": str(code), "TQDM_DISABLE": "1", "HF_HUB_OFFLINE": "1"}
    with tempfile.TemporaryDirectory() as tmp:
        peak_file = Path(tmp) / "peak"
        start = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-c", CHILD, str(peak_file), *args], env=env, cwd=code,  # -c puts
                                # the working folder first on the path: `code`'s taggraph, whoever runs this
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        peak, ended = 0, "ok"
        while proc.poll() is None:
            peak = max(peak, resident_kb(proc.pid))
            if peak > cap_kb or time.perf_counter() - start > timeout:
                ended = f"stopped above {cap_kb / 2**20:.0f} GB" if peak > cap_kb else f"stopped at {timeout:.0f} s"
                proc.kill()
                break
            time.sleep(0.2)
        _, err = proc.communicate()
        wall = time.perf_counter() - start
        if peak_file.exists():
            peak = max(peak, int(peak_file.read_text()))
    if ended == "ok" and proc.returncode:
        ended = f"exit {proc.returncode}: " + (err.strip().splitlines() or [""])[-1]
    return {"wall_s": round(wall, 1), "peak_gb": round(peak / 2**20, 2), "ended": ended}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sessions", type=int, default=50_000)
    parser.add_argument("--dir", type=Path, default=Path("/tmp/graphscale"))
    parser.add_argument("--code", type=Path, default=Path(__file__).resolve().parents[1])
    parser.add_argument("--methods", default="BM25,TagGraph-TFIDF,AdaptiveGraph")
    parser.add_argument("--only", default="floor,bench,graph", help="Comma-separated: floor, bench, graph, whole.")
    parser.add_argument("--whole-nodes", type=int, default=2000, help="--max-nodes of the `whole` step.")
    parser.add_argument("--cap-gb", type=float, default=8.0)
    parser.add_argument("--timeout", type=float, default=1200.0)
    opts = parser.parse_args()
    data = opts.dir / f"history2q_{opts.sessions}.json"
    if not data.exists():
        write_history(data, opts.sessions)
    out = opts.dir / "out" / opts.code.name  # one folder per checkout: runs of two checkouts may overlap
    common = ["--data", str(data), "--methods", opts.methods]
    runs = {"floor": ["bench", *common, "--out", str(out / "floor"), "--force", "--miss-pages", "0"],
            "bench": ["bench", *common, "--out", str(out / "bench"), "--force"],
            "graph": ["graph", *common, "--question", "scale_q02", "--out", str(out / "graph.html")],
            "whole": ["graph", *common, "--question", "scale_q02", "--out", str(out / "whole.html"), "--whole",
                      "--max-nodes", str(opts.whole_nodes)]}
    print(f"{opts.sessions} sessions, methods {opts.methods}, code {opts.code}")
    for name in opts.only.split(","):
        print(f"{name:6s} {json.dumps(run(runs[name], opts.code, int(opts.cap_gb * 2**20), opts.timeout))}",
              flush=True)


if __name__ == "__main__":
    main()
