"""Extract whole datasets into stores on disk: resumable, parallel across cases.

``extract_to_stores`` writes one store folder per case under `out`
(``out/<safe case id>/``). A folder that already holds notes is resumed: its
first notes are kept and only the remaining interactions are remembered. LLM
calls go through the extractor's disk cache, so an interrupted run costs
nothing to redo; `prefetch` fills that cache with N concurrent requests.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from taggraph.datasets import Case
from taggraph.progress import progress
from taggraph.store import MemoryStore, StoreError, safe_filename


def case_folder(out: Path, case: Case) -> Path:
    return Path(out) / safe_filename(case.case_id, suffix="")


def open_case_store(folder: Path, case: Case, extractor) -> MemoryStore:
    """The case's store, resumed from `folder` when it exists; refuses a folder of another case."""
    if (folder / "manifest.json").exists():
        store = MemoryStore.load(folder, extractor)
        if store.case_id != case.case_id:
            raise StoreError(f"{folder}: holds case {store.case_id!r}, not {case.case_id!r}")
        expected = [(i.session_id, i.user) for i in case.interactions[:len(store)]]
        if [(n.session_id, n.user) for n in store.notes] != expected:
            raise StoreError(f"{folder}: its notes do not match the first {len(store)} interactions of the case")
    else:
        store = MemoryStore(case.case_id, extractor)
    store.save(folder)
    return store


def extract_to_stores(cases: list[Case], extractor, out: Path, concurrency: int | None = None) -> pd.DataFrame:
    """Remember every case into its folder; returns one row per case (notes, resumed, tags, errors)."""
    out = Path(out)
    if concurrency and concurrency > 1 and hasattr(extractor, "check"):
        from taggraph.extraction.llm import prefetch
        prefetch(extractor, [[(i.user, i.assistant) for i in c.interactions] for c in cases], concurrency)
    from taggraph.experiments.vocabulary import store_vocabulary  # lazy: experiments import extraction

    rows: list[dict[str, Any]] = []
    for case in progress(cases, desc="extract", unit="case"):
        store = open_case_store(case_folder(out, case), case, extractor)
        resumed = len(store)
        try:
            store.remember_many(case.interactions[resumed:])
        finally:
            store.close()
        rows.append({**store_vocabulary(store), "case_id": case.case_id, "resumed_from": resumed,
                     "minted": store.minted, "reused": store.reused,
                     "extraction_errors": len(store.extraction_errors)})
    return pd.DataFrame(rows)
