"""The disk caches under `taggraph._infra.config.cache_dir()` (extractions, offline extractions, embeddings), opened safely.

A cache is only a cache: one whose ``cache.db`` is unreadable (truncated,
garbage) is rebuilt empty with a warning naming its folder, and its entries are
computed again. An entry that cannot be decoded (a cut pickle, a value file
overwritten with other bytes) is a miss: it is computed again and overwritten,
with one warning per cache. One that cannot be written (read-only folder or
file, a full disk), when opened or later in the run, ends the command with a
WriteError naming the folder and the fix.
"""

from __future__ import annotations

import contextlib
import functools
import pickle
import shutil
import sqlite3
import warnings
from collections.abc import Iterator
from pathlib import Path

import diskcache

from taggraph.errors import WriteError

# What decoding a damaged entry raises: pickle's errors on cut or foreign bytes, UnicodeDecodeError (a ValueError)
# on a text value file holding other bytes.
_UNDECODABLE = (pickle.UnpicklingError, EOFError, ValueError, TypeError, AttributeError, ImportError, IndexError,
                KeyError)
_NOT_WRITABLE = ("readonly", "read-only", "unable to open", "disk is full", "disk I/O error")  # sqlite's words for a folder or file it cannot write


def open_cache(folder: Path, **settings) -> diskcache.Cache:
    """The diskcache in `folder` (`settings` go to `diskcache.Cache`), rebuilt when corrupt."""
    try:
        return _probed(folder, settings)
    except OSError as exc:  # its folder cannot be made: a read-only HOME, TAGGRAPH_CACHE naming a file
        raise _not_writable(folder, exc) from None
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


class _Cache(diskcache.Cache):
    """A diskcache.Cache whose failures to write mid-run (sqlite's "database or disk is full", an OSError
    writing a value file) are one WriteError naming the folder, and whose entries that cannot be decoded are
    misses."""

    _said_unreadable = False  # whether the warning about an undecodable entry was given

    def get(self, key, default=None, **kwargs):
        """diskcache's get; `default` for an entry that cannot be decoded, with one warning per cache."""
        try:
            return super().get(key, default, **kwargs)
        except (sqlite3.OperationalError, OSError) as exc:
            _reraise(Path(self.directory), exc)
        except _UNDECODABLE as exc:
            if not self._said_unreadable:
                self._said_unreadable = True
                warnings.warn(f"{self.directory}: a cache entry was unreadable ({type(exc).__name__}: {exc}); "
                              f"computed it again (and any other unreadable entry there)", stacklevel=2)
            return default

    @contextlib.contextmanager
    def transact(self, retry: bool = False) -> Iterator:
        try:
            with super().transact(retry) as tx:
                yield tx
        except (sqlite3.OperationalError, OSError) as exc:
            _reraise(Path(self.directory), exc)


def _guarded(name: str):
    method = getattr(diskcache.Cache, name)

    @functools.wraps(method)
    def run(self, *args, **kwargs):
        try:
            return method(self, *args, **kwargs)
        except (sqlite3.OperationalError, OSError) as exc:
            _reraise(Path(self.directory), exc)
    return run


def _reraise(folder: Path, exc: Exception):
    """A WriteError for a failure to write (sqlite's words in _NOT_WRITABLE, an OSError such as ENOSPC or
    EROFS); anything else as it was."""
    if isinstance(exc, WriteError):  # raised inside a transaction by a guarded write
        raise exc
    if isinstance(exc, OSError) or any(word in str(exc) for word in _NOT_WRITABLE):
        raise _not_writable(folder, exc) from None
    raise exc


for _name in ("set", "add", "touch", "pop", "delete", "__getitem__", "__setitem__", "__delitem__",
              "__contains__"):
    setattr(_Cache, _name, _guarded(_name))


def _probed(folder: Path, settings: dict) -> diskcache.Cache:
    cache = diskcache.Cache(str(folder), **settings)  # looked up here: tests simulate sqlite's errors by patching it
    cache.__class__ = _Cache  # its writes now fail as one WriteError
    cache.get("probe")  # a read: a cut file can open and still fail on its first lookup
    return cache


def _not_writable(folder: Path, exc: Exception) -> WriteError:
    return WriteError(f"{folder}: cache cannot be written ({exc}); free space or make the folder writable, or "
                      f"set TAGGRAPH_CACHE to another folder")
