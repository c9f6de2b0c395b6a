"""Which date an anchor clause gets: TagGraph-Fusion's anchor rule questioned, by a protocol fixed before its run.

    nice -n 10 python -m benchmarks.anchor_protocol

The protocol (written and committed before the run; the lab log, study 40):

- Free choice under test: "before / after <event>" (`question_anchors`) gets the date of the note that best matches the
  clause (BM25 over the notes, earliest of ties): `best`, the default. Alternatives: `named`, a date the best-matching
  note itself names ("on October 8": month and day, the first on or after the note's own date; its own date when it
  names none); `latest` and `earliest`, the latest or earliest dated note with any match; `threshold`, no window
  unless the best note holds at least half of the clause's distinct words (`MATCH_SHARE`, fixed now).
- Questions: the dev halves' temporal questions whose text has an anchor clause: LongMemEval-S dev temporal-reasoning
  (/work/shared/data/longmemeval) and LoCoMo dev temporal (/work/shared/data/locomo), judged (gold sessions, no
  abstention); the other temporal questions do not change under any rule.
- Measure: session MRR at depth 40 of TagGraph-Fusion with its defaults (offline-v2 tags, minilm-int8), each rule in
  turn, the rest unchanged.
- Out of fold: leave one question out; the rule with the highest MRR on the others (ties: `best` first, then the
  order above) scores the held-out one; the procedure's out-of-fold MRR is set beside `best`'s.
- Adoption: a rule becomes a named switch, and the default only if its out-of-fold MRR beats `best`'s on both
  benchmarks. A benchmark without an anchored temporal question cannot show a gain, so then nothing is adopted.
"""

from __future__ import annotations

import re
from datetime import date

import numpy as np

from taggraph.core.text import tokenize
from taggraph.datasets import load
from taggraph.methods import make_retriever
from taggraph.methods.base import DEFAULT_DEPTH
from taggraph.methods.fusion.features import evidence_vector
from taggraph.methods.fusion.time_expressions import (EPOCH, MONTHS, SHAPES, SPAN_TOLERANCE, Window, as_of,
                                                      question_anchors, question_windows)
from taggraph.core.text import days as day_of
from taggraph.runs.runner import build_store

RULES = ("best", "named", "latest", "earliest", "threshold")
MATCH_SHARE = 0.5  # free choice, fixed before the run: `threshold` keeps a window when the note holds half the words
DATA = {"longmemeval": ("/work/shared/data/longmemeval/longmemeval_s_dev.json.gz", "temporal-reasoning"),
        "locomo": ("/work/shared/data/locomo/locomo_dev.json", "temporal")}


def named_day(text: str, own: float) -> float | None:
    """The first month-and-day `text` names ("October 8", "8th of October"), on or after the day `own`."""
    m = SHAPES["day_of"].search(text.lower())
    if m is None:
        return None
    month, day = (m.group(1), m.group(2)) if m.group(1) else (m.group(4), m.group(3))
    start = as_of(own).date()
    for year in (start.year, start.year + 1):
        try:
            found = date(year, MONTHS.index(month) + 1, int(day))
        except ValueError:
            return None
        if found >= start:
            return float((found - EPOCH).days)
    return None


def anchor_day(fusion, clause: str, rule: str) -> float | None:
    """The day `rule` gives the event `clause` names (None: no window)."""
    match = evidence_vector(fusion.note_bm25.score(clause), len(fusion.days))
    dated = ~np.isnan(match) & ~np.isnan(fusion.days)
    if not dated.any():
        return None
    best = int(np.argmax(np.where(dated, match, -np.inf)))
    if rule == "latest":
        return float(np.nanmax(np.where(dated, fusion.days, np.nan)))
    if rule == "earliest":
        return float(np.nanmin(np.where(dated, fusion.days, np.nan)))
    if rule == "named":
        named = named_day(fusion.store.notes[best].raw_text, fusion.days[best])
        return fusion.days[best] if named is None else named
    if rule == "threshold":
        words = set(tokenize(clause))
        held = words & set(tokenize(fusion.store.notes[best].to_markdown()))
        return fusion.days[best] if words and len(held) / len(words) >= MATCH_SHARE else None
    return fusion.days[best]


def windows_by(fusion, rule: str):
    """`TagGraphFusion.windows` with the anchor's day chosen by `rule`."""
    def windows(text, asked_on):
        if asked_on is None:
            return []
        now = day_of(asked_on)
        out = question_windows(text, as_of(now))
        for anchor in question_anchors(text):
            day = anchor_day(fusion, anchor.clause, rule)
            if day is not None:
                out.append(Window(-np.inf, day, SPAN_TOLERANCE) if anchor.direction == "before"
                           else Window(day, now, SPAN_TOLERANCE))
        return out
    return windows


def reciprocal_rank(fusion, case) -> float:
    """RR of the first gold session among the sessions of the first DEFAULT_DEPTH notes."""
    seen: list[str] = []
    for i, _ in fusion.rank(case.question, DEFAULT_DEPTH, asked_on=case.asked_on):
        sid = fusion.store.notes[i].session_id
        if sid not in seen:
            seen.append(sid)
            if sid in set(case.gold_session_ids):
                return 1.0 / len(seen)
    return 0.0


def run(name: str) -> None:
    path, kind = DATA[name]
    cases = [c for c in load(path).cases if c.question_type == kind and c.gold_session_ids and not c.is_abstention
             and question_anchors(c.question)]
    print(f"{name}: {len(cases)} anchored {kind} questions")
    if not cases:
        return
    rr = np.zeros((len(cases), len(RULES)))
    for q, case in enumerate(cases):
        fusion = make_retriever("TagGraph-Fusion", build_store(case, "offline-v2"))
        for j, rule in enumerate(RULES):
            fusion.windows = windows_by(fusion, rule)
            fusion._memo = None
            rr[q, j] = reciprocal_rank(fusion, case)
        print(f"  {case.case_id}: " + ", ".join(f"{r} {v:.3f}" for r, v in zip(RULES, rr[q])), flush=True)
    chosen = [int(np.argmax(np.delete(rr, q, axis=0).mean(axis=0))) for q in range(len(cases))]
    out_of_fold = np.array([rr[q, j] for q, j in enumerate(chosen)])
    print(f"  in sample MRR: " + ", ".join(f"{r} {v:.3f}" for r, v in zip(RULES, rr.mean(axis=0))))
    print(f"  out of fold (leave one out): {out_of_fold.mean():.3f} vs best {rr[:, 0].mean():.3f}; chosen "
          + ", ".join(RULES[j] for j in chosen))


if __name__ == "__main__":
    for name in DATA:
        run(name)
