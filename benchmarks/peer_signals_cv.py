"""What TagGraph-Fusion learns from MemPalace's hybrid_v4: six session cues out of fold on LongMemEval-S and LoCoMo dev.

    nice -n 19 python -m benchmarks.peer_signals_cv \
        --longmemeval ../shared/data/longmemeval/longmemeval_s_dev.json.gz \
        --locomo ../shared/data/locomo/locomo_dev.json --evidence /tmp/peer_cues

The protocol (lab study 41; fixed and committed before any result of this script was seen):
- Evidence: each judged question's `TagGraphFusion.signals` under its current defaults (weights, switches,
  minilm-int8), asked at the question date (LoCoMo: its conversation's last session), one memory per history, and
  the six cues of `benchmarks.peer_cues` per session. Cached per dataset in `--evidence`.
- A candidate adds `weight x cue` to each note's fused score through its session, as a session feature does
  (inside the time factor; not on a request's route, whose weights are OpenClaw's). Fusion's own weights stay
  at their defaults. Current Fusion is the candidate at weight 0.
- Folds: `fusion_joint_cv.folds` (LongMemEval 5 folds stratified by type, seed 0; LoCoMo one dev conversation per
  fold); outer fold k = both. In each, the weight is fitted on the other folds over `GRID` (0 included; the
  smallest weight of the best training objective, the mean of the two benchmarks' session MRR) and the fold is
  scored with it.
- Reported out of fold, per benchmark: MRR, Success@1, Success@5, per type, the paired randomization test against
  current Fusion (`paired_test`), each fold's weight. Also, for information only, the six cues together (coordinate
  ascent over `GRID`, 2 passes, from 0), and Holm's adjustment of the six candidates' p values.
- Adoption rule: a candidate is adopted if its out-of-fold MRR gain is > 0 on both benchmarks and p < 0.05 on at
  least one, with no significant loss (p < 0.05 with a negative difference) on the other. An adopted one ships at
  weight 0 by default with a named preset; the lead decides on the defaults.
"""

from __future__ import annotations

import argparse
import pickle
from pathlib import Path

import numpy as np

from benchmarks.fusion_joint_cv import DATASETS, FOLDS, SEED, folds
from benchmarks.history.fusion_cv import Batch, ranks_of
from benchmarks.peer_cues import CUES, HistoryCues
from taggraph.datasets import load
from taggraph.evaluation.significance import paired_test
from taggraph.methods import make_retriever
from taggraph.methods.fusion.peer_cues import keyword_overlap
from taggraph.methods.fusion.signals import FusionWeights
from taggraph.runs.runner import build_store, group_by_history

GRID = (0.0, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0)  # free choice, made before any result: cues in [0, 1] or z-scores
PASSES = 2


def history_items(cases, package: bool = False) -> list[tuple]:
    """(question id, type, signals, gold per session, group, cues) for the judged cases sharing one history;
    `package`: `user_overlap` is the package's `keyword_overlap`, as TagGraph-Fusion computes it."""
    store = build_store(cases[0], "offline-v2")
    fusion = make_retriever("TagGraph-Fusion", store)
    sessions = HistoryCues(fusion)
    out = []
    for case in cases:
        ev = fusion.signals(case.question, case.asked_on)
        gold = np.array([sid in set(case.gold_session_ids) for sid in fusion.sessions])
        cues = sessions.cues(case.question, case.asked_on, fusion._query_vector(case.question))
        if package:
            cues[:, 0] = keyword_overlap(fusion, case.question, fusion.session_code, len(fusion.sessions))
        out.append((case.case_id, case.question_type, ev, gold, getattr(case, "sample_id", "") or "", cues))
    return out


def evidence(path: str, cache: Path, limit: int = 0, package: bool = False) -> list[tuple]:
    if cache.exists():
        return pickle.loads(cache.read_bytes())
    cases = [c for c in load(path).cases if c.gold_session_ids and not c.is_abstention]
    groups = group_by_history(cases)
    items = [item for group in (groups[:limit] if limit else groups) for item in history_items(group, package)]
    if not limit:
        cache.parent.mkdir(parents=True, exist_ok=True)
        cache.write_bytes(pickle.dumps(items))
    return items


class Scored:
    """One benchmark's questions: current Fusion's fused score per row and each cue's addition per row."""

    def __init__(self, items: list[tuple]):
        self.batch = Batch.of([(q, t, ev, g) for q, t, ev, g, *_ in items])
        w = FusionWeights()
        self.base = self.batch.scores(w)
        factor = 1.0 + self.batch.time @ w.time()
        rows = np.concatenate([cues[ev.sessions] for _, _, ev, _, _, cues in items])
        self.added = rows * (factor * ~self.batch.request)[:, None]
        self.types = np.array([i[1] for i in items])

    def ranks(self, weights: np.ndarray, subset: np.ndarray | None = None) -> np.ndarray:
        """RR per question under `weights` (one per cue), of `subset` (question numbers) when given."""
        rr = ranks_of(self.batch, self.base + self.added @ weights)[0]
        return rr if subset is None else rr[subset]


def objective(scored: dict[str, Scored], train: dict[str, np.ndarray], weights: np.ndarray) -> float:
    return float(np.mean([scored[d].ranks(weights, train[d]).mean() for d in DATASETS]))


def fit(scored, train, cues: list[int]) -> np.ndarray:
    """Coordinate ascent over GRID for the cues `cues` from 0 (one cue: a grid search); a value changes only if
    it raises the training objective, so ties keep the smaller weight."""
    best = np.zeros(len(CUES))
    best_score = objective(scored, train, best)
    for _ in range(PASSES if len(cues) > 1 else 1):
        changed = False
        for j in cues:
            for v in GRID:
                cand = best.copy()
                cand[j] = v
                score = objective(scored, train, cand)
                if score > best_score + 1e-12:
                    best, best_score, changed = cand, score, True
        if not changed:
            break
    return best


def out_of_fold(scored, outer, cues: list[int]) -> tuple[dict[str, np.ndarray], list[np.ndarray]]:
    """Each benchmark's out-of-fold RR for the cues `cues`, and each fold's fitted weights."""
    rr = {d: np.zeros(scored[d].batch.n) for d in DATASETS}
    weights = []
    everything = {d: np.arange(scored[d].batch.n) for d in DATASETS}
    for test in outer:
        train = {d: np.setdiff1d(everything[d], test[d]) for d in DATASETS}
        w = fit(scored, train, cues)
        weights.append(w)
        for d in DATASETS:
            rr[d][test[d]] = scored[d].ranks(w, test[d])
    return rr, weights


def holm(p: list[float]) -> list[float]:
    order = np.argsort(p)
    adjusted, running = np.zeros(len(p)), 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (len(p) - rank) * p[i]))
        adjusted[i] = running
    return adjusted.tolist()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--longmemeval", required=True)
    parser.add_argument("--locomo", required=True)
    parser.add_argument("--evidence", type=Path, required=True, help="folder of the evidence pickles, made if absent")
    parser.add_argument("--package", action="store_true", help="user_overlap as the package computes it (lab 41's check)")
    parser.add_argument("--limit", type=int, default=0, help="the first N histories only, nothing cached (a cost check)")
    args = parser.parse_args()
    items = {"longmemeval": evidence(args.longmemeval, args.evidence / "longmemeval.pkl", args.limit, args.package),
             "locomo": evidence(args.locomo, args.evidence / "locomo.pkl", args.limit, args.package)}
    if args.limit:
        print({d: len(v) for d, v in items.items()}, "questions: evidence only (a cost check)")
        return
    scored = {d: Scored(v) for d, v in items.items()}
    outer = folds(items, {d: np.arange(len(v)) for d, v in items.items()}, FOLDS, SEED)
    base = {d: scored[d].ranks(np.zeros(len(CUES))) for d in DATASETS}
    runs = {c: out_of_fold(scored, outer, [j]) for j, c in enumerate(CUES)}
    runs["all six"] = out_of_fold(scored, outer, list(range(len(CUES))))
    tests = {c: {d: paired_test(rr[d], base[d]) for d in DATASETS} for c, (rr, _) in runs.items()}
    adjusted = {d: dict(zip(CUES, holm([tests[c][d].p_value for c in CUES]))) for d in DATASETS}
    print("\n| candidate | " + " | ".join(f"{d} MRR / S@1 / S@5 | - Fusion (p; Holm)" for d in DATASETS)
          + " | adopted |\n|---|---|---|---|---|---|")
    rows = [("TagGraph-Fusion (current)", base, None)] + [(c, rr, c) for c, (rr, _) in runs.items()]
    for name, rr, c in rows:
        cells = []
        for d in DATASETS:
            cells.append(f"{rr[d].mean():.4f} / {(rr[d] == 1).mean():.4f} / {(rr[d] >= 0.2).mean():.4f}")
            t = tests[c][d] if c else None
            cells.append("" if t is None else f"{t.mean_diff:+.4f} (p {t.p_value:.4f}; "
                         f"{adjusted[d].get(c, float('nan')):.4f})")
        verdict = ""
        if c:
            t = tests[c]
            gains = all(t[d].mean_diff > 0 for d in DATASETS)
            some = any(t[d].p_value < 0.05 for d in DATASETS)
            loss = any(t[d].mean_diff < 0 and t[d].p_value < 0.05 for d in DATASETS)
            verdict = "yes" if gains and some and not loss else "no"
            verdict += "" if c in CUES else " (information only)"
        print(f"| {name} | " + " | ".join(cells) + f" | {verdict} |")
    print("\nfold weights (folds 0-4; all six: one tuple of the six per fold):")
    for c, (_, ws) in runs.items():
        shown = [f"{w[CUES.index(c)]:g}" if c in CUES else "(" + ", ".join(f"{v:g}" for v in w) + ")" for w in ws]
        print(f"- {c}: " + ", ".join(shown))
    for d in DATASETS:
        types = scored[d].types
        print(f"\n### {d}: MRR per type, out of fold\n\n| type | n | Fusion | " + " | ".join(runs) + " |\n|---|---|---|"
              + "---|" * len(runs))
        for k in sorted(set(types)):
            m = types == k
            print(f"| {k} | {m.sum()} | {base[d][m].mean():.3f} | "
                  + " | ".join(f"{rr[d][m].mean():.3f}" for rr, _ in runs.values()) + " |")


if __name__ == "__main__":
    main()
