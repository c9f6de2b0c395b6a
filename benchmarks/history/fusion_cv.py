# History: BENCHMARKS.md sections 11, 16 and 17 (TagGraph-Fusion's weights before section 18's joint protocol); commit 229acb7. fusion_joint_cv.py still scores with its Batch.
# Its second stage (chunks, coverage, agreement) has left TagGraph-Fusion: the protocol as run is at 8557cb5; here only the
# choices without it remain.
"""Tune TagGraph-Fusion on a LongMemEval split by the protocol fixed before tuning of lab study 16.

    python benchmarks/history/fusion_cv.py --data ../shared/data/longmemeval/longmemeval_s_dev.json.gz \
        --evidence /tmp/fusion/evidence.pkl --workers 2 --extractor offline-v2 [--repeats 3]

Computes each judged question's evidence once (`TagGraphFusion.signals` with every component on, asked at
the question date; cached in `--evidence`). "Tuning" is one procedure, `tune`: it chooses which components
may carry weight (`CHOICES`: the components before study 16's protocol, plus the stemmed lexical lists, plus the second
stage's session evidence, or both) by inner cross-validation, then fits that choice's weights by coordinate
ascent over `GRID` (maximizing session MRR at depth 40, the bench's metric) on all the questions it is given.
Requests for suggestions (`is_request`) are scored with the fixed `REQUEST_WEIGHTS` throughout.

Reported:
1. nested cross-validation: `tune` inside each of 5 outer folds, the held-out fold scored; repeated over
   `--repeats` fold shuffles (pooled out-of-fold MRR and Success@1 per shuffle, per question type, paired
   against BM25 over notes, which choice each fold took);
2. halves: dev split in two halves stratified by question type; `tune` on one, scored on both (the gap
   between the half tuned on and the untouched half), each way round;
3. `tune` on every question: the code's defaults (in-sample).

With `--bags B` the weights of the chosen components are the mean of B fits on bootstrap resamples
(`bagged_fit`) instead of one fit. This variant was added after the halves gap of BENCHMARKS section 16
(0.035 one way) was seen; the rule for adopting it was fixed before it ran: adopt it if its nested-CV MRR,
mean over the shuffles, is at least the one-fit procedure's minus 0.002 and the mean of its two halves gaps
is smaller.

With `--dense-reads turn` the evidence's dense component embeds each pool note's whole turn, both
speakers, instead of the user turn (TagGraph-Fusion's `dense_reads`). Its rule, fixed before it ran: make
it the default if its nested-CV MRR (mean over the shuffles) is at least the user turn's minus 0.005 (the
spread over shuffles), because on a history where both sides of a turn are people (LoCoMo) the user turn
holds only half the facts, which dev, whose questions are about the user, cannot reward.

With `--ltr` (needs lightgbm: the `lab` extra), LightGBM LambdaRank over the same evidence is scored on the same
outer folds, to be adopted only if it beats the linear weights out of fold.
"""

from __future__ import annotations

import argparse
import pickle
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import numpy as np
from joblib import Parallel, delayed
from sklearn.model_selection import KFold, StratifiedKFold

from taggraph.datasets import load
from taggraph.evaluation.significance import paired_test
from taggraph.runs.runner import build_store
from taggraph.methods import make_retriever
from taggraph.methods.base import DEFAULT_DEPTH
from taggraph.methods.fusion.signals import COMPONENTS, REQUEST_WEIGHTS, SESSION_FEATURES, FusionWeights, Signals, fuse

# every component computed (a component with weight 0 is skipped), so that any weights can be fitted on the evidence
# (the parts added after study 16's protocol held at 0, whatever the code's defaults are now: this protocol knew none of them)
LATER_PARTS = {"turns": 0.0, "speaker": 0.0, "best_turn": 0.0, "top2_turns": 0.0}
EVERY = FusionWeights(note_stem=1.0, raw_stem=1.0, **LATER_PARTS)
GRID = {  # free choice: a coarse grid per weight; note_bm25 is fixed at 1 (the scale)
    "raw_bm25": [0, 0.1, 0.25, 0.5, 1.0],
    "dense": [0, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0],
    "graph": [0, 0.25, 0.5, 1.0, 1.5, 2.0, 3.0],
    "session": [0, 0.1, 0.25, 0.5, 1.0],
    "target": [0, 0.25, 0.5, 1.0, 2.0],
    "recent": [0, 0.05, 0.1, 0.25, 0.5],
    "early": [0, 0.05, 0.1, 0.25, 0.5],
    "note_stem": [0, 0.25, 0.5, 1.0, 2.0],
    "raw_stem": [0, 0.25, 0.5, 1.0, 2.0],
}
BEFORE = ("raw_bm25", "dense", "graph", "session", "target", "recent", "early")  # the components before study 16's protocol
STEMS = ("note_stem", "raw_stem")
CHOICES = {"before": BEFORE, "stems": BEFORE + STEMS}  # and "second-stage", "stems+second-stage" at 8557cb5
# free choice, made before any fit: every weight starts moderately on (from all-zero the ascent stalls, section 11)
START = FusionWeights(raw_bm25=0.25, dense=0.75, graph=1.0, session=0.1, target=0.25, recent=0.05, early=0.05,
                      note_stem=0.5, raw_stem=0.5, **LATER_PARTS)
PASSES = 3  # coordinate-ascent sweeps over GRID
FOLDS, INNER_FOLDS = 5, 4
SEED = 0  # the first shuffle; repeat r uses SEED + r


def case_evidence(case, extractor: str = "offline", dense_reads: str = "user") -> tuple[str, str, Signals, np.ndarray]:
    """(question id, type, evidence, gold flag per session code) for one judged case (`dense_reads`: Fusion's
    parameter)."""
    store = build_store(case, extractor)
    fusion = make_retriever("TagGraph-Fusion", store, weights=EVERY, dense_reads=dense_reads)
    ev = fusion.signals(case.question, case.asked_on)
    gold = np.array([sid in set(case.gold_session_ids) for sid in fusion.sessions])
    return case.case_id, case.question_type, ev, gold


@dataclass
class Batch:
    """Many questions' evidence stacked, so that one set of weights scores them all in a few array operations."""

    item: np.ndarray        # question number of each row (a row is a note)
    note: np.ndarray        # note index within its question (ties: the earlier note first, as the bench)
    sessions: np.ndarray    # session code, unique across questions (the name `fuse` reads)
    gold: np.ndarray        # whether the row's session is gold
    request: np.ndarray     # whether the row's question is a request
    components: np.ndarray
    session_features: np.ndarray
    time: np.ndarray
    n: int

    @classmethod
    def of(cls, items) -> Batch:
        offsets = np.cumsum([0] + [len(gold) for *_, gold in items])
        parts = [(np.full(len(ev.notes), q), ev.notes, ev.sessions + offsets[q], gold[ev.sessions],
                  np.full(len(ev.notes), ev.request)) for q, (_, _, ev, gold) in enumerate(items)]
        stack = lambda k: np.concatenate([p[k] for p in parts])  # noqa: E731
        evs = [ev for _, _, ev, _ in items]
        return cls(stack(0), stack(1), stack(2), stack(3), stack(4), np.vstack([ev.components for ev in evs]),
                   np.vstack([ev.session_features for ev in evs]), np.vstack([ev.time for ev in evs]), len(items))

    def scores(self, w: FusionWeights, requests: bool = True) -> np.ndarray:
        """`fuse` for every row at once (its session codes are unique across questions): `w`, and
        REQUEST_WEIGHTS on a request's rows when `requests`."""
        plain = fuse(self, w)
        return np.where(self.request, fuse(self, REQUEST_WEIGHTS), plain) if requests and self.request.any() else plain

    def reciprocal_ranks(self, w: FusionWeights, requests: bool = True) -> tuple[np.ndarray, np.ndarray]:
        """(RR, Success@1) per question under `w` (see `ranks_of`)."""
        return ranks_of(self, self.scores(w, requests))


def ranks_of(batch: Batch, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(RR, Success@1) per question of `batch`: notes by `scores` (ties: earlier note), the top DEFAULT_DEPTH
    notes de-duplicated to sessions, RR of the first gold session (0 when none)."""
    order = np.lexsort((batch.note, -scores, batch.item))
    item, session, gold = batch.item[order], batch.sessions[order], batch.gold[order]
    starts = np.searchsorted(item, np.arange(batch.n))
    kept = (np.arange(len(item)) - starts[item]) < DEFAULT_DEPTH
    item, session, gold = item[kept], session[kept], gold[kept]
    _, first_seen = np.unique(session, return_index=True)
    new = np.zeros(len(session), dtype=bool)
    new[first_seen] = True
    rank = np.cumsum(new) - np.r_[0, np.cumsum(new)][np.searchsorted(item, np.arange(batch.n))][item]
    best = np.full(batch.n, np.inf)
    np.minimum.at(best, item[new & gold], rank[new & gold])
    return np.where(np.isfinite(best), 1.0 / best, 0.0), (best == 1).astype(float)


def reciprocal_ranks(items, w: FusionWeights, requests: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """(RR, Success@1) per question of `items` under `w` (see `Batch.reciprocal_ranks`)."""
    return Batch.of(items).reciprocal_ranks(w, requests)


def restricted(w: FusionWeights, choice: str) -> FusionWeights:
    """`w` with every weight outside the choice's components set to 0 (note_bm25, the scale, stays)."""
    return replace(w, **{k: 0.0 for k in GRID if k not in CHOICES[choice]})


def fit(items, start: FusionWeights, choice: str = "stems") -> FusionWeights:
    """Coordinate ascent over GRID from `start`, within `choice`; a value changes only if it raises train MRR."""
    batch = Batch.of(items)
    best = restricted(start, choice)
    best_mrr = batch.reciprocal_ranks(best)[0].mean()
    for _ in range(PASSES):
        changed = False
        for name in CHOICES[choice]:
            for v in GRID[name]:
                cand = replace(best, **{name: v})
                mrr = batch.reciprocal_ranks(cand)[0].mean()
                if mrr > best_mrr + 1e-12:
                    best, best_mrr, changed = cand, mrr, True
        if not changed:
            break
    return best


def bagged_fit(items, choice: str, bags: int, seed: int) -> FusionWeights:
    """The mean of `fit` over `bags` bootstrap resamples of `items` (each weight averaged): bagging, which
    smooths the ascent's jumps between grid values that one or two questions decide."""
    rng = np.random.default_rng(seed)
    fits = [fit([items[i] for i in rng.integers(0, len(items), len(items))], START, choice) for _ in range(bags)]
    return FusionWeights(**{k: float(np.mean([getattr(w, k) for w in fits])) for k in asdict(START)})


def tune(items, seed: int = SEED, bags: int = 0) -> tuple[str, FusionWeights, dict[str, float]]:
    """The whole tuning procedure on `items`: each choice's inner-CV MRR, the best choice (ties: the smaller
    one, first in CHOICES), and its weights fitted on all of `items` (with `bags`, by `bagged_fit`; the
    inner CV that makes the choice stays unbagged)."""
    inner = list(KFold(INNER_FOLDS, shuffle=True, random_state=seed).split(items))
    scores = {}
    for choice in CHOICES:
        rr = np.zeros(len(items))
        for tr, te in inner:
            rr[te] = reciprocal_ranks([items[i] for i in te], fit([items[i] for i in tr], START, choice))[0]
        scores[choice] = rr.mean()
    best = max(CHOICES, key=lambda c: (round(scores[c], 12), -list(CHOICES).index(c)))
    return best, bagged_fit(items, best, bags, seed) if bags else fit(items, START, best), scores


def outer_fold(items, train, test, seed, bags=0):
    choice, w, inner = tune([items[i] for i in train], seed, bags)
    rr, hit = reciprocal_ranks([items[i] for i in test], w)
    return test, rr, hit, choice, w, inner


def ltr_features(batch: Batch) -> np.ndarray:
    """Per row: the components, session features and time features, and each component's best value over
    the row's session (the session context the linear fusion gets through its session bonus)."""
    best = np.zeros((int(batch.sessions.max()) + 1, batch.components.shape[1]))
    np.maximum.at(best, batch.sessions, batch.components)
    return np.hstack([batch.components, batch.session_features, batch.time, best[batch.sessions]])


def ltr_fold(items, train, test):
    """LightGBM LambdaRank fitted on the non-request questions of `train` (a row's label: its session is gold),
    scored on `test` (requests keep REQUEST_WEIGHTS): (test, RR, Success@1). Fixed hyperparameters (free
    choice, not tuned): 200 trees, learning rate 0.05, 15 leaves, at least 20 rows a leaf."""
    import lightgbm  # benchmark only: the `lab` extra

    fit_items = [items[i] for i in train if not items[i][2].request]
    batch = Batch.of(fit_items)
    ranker = lightgbm.LGBMRanker(n_estimators=200, learning_rate=0.05, num_leaves=15, min_child_samples=20,
                                 random_state=SEED, verbose=-1)
    ranker.fit(ltr_features(batch), batch.gold.astype(int), group=np.bincount(batch.item, minlength=batch.n))
    test_batch = Batch.of([items[i] for i in test])
    learned = ranker.predict(ltr_features(test_batch))
    scores = np.where(test_batch.request, test_batch.scores(REQUEST_WEIGHTS), learned)
    rr, hit = ranks_of(test_batch, scores)
    return test, rr, hit


def weights_line(w: FusionWeights) -> str:
    return ", ".join(f"{k} {getattr(w, k):g}" for k in GRID if getattr(w, k))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", required=True)
    parser.add_argument("--evidence", type=Path, required=True, help="pickle of the evidence, made if absent")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--extractor", default="offline", help="the notes' tagger (the evidence pickle is per tagger)")
    parser.add_argument("--repeats", type=int, default=3, help="fold shuffles of the nested cross-validation")
    parser.add_argument("--ltr", action="store_true", help="also LightGBM LambdaRank in the outer folds")
    parser.add_argument("--dense-reads", default="user", choices=("user", "turn"),
                        help="TagGraph-Fusion's dense_reads for the evidence")
    parser.add_argument("--bags", type=int, default=0, help="fit the chosen weights by bagging over this many "
                        "bootstrap resamples (`bagged_fit`); 0: one fit")
    args = parser.parse_args()
    if args.evidence.exists():
        items = pickle.loads(args.evidence.read_bytes())
    else:
        cases = [c for c in load(args.data).cases if c.gold_session_ids and not c.is_abstention]
        items = list(Parallel(n_jobs=args.workers)(
            delayed(case_evidence)(c, args.extractor, args.dense_reads) for c in cases))
        args.evidence.write_bytes(pickle.dumps(items))
    types = np.array([t for _, t, _, _ in items])
    print(f"{len(items)} judged questions from {args.data}; components {COMPONENTS}, session {SESSION_FEATURES}")
    bm25 = FusionWeights(**{k: 0.0 for k in asdict(FusionWeights()) if k != "note_bm25"})
    bm25_rr, bm25_hit = reciprocal_ranks(items, bm25, requests=False)
    print(f"BM25 over notes alone (every question): MRR {bm25_rr.mean():.4f}, Success@1 {bm25_hit.mean():.4f}")

    print("\n## 1. Nested cross-validation (tune inside each outer fold)\n")
    jobs = [(r, tr, te) for r in range(args.repeats)
            for tr, te in KFold(FOLDS, shuffle=True, random_state=SEED + r).split(items)]
    done = Parallel(n_jobs=args.workers)(delayed(outer_fold)(items, tr, te, SEED + r, args.bags) for r, tr, te in jobs)
    print("| shuffle | MRR | Success@1 | fold MRR sd | vs BM25 (paired) | choices | "
          + " | ".join(sorted(set(types))) + " |\n|" + "---|" * (6 + len(set(types))))
    for r in range(args.repeats):
        rr, hit, choices, fold_mrr = np.zeros(len(items)), np.zeros(len(items)), [], []
        for (rep, _, _), (te, f_rr, f_hit, choice, w, inner) in zip(jobs, done):
            if rep == r:
                rr[te], hit[te] = f_rr, f_hit
                choices.append(choice)
                fold_mrr.append(f_rr.mean())
        t = paired_test(rr, bm25_rr)
        per_type = " | ".join(f"{rr[types == k].mean():.3f}" for k in sorted(set(types)))
        print(f"| {SEED + r} | {rr.mean():.4f} | {hit.mean():.4f} | {np.std(fold_mrr, ddof=1):.4f} | "
              f"{t.mean_diff:+.4f}, p {t.p_value:.4f} | {', '.join(choices)} | {per_type} |")
    for (rep, _, _), (_, _, _, choice, w, inner) in zip(jobs, done):
        print(f"  shuffle {SEED + rep}: inner MRR " + ", ".join(f"{c} {v:.4f}" for c, v in inner.items())
              + f" -> {choice}: {weights_line(w)}")
    if args.ltr:
        print("\nLambdaRank instead of the linear weights, the same outer folds:")
        ltr = Parallel(n_jobs=args.workers)(delayed(ltr_fold)(items, tr, te) for _, tr, te in jobs)
        for r in range(args.repeats):
            rr, hit = np.zeros(len(items)), np.zeros(len(items))
            for (rep, _, _), (te, f_rr, f_hit) in zip(jobs, ltr):
                if rep == r:
                    rr[te], hit[te] = f_rr, f_hit
            print(f"  shuffle {SEED + r}: MRR {rr.mean():.4f}, Success@1 {hit.mean():.4f}")

    print("\n## 2. Halves: tuned on one, scored on both\n")
    halves = list(StratifiedKFold(2, shuffle=True, random_state=SEED).split(items, types))
    print("| tuned on | choice | MRR, half tuned on | MRR, other half | gap | Success@1 tuned / other |\n"
          "|---|---|---|---|---|---|")
    for name, (other, tuned) in zip("AB", halves):
        choice, w, _ = tune([items[i] for i in tuned], bags=args.bags)
        rr_t, hit_t = reciprocal_ranks([items[i] for i in tuned], w)
        rr_o, hit_o = reciprocal_ranks([items[i] for i in other], w)
        print(f"| half {name} ({len(tuned)}) | {choice} | {rr_t.mean():.4f} | {rr_o.mean():.4f} | "
              f"{rr_t.mean() - rr_o.mean():+.4f} | {hit_t.mean():.3f} / {hit_o.mean():.3f} |")

    print("\n## 3. Tuned on every question: the code's defaults (in-sample)\n")
    choice, w, inner = tune(items, bags=args.bags)
    rr, hit = reciprocal_ranks(items, w)
    print("inner MRR " + ", ".join(f"{c} {v:.4f}" for c, v in inner.items()))
    print(f"choice {choice}; {asdict(w)}; MRR {rr.mean():.4f}, Success@1 {hit.mean():.4f}")


if __name__ == "__main__":
    main()
