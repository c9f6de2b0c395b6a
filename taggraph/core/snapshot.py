"""Snapshots of a store's indexes beside its notes, ``index/<name>.npz``, so a loaded store's first query reads
its index instead of rebuilding it.

The protocol, for any index that grows one note at a time with ``add(note)`` (`MemoryStore.shared_index`'s
indexes; a method's own matrix or vectors can adopt it the same way)::

    STATE_VERSION: int                               # bumped whenever what state() holds changes meaning
    state() -> dict[str, np.ndarray]                 # what add() built over the notes so far, as arrays
    load_state(arrays: dict[str, np.ndarray], notes: int) -> None
        # on a fresh instance: become the index state() described over the first `notes` notes; ValueError
        # (or KeyError, IndexError) when the arrays do not fit: a snapshot is untrusted input

Strings go into arrays with `pack_strings` (one UTF-8 buffer and the offsets into it: no pickles, no fixed-width
unicode arrays as wide as the longest string).

A snapshot records the notes it covers: their number and `notes_digest` of them (each note's id, session,
timestamp, summary and Markdown text, in order). A store restores an index from a snapshot only when that digest
equals the digest of its own first notes, then adds the notes after them, so a snapshot written by an earlier
save (a prefix of the notes) is extended, not rebuilt; any other snapshot (other or edited notes, another
STATE_VERSION or kind of index, a torn or hand-made file) is ignored and the index built from the notes. A
snapshot is only ever a cache: the notes are the truth, and no snapshot can make an index disagree with them.

Format: numpy .npz, uncompressed and without pickles (`taggraph._infra.atomic.atomic_save_arrays`, `load_arrays`),
chosen over SQLite because a snapshot is a few large arrays written and read whole: .npz moves them at disk speed
with a CRC-32 each (a torn file is told apart), where SQLite would store them as BLOBs and copy them out again.
Snapshots are written after the save's commit (the manifest), not flushed to disk: a crash leaves the one before,
one of another save (its digest then differs) or a torn one (its CRC differs), and each is either valid or ignored.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import numpy as np

from taggraph._infra.atomic import atomic_save_arrays, atomic_write_bytes, load_arrays

FOLDER = "index"
FORMAT = 1
META = "snapshot"  # the array holding the snapshot's own record (JSON, UTF-8)


def note_digest(note_id: str, session_id: str, timestamp: str, summary: str, markdown: bytes) -> bytes:
    """SHA-256 of one note as a store folder holds it: its manifest fields and its Markdown file."""
    fields = repr((note_id, session_id, timestamp, summary)).encode("utf-8")
    return hashlib.sha256(fields + b"\0" + markdown).digest()


def notes_digest(digests: list[bytes]) -> str:
    """One digest of notes in order, from their `note_digest`s."""
    return hashlib.sha256(b"".join(digests)).hexdigest()


def kind(index: object) -> str:
    """What a snapshot of `index` holds: its class and STATE_VERSION."""
    cls = type(index)
    return f"{cls.__module__}.{cls.__qualname__}/{getattr(cls, 'STATE_VERSION', 0)}"


def offers_state(index: object) -> bool:
    return hasattr(index, "state") and hasattr(index, "load_state")


def write(folder: Path, name: str, index: Any, notes: int, digest: str) -> None:
    """Snapshot `index` (covering the first `notes` notes, of `notes_digest` `digest`) as ``folder/<name>.npz``."""
    arrays = index.state()
    if META in arrays:
        raise ValueError(f"{kind(index)}: state() may not name an array {META!r}")
    record = {"format": FORMAT, "name": name, "kind": kind(index), "notes": notes, "digest": digest}
    atomic_save_arrays(folder / f"{name}.npz", {META: _utf8(json.dumps(record)), **arrays})


def read(folder: Path, name: str, index: Any) -> tuple[dict[str, np.ndarray], int, str] | None:
    """(arrays, notes covered, their digest) of the snapshot of `name` if it holds the kind of `index`; None when
    there is none or it cannot be read (torn, hand-made, another format)."""
    path = folder / f"{name}.npz"
    try:
        arrays = load_arrays(path)
        record = json.loads(arrays.pop(META).tobytes().decode("utf-8"))
        notes, digest = record["notes"], record["digest"]
        if record["format"] != FORMAT or record["name"] != name or record["kind"] != kind(index) \
                or type(notes) is not int or notes < 0 or not isinstance(digest, str):
            return None
    except (OSError, ValueError, KeyError, TypeError, UnicodeDecodeError, RecursionError):
        return None  # a missing, torn or foreign snapshot is rebuilt from the notes
    return arrays, notes, digest


def load_into(store_folder: Path | None, name: str, index: Any, notes: int, digest_of) -> int | None:
    """Notes covered by the snapshot of `name` in `store_folder`, loaded into `index`: 0 when none covers the
    first of a store's `notes` notes (`digest_of(count)` their `notes_digest`), None when one did but its arrays
    did not fit (`index` may then be half loaded)."""
    found = read(store_folder / FOLDER, name, index) if store_folder is not None else None
    if found is None:
        return 0
    arrays, covered, digest = found
    if covered > notes or digest != digest_of(covered):
        return 0  # a snapshot of other notes (edited, replaced, another store's) is never used
    try:
        index.load_state(arrays, covered)
    except (ValueError, KeyError, IndexError, TypeError, UnicodeDecodeError):
        return None  # arrays that do not fit: built from the notes instead
    return covered


def carry(source: Path | None, target: Path, written: set[str]) -> None:
    """Copy the snapshots in `source` (the store folder a store was read from) to `target` (the one it is now
    saved to), but for those named in `written` (the save writes them itself): a loaded store saved elsewhere keeps
    the indexes it did not build again (read, they are checked like any snapshot)."""
    if source is None or source == target or not (source / FOLDER).is_dir():
        return
    for file in sorted((source / FOLDER).glob("*.npz")):
        if file.stem not in written:
            atomic_write_bytes(target / FOLDER / file.name, file.read_bytes(), False)


def pack_strings(strings: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """(UTF-8 bytes, offsets): string i is bytes[offsets[i]:offsets[i + 1]]."""
    encoded = [s.encode("utf-8") for s in strings]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum([len(b) for b in encoded], out=offsets[1:])
    return _bytes(b"".join(encoded)), offsets


def unpack_strings(data: np.ndarray, offsets: np.ndarray) -> list[str]:
    """The strings `pack_strings` packed; ValueError when the arrays do not describe strings."""
    if data.dtype != np.uint8 or data.ndim != 1 or offsets.ndim != 1 or offsets.dtype.kind not in "iu" \
            or len(offsets) == 0 or offsets[0] != 0 or offsets[-1] != len(data) or np.any(np.diff(offsets) < 0):
        raise ValueError("packed strings: offsets do not fit their bytes")
    raw = data.tobytes()
    ends = offsets.tolist()
    return [raw[a:b].decode("utf-8") for a, b in zip(ends, ends[1:])]


def pack_runs(runs: list[np.ndarray], dtype) -> tuple[np.ndarray, np.ndarray]:
    """(lengths, values): the arrays `runs` end to end, for `unpack_runs`."""
    lengths = np.array([len(r) for r in runs], dtype=np.int64)
    return lengths, np.concatenate(runs).astype(dtype, copy=False) if runs else np.zeros(0, dtype=dtype)


def unpack_runs(lengths: np.ndarray, values: np.ndarray, dtype, increasing: bool = False) -> list[np.ndarray]:
    """The runs `pack_runs` packed (views of `values`), checked by `check_runs`."""
    check_runs(lengths, values, dtype, increasing)
    bounds = [0, *np.cumsum(lengths).tolist()]
    return [values[a:b] for a, b in zip(bounds, bounds[1:])]  # slices: np.split costs 3x as much per run


def check_runs(lengths: np.ndarray, values: np.ndarray, dtype, increasing: bool = False) -> None:
    """ValueError unless `lengths` and `values` are runs `pack_runs` packed: lengths of at least one each that add up
    to the values, all of `dtype`, each run strictly increasing if `increasing` (checked without a Python loop)."""
    if lengths.dtype != np.int64 or lengths.ndim != 1 or values.dtype != dtype or values.ndim != 1 \
            or np.any(lengths < 1) or int(lengths.sum()) != len(values):
        raise ValueError("packed runs: lengths do not fit their values")
    if increasing:
        step_within = np.ones(max(len(values) - 1, 0), dtype=bool)
        step_within[np.cumsum(lengths)[:-1] - 1] = False  # from the last value of a run to the first of the next
        if np.any(np.diff(values)[step_within] <= 0):
            raise ValueError("packed runs: a run is not increasing")


def _utf8(text: str) -> np.ndarray:
    return _bytes(text.encode("utf-8"))


def _bytes(raw: bytes) -> np.ndarray:
    return np.frombuffer(raw, dtype=np.uint8)
