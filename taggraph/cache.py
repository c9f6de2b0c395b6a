"""The disk caches under `taggraph.config.cache_dir()` (extractions, offline extractions, embeddings), opened safely.

A cache is only a cache: one whose ``cache.db`` is unreadable (truncated,
garbage) is rebuilt empty with a warning naming its folder, and its entries are
computed again. One that cannot be written (read-only folder or file) ends the
command with a WriteError naming the folder and the fix.
"""

from __future__ import annotations

import shutil
import sqlite3
import warnings
from pathlib import Path

import diskcache

from taggraph.errors import WriteError

_NOT_WRITABLE = ("readonly", "read-only", "unable to open")  # sqlite's words for a folder or file it cannot write


def open_cache(folder: Path, **settings) -> diskcache.Cache:
    """The diskcache in `folder` (`settings` go to `diskcache.Cache`), rebuilt when corrupt."""
    try:
        return _probed(folder, settings)
    except sqlite3.OperationalError as exc:
        if any(word in str(exc) for word in _NOT_WRITABLE):
            raise _not_writable(folder, exc) from None
        raise
    except sqlite3.DatabaseError as exc:
        warnings.warn(f"{folder}: cache was unreadable ({exc}); rebuilt it empty, its entries will be computed "
                      f"again", stacklevel=2)
    try:
        shutil.rmtree(folder)
        return _probed(folder, settings)
    except (OSError, sqlite3.OperationalError) as exc:
        raise _not_writable(folder, exc) from None


def _probed(folder: Path, settings: dict) -> diskcache.Cache:
    cache = diskcache.Cache(str(folder), **settings)
    cache.get("probe")  # a read: a cut file can open and still fail on its first lookup
    return cache


def _not_writable(folder: Path, exc: Exception) -> WriteError:
    return WriteError(f"{folder}: cache cannot be written ({exc}); make the folder writable, or set "
                      f"TAGGRAPH_CACHE to another folder")
