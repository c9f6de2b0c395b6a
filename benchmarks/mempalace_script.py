"""MemPalace's own LongMemEval script, unmodified, from a checkout, its rankings scored by `taggraph score` (issue 66).

    git --git-dir=/path/to/mempalace.git archive HEAD | tar -x -C /tmp/mempalace
    .venv/bin/python -m benchmarks.mempalace_script --checkout /tmp/mempalace \
        --data ../shared/data/longmemeval/longmemeval_s_dev.json.gz --modes raw,hybrid_v4 --out /tmp/mempalace-runs \
        --beside runs/lme-peers   # a `taggraph bench --methods BM25,TagGraph-Fusion,MemPalace` run folder

The script (``benchmarks/longmemeval_bench.py`` of the checkout) is imported as a module and its ``run_benchmark``
called per mode, session granularity (its default), after setting its documented ``_bench_embed_fn`` (what its
``--embed-model`` sets) to the project's bundled all-MiniLM-L6-v2 as a ChromaDB embedding function
(`taggraph.peers.chroma_embedding`): the model its default names, nothing downloaded. Its JSONL log (each question's
ranked sessions, at most 50) becomes ``MemPalace-script-<mode>.jsonl`` ({"question_id", "ranked_session_ids"}, a
session ranked twice, as a haystack listing a session twice makes it, kept at its first rank), and `taggraph score`
scores them beside the run folders `--beside` names (our harness's bench), paired against `--baseline`. Prints each mode's wall time and the
score table; the run folder is ``--out``/score.
"""

from __future__ import annotations

import argparse
import gzip
import importlib.util
import json
import time
from pathlib import Path

from taggraph._infra.atomic import atomic_write
from taggraph.cli import app


def load_script(checkout: Path):
    """MemPalace's LongMemEval script as a module, its embedder set to our MiniLM."""
    from taggraph.embedders.base import get_embedder
    from taggraph.peers.chroma_embedding import TaggraphEmbedding
    path = checkout / "benchmarks" / "longmemeval_bench.py"
    if not path.is_file():
        raise SystemExit(f"{path}: not found; --checkout names a MemPalace repository checkout")
    spec = importlib.util.spec_from_file_location("mempalace_longmemeval_bench", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module._bench_embed_fn = TaggraphEmbedding(get_embedder("minilm"))
    return module


def plain_json(data: Path, into: Path) -> Path:
    """`data` as the plain JSON file the script reads (a .gz is decompressed into `into`)."""
    if data.suffix != ".gz":
        return data
    out = into / data.stem
    atomic_write(out, gzip.decompress(data.read_bytes()).decode("utf-8"))
    return out


def rankings(log: Path) -> list[dict]:
    """The script's JSONL log as {"question_id", "ranked_session_ids"}, each session at its first rank."""
    out = []
    for line in log.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        items = record["retrieval_results"]["ranked_items"]
        sessions = dict.fromkeys(item["corpus_id"].rsplit("_turn_", 1)[0] for item in items)
        out.append({"question_id": record["question_id"], "ranked_session_ids": list(sessions)})
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkout", type=Path, required=True, help="a MemPalace repository checkout")
    parser.add_argument("--data", type=Path, required=True, help="LongMemEval JSON (.json or .json.gz)")
    parser.add_argument("--modes", default="raw,hybrid_v4", help="the script's --mode values, comma-separated")
    parser.add_argument("--limit", type=int, default=0, help="the first N questions (0: all)")
    parser.add_argument("--beside", type=Path, nargs="*", default=[], help="bench run folders scored beside them")
    parser.add_argument("--baseline", default=None, help="paired comparison against this method or run")
    parser.add_argument("--match", default="MemPalace=MemPalace-script-raw",
                        help="HARNESS=SCRIPT pairs whose Success@5 is compared question by question")
    parser.add_argument("--out", type=Path, required=True, help="folder for the runs and the score run folder")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    script = load_script(args.checkout.resolve())
    data = plain_json(args.data, args.out)
    runs = []
    for mode in args.modes.split(","):
        log = args.out / f"script-{mode}.jsonl"
        start = time.perf_counter()
        script.run_benchmark(str(data), granularity="session", limit=args.limit, out_file=str(log), mode=mode)
        print(f"MemPalace script, mode {mode}: {time.perf_counter() - start:.0f} s wall", flush=True)
        run = args.out / f"MemPalace-script-{mode}.jsonl"
        atomic_write(run, "".join(json.dumps(r) + "\n" for r in rankings(log)))
        runs.append(str(run))
    command = ["score", *map(str, args.beside), *runs, "--data", str(args.data), "--out", str(args.out / "score"),
               "--force", *(["--baseline", args.baseline] if args.baseline else [])]
    app(command, standalone_mode=False)
    for pair in filter(None, args.match.split(",")):
        print(matched(args.out / "score" / "rankings.csv", *pair.split("=")))


def matched(rankings_csv: Path, harness: str, script: str) -> str:
    """Success@5 of `harness` and `script` on the judged questions both rank, and the questions where they differ."""
    import pandas as pd
    rows = pd.read_csv(rankings_csv)
    rows = rows[~rows["abstention"].astype(bool)]
    both = rows[rows["method"] == harness].merge(rows[rows["method"] == script], on="question_id", suffixes=("", "_s"))
    if both.empty:
        return f"{harness} vs {script}: no judged question ranked by both"
    differ = both[both["Success@5"] != both["Success@5_s"]]["question_id"].tolist()
    return (f"{harness} vs {script} on {len(both)} judged questions: Success@5 {both['Success@5'].mean():.3f} vs "
            f"{both['Success@5_s'].mean():.3f} (difference {both['Success@5'].mean() - both['Success@5_s'].mean():+.3f});"
            f" they differ on {len(differ)}: {' '.join(differ) or '-'}")


if __name__ == "__main__":
    main()
