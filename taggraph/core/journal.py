"""A store folder's manifest and journal: their names, their fingerprint, and reading the journal a crash left.

`taggraph.core.store` writes them; this module reads them, and says which file and line it cannot read.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from taggraph.errors import InputError

MANIFEST = "manifest.json"
JOURNAL = "manifest.journal"


class StoreError(InputError):
    """A store folder cannot be read or written; the message names the file."""


def already_listed(entry: Any, listed: dict) -> bool:
    """A journal entry the manifest lists as it is: an interrupt fell between writing manifest.json and
    emptying the journal (`flush`)."""
    return isinstance(entry, dict) and listed.get(entry.get("note_id")) == entry


def fingerprint(folder: Path) -> str:
    """SHA-256 of a store folder's manifest.json and manifest.journal (absent reads as empty)."""
    try:
        manifest = (folder / MANIFEST).read_bytes()
    except FileNotFoundError:
        manifest = b""
    except OSError as exc:
        raise StoreError(f"{folder / MANIFEST}: cannot read: {exc.strerror or exc}") from None
    return folder_digest(manifest, read_journal(folder / JOURNAL))


def folder_digest(manifest: bytes, journal: bytes) -> str:
    return hashlib.sha256(hashlib.sha256(manifest).digest() + hashlib.sha256(journal).digest()).hexdigest()


def read_journal(journal: Path) -> bytes:
    """The journal's bytes (b"" when there is none)."""
    try:
        return journal.read_bytes()
    except FileNotFoundError:
        return b""
    except OSError as exc:
        raise StoreError(f"{journal}: unreadable journal: {exc.strerror or exc}") from None


def journal_entries(journal: Path, raw: bytes) -> list[tuple[str, Any]]:
    """(where, entry) of each complete line of the journal's bytes `raw`; a last line cut short by a crash is
    ignored."""
    try:
        lines = raw.decode("utf-8").split("\n")
    except UnicodeDecodeError as exc:
        raise StoreError(f"{journal}: unreadable journal: {exc}") from None
    out = []
    for lineno, line in enumerate(lines[:-1], 1):  # the part after the last newline is incomplete
        try:
            out.append((f"{journal}:{lineno}", json.loads(line)))
        except (json.JSONDecodeError, RecursionError) as exc:
            raise StoreError(f"{journal}:{lineno}: unreadable journal line: {exc}") from None
    return out
