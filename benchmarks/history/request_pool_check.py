"""Does a first stage for requests cost TagGraph-Fusion quality? `request_pool` beside every note's whole turn.

A record: the check failed, and `request_pool` has left TagGraph-Fusion since. It runs at commit 33c39a6, where it
is benchmarks/request_pool_check.py (`git worktree add /tmp/tg-33c39a6 33c39a6`):

    python benchmarks/request_pool_check.py --request-pool 30 \
        --longmemeval ../shared/data/longmemeval/longmemeval_s_dev.json.gz \
        --locomo ../shared/data/locomo/locomo_dev.json --realmem ../shared/data/realmem --out /tmp/embedder_check

The check, written and committed before its first run (BENCHMARKS.md, section 36):
- Data and arms: as `embedder_check.py` (LongMemEval-S dev, LoCoMo dev, RealMem's three tuning personas; nothing
  fitted), both arms with `minilm-int8` (the fast configuration this is for): TagGraph-Fusion as it is, whose
  request embeds every note's whole turn, and with `request_pool` (30, the pool's size, not tuned), whose request
  embeds every note's user turn and the whole turns of the 30 nearest. Only requests (`is_request`) can move.
- Rule: quality-neutral if on each of the three Fusion's MRR with `request_pool` is at least its MRR without -
  0.005, its MRR over the request questions of the three pooled is at least theirs without - 0.02, and no LoCoMo
  category falls below BM25-stem. Then it is documented as a switch for cold runs; the default stays (the
  maintainers' held-out figures were measured without it). The verdict is printed; the script changes nothing.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import pandas as pd

from benchmarks.embedder_check import FUSION, TOLERANCE, bench, dev_sets
from taggraph.methods.fusion.signals import is_request

EMBEDDER = "minilm-int8"
REQUEST_TOLERANCE = 0.02


def fusion_rows(run: Path) -> pd.DataFrame:
    """Fusion's per-question rows of a run folder: question id, type, RR."""
    rows = pd.read_csv(run / "rankings.csv", usecols=["question_id", "question_type", "method", "RR"])
    return rows[rows.method == FUSION].set_index("question_id")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--request-pool", type=int, default=30)
    args, sets = dev_sets(parser)
    rows, requests, neutral = [], [], True
    for name, data in sets.items():
        key = name.split()[0].lower()
        base = bench(data, args.out / f"{key}-minilm", f"BM25,BM25-stem,{FUSION}")
        without = args.out / f"{key}-{EMBEDDER}"
        bench(data, without, FUSION, "--param", f"{FUSION}.embedder={EMBEDDER}")
        pooled = args.out / f"{key}-{EMBEDDER}-request-pool-{args.request_pool}"
        bench(data, pooled, FUSION, "--param", f"{FUSION}.embedder={EMBEDDER}", "--param",
              f"{FUSION}.request_pool={args.request_pool}")
        a, b = fusion_rows(without), fusion_rows(pooled)
        questions = pd.read_csv(without / "rankings.csv", usecols=["question_id"]).question_id.unique()
        asked = {q: is_request(text) for q, text in question_texts(data, questions).items()}
        mask = a.index.map(lambda q: asked.get(q, False)).to_numpy(dtype=bool)
        requests.append(pd.DataFrame({"without": a.RR[mask], "with": b.RR.reindex(a.index)[mask]}))
        delta = b.RR.mean() - a.RR.mean()
        ok = delta >= -TOLERANCE
        neutral &= ok
        rows.append({"data": name, "n": len(a), "requests": int(mask.sum()), "BM25-stem": base.loc["BM25-stem", "MRR"],
                     "Fusion-int8": a.RR.mean(), f"+ request_pool {args.request_pool}": b.RR.mean(), "Δ": delta,
                     "requests: without": a.RR[mask].mean(), "requests: with": b.RR.reindex(a.index)[mask].mean(),
                     "within 0.005": ok})
        if key == "locomo":
            stem = pd.read_csv(args.out / f"{key}-minilm" / "per_type.csv")
            floor = stem[stem.method == "BM25-stem"].set_index("question_type").MRR
            mine = b.groupby("question_type").RR.mean()
            print(pd.DataFrame({"with request_pool": mine, "BM25-stem": floor}).round(3).to_string())
            neutral &= bool((mine >= floor.reindex(mine.index)).all())
    pooled_requests = pd.concat(requests)
    request_delta = pooled_requests["with"].mean() - pooled_requests["without"].mean()
    neutral &= request_delta >= -REQUEST_TOLERANCE
    print(pd.DataFrame(rows).round(4).to_markdown(index=False))
    print(f"request questions of the three pooled: {len(pooled_requests)}, MRR {pooled_requests['without'].mean():.4f}"
          f" without, {pooled_requests['with'].mean():.4f} with (Δ {request_delta:+.4f})")
    print(f"verdict: request_pool {args.request_pool} is {'quality-neutral' if neutral else 'NOT quality-neutral'} "
          f"by the rule")


def question_texts(data: Path, questions) -> dict[str, str]:
    """Question id -> its text, through `taggraph`'s own loader."""
    from taggraph.datasets import load_dataset
    wanted = set(questions)
    return {c.case_id: c.question for c in load_dataset(data) if c.case_id in wanted}


if __name__ == "__main__":
    os.environ.setdefault("TQDM_DISABLE", "1")
    main()
