# History: BENCHMARKS.md section 28 (protocol version 6, adopted in the LoCoMo loader); commit 7d682d3.
"""Protocol 6 (of the two-benchmark protocol, lab study 18; committed before its run): LoCoMo's questions dated by their conversation's last session.

LoCoMo records no date for its questions, so TagGraph-Fusion reads no date a question names ("When did Melanie go
camping in June?"): its windows need the day a question is asked. LoCoMo's questions are asked over the whole
conversation, after its last session. The candidate: each question dated by the day of its conversation's last
session (`session_<n>_date_time` of the highest n), read in the loader.

Fixed before the run: the defaults as they are (no weight is refitted), offline-v2 tags, MiniLM, every LoCoMo dev
question; TagGraph-Fusion and BM25 (which reads no date: its MRR must not move, a check of the harness) with
the questions undated (as loaded today) and dated. Adopt the dating in the LoCoMo loader if Fusion's MRR rises by
at least 0.003 and no category loses more than 0.01; otherwise keep today's loader and report the numbers.
LongMemEval is unaffected by construction (its questions carry their dates). Named choice made after looking at
particular questions: 8 dev questions that name a month or a year ("in June", "in 2023") were read while counting
how many name a date (92 of 999 give a window, 10 a before/after anchor), before this protocol was written.

    python benchmarks/history/locomo_dated_questions.py --locomo ../shared/data/locomo/locomo_dev.json --workers 2
"""

from __future__ import annotations

import argparse
import dataclasses
import warnings

import pandas as pd

import taggraph as tg
from taggraph.evaluation.significance import paired_test
from taggraph.datasets.locomo import asked_after


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--locomo", required=True)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        data = tg.load(args.locomo)
    # the loader dates the questions since this protocol's adoption: "undated" clears the date, as loaded before
    variants = {"undated": [dataclasses.replace(c, question_date="") for c in data],
                "dated": [dataclasses.replace(c, question_date=asked_after(c.interactions)) for c in data]}
    assert all(c.asked_on is not None for c in variants["dated"])
    rr = {}
    for name, cases in variants.items():
        result = tg.bench(cases, ["BM25", "TagGraph-Fusion"], extractor="offline-v2", workers=args.workers,
                          baseline=None)
        judged = result.rankings[~result.rankings["abstention"]]
        rr[name] = judged.set_index(["method", "question_id"])[["RR", "question_type"]]
    rows = []
    for method in ("BM25", "TagGraph-Fusion"):
        a, b = rr["undated"].loc[method], rr["dated"].loc[method].reindex(rr["undated"].loc[method].index)
        for category, idx in [("all", a.index), *a.groupby("question_type").groups.items()]:
            test = paired_test(b.loc[idx, "RR"], a.loc[idx, "RR"]) if len(idx) > 1 else None
            rows.append({"method": method, "category": category, "n": len(idx),
                         "undated": a.loc[idx, "RR"].mean(), "dated": b.loc[idx, "RR"].mean(),
                         "dated - undated": b.loc[idx, "RR"].mean() - a.loc[idx, "RR"].mean(),
                         "p": test.p_value if test else float("nan")})
    table = pd.DataFrame(rows)
    print(table.round(4).to_string(index=False))
    fusion = table[table["method"] == "TagGraph-Fusion"].set_index("category")["dated - undated"]
    adopt = fusion["all"] >= 0.003 and (fusion.drop("all") >= -0.01).all()
    print(f"\nrule: Fusion MRR +{fusion['all']:.4f} (>= 0.003?), worst category {fusion.drop('all').min():+.4f} "
          f"(>= -0.01?): {'ADOPT' if adopt else 'do not adopt'}")


if __name__ == "__main__":
    main()
