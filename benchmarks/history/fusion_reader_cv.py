# History: BENCHMARKS.md section 23 (protocol version 5, not adopted); commit 7b7d213. fusion_encoder_cv.py reuses its checks.

# A record: `pool_reader` left TagGraph-Fusion after it was not adopted; this runs at commit 33c39a6.
# The command below is that commit's (its copy put benchmarks/ on its own import path); this copy imports the
# other scripts as modules of the benchmarks package.
"""A reader of every note picking extra pool notes (`pool_reader`): the two-benchmark protocol's (lab study 18) version 5, fixed before its run.

    TAGGRAPH_CACHE=... python benchmarks/history/fusion_reader_cv.py \
        --longmemeval ../shared/data/longmemeval/longmemeval_s_dev.json.gz \
        --locomo ../shared/data/locomo/locomo_dev.json --evidence /tmp/fusion_reader --workers 2

Why this candidate (choices made after looking at LoCoMo dev numbers, named here; BENCHMARKS.md, section 22):
`locomo_screens.py` found, on LoCoMo alone with weights fitted per conversation, that a dense pool of every note
gains 0.009 MRR out of fold, unaffordable on LongMemEval, and that the static MiniLM reading every note's whole
turn and adding its nearest notes to the pool gains 0.005 (its 30 nearest), 0.004 (10) or 0.005 (5). The
candidate is the cheapest of these, `READER` (5 notes, ~2 MiniLM texts more per note added), a choice made on
those numbers. No question was read.

The protocol (written and committed before this script produced any result):
- Evidence: `fusion_joint_cv.evidence` twice per benchmark, the defaults' pool (``base``) and with `READER`
  (``reader``), in `--evidence` and its ``reader`` folder; the same questions in the same order.
- Normalization ``zscore``, version 2's outer folds, grid and start (`fusion_joint_cv`); version 2's search
  (`fusion_session_cv.SEARCHES["v2"]`) inside each outer fold, on each evidence.
- Report: each benchmark out of fold under both, ``reader`` paired against ``base`` per question and per type /
  category; the pool's size per question (the MiniLM work it costs); then the halves check of BENCHMARKS 17 under
  ``reader``; then ``reader`` fitted on every question.
- Adoption rule (version 3's bar): ``reader`` and its fit on every question become TagGraph-Fusion's defaults if,
  out of fold, LoCoMo MRR gains at least 0.005 and LongMemEval MRR loses at most 0.003, and the mean pool of a
  LongMemEval question grows by at most 15% (the cold run is already over its 15-minute target). Otherwise the
  defaults stay and the result is reported.

Added after the run (not part of the rule): `fixed_weights`, the switch alone under today's default weights (fitted
without it, so in-sample for the weights on both evidences alike), to tell the reader's effect from the refit's.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
from joblib import Parallel, delayed

from benchmarks.fusion_joint_cv import DATASETS, FOLDS, SEED, Joint, both_benchmarks, evidence, evidence_parser, folds
from benchmarks.history.fusion_session_cv import MODE, halves_and_fit, out_of_fold, outer
from taggraph.evaluation.significance import paired_test
from taggraph.methods.fusion.signals import COMPONENTS, FusionWeights

READER = {"pool_reader": "minilm-static", "reader_pool": 5}


def mean_pool(items) -> float:
    """Mean number of notes with a turns value (the pool MiniLM embeds) per question."""
    turns = COMPONENTS.index("turns")
    return float(np.mean([(~np.isnan(ev.raw[:, turns])).sum() for _, _, ev, _, _ in items]))


def fixed_weights(joints: dict[str, Joint], everything, label: str) -> None:
    """Each benchmark under today's defaults on both evidences, the candidate `label` paired against base."""
    print(f"\n## After the verdict: the switch alone, under today's default weights\n")
    print(f"| benchmark | base MRR / S@1 | {label} MRR / S@1 | {label} - base (p) |\n|---|---|---|---|")
    base, cand = (joints[name].batches(everything, MODE) for name in ("base", label))
    for d in DATASETS:
        (rr0, hit0), (rr1, hit1) = (b[d].reciprocal_ranks(FusionWeights()) for b in (base, cand))
        test = paired_test(rr1, rr0)
        print(f"| {d} | {rr0.mean():.4f} / {hit0.mean():.4f} | {rr1.mean():.4f} / {hit1.mean():.4f} | "
              f"{test.mean_diff:+.4f} ({test.p_value:.3f}) |")


def checks(joints: dict[str, Joint], everything, label: str) -> None:
    """What follows every verdict: the halves check and the fit on every question under `label`, then the switch
    alone under today's weights."""
    halves_and_fit(joints[label], everything, "v2", label)
    fixed_weights(joints, everything, label)


def timed_evidence(path: str, cache: Path, workers: int, **params) -> list[tuple]:
    """`evidence`, printing how long it took when it was computed rather than read from `cache`."""
    fresh, start = not cache.exists(), time.perf_counter()
    items = evidence(path, cache, workers, **params)
    if fresh:
        print(f"evidence {cache}: {time.perf_counter() - start:.0f} s with {workers} workers")
    return items


def versus_base(args, params: dict, label: str):
    """The v2 search out of fold on the base evidence and on evidence with `params` (in `args.evidence / label`),
    paired per question and per type; returns (items, joints, everything, MRR gain per benchmark, and per evidence
    {benchmark: (RR, Success@1) per question}, out of fold)."""
    items = {"base": both_benchmarks(args),
             label: {d: timed_evidence(getattr(args, d), args.evidence / label / f"{d}.pkl", args.workers, **params)
                     for d in DATASETS}}
    joints = {name: Joint(its) for name, its in items.items()}
    everything = {d: np.arange(len(v)) for d, v in items["base"].items()}
    assert all([i[0] for i in items["base"][d]] == [i[0] for i in items[label][d]] for d in DATASETS)
    outer_folds = folds(items["base"], everything, FOLDS, SEED)
    done = {name: Parallel(n_jobs=args.workers)(delayed(outer)(joint, everything, te, "v2") for te in outer_folds)
            for name, joint in joints.items()}
    results = {name: out_of_fold(joints[name], done[name], "v2") for name in joints}

    print(f"## Out of fold, normalization {MODE}")
    gains = {}
    for d in DATASETS:
        (rr0, hit0), (rr1, hit1) = results["base"][d], results[label][d]
        test = paired_test(rr1, rr0)
        gains[d] = rr1.mean() - rr0.mean()
        pools = mean_pool(items["base"][d]), mean_pool(items[label][d])
        print(f"\n### {d}: {len(rr0)} judged questions\n")
        print(f"| evidence | MRR | Success@1 | mean pool |\n|---|---|---|---|\n"
              f"| base | {rr0.mean():.4f} | {hit0.mean():.4f} | {pools[0]:.1f} |\n"
              f"| {label} | {rr1.mean():.4f} | {hit1.mean():.4f} | {pools[1]:.1f} |")
        print(f"\n{label} - base: {test.mean_diff:+.4f}, p {test.p_value:.4f}; pool {pools[1] / pools[0] - 1:+.1%}\n")
        types = np.array([t for _, t, *_ in items["base"][d]])
        print(f"| type | n | base | {label} | {label} - base (p) |\n|---|---|---|---|---|")
        for k in sorted(set(types)):
            m = types == k
            t = paired_test(rr1[m], rr0[m])
            print(f"| {k} | {m.sum()} | {rr0[m].mean():.3f} | {rr1[m].mean():.3f} | {t.mean_diff:+.3f} ({t.p_value:.3f}) |")
    return items, joints, everything, gains, results


def main() -> None:
    args = evidence_parser(__doc__.splitlines()[0]).parse_args()
    items, joints, everything, gains, _ = versus_base(args, READER, "reader")
    growth = mean_pool(items["reader"]["longmemeval"]) / mean_pool(items["base"]["longmemeval"]) - 1
    adopt = gains["locomo"] >= 0.005 and gains["longmemeval"] >= -0.003 and growth <= 0.15
    print(f"\nAdoption rule: LoCoMo {gains['locomo']:+.4f} (>= +0.005), LongMemEval {gains['longmemeval']:+.4f} "
          f"(>= -0.003), LongMemEval pool {growth:+.1%} (<= +15%) -> {'adopt' if adopt else 'keep the defaults'}")

    checks(joints, everything, "reader")


if __name__ == "__main__":
    main()
