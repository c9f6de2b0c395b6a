"""MemoryStore: one case's notes in chronological order, its ontology and base graph.

On disk a store is a folder::

    manifest.json     note order, ids, files, sessions, timestamps, summaries, extractor
    manifest.journal  manifest entries of the notes added since manifest.json was written,
                      one JSON line each (present only while the store is open for writing)
    notes/*.md        one Markdown note per interaction (taggraph.core.notes)
    ontology.md       the case ontology as an indented hierarchy (written for people
                      and prompts; on load the ontology is rebuilt from the notes)

A new note costs O(1) writes: its file (atomic) and one appended journal line.
`flush` (called after each `remember_many` batch and by `close`) folds the journal
into manifest.json and rewrites ontology.md, both atomically. A note's file and journal
line are written before the note joins the store in memory, so an interrupt
(Ctrl-C, SIGTERM, a full disk) at any moment leaves manifest and journal listing
only notes whose files exist, consistent up to the last complete journal line; a
note file written but not journaled is rewritten when its interaction is
remembered again on resume. A lock file serializes writers across processes.

A store remembers the fingerprint (SHA-256 of manifest.json and manifest.journal) of the folder as it
loaded or last wrote it; saving back to that folder after someone else changed it is refused
(`StoreError`), so two loaded copies cannot overwrite each other's notes.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Iterator
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from filelock import FileLock, Timeout

from taggraph._infra.atomic import atomic_write, remove_leftovers
from taggraph._infra.progress import progress as progress_bar
from taggraph.errors import InputError, WriteError
from taggraph.core.fivew import Extraction, Extractor
from taggraph.core.graph import BaseGraph
from taggraph.core.notes import Note, NoteFormatError, parse_note
from taggraph.core.ontology import Ontology

MANIFEST = "manifest.json"
JOURNAL = "manifest.journal"
FORMAT_VERSION = 1
CHUNK = 256  # interactions `remember_many` extracts in one batch


class StoreError(InputError):
    """A store folder cannot be read or written; the message names the file."""


@dataclass(frozen=True)
class Interaction:
    """One user turn with the assistant reply that follows it."""

    session_id: str
    user: str
    assistant: str = ""
    timestamp: str = ""
    note_id: str | None = None  # default: "<session_id>#<turn index within the session>"


def safe_filename(note_id: str, suffix: str = ".md") -> str:
    """A portable file name for any id: a readable slug plus a hash that keeps it unique."""
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", note_id).lstrip("._-")[:60] or "note"
    digest = hashlib.sha256(note_id.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    return f"{slug}-{digest}{suffix}"


def check_text(what: str, **fields: Any) -> None:
    """InputError naming the field of `what` that is not text, or holds a lone surrogate (UTF-8, the files'
    encoding, cannot write one: a string decoded with errors="surrogateescape", or cut inside a pair)."""
    for name, text in fields.items():
        if not isinstance(text, str):
            raise InputError(f"{what}: {name} must be text, got {type(text).__name__}")
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise InputError(f"{what}: {name} holds the lone surrogate U+{ord(text[exc.start]):04X} at character "
                             f"{exc.start}, which UTF-8 cannot store; fix or re-decode the text") from None


def _read_or_none(path: Path) -> bytes | None:
    return path.read_bytes() if path.exists() else None


class MemoryStore:
    """Notes of one case in chronological order, with ontology and base graph kept current.

    Retrieval methods attached with `attach` are told about each new note, so
    their indexes grow incrementally with `remember`.
    """

    def __init__(self, case_id: str = "case", extractor: Extractor | None = None) -> None:
        self.case_id = case_id
        self.extractor = extractor
        self.notes: list[Note] = []
        self.by_id: dict[str, Note] = {}
        self.ontology = Ontology()
        self.graph = BaseGraph()
        self.extraction_errors: dict[str, str] = {}
        self.minted = 0  # tags new to the ontology when their note arrived
        self.reused = 0  # tags the ontology already had
        self._listeners: list = []
        self._shared: dict[str, object] = {}
        self._session_turns: dict[str, int] = {}
        self.path: Path | None = None
        self._lock: FileLock | None = None
        self._journal = None  # open append handle of manifest.journal while saved
        self._stale = False  # manifest.json / ontology.md lag behind the notes (journaled since the last flush)
        self.recorded_extractor: str | None = None  # the manifest's extractor, for a loaded store
        self.origin: Path | None = None  # the folder this store was loaded from or last saved to
        self._fingerprint: str | None = None  # `fingerprint(origin)` as this store read or wrote it

    def __len__(self) -> int:
        return len(self.notes)

    def __iter__(self) -> Iterator[Note]:
        return iter(self.notes)

    @property
    def extractor_name(self) -> str:
        """The extractor of new notes, else the one the manifest recorded."""
        if self.extractor is not None:
            return self.extractor.name
        return self.recorded_extractor or "none"

    def attach(self, listener) -> None:
        """Register an index with an ``add(note)`` method, called for every new note."""
        self._listeners.append(listener)

    def shared_index(self, name: str, factory):
        """A store-wide index used by several methods (term statistics, tag matcher): built once
        over the notes with `factory()` and its ``add(note)``, then kept current like any listener."""
        index = self._shared.get(name)
        if index is None:
            index = factory()
            for note in self.notes:
                index.add(note)
            self.attach(index)
            self._shared[name] = index
        return index

    def _next_note_id(self, interaction: Interaction) -> str:
        if interaction.note_id is not None:
            return interaction.note_id
        turn = self._session_turns.get(interaction.session_id, 0)
        return f"{interaction.session_id}#{turn}"

    def remember(self, interaction: Interaction, extraction: Extraction | None = None) -> Note:
        """Extract tags (unless given) and add the interaction as the newest note."""
        self._check(interaction)
        if extraction is None:
            if self.extractor is None:
                extraction = Extraction()
            else:
                extraction = self.extractor.extract(interaction.user, interaction.assistant,
                                                    self.ontology.tag_view)
        note = Note(note_id=self._next_note_id(interaction), session_id=interaction.session_id,
                    user=interaction.user, assistant=interaction.assistant,
                    timestamp=interaction.timestamp, tags=extraction.tags(),
                    summary=extraction.summary)
        if extraction.error:
            self.extraction_errors[note.note_id] = extraction.error
        return self.add_note(note)

    def remember_many(self, interactions: Iterable[Interaction], progress: bool | None = False) -> list[Note]:
        """`remember` each interaction in order (the same notes as one call each), then `flush`.

        An extractor with ``extract_many`` extracts CHUNK interactions at a time. `progress`: a progress bar
        (shown when stderr is a terminal and TQDM_DISABLE and CI are unset); None: one for more than a chunk."""
        interactions = list(interactions)
        shown = len(interactions) > CHUNK if progress is None else progress
        notes: list[Note] = []
        with progress_bar(total=len(interactions), desc="remember", unit="note") if shown else nullcontext() as bar:
            for done in self._remembered(interactions):
                notes += done
                if bar is not None:
                    bar.update(len(done))
        self.flush()
        return notes

    def _remembered(self, interactions: list[Interaction]) -> Iterator[list[Note]]:
        """`remember` of each interaction, yielded CHUNK notes at a time (one at a time without
        ``extract_many``); each chunk's texts are checked before any is extracted."""
        batch = getattr(self.extractor, "extract_many", None)
        if batch is None:
            for interaction in interactions:
                yield [self.remember(interaction)]
            return
        for start in range(0, len(interactions), CHUNK):
            chunk = interactions[start:start + CHUNK]
            for interaction in chunk:
                self._check(interaction)
            extractions = batch([(i.user, i.assistant) for i in chunk], self.ontology.tag_view)
            yield [self.remember(i, e) for i, e in zip(chunk, extractions)]

    def _check(self, interaction: Interaction) -> None:
        check_text(f"case {self.case_id!r}: an interaction", session_id=interaction.session_id,
                   user=interaction.user, assistant=interaction.assistant, timestamp=interaction.timestamp,
                   **({"note_id": interaction.note_id} if interaction.note_id is not None else {}))

    def add_note(self, note: Note) -> Note:
        """Add `note` as the newest note. On a saved store its file and journal line are written first, so
        an interrupt (Ctrl-C, a full disk) at any moment leaves every note the manifest can list on disk."""
        if note.note_id in self.by_id:
            raise StoreError(f"case {self.case_id!r}: duplicate note id {note.note_id!r}")
        check_text(f"case {self.case_id!r}: note {note.note_id!r}", note_id=note.note_id,
                   session_id=note.session_id, user=note.user, assistant=note.assistant, timestamp=note.timestamp,
                   summary=note.summary)
        if self.path is not None:
            self._write_note(note)
            self._journal.write(json.dumps(self._entry(note), ensure_ascii=False) + "\n")
            self._journal.flush()
            self._stale = True
        note.index = len(self.notes)
        self.notes.append(note)
        self.by_id[note.note_id] = note
        self._session_turns[note.session_id] = self._session_turns.get(note.session_id, 0) + 1
        for path in note.paths():
            if self.ontology.add(path):
                self.minted += 1
            else:
                self.reused += 1
        self.graph.add_note(note)
        for listener in self._listeners:
            listener.add(note)
        return note

    # -- disk -------------------------------------------------------------------------

    def save(self, path: str | Path, replace: bool = False) -> Path:
        """Write the whole store to `path` and keep it in sync with later `remember` calls.

        A folder holding another store (a manifest.json this store was not loaded from or saved to) is
        refused unless `replace`. The store holds the folder's lock until `close` (or process exit): a second
        writer gets a StoreError instead of interleaving files. Temporary files a crashed writer of this
        store left behind (``.manifest.json.*.tmp``, ``notes/.*.md.*.tmp``) are removed first; nothing else.
        """
        path = Path(path)
        if path.exists() and not path.is_dir():
            raise WriteError(f"{path}: is a file, not a store folder")
        lock = FileLock(str(path / ".lock"), timeout=0)
        try:
            path.mkdir(parents=True, exist_ok=True)
            lock.acquire()
        except Timeout:
            raise StoreError(f"{path}: another writer holds this store (lock {path / '.lock'}: another process, or "
                             f"another Memory of this one until it is closed or deleted)") from None
        except OSError as exc:
            raise WriteError(f"{path}: cannot write a store here: {exc.strerror or exc}") from None
        if (path / MANIFEST).exists() and not replace and self.origin != path.resolve():
            lock.release()
            raise StoreError(f"{path}: holds another store ({MANIFEST}); save to a new or empty folder, or load "
                             f"that store to add to it")
        if (path / MANIFEST).exists() and not replace and self.path is None \
                and fingerprint(path) != self._fingerprint:
            lock.release()
            raise StoreError(f"{path}: changed on disk since this store was loaded or saved (another copy saved "
                             f"to it); nothing written: load it again and add to that, or save to a new folder")
        self.close()
        before = set((path / "notes").glob("*")) if (path / "notes").is_dir() else set()
        manifest_before = _read_or_none(path / MANIFEST)
        self._lock, self.path, self.origin = lock, path, path.resolve()
        try:
            remove_leftovers(path, (MANIFEST, "ontology.md"))
            remove_leftovers(path / "notes", ("*.md",))
            for note in self.notes:
                self._write_note(note)
            self._stale = True
            self.flush()
        except BaseException:  # a failed save (full disk, Ctrl-C) takes back its new files and frees the folder
            if _read_or_none(path / MANIFEST) == manifest_before:  # no manifest of this save lists them
                for written in set((path / "notes").glob("*")) - before:
                    written.unlink(missing_ok=True)
            if self._journal is not None:
                self._journal.close()
            lock.release()
            self._lock, self.path, self._journal = None, None, None
            raise
        return path

    def flush(self) -> None:
        """Fold the journal into manifest.json and rewrite ontology.md (no-op when not saved or current)."""
        if self.path is None or not self._stale:
            return
        atomic_write(self.path / "ontology.md", self.ontology.to_markdown())
        manifest = {"format": FORMAT_VERSION, "case_id": self.case_id, "extractor": self.extractor_name,
                    "notes": [self._entry(n) for n in self.notes]}
        text = json.dumps(manifest, ensure_ascii=False, indent=1)
        atomic_write(self.path / MANIFEST, text)
        if self._journal is not None:
            self._journal.close()
        self._journal = open(self.path / JOURNAL, "w", encoding="utf-8")  # every entry is in the manifest now
        self._fingerprint = _digest(text.encode("utf-8"), b"")
        self._stale = False

    def close(self) -> None:
        """Flush, stop mirroring to disk and release the folder's lock."""
        if self.path is not None:
            self.flush()
            self._journal.close()
            (self.path / JOURNAL).unlink(missing_ok=True)
        if self._lock is not None:
            self._lock.release()
        self._lock, self.path, self._journal = None, None, None

    def _write_note(self, note: Note) -> None:
        assert self.path is not None
        atomic_write(self.path / "notes" / safe_filename(note.note_id), note.to_markdown())

    def _entry(self, note: Note) -> dict[str, Any]:
        """The note's manifest entry."""
        return {"note_id": note.note_id, "file": f"notes/{safe_filename(note.note_id)}",
                "session_id": note.session_id, "timestamp": note.timestamp, "summary": note.summary,
                **({"extraction_error": self.extraction_errors[note.note_id]}
                   if note.note_id in self.extraction_errors else {})}

    @classmethod
    def load(cls, path: str | Path, extractor: Extractor | None = None) -> "MemoryStore":
        """Read a store folder (manifest, then any journal a crash left); errors name the file and the field."""
        path = Path(path)
        mpath = path / MANIFEST
        if not path.is_dir():
            raise StoreError(f"{path}: not a taggraph store (not a folder)")
        try:
            raw = mpath.read_bytes()
            manifest = json.loads(raw.decode("utf-8"))
        except FileNotFoundError:
            raise StoreError(f"{mpath}: not a taggraph store (no manifest)") from None
        except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as exc:
            raise StoreError(f"{mpath}: unreadable manifest: {exc}") from None
        except OSError as exc:
            raise StoreError(f"{mpath}: cannot read: {exc.strerror or exc}") from None
        if not isinstance(manifest, dict) or not isinstance(manifest.get("notes"), list):
            raise StoreError(f"{mpath}: field 'notes' must be a list")
        if manifest.get("format", FORMAT_VERSION) != FORMAT_VERSION:
            raise StoreError(f"{mpath}: field 'format' is {manifest.get('format')!r}; this taggraph reads "
                             f"format {FORMAT_VERSION} only")
        store = cls(case_id=str(manifest.get("case_id", path.name)), extractor=extractor)
        store.recorded_extractor = str(manifest.get("extractor", "none"))
        listed = {e.get("note_id"): e for e in manifest["notes"] if isinstance(e, dict)}
        entries = [(f"{mpath}: notes[{i}]", e) for i, e in enumerate(manifest["notes"])]
        journal = _read_journal(path / JOURNAL)
        for where, entry in entries + _journal_entries(path / JOURNAL, journal):
            if where.startswith(str(mpath)) or not _already_listed(entry, listed):
                store._load_entry(path, entry, where)
        store.origin, store._fingerprint = path.resolve(), _digest(raw, journal)
        return store

    def _load_entry(self, path: Path, entry: Any, where: str) -> None:
        if not isinstance(entry, dict):
            raise StoreError(f"{where}: a note entry must be a JSON object, got {type(entry).__name__}")
        try:
            note_id, rel = entry["note_id"], entry["file"]
        except KeyError as exc:
            raise StoreError(f"{where}: missing field {exc}") from None
        if not isinstance(note_id, str) or not isinstance(rel, str):
            raise StoreError(f"{where}: fields 'note_id' and 'file' must be strings")
        file = (path / rel).resolve()
        if path.resolve() not in file.parents:
            raise StoreError(f"{where}: field 'file' points outside the store: {rel!r}")
        try:
            text = file.read_bytes().decode("utf-8")  # as written: a CR in a turn stays a CR (no universal newlines)
        except (OSError, UnicodeDecodeError) as exc:
            raise StoreError(f"{where}: cannot read {file}: {exc}") from None
        try:
            note = parse_note(text, note_id=note_id, session_id=str(entry.get("session_id", "")),
                              timestamp=str(entry.get("timestamp", "")), summary=str(entry.get("summary", "")),
                              source=str(file))
        except NoteFormatError as exc:
            raise StoreError(str(exc)) from None
        if note_id in self.by_id:
            raise StoreError(f"{where}: note {note_id!r} is listed twice")
        if "extraction_error" in entry:
            self.extraction_errors[note_id] = entry["extraction_error"]
        self.add_note(note)


def _already_listed(entry: Any, listed: dict) -> bool:
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
    return _digest(manifest, _read_journal(folder / JOURNAL))


def _digest(manifest: bytes, journal: bytes) -> str:
    return hashlib.sha256(hashlib.sha256(manifest).digest() + hashlib.sha256(journal).digest()).hexdigest()


def _read_journal(journal: Path) -> bytes:
    """The journal's bytes (b"" when there is none)."""
    try:
        return journal.read_bytes()
    except FileNotFoundError:
        return b""
    except OSError as exc:
        raise StoreError(f"{journal}: unreadable journal: {exc.strerror or exc}") from None


def _journal_entries(journal: Path, raw: bytes) -> list[tuple[str, Any]]:
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
