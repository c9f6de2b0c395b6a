# History: BENCHMARKS.md section 21 (protocol versions 3 and 4, not adopted); commit d9e4264. `session_stem` has left
# TagGraph-Fusion: versions 3 and 4 run at 8557cb5; version 2's search and the helpers below stay live.
"""A session read as one document (`session_stem`) in TagGraph-Fusion: the two-benchmark protocol's (lab study 18) version 3, fixed before its run.

    TAGGRAPH_CACHE=... python -m benchmarks.history.fusion_session_cv \
        --longmemeval ../shared/data/longmemeval/longmemeval_s_dev.json.gz \
        --locomo ../shared/data/locomo/locomo_dev.json --evidence /tmp/fusion_session --workers 2

Why this feature (a choice made after looking at LoCoMo dev numbers, named here): `lexical_screen.py` scored
LoCoMo dev's sessions with BM25-stem over four units, each alone. The session as one document was level with
the best note overall (MRR 0.766 vs 0.769) but ahead on the categories where TagGraph-Fusion is weakest:
multi-hop 0.671 vs 0.632, open-domain 0.543 vs 0.419, temporal 0.765 vs 0.739; single turns were behind
(0.731). No question was read; nothing below was set after the screen but the feature itself.

The protocol (written and committed before this script produced any result):
- Evidence: `fusion_joint_cv.evidence` (version 2's: every component and session feature on, raw values kept,
  one memory per history), now with ``session_stem`` too.
- Normalization: ``zscore``, version 2's choice; not chosen again.
- Folds: version 2's outer folds (LongMemEval stratified by type, LoCoMo one whole conversation per fold, seed 0).
- Two searches inside each outer fold, coordinate ascent from version 2's `START` (not from today's defaults,
  which were fitted on every question, test folds included): ``v2`` over version 2's `GRID`, and ``v3`` over
  the same grid plus ``session_stem`` in `SESSION_STEM_GRID` (a free choice: the span of the turn weights).
- Report: each benchmark out of fold under both, v3 paired against v2 per question, per type / category; then the
  halves check of BENCHMARKS 17 under v3; then v3 fitted on every question.
- Adoption rule: v3's fit on every question becomes TagGraph-Fusion's defaults if, out of fold, LoCoMo MRR gains at
  least 0.005 over v2 and LongMemEval MRR loses at most 0.003. Otherwise the defaults stay (``session_stem`` 0)
  and the result is reported.

Version 4 (written after version 3's run, which adopted ``session_stem`` 3; a choice made after seeing results,
named here): every one of version 3's five folds chose 3, the top of its grid, so ``v4`` is ``v3`` with the grid
widened to `WIDER_GRID`; run with ``--versions v3,v4``: the same folds, report and halves, and the same rule
(``v4`` replaces the defaults if out of fold LoCoMo gains at least 0.005 over ``v3`` and LongMemEval loses at most
0.003).
"""

from __future__ import annotations

import numpy as np
from joblib import Parallel, delayed

from benchmarks.fusion_joint_cv import (DATASETS, FOLDS, GRID, SEED, START, Joint, both_benchmarks, evidence_parser,
                                        fit, folds, minus)
from taggraph.evaluation.significance import paired_test

MODE = "zscore"
SEARCHES = {"v2": (GRID, START)}  # v3 and v4 added `session_stem` to it (in [0, 3], then up to 12): at 8557cb5


def outer(joint: Joint, everything, test, search: str):
    """(search, test, {dataset: (RR, Success@1)}, weights): `search` fitted on everything but `test`."""
    w = fit(joint.batches(minus(everything, test), MODE), *SEARCHES[search])
    return search, test, {d: b.reciprocal_ranks(w) for d, b in joint.batches(test, MODE).items()}, w


def out_of_fold(joint: Joint, results, search: str) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """{dataset: (RR, Success@1) per question} assembled from the outer folds of `search`."""
    out = {}
    for d in DATASETS:
        n = len(joint.items[d])
        rr, hit = np.zeros(n), np.zeros(n)
        for s, test, scores, _ in results:
            if s == search and d in scores:
                rr[test[d]], hit[test[d]] = scores[d]
        out[d] = rr, hit
    return out


def halves_and_fit(joint: Joint, everything, search: str, label: str) -> None:
    """Print the halves check of BENCHMARKS 17 under `search` (fitted on one half of both benchmarks, scored on
    both) and its fit on every question; `label` names the candidate in the headings."""
    print(f"\n## Halves under {label}: fitted on one, scored on both\n")
    halves = folds(joint.items, everything, 2, SEED)
    print("| fitted on | LongMemEval fitted / other | LoCoMo fitted / other |\n|---|---|---|")
    for name, (tuned, other) in zip("AB", (halves, halves[::-1])):
        w = fit(joint.batches(tuned, MODE), *SEARCHES[search])
        t, o = joint.batches(tuned, MODE), joint.batches(other, MODE)
        cells = [f"{t[d].reciprocal_ranks(w)[0].mean():.4f} / {o[d].reciprocal_ranks(w)[0].mean():.4f}" for d in DATASETS]
        print(f"| half {name} | " + " | ".join(cells) + " |")

    print(f"\n## {label} fitted on every question (in-sample)\n")
    b = joint.batches(everything, MODE)
    w = fit(b, *SEARCHES[search])
    print(", ".join(f"{d} MRR {b[d].reciprocal_ranks(w)[0].mean():.4f}, S@1 {b[d].reciprocal_ranks(w)[1].mean():.4f}"
                    for d in DATASETS))
    print(repr(w))


def main() -> None:
    parser = evidence_parser(__doc__.splitlines()[0])
    parser.add_argument("--versions", default="v2,v3", help="the baseline search and the candidate, as in SEARCHES")
    args = parser.parse_args()
    base, cand = args.versions.split(",")
    items = both_benchmarks(args)
    joint = Joint(items)
    everything = {d: np.arange(len(v)) for d, v in items.items()}
    outer_folds = folds(items, everything, FOLDS, SEED)
    done = Parallel(n_jobs=args.workers)(delayed(outer)(joint, everything, te, s) for s in (base, cand)
                                         for te in outer_folds)
    results = {s: out_of_fold(joint, done, s) for s in (base, cand)}

    print(f"## Out of fold, normalization {MODE}")
    gains = {}
    for d in DATASETS:
        (rr2, hit2), (rr3, hit3) = results[base][d], results[cand][d]
        test = paired_test(rr3, rr2)
        gains[d] = rr3.mean() - rr2.mean()
        print(f"\n### {d}: {len(rr2)} judged questions\n")
        print(f"| search | MRR | Success@1 |\n|---|---|---|\n| {base} | {rr2.mean():.4f} | {hit2.mean():.4f} |\n"
              f"| {cand} | {rr3.mean():.4f} | {hit3.mean():.4f} |")
        print(f"\n{cand} - {base}: {test.mean_diff:+.4f}, p {test.p_value:.4f}\n")
        types = np.array([t for _, t, *_ in items[d]])
        print(f"| type | n | {base} | {cand} | {cand} - {base} (p) |\n|---|---|---|---|---|")
        for k in sorted(set(types)):
            m = types == k
            t = paired_test(rr3[m], rr2[m])
            print(f"| {k} | {m.sum()} | {rr2[m].mean():.3f} | {rr3[m].mean():.3f} | {t.mean_diff:+.3f} ({t.p_value:.3f}) |")
    for j, (_, _, _, w) in enumerate(r for r in done if r[0] == cand):
        print(f"{cand} fold {j}: session_stem {w.session_stem:g}; {w}")
    adopt = gains["locomo"] >= 0.005 and gains["longmemeval"] >= -0.003
    print(f"\nAdoption rule: LoCoMo {gains['locomo']:+.4f} (>= +0.005), LongMemEval {gains['longmemeval']:+.4f} "
          f"(>= -0.003) -> {'adopt' if adopt else 'keep the defaults'}")
    halves_and_fit(joint, everything, cand, cand)


if __name__ == "__main__":
    main()
