"""minilm-int8 read in padded batches (as before) or each text alone (as now): CPU seconds, cosine to minilm,
and how far a text's vector moves with its batch-mates.

    python benchmarks/int8_batch_check.py --data ../shared/data/longmemeval/longmemeval_s_dev.json.gz \
        --texts 600 --runs 5 --threads 1

Texts: the first distinct turns of the first questions' histories, shuffled with a fixed seed. CPU seconds are
the process's (``time.process_time``), the median of `--runs` runs after a warm-up, with `--threads` threads for
onnxruntime and torch. "batched" is the embedder's former reading, rebuilt here on the
same int8 model: texts sorted by length, 16 a pass, padded to the longest of each pass.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import statistics
import time
from pathlib import Path

import numpy as np


def turns(path: Path, count: int) -> list[str]:
    """`count` distinct LongMemEval turns, shuffled with seed 0."""
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt") as f:
        questions = json.load(f)
    texts: list[str] = []
    for question in questions:
        texts += [turn["content"] for session in question["haystack_sessions"] for turn in session]
        if len(set(texts)) >= 2 * count:
            break
    texts = list(dict.fromkeys(texts))
    random.Random(0).shuffle(texts)
    return texts[:count]


def isa() -> str:
    flags = next(line for line in Path("/proc/cpuinfo").read_text().splitlines() if line.startswith("flags")).split()
    return next((f for f in ("avx512_vnni", "avx_vnni", "avx512f", "avx2") if f in flags), "no avx2")


def batched(texts: list[str], per_pass: int = 16) -> np.ndarray:
    """The former reading: sorted by length, `per_pass` texts a pass, each pass padded to its longest."""
    from taggraph._infra.config import cache_dir
    from taggraph.embedders import base as e, minilm_int8 as int8
    from taggraph.embedders.minilm import bundled_minilm_path
    source = bundled_minilm_path()
    tokenizer, session = int8._minilm_tokenizer(source), int8._int8_session(e.get_embedder("minilm-int8").cache_key,
                                                                            str(cache_dir()))
    out = np.zeros((len(texts), 384), dtype=np.float32)
    order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
    for start in range(0, len(order), per_pass):
        rows = order[start:start + per_pass]
        encoded = tokenizer([texts[i] for i in rows], padding=True, truncation=True, max_length=256,
                            return_tensors="np")
        out[rows] = session.run(None, {x.name: encoded[x.name].astype(np.int64) for x in session.get_inputs()})[0]
    return e._normalize(out)


def timed(embed, texts: list[str], runs: int) -> tuple[float, list[float], np.ndarray]:
    embed(texts[:8])  # loads and warms
    times = []
    for _ in range(runs):
        start = time.process_time()
        vectors = embed(texts)
        times.append(time.process_time() - start)
    return statistics.median(times), times, vectors


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--texts", type=int, default=600)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    os.environ["OMP_NUM_THREADS"] = str(args.threads)  # read by minilm-int8's session
    import torch
    torch.set_num_threads(args.threads)
    from taggraph.embedders.base import _normalize, get_embedder

    texts = turns(args.data, args.texts)
    minilm, int8 = get_embedder("minilm", "cpu"), get_embedder("minilm-int8")
    minilm.cache = int8.cache = False
    print(f"{len(texts)} turns, median {statistics.median(len(t) for t in texts):.0f} characters; CPU {isa()}; "
          f"{args.threads} thread(s)")
    base, times, reference = timed(lambda ts: _normalize(minilm._embed(ts)), texts, args.runs)
    print("| reading | CPU s, median (runs) | x minilm | cosine to minilm, mean / min |\n|---|---|---|---|")
    print(f"| minilm (torch, float32) | {base:.2f} ({', '.join(f'{t:.2f}' for t in times)}) | 1 | 1 |")
    found = {}
    for label, embed in (("minilm-int8, padded batches of 16 (before)", batched),
                         ("minilm-int8, each text alone (now)", lambda ts: _normalize(int8._embed(ts)))):
        median, times, found[label] = timed(embed, texts, args.runs)
        cosine = (found[label] * reference).sum(axis=1)
        print(f"| {label} | {median:.2f} ({', '.join(f'{t:.2f}' for t in times)}) | {median / base:.2f} | "
              f"{cosine.mean():.4f} / {cosine.min():.4f} |")
    alone = np.concatenate([_normalize(int8._embed([t])) for t in texts])
    for label, vectors in found.items():
        moved = (vectors * alone).sum(axis=1)
        print(f"{label}: cosine of each text's vector to its vector read alone, min {moved.min():.4f}, "
              f"max |difference| {np.abs(vectors - alone).max():.1e}")


if __name__ == "__main__":
    main()
