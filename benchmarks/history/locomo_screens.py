# History: BENCHMARKS.md section 22 (two LoCoMo screens); commit d9e4264.

# A record: `pool_reader` and `reader_pool` left TagGraph-Fusion after it was not adopted; this runs at commit 33c39a6.
# The command below is that commit's (its copy put benchmarks/ on its own import path); this copy imports the
# other scripts as modules of the benchmarks package.
"""Two screens on LoCoMo dev after protocol version 3: a learned ranker, and a dense pool that holds every note.

    python benchmarks/history/locomo_screens.py --locomo ../shared/data/locomo/locomo_dev.json --evidence /tmp/screens \
        --workers 2 [--pools 30,60,1000,30+minilm-static]

After the two-benchmark protocol (lab study 18), looks at LoCoMo dev numbers (named as such in BENCHMARKS.md, section 22), LoCoMo only, no LongMemEval,
so nothing here can become a default: a default needs a joint protocol fixed before its run.

- ``pool``: TagGraph-Fusion's dense parts (the pool's cosine, the turns, the named speaker) read only the pool's notes
  (the `pool` best of each lexical list and of a first PPR); ``30+minilm-static`` adds the 30 notes a reader of
  every note ranks first (`pool_reader`), ``30+minilm-static/10`` its 10 first (`reader_pool`). For each pool: evidence as the joint protocol
  builds it (`fusion_joint_cv.history_evidence`), then the default weights under zscore (in-sample: they were fitted
  on these questions) and a leave-one-conversation-out fit (`fusion_joint_cv.fit`, its grid and start, LoCoMo alone),
  scored out of fold, paired against the first pool size.
- ``ranker``: instead of the weighted sum, a learned ranker over the same zscored evidence, leave one conversation
  out: gradient-boosted trees on the notes (scikit-learn, label: the note's session is gold) and LambdaMART on the
  sessions (LightGBM, when installed; each session's features are the maxima over its notes plus the session
  features). Free choices: the libraries' defaults, 300 trees at rate 0.05 and 15 leaves for LambdaMART.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.ensemble import HistGradientBoostingClassifier

from benchmarks.fusion_joint_cv import Joint, evidence, fit
from benchmarks.history.fusion_cv import Batch, ranks_of
from taggraph.evaluation.significance import paired_test
from taggraph.methods.fusion.signals import FusionWeights

MODE = "zscore"  # the defaults' normalization (section 18)


def conversation_folds(items) -> list[tuple[np.ndarray, np.ndarray]]:
    convs = np.array([group for *_, group in items])
    return [(np.flatnonzero(convs != c), np.flatnonzero(convs == c)) for c in sorted(set(convs))]


def out_of_fold_fit(items) -> tuple[np.ndarray, np.ndarray]:
    """(RR, Success@1) per question: weights fitted on the other conversations."""
    joint, rr, hit = Joint({"locomo": items}), np.zeros(len(items)), np.zeros(len(items))
    for train, test in conversation_folds(items):
        w = fit(joint.batches({"locomo": train}, MODE))
        rr[test], hit[test] = joint.batches({"locomo": test}, MODE)["locomo"].reciprocal_ranks(w)
    return rr, hit


def zscored(items) -> Batch:
    return Joint({"locomo": items}).batches({"locomo": np.arange(len(items))}, MODE)["locomo"]


def per_category(items, rr: np.ndarray) -> str:
    types = np.array([t for _, t, *_ in items])
    return ", ".join(f"{k} {rr[types == k].mean():.3f}" for k in sorted(set(types)))


def pool_screen(args) -> None:
    base = None
    print("| pool | defaults (in-sample) MRR / S@1 | fitted per conversation, out of fold MRR / S@1 | vs first (p) |")
    print("|---|---|---|---|")
    for size in args.pools:
        items = pool_evidence(args, size)
        in_rr, in_hit = zscored(items).reciprocal_ranks(FusionWeights())
        rr, hit = out_of_fold_fit(items)
        base = rr if base is None else base
        test = paired_test(rr, base)
        print(f"| {size} | {in_rr.mean():.4f} / {in_hit.mean():.4f} | {rr.mean():.4f} / {hit.mean():.4f} | "
              f"{test.mean_diff:+.4f} ({test.p_value:.3f}) |")
        print(f"|  | {per_category(items, in_rr)} | {per_category(items, rr)} | |")


def pool_evidence(args, spec: str) -> list[tuple]:
    """The evidence under pool `spec`: "30", "30+minilm-static" (pool size, then a `pool_reader`) or
    "30+minilm-static/10" (and the reader's `reader_pool`, else the pool size)."""
    size, _, reader = spec.partition("+")
    reader, _, reader_pool = reader.partition("/")
    return evidence(args.locomo, args.evidence / f"locomo_pool{spec.replace('/', '_')}.pkl", args.workers,
                    pool=int(size), pool_reader=reader or None, reader_pool=int(reader_pool or size))


def session_table(batch: Batch) -> pd.DataFrame:
    """One row per (question, session): each column's maximum over the session's notes; `gold` the label."""
    rows = pd.DataFrame(np.hstack([batch.components, batch.session_features, batch.time]))
    rows["item"], rows["session"], rows["gold"] = batch.item, batch.sessions, batch.gold
    return rows.groupby(["item", "session"], sort=True).max().reset_index()


def session_ranks(table: pd.DataFrame, scores: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    ranked = table.assign(score=scores).sort_values(["item", "score", "session"], ascending=[True, False, True])
    ranked["rank"] = ranked.groupby("item").cumcount() + 1
    best = ranked[ranked["gold"]].groupby("item")["rank"].min().reindex(range(n))
    return np.nan_to_num(1.0 / best.to_numpy()), (best.to_numpy() == 1).astype(float)


def ranker_screen(args) -> None:
    items = pool_evidence(args, args.pools[0])
    batch, folds = zscored(items), conversation_folds(items)
    x = np.hstack([batch.components, batch.session_features, batch.time])
    scores = np.zeros(len(x))
    for train, test in folds:
        rows = np.isin(batch.item, test)
        model = HistGradientBoostingClassifier(random_state=0).fit(x[~rows], batch.gold[~rows])
        scores[rows] = model.predict_proba(x[rows])[:, 1]
    rr, hit = ranks_of(batch, scores)
    print(f"| gradient-boosted trees on notes | {rr.mean():.4f} / {hit.mean():.4f} | {per_category(items, rr)} |")
    try:
        import lightgbm
    except ImportError:
        print("| LambdaMART on sessions | not run: needs lightgbm (`pip install -e '.[lab]'`) | |")
        return
    table = session_table(batch)
    features = table.drop(columns=["item", "session", "gold"]).to_numpy()
    scores = np.zeros(len(table))
    for train, test in folds:
        rows = table["item"].isin(test).to_numpy()
        model = lightgbm.LGBMRanker(objective="lambdarank", n_estimators=300, learning_rate=0.05, num_leaves=15,
                                    random_state=0, verbose=-1)
        model.fit(features[~rows], table["gold"][~rows], group=table[~rows].groupby("item").size().to_numpy())
        scores[rows] = model.predict(features[rows])
    rr, hit = session_ranks(table, scores, batch.n)
    print(f"| LambdaMART on sessions | {rr.mean():.4f} / {hit.mean():.4f} | {per_category(items, rr)} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--locomo", required=True)
    parser.add_argument("--evidence", type=Path, required=True, help="folder of the evidence pickles, made if absent")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--pools", type=lambda s: s.split(","), default=["30", "60", "1000"],
                        help="pool sizes; the first is the reference and the ranker's evidence")
    args = parser.parse_args()
    pool_screen(args)
    print("\n| ranker (out of fold, by conversation) | MRR / S@1 | per category |\n|---|---|---|")
    ranker_screen(args)


if __name__ == "__main__":
    main()
