"""Tag vocabulary statistics per extractor (paper, appendix D, Table 2).

A "case" here is one history's store: a LongMemEval question has its own history, the questions of a
LoCoMo conversation share one, so the table counts ``histories`` (the paper's "Cases"; stores with notes)
and, when `vocabulary_table` is told how many questions each history has, the ``questions`` asked over them.
Per case with at least one note (cases without notes are excluded): N = notes,
D = distinct tag paths over the case's notes ("n/a" is never a tag), O = tag
occurrences (each distinct path of each note counted once: ``ontology.counts``).
Columns, each averaged over cases: notes/case = N, distinct tags/case = D (also
its median, since the paper's values look like medians), tags/note = O / N,
reuse = O / D (over cases with D > 0): higher means tags are used again
rather than minted. Beyond the paper: top-level categories/case = distinct
first path segments, and the share of the largest top-level category = its
occurrences / O (over cases with D > 0), which shows whether one catch-all parent
(``topic/``) holds most tags.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import pandas as pd

from taggraph.datasets import Case
from taggraph.runs.runner import build_store
from taggraph.core.store import MemoryStore
from taggraph.core.store_stats import store_vocabulary


COLUMNS = ["case_id", "notes", "distinct_tags", "tag_occurrences", "top_levels", "largest_top_level",
           "largest_top_level_occurrences"]


def case_vocabulary(case: Case, extractor: str) -> dict[str, Any]:
    """`store_vocabulary` of the case's store (for parallel runs that should not ship stores back)."""
    return store_vocabulary(build_store(case, extractor))


def vocabulary_table(counts_by_extractor: Mapping[str, Iterable[Mapping[str, Any]]],
                     questions: Mapping[str, int] | None = None) -> pd.DataFrame:
    """Table 2 from per-history `store_vocabulary` rows, one table row per extractor; with `questions`
    (a row's case_id -> the questions asked over that history) a ``questions`` column counts them."""
    rows = []
    for extractor, counts in counts_by_extractor.items():
        df = pd.DataFrame(list(counts), columns=COLUMNS)
        df = df[df["notes"] > 0]
        tagged = df[df["distinct_tags"] > 0]
        asked = {} if questions is None else {"questions": int(df["case_id"].map(questions).fillna(0).sum())}
        rows.append({"extraction": extractor, "histories": len(df), **asked, "notes/case": df["notes"].mean(),
                     "distinct tags/case": df["distinct_tags"].mean(),
                     "distinct tags/case (median)": df["distinct_tags"].median(),
                     "tags/note": (df["tag_occurrences"] / df["notes"]).mean(),
                     "reuse": (tagged["tag_occurrences"] / tagged["distinct_tags"]).mean(),
                     "top-level categories/case": df["top_levels"].mean(),
                     "largest top-level share": (tagged["largest_top_level_occurrences"]
                                                 / tagged["tag_occurrences"]).mean()})
    return pd.DataFrame(rows)


def vocabulary_stats(stores_by_extractor: Mapping[str, Iterable[MemoryStore]]) -> pd.DataFrame:
    """Table 2 for stores grouped by extractor name (see the module docstring for each column)."""
    return vocabulary_table({e: [store_vocabulary(s) for s in stores] for e, stores in stores_by_extractor.items()})
