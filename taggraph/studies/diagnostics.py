"""Failure diagnostics: do top-k misses coincide with missing tag entry points? (paper, 5.5, appendix J, Table 10)

Pool: the cases some graph configuration (TagGraph-Basic/-Stopwords/-TFIDF,
AdaptiveGraph) under some extractor misses at session level: Success@k = 0 (k = 5).

Unit: a gold note of a pooled case, ``case.gold_note_ids`` as its loader set them.
LongMemEval: the notes holding a turn marked ``has_answer`` (a gold session without
marked turns contributes all its notes). LoCoMo: the evidence notes. A generic
dataset: its ``gold_notes``. Without gold notes (ATANT, a generic question without
them): all notes of the gold sessions (ATANT's strictly matching notes).

Helpful tag, per (unit, extractor): a tag path of the note such that the path or
one of its ancestors (``breed`` for ``breed/beagle``) is a concept that TagGraph's
matcher (`concept_matcher(store).match`) returns for a query token, over all
distinct query tokens, and that could tell the note apart: the concept is carried
(itself or below it) by at most `HELPFUL_MAX_DF` of the case's notes, or by one note;
independent of any ranking. A tag matched only through a commoner concept is listed
in the units' ``common_tags`` (LoCoMo's speaker names: ``term/caroline`` on 82% of conv-26's
notes would otherwise make every question naming Caroline "tagged").
A unit is recovered by a configuration when its note id is among that
configuration's first k ranked notes (stricter than the session-level miss).

Categories: C1 no extractor supplies a helpful tag; C2 some do, some do not;
C3 all do and no configuration under any extractor recovers the note; C4 all do
and some configuration recovers it. With one extractor C2 cannot occur.
Table cells per extractor: Tagged = % of the category's units with a helpful tag
under that extractor; Succeeded = % of those tagged units that some configuration
under that extractor recovers (NaN when none is tagged; the paper prints 0.0).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from taggraph.datasets import Case
from taggraph.datasets.base import gold_note_ids
from taggraph.datasets.longmemeval import load_longmemeval
from taggraph.core.ontology import prefixes
from taggraph.runs.runner import build_store, group_by_history, parallel_map
from taggraph.core.notes import Note
from taggraph.methods.index import STOPWORD_DF, concept_matcher
from taggraph.core.store import MemoryStore
from taggraph.core.text import query_tokens

GRAPH_METHODS = ("TagGraph-Basic", "TagGraph-Stopwords", "TagGraph-TFIDF", "AdaptiveGraph")
CATEGORIES = ("C1", "C2", "C3", "C4")
# Deviation (helpful-tag document-frequency cap): the paper's helpful tag (appendix J) is any tag matched to the
# query; ours leaves out concepts on more than 15% of the case's notes, its stopword rule's threshold (appendix E).
HELPFUL_MAX_DF = STOPWORD_DF


def longmemeval_evidence_notes(path: str | Path) -> dict[str, set[str]]:
    """question_id -> the gold notes of each question of a LongMemEval file (``Case.gold_note_ids``, set by
    its loader from the ``has_answer`` turns). For callers that hold a path, not the cases: it parses the
    file; a run has the cases already."""
    return {c.case_id: set(c.gold_note_ids) for c in load_longmemeval(path)}


def light_store(case: Case, extractor: str) -> MemoryStore:
    """The case's store without its extractor object (cheap to send back from a worker process)."""
    store = build_store(case, extractor)
    store.extractor = None
    return store


def pooled_stores(cases: Sequence[Case], extractor: str, workers: int = 1) -> dict[str, MemoryStore]:
    """case id -> `light_store` of each of `cases`, built once per history that several of them share."""
    groups = group_by_history(cases)
    built = parallel_map(light_store, [group[0] for group in groups], extractor, workers=workers)
    return {case.case_id: store for group, store in zip(groups, built) for case in group}


class ConceptFrequency:
    """concept -> how many of the store's notes carry it or a concept below it (``pet`` counts ``pet/dog``)."""

    def __init__(self) -> None:
        self.notes: Counter[str] = Counter()
        self.n_docs = 0

    def add(self, note: Note) -> None:
        self.n_docs += 1
        self.notes.update({pre for path in note.paths() for pre in prefixes(path)})

    def is_common(self, concept: str, max_df: float) -> bool:
        """True for a concept on more than `max_df` of the notes and on more than one note."""
        count = self.notes.get(concept, 0)
        return count > 1 and count / self.n_docs > max_df


def helpful_tags(store: MemoryStore, question: str, note_ids: Iterable[str],
                 max_df: float | None = HELPFUL_MAX_DF) -> dict[str, list[str]]:
    """note id -> its tag paths that a query token matches, directly or via an ancestor (empty: none), through
    a concept on at most `max_df` of the store's notes or on one note (None: any concept, the paper's reading)."""
    matcher = concept_matcher(store)
    matched = {p for t in dict.fromkeys(query_tokens(question)) for p in matcher.match(t)}
    if max_df is not None:
        frequency = store.shared_index("concept_frequency", ConceptFrequency)
        matched = {p for p in matched if not frequency.is_common(p, max_df)}
    return {nid: [p for p in store.by_id[nid].paths() if matched.intersection(prefixes(p))] for nid in note_ids}


def pool_case_ids(rankings_by_extractor: Mapping[str, pd.DataFrame], methods: Sequence[str] = GRAPH_METHODS,
                  k: int = 5) -> set[str]:
    """Cases with R@k = 0 for some graph configuration under some extractor (judged rows only)."""
    pool: set[str] = set()
    for df in rankings_by_extractor.values():
        miss = df[df["method"].isin(methods) & df["RR"].notna() & (df[f"Success@{k}"] == 0)]
        pool |= set(miss["question_id"])
    return pool


def category(tagged: Sequence[bool], recovered: Sequence[bool]) -> str:
    """C1-C4 of one unit from its per-extractor helpful-tag and any-configuration-recovered flags."""
    if not any(tagged):
        return "C1"
    if not all(tagged):
        return "C2"
    return "C4" if any(recovered) else "C3"


@dataclass
class Diagnostics:
    units: pd.DataFrame  # one row per (unit, extractor)
    table: pd.DataFrame  # Table 10
    examples: pd.DataFrame  # first unit of each category


def failure_diagnostics(cases: Sequence[Case], rankings_by_extractor: Mapping[str, pd.DataFrame],
                        stores_by_extractor: Mapping[str, Iterable[MemoryStore] | Mapping[str, MemoryStore]],
                        dataset: str = "data",
                        evidence: Mapping[str, set[str]] | None = None, methods: Sequence[str] = GRAPH_METHODS,
                        k: int = 5, max_df: float | None = HELPFUL_MAX_DF) -> Diagnostics:
    """Categorize the pooled gold notes of one dataset (several: concat `units`, then `diagnostics_table`).

    `rankings_by_extractor[e]` are `run_bench` rankings of `methods` under extractor e;
    `stores_by_extractor[e]` its stores, at least those of the pooled cases (`pool_case_ids`): each case's
    own (keyed by `case_id`), or a mapping case id -> store, where cases that share a history share one.
    `max_df`: the helpful tags' document-frequency cap (`helpful_tags`; None: the paper's definition).
    """
    extractors = list(rankings_by_extractor)
    stores = {e: dict(stores_by_extractor[e]) if isinstance(stores_by_extractor[e], Mapping)
              else {s.case_id: s for s in stores_by_extractor[e]} for e in extractors}
    top = {e: {(r.question_id, r.method): set(r.ranked_note_ids[:k])
               for r in df[df["method"].isin(methods)].itertuples(index=False)}
           for e, df in rankings_by_extractor.items()}
    pool = pool_case_ids(rankings_by_extractor, methods, k)
    rows = []
    for case in cases:
        if case.case_id not in pool:
            continue
        try:
            case_stores = {e: stores[e][case.case_id] for e in extractors}
        except KeyError as exc:
            raise KeyError(f"no store for pooled case {case.case_id!r} under extractor {exc}") from None
        units = gold_note_ids(case, case_stores[extractors[0]], evidence)
        helpful = {e: helpful_tags(case_stores[e], case.question, units, max_df) for e in extractors}
        matched = {e: helpful_tags(case_stores[e], case.question, units, None) for e in extractors}
        for nid in units:
            recovered = {e: [m for m in methods if nid in top[e].get((case.case_id, m), set())] for e in extractors}
            cat = category([bool(helpful[e][nid]) for e in extractors], [bool(recovered[e]) for e in extractors])
            rows += [{"dataset": dataset, "question_id": case.case_id, "question": case.question, "note_id": nid,
                      "category": cat, "extractor": e, "tagged": bool(helpful[e][nid]),
                      "helpful_tags": helpful[e][nid],
                      "common_tags": [p for p in matched[e][nid] if p not in helpful[e][nid]],
                      "note_tags": case_stores[e].by_id[nid].paths(),
                      "recovered_by": recovered[e]} for e in extractors]
    units_df = pd.DataFrame(rows, columns=["dataset", "question_id", "question", "note_id", "category", "extractor",
                                           "tagged", "helpful_tags", "common_tags", "note_tags", "recovered_by"])
    return Diagnostics(units_df, diagnostics_table(units_df, extractors), diagnostics_examples(units_df))


def diagnostics_table(units: pd.DataFrame, extractors: Sequence[str]) -> pd.DataFrame:
    """Table 10: units per category and dataset, then Tagged / Succeeded % per extractor."""
    cats = CATEGORIES if len(extractors) > 1 else ("C1", "C3", "C4")
    per_unit = units.drop_duplicates(["dataset", "question_id", "note_id"])
    counts = per_unit.groupby(["category", "dataset"]).size().unstack(fill_value=0)
    table = counts.reindex(index=list(cats), fill_value=0).reindex(columns=sorted(units["dataset"].unique()))
    table = table.fillna(0).astype(int).add_prefix("n ")
    for e in extractors:
        mine = units[units["extractor"] == e]
        succeeded = mine["recovered_by"].map(bool)
        table[f"{e} Tagged %"] = (100 * mine.groupby("category")["tagged"].mean()).reindex(cats)
        table[f"{e} Succeeded %"] = (100 * succeeded[mine["tagged"]].groupby(mine["category"]).mean()).reindex(cats)
    return table.rename_axis("category").reset_index()


def diagnostics_examples(units: pd.DataFrame) -> pd.DataFrame:
    """First unit of each category, one row per extractor."""
    first = units.drop_duplicates("category")[["category", "question_id", "note_id"]]
    return units.merge(first, on=["category", "question_id", "note_id"]).sort_values(["category", "extractor"]) \
        .reset_index(drop=True)
