"""One store's vocabulary and graph in numbers: a row of a run's stores.csv, of the extraction table and of
the vocabulary table (`taggraph.studies.vocabulary`, the paper's Table 2)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from taggraph.core.store import MemoryStore


def store_vocabulary(store: MemoryStore) -> dict[str, Any]:
    """One case's counts: case_id, notes, distinct_tags, tag_occurrences, top_levels and the largest one's
    name and occurrences."""
    counts = store.ontology.counts
    tops: Counter[str] = Counter()
    for path, n in counts.items():
        tops[path.split("/", 1)[0]] += n
    largest, largest_n = tops.most_common(1)[0] if tops else ("", 0)
    return {"case_id": store.case_id, "notes": len(store), "distinct_tags": len(counts),
            "tag_occurrences": sum(counts.values()), "top_levels": len(tops), "largest_top_level": largest,
            "largest_top_level_occurrences": largest_n}


def store_stats(store: MemoryStore) -> dict[str, Any]:
    """`store_vocabulary` (without the case id) plus minted/reused tags, extraction errors and the
    base graph's node and edge counts: a row of a run's stores.csv and of the extraction table."""
    vocabulary = {k: v for k, v in store_vocabulary(store).items() if k != "case_id"}
    return {**vocabulary, "minted": store.minted, "reused": store.reused,
            "extraction_errors": len(store.extraction_errors), **store.graph.stats()}
