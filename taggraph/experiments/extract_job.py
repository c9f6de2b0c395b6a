"""Extract whole datasets into stores on disk: resumable, parallel across cases.

``extract_to_stores`` writes one store folder per case under `out`
(``out/<safe case id>/``). A folder that already holds notes is resumed: its
first notes are kept and only the remaining interactions are remembered. LLM
calls go through the extractor's disk cache, so an interrupted run costs
nothing to redo.

Resuming re-extracts failed notes. The rule: the store is cut back to just
before its first note whose manifest entry carries ``extraction_error``, and
that note and every later one are extracted again, because the later notes'
prompts were shown an ontology without the failed note's tags. Notes before it
stay as they are.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from itertools import repeat
from pathlib import Path
from typing import Any

import pandas as pd

from taggraph.atomic import check_folder
from taggraph.datasets import Case
from taggraph.experiments.vocabulary import store_stats
from taggraph.progress import progress
from taggraph.store import MemoryStore, StoreError, safe_filename


def case_folder(out: Path, case: Case) -> Path:
    return Path(out) / safe_filename(case.case_id, suffix="")


def open_case_store(folder: Path, case: Case, extractor) -> MemoryStore:
    """The case's store, resumed from `folder` when it exists, cut back to before its first failed note.

    Refuses a folder of another case, of other interactions, or written by another extractor.
    """
    if (folder / "manifest.json").exists():
        store = MemoryStore.load(folder, extractor)
        if store.case_id != case.case_id:
            raise StoreError(f"{folder}: holds case {store.case_id!r}, not {case.case_id!r}")
        expected = [(i.session_id, i.user) for i in case.interactions[:len(store)]]
        if [(n.session_id, n.user) for n in store.notes] != expected:
            raise StoreError(f"{folder}: its notes do not match the first {len(store)} interactions of the case")
        if store.recorded_extractor != extractor.name:
            raise StoreError(f"{folder}: extracted with {store.recorded_extractor!r}, not {extractor.name!r}; "
                             f"resuming would mix their tags (use the same extractor, or another --out)")
        failed = [n.index for n in store.notes if n.note_id in store.extraction_errors]
        if failed:
            kept = MemoryStore(case.case_id, extractor)
            for note in store.notes[:failed[0]]:
                kept.add_note(note)
            store = kept
    else:
        store = MemoryStore(case.case_id, extractor)
    store.save(folder, replace=True)  # checked above: this case's own store
    return store


def extract_case(case: Case, extractor, out: Path) -> dict[str, Any]:
    """Remember the case's remaining interactions into its folder; its row of the summary table."""
    store = open_case_store(case_folder(out, case), case, extractor)
    resumed = len(store)
    try:
        store.remember_many(case.interactions[resumed:])
    finally:
        store.close()
    return {"case_id": case.case_id, **store_stats(store), "resumed_from": resumed}


def extract_to_stores(cases: list[Case], extractor, out: Path, concurrency: int | None = None) -> pd.DataFrame:
    """Remember every case into its folder; returns one row per case (notes, resumed, tags, errors).

    An Ollama extractor (one with `check`) runs `concurrency` cases at once (default its own
    `concurrency`), one thread per case remembering its turns in order, so every note holds the
    very extraction its request fetched. Other extractors run case after case.
    """
    out = check_folder(Path(out), "--out")  # a file, an over-long name, an unwritable parent: before any case
    workers = (concurrency or getattr(extractor, "concurrency", 1)) if hasattr(extractor, "check") else 1
    if workers == 1:
        return pd.DataFrame([extract_case(case, extractor, out) for case in progress(cases, desc="extract", unit="case")])
    pool = ThreadPoolExecutor(max_workers=workers)
    try:
        return pd.DataFrame(list(progress(pool.map(extract_case, cases, repeat(extractor), repeat(out)),
                                          total=len(cases), desc="extract", unit="case")))
    finally:
        pool.shutdown(cancel_futures=True)  # after a failure, cases not yet started are not started
