# History: BENCHMARKS.md section 10, "Tag vocabulary" (how far a model-free tagger could raise tag reuse); commit 4431e70.
"""How far tag reuse (paper Table 2: occurrences / distinct tags) can rise without an LLM (the offline-v2 extractor's study, lab study 10).

    python benchmarks/history/reuse_bounds.py --data ../shared/data/longmemeval/longmemeval_s_dev.json.gz --every 25

Over every `--every`-th case, tagged by `--extractor` (default offline-v2), prints the mean per-case
reuse, share of tags used once and tags/note for the notes' tags as extracted, and for two ways a
model-free tagger could mint fewer tags, each applied to the notes in order:

- a minting budget M: a note keeps every tag the case's ontology already has and only its first M
  new ones (in tag-line order), the paper's "prefer an existing tag" made a hard rule;
- no abstract fallbacks: drop tags typed only by an abstract WordNet lexicographer file (no anchor on
  the noun's hypernym chain: ``idea/trouble``, ``attribute/plus``, ``state/ambiance``), and ``term/``.

Both only drop tags, so what they cost is tags per note; neither is what offline-v2 does. With
``--retrieval`` each rule's notes are also stored again (same texts, the kept tags) and the judged
questions of the chosen cases asked of BM25, TagGraph-TFIDF and AdaptiveGraph: session MRR at
depth 40, as the bench scores it.
"""

from __future__ import annotations

import argparse
from collections import Counter
from collections.abc import Callable

import numpy as np
import pandas as pd

from taggraph._infra.config import DEFAULT_EXTRACTOR
from taggraph.datasets import load
from taggraph.evaluation.metrics import score_rankings, summarize
from taggraph.runs.runner import MemoryRun, build_store
from taggraph.extractors.base import Extraction
from taggraph.extractors.lexicon import LEXFILE_CATEGORY, lexicon
from taggraph.extractors.offline_v2 import OOV
from taggraph.core.notes import CATEGORIES
from taggraph.methods.base import DEFAULT_DEPTH
from taggraph.core.store import Interaction, MemoryStore

RETRIEVAL_METHODS = ["BM25", "TagGraph-TFIDF", "AdaptiveGraph"]

BUDGETS = (4, 3, 2, 1)
CONCRETE_LEXFILES = {"noun.animal", "noun.artifact", "noun.body", "noun.food", "noun.location", "noun.object",
                     "noun.plant", "noun.substance"}
ABSTRACT_LEXFILES = set(LEXFILE_CATEGORY) - CONCRETE_LEXFILES


def abstract_fallback(path: str) -> bool:
    """Whether `path` is ``term/...`` or sits under the lexicographer-file category of an abstract noun."""
    if path.startswith(f"{OOV}/"):
        return True
    lex = lexicon()
    senses = lex.senses(path.rsplit("/", 1)[-1])
    if not senses:
        return False
    category, anchor = lex._synset_category(senses[0])  # private: the anchor tells a fallback apart
    return anchor is None and lex.lexfile[senses[0]] in ABSTRACT_LEXFILES and path.split("/", 1)[0] == category


def vocabulary(notes: list[list[str]], keep: Callable[[list[str], Counter], list[str]]) -> tuple[float, float, float]:
    """(reuse, share of distinct tags used once, tags per note) after `keep` chooses each note's tags."""
    counts: Counter[str] = Counter()
    for paths in notes:
        counts.update(keep(paths, counts))
    if not counts:
        return 0.0, 0.0, 0.0
    occurrences = sum(counts.values())
    return occurrences / len(counts), sum(v == 1 for v in counts.values()) / len(counts), occurrences / len(notes)


def kept_store(store: MemoryStore, keep: Callable[[list[str], Counter], list[str]]) -> MemoryStore:
    """`store`'s notes remembered again in order, each with only the tags `keep` chooses."""
    out, counts = MemoryStore(store.case_id), Counter()
    for note in store.notes:
        kept = set(keep(note.paths(), counts))
        counts.update(kept)
        tags = {c: [p for p in note.tags[c] if p in kept] for c in CATEGORIES}
        out.remember(Interaction(note.session_id, note.user, note.assistant, timestamp=note.timestamp),
                     Extraction(**tags))
    out.flush()
    return out


def budget(m: int) -> Callable[[list[str], Counter], list[str]]:
    def keep(paths: list[str], seen: Counter) -> list[str]:
        new = [p for p in paths if p not in seen][:m]
        return [p for p in paths if p in seen or p in new]
    return keep


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", required=True)
    parser.add_argument("--every", type=int, default=25, help="take every n-th case")
    parser.add_argument("--extractor", default=DEFAULT_EXTRACTOR)
    parser.add_argument("--retrieval", action="store_true", help="also MRR of BM25, TagGraph-TFIDF, AdaptiveGraph")
    args = parser.parse_args()
    cases = load(args.data).cases[:: args.every]
    rules = {"as extracted": lambda paths, seen: paths,
             **{f"minting budget {m}/note": budget(m) for m in BUDGETS},
             "no abstract fallbacks": lambda paths, seen: [p for p in paths if not abstract_fallback(p)]}
    rows: dict[str, list[tuple[float, float, float]]] = {name: [] for name in rules}
    rankings: dict[str, list[dict]] = {name: [] for name in rules}
    for case in cases:
        store = build_store(case, args.extractor)
        notes = [n.paths() for n in store.notes]
        for name, keep in rules.items():
            rows[name].append(vocabulary(notes, keep))
            if args.retrieval and case.gold_session_ids and not case.is_abstention:
                rankings[name] += MemoryRun(kept_store(store, keep), RETRIEVAL_METHODS).ask(case, DEFAULT_DEPTH)
    chosen = "every case" if args.every == 1 else f"every {args.every}th case"
    print(f"{len(cases)} cases ({chosen}) of {args.data}, {args.extractor}\n")
    methods = RETRIEVAL_METHODS if args.retrieval else []
    print("| rule | reuse | tags used once | tags/note |" + "".join(f" {m} MRR |" for m in methods))
    print("|---|---|---|---|" + "---|" * len(methods))
    for name, values in rows.items():
        reuse, once, per_note = np.mean(values, axis=0)
        mrr = summarize(score_rankings(pd.DataFrame(rankings[name]))).set_index("method")["MRR"] if methods else {}
        print(f"| {name} | {reuse:.2f} | {once:.0%} | {per_note:.2f} |" + "".join(f" {mrr[m]:.3f} |" for m in methods))


if __name__ == "__main__":
    main()
