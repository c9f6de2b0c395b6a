"""Extract whole datasets into stores on disk: resumable, parallel across cases.

``extract_to_stores`` writes one store folder per history under `out`
(``out/<safe case id>/``): questions that share a history (LoCoMo, ATANT) share one store, named
by the first of them, as `bench` shares one memory. A folder that already holds notes is resumed: its
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

from taggraph._infra.atomic import check_folder
from taggraph.datasets import Case
from taggraph.datasets.base import note_ids
from taggraph.errors import ConfigError
from taggraph.runs.runner import group_by_history
from taggraph.core.store_stats import store_stats
from taggraph._infra.progress import progress
from taggraph.core.store import MemoryStore, StoreError, safe_filename


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
        fields = ("note_id", "session_id", "user", "assistant", "timestamp")
        wanted = [(note_id, i.session_id, i.user, i.assistant, i.timestamp)
                  for (note_id, _), i in zip(note_ids(case.interactions), case.interactions)]
        for note in store.notes:
            want = wanted[note.index] if note.index < len(wanted) else (None,) * len(fields)
            differs = [f for f, w in zip(fields, want) if getattr(note, f) != w]
            if differs:
                raise StoreError(f"{folder}: note {note.index} ({note.note_id!r}) is not interaction {note.index} of "
                                 f"the case as the data has it now ({differs[0]} differs); extract to another --out, "
                                 f"or delete the folder to extract it again")
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


def extract_history(cases: list[Case], extractor, out: Path) -> dict[str, Any]:
    """Remember the remaining interactions of the history `cases` share into the folder of the first; its row
    of the summary table (``questions``: how many share it)."""
    case = cases[0]
    store = open_case_store(case_folder(out, case), case, extractor)
    resumed = len(store)
    try:
        store.remember_many(case.interactions[resumed:])
    finally:
        store.close()
    return {"case_id": case.case_id, "questions": len(cases), **store_stats(store), "resumed_from": resumed}


def check_only_stores(out: Path, groups: list[list[Case]]) -> None:
    """Refuses an existing `out` holding anything but store folders (these histories', or any with a manifest)
    and hidden files (`/`, a project folder, the data's own folder): extract writes a folder per history there
    and resumes what it finds."""
    if not out.is_dir():
        return
    ours = {case_folder(out, group[0]).name for group in groups}  # and any store (a run with a larger --limit)
    foreign = sorted(p.name for p in out.iterdir() if p.name not in ours and not p.name.startswith(".")
                     and not (p / "manifest.json").is_file())
    if foreign:
        shown = ", ".join(map(repr, foreign[:3])) + (f" and {len(foreign) - 3} more" if len(foreign) > 3 else "")
        raise ConfigError(f"--out {out}: holds {shown}, which no history of this data would write; give a new or "
                          f"empty folder, or the one an earlier extract of this data wrote")


def extract_to_stores(cases: list[Case], extractor, out: Path, concurrency: int | None = None) -> pd.DataFrame:
    """Remember every history into its folder (one per history, `group_by_history`); returns one row per
    store (its first case, questions, notes, resumed, tags, errors).

    An Ollama extractor (one with `check`) runs `concurrency` histories at once (default its own
    `concurrency`), one thread per history remembering its turns in order, so every note holds the
    very extraction its request fetched. Other extractors run history after history.
    """
    out = check_folder(Path(out), "--out")  # a file, an over-long name, an unwritable parent: before any case
    groups = group_by_history(cases)
    check_only_stores(out, groups)
    workers = (concurrency or getattr(extractor, "concurrency", 1)) if hasattr(extractor, "check") else 1
    if workers == 1:
        return pd.DataFrame([extract_history(group, extractor, out)
                             for group in progress(groups, desc="extract", unit="history")])
    pool = ThreadPoolExecutor(max_workers=workers)
    try:
        return pd.DataFrame(list(progress(pool.map(extract_history, groups, repeat(extractor), repeat(out)),
                                          total=len(groups), desc="extract", unit="history")))
    finally:
        pool.shutdown(cancel_futures=True)  # after a failure, histories not yet started are not started
