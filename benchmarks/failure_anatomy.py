"""Where TagGraph-Fusion fails, by question type: what evidence its gold sessions had when it missed them.

    python -m benchmarks.failure_anatomy --evidence /tmp/protocol9

Reads protocol 9's evidence (`realmem_protocol.py --evidence`: TagGraph-Fusion's raw signals with every part on,
per judged question of LongMemEval-S dev, LoCoMo dev and RealMem's tuning personas; the confirmation personas'
file is not read) and scores it with the default weights. Every question whose first gold session is not ranked
first is a miss, told by what its gold notes had (the first that applies):
- request route: the question is a request for suggestions (dense over every note, `REQUEST_WEIGHTS`);
- no shared word: no gold note has a positive BM25-stem score (note or raw turn; stopwords out): no content
  word of the question is in them, and only plain BM25 on stopwords, PPR and the session and time parts reach it;
- outside the pool: words shared, but no gold note in the dense pool (`POOL` best of each list and of a first
  PPR), so no cosine and no turn similarity was computed for it;
- in the pool, outranked: some gold note was pooled and scored on every part, and a non-gold session won.
Also per type: how many misses BM25-stem alone ranks better, and how many questions name a date window.
Aggregates only; no question is printed, and nothing is chosen from this table (protocol 9 has been run).
"""

from __future__ import annotations

import argparse
import pickle
from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks.fusion_joint_cv import ONLY, renormalized
from benchmarks.history.fusion_cv import Batch
from taggraph.methods.fusion.signals import COMPONENTS, FusionWeights

SETS = {"longmemeval": "LongMemEval-S dev", "locomo": "LoCoMo dev", "realmem": "RealMem tuning"}
STEMS = [COMPONENTS.index(c) for c in ("note_stem", "raw_stem")]  # stopwords out: a content word shared
POOLED = COMPONENTS.index("dense")
MODE = "zscore"  # the defaults' normalization


def anatomy(items: list[tuple]) -> pd.DataFrame:
    """One row per question: type, Fusion's and BM25-stem's RR, the miss kind, whether a date window is named."""
    batch = Batch.of([(q, t, renormalized(ev, MODE), gold) for q, t, ev, gold, _ in items])
    rr, _ = batch.reciprocal_ranks(FusionWeights())
    stem, _ = batch.reciprocal_ranks(ONLY["note_stem"], requests=False)
    rows = []
    for (qid, kind, ev, gold, _), fusion_rr, stem_rr in zip(items, rr, stem):
        gold_notes = gold[ev.sessions]
        raw = ev.raw[gold_notes]
        if fusion_rr == 1.0:
            why = "hit"
        elif ev.request:
            why = "request route"
        elif not (np.nan_to_num(raw[:, STEMS]) > 0).any():
            why = "no shared word"
        elif np.isnan(raw[:, POOLED]).all():
            why = "outside the pool"
        else:
            why = "in the pool, outranked"
        rows.append({"type": kind, "RR": fusion_rr, "stem_RR": stem_rr, "why": why,
                     "dated": bool((ev.time[:, 0] > 0).any())})
    return pd.DataFrame(rows)


def table(frame: pd.DataFrame) -> pd.DataFrame:
    """Per type: n, MRR, misses at rank 1, each miss kind's share of them, the share of them with a gold session
    ranked 2-5, how many BM25-stem ranks better, dated questions."""
    out = []
    for kind, part in [*frame.groupby("type"), ("all", frame)]:
        missed = part[part.why != "hit"]
        row = {"type": kind, "n": len(part), "MRR": part.RR.mean(), "misses@1": len(missed)}
        for why in ("no shared word", "outside the pool", "in the pool, outranked", "request route"):
            row[why] = f"{(missed.why == why).mean():.0%}" if len(missed) else "-"
        row["miss in top 5"] = f"{(missed.RR >= 0.2).mean():.0%}" if len(missed) else "-"
        row["BM25-stem better"] = int((missed.stem_RR > missed.RR).sum())
        row["dated questions"] = int(part.dated.sum())
        out.append(row)
    return pd.DataFrame(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--evidence", type=Path, required=True, help="protocol 9's evidence folder")
    args = parser.parse_args()
    for key, name in SETS.items():
        items = pickle.loads((args.evidence / f"{key}.pkl").read_bytes())
        print(f"\n### {name}: {len(items)} judged questions, TagGraph-Fusion defaults\n")
        print(table(anatomy(items)).round(3).to_markdown(index=False))


if __name__ == "__main__":
    main()
