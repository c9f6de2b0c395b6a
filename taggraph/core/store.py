"""MemoryStore: one case's notes in chronological order, its ontology and base graph.

On disk a store is a folder::

    manifest.json     note order, ids, files, sessions, timestamps, summaries, extractor
    manifest.journal  manifest entries of the notes added since manifest.json was written,
                      one JSON line each (present only while the store is open for writing)
    notes/*.md        one Markdown note per interaction (taggraph.core.notes)
    ontology.md       the case ontology as an indented hierarchy (written for people
                      and prompts; on load the ontology is rebuilt from the notes)
    index/*.npz       snapshots of the shared indexes (taggraph.core.snapshot) and the vectors `Memory.save`
                      keeps (taggraph.embedders.saved): caches, used only where they fit the notes

`save` writes the note files the folder lacks (all, to a new folder; the ones added since, to the folder the
store was read from or saved to), makes them durable in one step, then writes manifest.json: its rename is the
save's commit, and a note file it does not list is not part of the store. Snapshots follow the commit.

A new note costs O(1) writes: its file (atomic) and one appended journal line. `flush` (called after each
`remember_many` batch and by `close`) folds the journal into manifest.json and rewrites ontology.md, both atomically.
A note's file and journal line are written before the note joins the store in memory, so an interrupt (Ctrl-C,
SIGTERM, a full disk) at any moment leaves manifest and journal listing only notes whose files exist, consistent up to
the last complete journal line; a note file written but not journaled is rewritten when its interaction is remembered
again on resume. A lock file serializes writers across processes.

A store remembers the fingerprint (SHA-256 of manifest.json and manifest.journal) of the folder as it
loaded or last wrote it; saving back to that folder after someone else changed it is refused
(`StoreError`), so two loaded copies cannot overwrite each other's notes.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import re
from collections.abc import Callable, Iterable, Iterator
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from filelock import FileLock, Timeout

from taggraph._infra.atomic import atomic_write, atomic_write_bytes, make_durable, remove_leftovers
from taggraph._infra.progress import progress as progress_bar
from taggraph.errors import InputError, WriteError
from taggraph.core.fivew import Extraction, Extractor
from taggraph.core.journal import (JOURNAL, MANIFEST, StoreError, already_listed, folder_digest, journal_entries,
                                   read_journal, fingerprint)
from taggraph.core.graph import BaseGraph
from taggraph.core.notes import Note, NoteFormatError, parse_note
from taggraph.core.ontology import Ontology
from taggraph.core import snapshot

GRAPH_SNAPSHOT = "base_graph"  # index/base_graph.npz: the base graph (a shared index's name never takes it)

FORMAT_VERSION = 1
_NO_FOLLOW = getattr(os, "O_NOFOLLOW", 0)  # POSIX; without it (Windows) each note file's path is resolved in full
CHUNK = 256  # interactions `remember_many` extracts in one batch


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
        self.graph = BaseGraph(restore=lambda graph: self._load_snapshot(GRAPH_SNAPSHOT, graph))  # checked first
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
        self._stored = 0  # notes[:_stored] have their files in `origin`, as read or written there ...
        self._rewrite: set[int] = set()  # ... but for these, read from a file other than they would write
        self._digests: list[bytes] = []  # `snapshot.note_digest` of notes[:len(_digests)]
        self._snapshots: dict[str, int] = {}  # index name -> notes its snapshot in `origin` covers, as read or written

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
        over the notes with `factory()` and its ``add(note)``, then kept current like any listener. An index
        offering `taggraph.core.snapshot`'s protocol starts from its snapshot in the folder this store was loaded
        from or saved to when that snapshot covers the store's first notes, and is saved beside them by `save`."""
        index = self._shared.get(name)
        if index is None:
            index, covered = self._restored(name, factory)
            for note in self.notes[covered:]:
                index.add(note)
            self.attach(index)
            self._shared[name] = index
        return index

    def _restored(self, name: str, factory) -> tuple[Any, int]:
        """(`factory()`, notes it covers): restored from its snapshot in `origin` where one fits, else empty."""
        index = factory()
        covered = self._load_snapshot(name, index) if snapshot.offers_state(index) else 0
        return (index, covered) if covered is not None else (factory(), 0)

    def _load_snapshot(self, name: str, index) -> int | None:
        """`snapshot.load_into` from the folder this store was read from or saved to, noted as read."""
        covered = snapshot.load_into(self.origin, name, index, len(self.notes), self.notes_digest)
        if covered:
            self._snapshots[name] = covered
        return covered

    def notes_digest(self, count: int) -> str:
        """`snapshot.notes_digest` of the first `count` notes: what a snapshot covering them records."""
        for note in self.notes[len(self._digests):count]:
            self._digests.append(_note_digest(note, note.to_markdown().encode("utf-8")))
        return snapshot.notes_digest(self._digests[:count])

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

    def save(self, path: str | Path, replace: bool = False, keep: Iterable[Callable[["MemoryStore"], object]] = ()
             ) -> Path:
        """Write the store to `path` and keep it in sync with later `remember` calls.

        Writes what the folder lacks: to the folder this store was loaded from or last saved to, unchanged since,
        only the notes added since (and notes whose files it read in another form, e.g. hand-edited tags), all
        made durable in one step; then manifest.json, renamed into place, commits the save: a note file it does
        not list is not part of the store. Last, the snapshots of the store's indexes (`taggraph.core.snapshot`):
        those built so far and those `keep` builds (functions of the store such as `methods.index.term_index`).
        A folder holding another store (a manifest.json this store was not loaded from or saved to) is
        refused unless `replace`. The store holds the folder's lock until `close` (or process exit): a second
        writer gets a StoreError instead of interleaving files. Temporary files a crashed writer of this
        store left behind (``.manifest.json.*.tmp``, ``notes/.*.md.*.tmp``, ``index/.*.npz.*.tmp``) are removed
        first; nothing else.
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
        try:
            for build in keep:  # before anything is written, from the snapshots where this store was read
                build(self)
        except BaseException:
            lock.release()
            raise
        unchanged = self.origin == path.resolve() and fingerprint(path) == self._fingerprint
        stored, rewrite = (self._stored, self._rewrite) if unchanged else (0, set())
        before = set(os.listdir(path / "notes")) if (path / "notes").is_dir() else set()
        manifest_before = _read_or_none(path / MANIFEST)
        origin, snapshots = self.origin, self._snapshots
        self._lock, self.path, self.origin = lock, path, path.resolve()
        self._snapshots = snapshots if unchanged else {}
        try:
            remove_leftovers(path, (MANIFEST, "ontology.md"))
            remove_leftovers(path / "notes", ("*.md",))
            remove_leftovers(path / snapshot.FOLDER, ("*.npz",))
            written = [self._write_note(self.notes[i], durable=False)
                       for i in [*sorted(rewrite), *range(stored, len(self.notes))]]
            make_durable(written)
            self._stale = True
            self.flush()  # the commit
            snapshot.carry(origin, self.origin, set(self._save_snapshots()))  # of the indexes not built here
        except BaseException:  # a failed save (full disk, Ctrl-C) takes back its new files and frees the folder
            if _read_or_none(path / MANIFEST) == manifest_before:  # no manifest of this save lists them
                for name in set(os.listdir(path / "notes")) - before if (path / "notes").is_dir() else ():
                    (path / "notes" / name).unlink(missing_ok=True)
                self.origin, self._snapshots = origin, snapshots
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
        head = json.dumps({"format": FORMAT_VERSION, "case_id": self.case_id, "extractor": self.extractor_name},
                          ensure_ascii=False)
        entries = ",\n".join(json.dumps(self._entry(n), ensure_ascii=False) for n in self.notes)
        # one note a line, each by json's C encoder (indent= takes its pure-Python one: 0.3 s for 20,000 notes)
        text = f"{head[:-1]}, \"notes\": [\n{entries}\n]}}\n"
        atomic_write(self.path / MANIFEST, text)
        self._stored, self._rewrite = len(self.notes), set()  # every note it lists has its file: the commit
        if self._journal is not None:
            self._journal.close()
        self._journal = open(self.path / JOURNAL, "w", encoding="utf-8")  # every entry is in the manifest now
        self._fingerprint = folder_digest(text.encode("utf-8"), b"")
        self._stale = False

    def _save_snapshots(self) -> list[str]:
        """Snapshot each index offering the protocol (the base graph once built) whose snapshot lags; their names."""
        assert self.path is not None
        count = len(self.notes)
        built = {GRAPH_SNAPSHOT: self.graph} if self.graph.taken else {}  # a graph never read is not built to save it
        kept = {name: index for name, index in {**self._shared, **built}.items() if snapshot.offers_state(index)}
        for name in [name for name in kept if self._snapshots.get(name) != count]:
            snapshot.write(self.path / snapshot.FOLDER, name, kept[name], count, self.notes_digest(count))
            self._snapshots[name] = count
        return list(kept)

    def close(self) -> None:
        """Flush, stop mirroring to disk and release the folder's lock."""
        if self.path is not None:
            self.flush()
            self._journal.close()
            (self.path / JOURNAL).unlink(missing_ok=True)
        if self._lock is not None:
            self._lock.release()
        self._lock, self.path, self._journal = None, None, None

    def _write_note(self, note: Note, durable: bool = True) -> Path:
        """Write the note's file (flushed to disk unless not `durable`); its path."""
        assert self.path is not None
        file = self.path / "notes" / safe_filename(note.note_id)
        markdown = note.to_markdown().encode("utf-8")
        atomic_write_bytes(file, markdown, durable)
        if note.index == len(self._digests):
            self._digests.append(_note_digest(note, markdown))
        return file

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
        journal = read_journal(path / JOURNAL)
        folders = _RealFolders(path.resolve())
        for where, entry in entries + journal_entries(path / JOURNAL, journal):
            if where.startswith(str(mpath)) or not already_listed(entry, listed):
                store._load_entry(folders, entry, where)
        store.origin, store._fingerprint = folders.root, folder_digest(raw, journal)
        store._stored = len(store.notes)
        return store

    def _load_entry(self, folders: "_RealFolders", entry: Any, where: str) -> None:
        if not isinstance(entry, dict):
            raise StoreError(f"{where}: a note entry must be a JSON object, got {type(entry).__name__}")
        try:
            note_id, rel = entry["note_id"], entry["file"]
        except KeyError as exc:
            raise StoreError(f"{where}: missing field {exc}") from None
        if not isinstance(note_id, str) or not isinstance(rel, str):
            raise StoreError(f"{where}: fields 'note_id' and 'file' must be strings")
        file, raw = folders.read(rel, where)
        try:
            text = raw.decode("utf-8")  # as written: a CR in a turn stays a CR (no universal newlines)
        except UnicodeDecodeError as exc:
            raise StoreError(f"{where}: cannot read {file}: {exc}") from None
        try:
            note = parse_note(text, note_id=note_id, session_id=str(entry.get("session_id", "")),
                              timestamp=str(entry.get("timestamp", "")), summary=str(entry.get("summary", "")),
                              source=file)
        except NoteFormatError as exc:
            raise StoreError(str(exc)) from None
        if note_id in self.by_id:
            raise StoreError(f"{where}: note {note_id!r} is listed twice")
        if "extraction_error" in entry:
            self.extraction_errors[note_id] = entry["extraction_error"]
        self.add_note(note)
        markdown = note.to_markdown()
        if markdown != text:  # hand-edited, or saved with CRLF: `save` writes it as the note reads now
            self._rewrite.add(note.index)
            raw = markdown.encode("utf-8")
        self._digests.append(_note_digest(note, raw))


class _RealFolders:
    """Reads the note files a manifest names, refusing any outside the store folder `root`; each folder is resolved
    once, not each file (resolving 20,000 paths in full cost a third of a second)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._inside = os.path.join(str(root), "")  # the real paths inside the store start with this
        self._real: dict[str, str] = {}

    def read(self, rel: str, where: str) -> tuple[str, bytes]:
        """(the real path of the file `rel` names, its bytes); StoreError for one outside the store or unreadable."""
        folder, _, name = rel.rpartition("/")
        if _NO_FOLLOW and name not in ("", ".", ".."):
            real = self._real.get(folder)
            if real is None:
                real = self._real[folder] = str((self.root / folder).resolve())
            file = os.path.join(real, name)  # its real path unless it is a link itself: opened below without following
        else:
            file = str((self.root / rel).resolve())
        try:
            return file, self._read(file, rel, where, _NO_FOLLOW)
        except OSError as exc:
            if exc.errno != errno.ELOOP or not _NO_FOLLOW:
                raise StoreError(f"{where}: cannot read {file}: {exc}") from None
        file = str((self.root / rel).resolve())  # a link: read where it leads
        try:
            return file, self._read(file, rel, where, 0)
        except OSError as exc:
            raise StoreError(f"{where}: cannot read {file}: {exc}") from None

    def _read(self, file: str, rel: str, where: str, flags: int) -> bytes:
        if not file.startswith(self._inside):
            raise StoreError(f"{where}: field 'file' points outside the store: {rel!r}")
        with open(os.open(file, os.O_RDONLY | flags), "rb") as fh:
            return fh.read()


def _note_digest(note: Note, markdown: bytes) -> bytes:
    return snapshot.note_digest(note.note_id, note.session_id, note.timestamp, note.summary, markdown)
