# History: BENCHMARKS.md sections 21 and 25 (the screen before protocol version 3; RM3); commit 2bacdde.
"""Screen lexical units for LoCoMo's sessions: which stemmed BM25 document a session is best scored from.

    python benchmarks/history/lexical_screen.py --data ../shared/data/locomo/locomo_dev.json

For the two-benchmark protocol (lab study 18), the cheap first gate before any protocol (as `encoder_screen.py` is for encoders): deja-vu scores a
LoCoMo session by its best single message, TagGraph-Fusion's stemmed lists by its best note (a turn and its
reply). Here each unit is tried alone, no fusion, no tuning: BM25 (bm25s, Lucene variant, k1 1.5, b 0.75, the
tokenizer of BM25-stem without the tag line) over

- ``note``: each note (a turn and its reply, as the LoCoMo loader pairs them), the session scored by its best note;
- ``turn``: each turn alone, the session by its best turn (max-sim, lexical);
- ``turn_top2``: each turn alone, the session by the mean of its two best turns;
- ``session``: the whole session as one document.

It prints each unit's session MRR and Success@1 over the judged questions (ties broken by session order).
``--rm3`` adds rows for the note unit with RM3 pseudo-relevance feedback (`rm3_scores`) at a few settings.
"""

from __future__ import annotations

import argparse
from collections import Counter, defaultdict

import bm25s
import numpy as np

from taggraph.datasets import load_dataset
from taggraph.methods.bm25_stem import make_tokenizer

UNITS = ("note", "turn", "turn_top2", "session")
# (feedback documents, feedback terms, the query's weight): Anserini's defaults (10, 10, 0.5) and a few around them
RM3 = [(docs, terms, 0.7) for docs in (5, 10) for terms in (10, 20)] + [(10, 10, 0.5)]


def unit_texts(case, unit: str) -> tuple[list[str], list[str]]:
    """(the documents of `unit` in history order, the session of each)."""
    texts, sessions = [], []
    by_session: dict[str, list[str]] = defaultdict(list)
    for it in case.interactions:
        turns = [t for t in (it.user, it.assistant) if t.strip()]
        if unit == "note":
            texts.append("\n".join(turns))
            sessions.append(it.session_id)
        elif unit in ("turn", "turn_top2"):
            texts += turns
            sessions += [it.session_id] * len(turns)
        else:
            by_session[it.session_id] += turns
    if unit == "session":
        sessions = list(by_session)
        texts = ["\n".join(by_session[s]) for s in sessions]
    return texts, sessions


def session_scores(scores: np.ndarray, sessions: list[str], top: int) -> dict[str, float]:
    """Each session's mean of its `top` best document scores (fewer when it has fewer documents)."""
    grouped: dict[str, list[float]] = defaultdict(list)
    for sid, score in zip(sessions, scores.tolist()):
        grouped[sid].append(score)
    return {sid: float(np.mean(sorted(v, reverse=True)[:top])) for sid, v in grouped.items()}


def reciprocal_rank(by_session: dict[str, float], gold: set[str]) -> float:
    """1 / rank of the first gold session, sessions ordered by score, ties by history order (dict order)."""
    ranked = sorted(by_session, key=lambda s: -by_session[s])
    return next((1 / i for i, s in enumerate(ranked, 1) if s in gold), 0.0)


def rm3_scores(index, docs: list[Counter], df: Counter, scores: np.ndarray, fb_docs: int, fb_terms: int,
               weight: float) -> np.ndarray:
    """RM3 pseudo-relevance feedback (Lavrenko and Croft's relevance model interpolated with the query, as in
    Anserini; written here because bm25s has none): the `fb_terms` terms of the `fb_docs` best documents, each
    weighted by P(t|d) x the document's score x idf (the idf is ours, so that common words do not fill the
    expansion; `df`: document frequencies) and scored as a one-term BM25 query; `weight` x the query +
    (1 - weight) x the expansion, both over the query's best score."""
    top = np.argsort(-scores)[:fb_docs]
    mass: Counter = Counter()
    for j in top:
        length = sum(docs[j].values()) or 1
        for term, tf in docs[j].items():
            mass[term] += tf / length * scores[j] * np.log(len(docs) / df[term])
    chosen = mass.most_common(fb_terms)
    total, scale = sum(v for _, v in chosen) or 1.0, scores.max() or 1.0
    out = weight * scores / scale
    for term, v in chosen:
        out = out + (1 - weight) * v / total * index.get_scores([term]) / scale
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", required=True)
    ap.add_argument("--rm3", action="store_true", help="also the note unit with RM3 feedback (RM3 settings)")
    args = ap.parse_args()
    rows = list(UNITS) + ([f"note+RM3{setting}" for setting in RM3] if args.rm3 else [])
    cases = [c for c in load_dataset(args.data) if c.gold_session_ids]
    histories: dict[str, list] = defaultdict(list)
    for case in cases:
        histories[case.sample_id].append(case)
    rr: dict[str, list[float]] = {row: [] for row in rows}
    categories: list[str] = []
    for group in histories.values():
        for unit in UNITS:
            tokenizer = make_tokenizer()
            texts, sessions = unit_texts(group[0], unit)
            index = bm25s.BM25(method="lucene", k1=1.5, b=0.75)
            corpus = tokenizer.tokenize(texts, return_as="tuple", show_progress=False)
            index.index(corpus, show_progress=False)
            feedback = args.rm3 and unit == "note"
            if feedback:
                words = {v: k for k, v in corpus.vocab.items()}
                docs = [Counter(words[i] for i in doc) for doc in corpus.ids]
                df = Counter(t for d in docs for t in d)
            for case in group:
                query = tokenizer.tokenize([case.question], update_vocab=False, return_as="string",
                                           show_progress=False)[0]
                scores, gold = index.get_scores(query), set(case.gold_session_ids)
                by_session = session_scores(scores, sessions, 2 if unit == "turn_top2" else 1)
                rr[unit].append(reciprocal_rank(by_session, gold))
                for setting in RM3 if feedback else ():
                    fed = session_scores(rm3_scores(index, docs, df, scores, *setting), sessions, 1)
                    rr[f"note+RM3{setting}"].append(reciprocal_rank(fed, gold))
        categories += [c.question_type for c in group]
    print(f"{len(categories)} judged questions, {len(histories)} conversations")
    print("| unit | MRR | Success@1 | " + " | ".join(sorted(set(categories))) + " |")
    for unit in rows:
        values = np.array(rr[unit])
        per = [values[[c == cat for c in categories]].mean() for cat in sorted(set(categories))]
        print(f"| {unit} | {values.mean():.4f} | {(values == 1).mean():.4f} | "
              + " | ".join(f"{p:.3f}" for p in per) + " |")


if __name__ == "__main__":
    main()
