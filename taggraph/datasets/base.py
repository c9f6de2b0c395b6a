"""What every dataset format yields: cases of interactions with their question and gold, and what a
format is (`DatasetFormat`: detection, loading, own metrics), registered in `taggraph.datasets.registry`."""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import re
import stat
import warnings
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Any

from taggraph.errors import InputError
from taggraph.core.store import Interaction
from taggraph.core.text import is_token, parse_datetime


class DatasetError(InputError):
    """Malformed input; the message names the file, the record and the field."""


class DatasetWarning(UserWarning):
    """Input that loads but cannot be scored as it is (gold outside the haystack, no gold)."""


FIRST_IDS = 5  # question ids (or lines) a warning quotes


@dataclass
class Case:
    """One question over one user's history (a LongMemEval question, an ATANT story question...).

    `gold_note_ids`: the notes holding the answer when the data says so (LoCoMo evidence, LongMemEval
    ``has_answer`` turns, a generic file's ``gold_notes``), in note order; empty: every note of the gold
    sessions. `is_abstention`: a question with no answer in the history, set by the loader by its
    format's rule (LongMemEval: the id ends in ``_abs``); excluded from every metric."""

    case_id: str
    question: str
    question_type: str
    interactions: list[Interaction]
    gold_session_ids: list[str] = field(default_factory=list)
    answer: str = ""
    question_date: str = ""
    gold_note_ids: list[str] = field(default_factory=list)
    is_abstention: bool = False

    @cached_property
    def asked_on(self) -> datetime | None:
        """When the question is asked, as every method gets it: `question_date` read once, here
        (`taggraph.core.text.parse_datetime`); None when it names no date (a format's loader warns of those)."""
        return parse_datetime(self.question_date) if self.question_date else None


@dataclass(frozen=True)
class DataWarning:
    """Input that loads but is suspect: `count` items of one `kind` in the file `where`, `first` quoted
    (question ids, or file lines), `text` saying what they are and what follows for the scores."""

    kind: str
    text: str
    count: int
    first: tuple[str, ...]
    where: str
    items: tuple[str, ...] = field(default=(), repr=False, compare=False)  # every item, not only the first
    per_question: bool = False  # each item opens with its question's id (followed by a space, if anything)

    def only(self, question_ids: set[str]) -> DataWarning | None:
        """This warning over the questions `question_ids` alone (a selection: `--per-type`), or None when none
        of its items is theirs; a warning about the file itself stays whole."""
        if not self.per_question:
            return self
        kept = [item for item in self.items if item.split(" ", 1)[0] in question_ids]
        return next(iter(data_warning(self.kind, self.text, kept, self.where, per_question=True)), None)

    @property
    def message(self) -> str:
        return f"{self.where}: {self.count} {self.text}; first: {', '.join(self.first)}"

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "count": self.count, "first": list(self.first), "where": self.where,
                "message": self.message}


UNDATED_QUESTIONS = ("questions have no date: TagGraph-Fusion's time rules read no date they name ('in May', "
                     "'two weeks ago', 'before I moved' are read against the day a question is asked); its recency "
                     "and order cues ('most recent', 'first') still read the sessions' dates")


def data_warning(kind: str, text: str, items: Sequence[str], where: str | Path,
                 per_question: bool = False) -> list[DataWarning]:
    """[one DataWarning of `items`], or [] when there are none; `per_question`: each item opens with the id of
    the question it concerns, so a selection of questions keeps only theirs (`DataWarning.only`)."""
    return [DataWarning(kind, text, len(items), tuple(items[:FIRST_IDS]), str(where), tuple(items),
                        per_question)] if items else []


@dataclass(frozen=True)
class OwnMetrics:
    """A benchmark's own metric table beside the session metrics (ATANT's content match, LoCoMo's note level).

    `table`: a function (rankings, cases) -> DataFrame with a ``method`` column, or its "module:function"
    name (so a format need not import `taggraph.evaluation`, a sibling room); the mean of `columns` over
    the rows matching `where`, per method, prefixed with `prefix`, joins the summary."""

    table: Callable | str
    columns: tuple[str, ...]
    where: tuple[tuple[str, Any], ...] = ()
    prefix: str = ""


@dataclass(frozen=True)
class DatasetFormat:
    """One dataset format: `detect(path)` says whether a path is in it (by content, cheaply), `load(path,
    limit)` returns its cases (the first `limit` questions), or (cases, [DataWarning]). `expects` is what
    the format looks like, in the words of an unknown-format error; `title` how tables name a dataset
    ("{name}": the path's name, "{stem}": before the first dot); `paper_benchmark(cases)` the paper's
    Table 1 benchmark the cases match, or None; `case_type` the Case class its loader yields; `reads(path)` the
    files `load` reads there, which the data checksum covers (None: the path, every file of a folder);
    `folder` whether its data is a folder (True) or a file (False), checked before anything is read (None:
    either, or its loader says)."""

    name: str
    expects: str
    detect: Callable[[Path], bool]
    load: Callable[..., Any]
    title: str = "{stem}"
    metrics: OwnMetrics | None = None
    paper_benchmark: Callable[[Sequence[Case]], str | None] | None = None
    case_type: type = Case
    reads: Callable[[Path], Sequence[Path]] | None = None
    folder: bool | None = None

    def check_kind(self, path: Path) -> None:
        """A DatasetError naming what this format expects when `path` is a file and it reads a folder, or the
        other way round."""
        if self.folder is not None and Path(path).is_dir() != self.folder:
            got = "a folder" if Path(path).is_dir() else "a file"
            raise DatasetError(f"{path}: {got}; format {self.name} expects {self.expects}")


def require(record: dict, key: str, kind, where: str):
    """record[key], refused with the field named when it is missing or not of `kind`."""
    if key not in record:
        raise DatasetError(f"{where}: missing field '{key}'")
    value = record[key]
    if not isinstance(value, kind) or isinstance(value, bool) and kind is not bool:
        want = kind.__name__ if isinstance(kind, type) else "/".join(k.__name__ for k in kind)
        raise DatasetError(f"{where}: field '{key}' must be {want}, got {type(value).__name__}")
    return value


_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")  # a JSON escape of a UTF-16 surrogate, paired or not


def lone_surrogate(value: Any) -> tuple[str, str] | None:
    """(where, what) of the first string in a parsed JSON/YAML value (keys included) holding a lone UTF-16
    surrogate such as ``"\\udc80"`` (legal JSON, but no Unicode text: it crashes spaCy, the metric library and
    every UTF-8 write), or None. `where` is the field path (``haystack_sessions[2][0].content``)."""
    stack: list[tuple[str, Any]] = [("", value)]
    while stack:
        where, item = stack.pop()
        if isinstance(item, dict):
            for key, sub in reversed(list(item.items())):
                name = f"{where}.{_printable(key)}" if where else _printable(key)
                if _bad_at(key) is not None:
                    return name, _surrounding(key)
                stack.append((name, sub))
        elif isinstance(item, list):
            stack.extend((f"{where}[{i}]", sub) for i, sub in reversed(list(enumerate(item))))
        elif isinstance(item, str) and _bad_at(item) is not None:
            return where, _surrounding(item)
    return None


def _bad_at(text: Any) -> int | None:
    if not isinstance(text, str) or text.isascii():
        return None
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return exc.start
    return None


def _printable(text: Any) -> str:
    return str(text).encode("utf-8", "backslashreplace").decode("utf-8")


def _surrounding(text: str) -> str:
    at = _bad_at(text) or 0
    return f"{text[max(at - 20, 0):at + 21]!r} (character {at})"


def refuse_surrogates(data: Any, where: str, raw: bytes | None = None, item: str = "record") -> None:
    """Raise a DatasetError naming the file (`where`), the record and the field of the first string in `data`
    with a lone surrogate (`lone_surrogate`). Records of a top-level list are named "`item` i". `raw`, the
    JSON text, lets a file without any surrogate escape skip the walk (0.2 s for 130 MB)."""
    if raw is not None and not _SURROGATE_ESCAPE.search(raw):
        return
    found = lone_surrogate(data)
    if found is None:
        return
    field, text = found
    if isinstance(data, list) and field.startswith("["):
        index, _, field = field[1:].partition("]")
        where, field = f"{where}: {item} {index}", field.lstrip(".")
    raise DatasetError(f"{where}: field '{field or '(the record)'}' holds a lone surrogate escape, which is not "
                       f"Unicode text: {text}; repair the file (e.g. re-encode the text that produced it)")


def pair_turns(roles: Sequence[str]) -> list[tuple[int | None, int | None]]:
    """(user turn, assistant turn) indexes of each note of a session: a user turn with the assistant turn
    that follows it; a turn without a partner is a note alone (the other side None). Roles are 'user' or
    'assistant'."""
    out: list[tuple[int | None, int | None]] = []
    pending: int | None = None
    for t, role in enumerate(roles):
        if role == "user":
            if pending is not None:
                out.append((pending, None))
            pending = t
        else:
            out.append((pending, t))
            pending = None
    if pending is not None:
        out.append((pending, None))
    return out


def session_notes(session_id: str, turns: Sequence[tuple[str, str, str]]) -> tuple[list[Interaction], list[tuple]]:
    """The notes of one session from its (role, text, date) turns (`pair_turns`; a note is dated by its
    first turn), and the (user, assistant) turn indexes of each."""
    pairs = pair_turns([role for role, _, _ in turns])
    return [Interaction(session_id, turns[u][1] if u is not None else "", turns[a][1] if a is not None else "",
                        turns[a if u is None else u][2]) for u, a in pairs], pairs


def note_ids(interactions: Sequence[Interaction]) -> list[tuple[str, str]]:
    """(note id, session id) of each interaction as MemoryStore numbers them: its own `note_id`, else
    "<session>#<n>", n counting the session's notes on (also across a session listed twice)."""
    count: dict[str, int] = {}
    out = []
    for i in interactions:
        out.append((i.note_id or f"{i.session_id}#{count.get(i.session_id, 0)}", i.session_id))
        count[i.session_id] = count.get(i.session_id, 0) + 1
    return out


def check_ids(cases: Sequence[Case], where: str | Path) -> None:
    """DatasetError for an id that cannot be told apart once written: an empty id or one holding whitespace
    (TREC files and rankings.csv separate ids by whitespace), or a session id that is also a note id (a
    TREC docid is read as a note id first)."""
    for case in cases:
        ids = [("question id", case.case_id)]
        notes = note_ids(case.interactions)
        ids += [("session id", s) for s in dict.fromkeys(s for _, s in notes)] + [("note id", n) for n, _ in notes]
        ids += [("gold session id", s) for s in case.gold_session_ids]
        ids += [("gold note id", n) for n in case.gold_note_ids]
        for kind, value in ids:
            if not is_token(value):
                raise DatasetError(f"{where}: question {case.case_id!r}: {kind} {value!r} is empty or holds "
                                   f"whitespace; ids must be single tokens (TREC runs and rankings.csv separate ids "
                                   f"by whitespace)")
        both = {s for _, s in notes} & {n for n, _ in notes}
        if both:
            raise DatasetError(f"{where}: question {case.case_id!r}: {sorted(both)[0]!r} is both a session id and a "
                               f"note id; a ranked id must name one thing")


def refuse_repeated(ids: Sequence[str], where: str | Path, item: str, key: str) -> None:
    """A DatasetError naming the first of `ids` (the field `key` of each `item` of the file `where`, in order)
    that repeats an earlier one, and where each is."""
    first: dict[str, int] = {}
    for i, value in enumerate(ids):
        if value in first:
            raise DatasetError(f"{where}: {item} {i} ({key} {value!r}): duplicate {key}, also {item} {first[value]}")
        first[value] = i


def evidence_notes(notes: Sequence[tuple[str, str]], gold_sessions: Sequence[str], marked: set[str]) -> list[str]:
    """Of (note id, session id) `notes` in order: the `marked` notes of the gold sessions, and every note
    of a gold session without marked notes (LongMemEval's units of evidence)."""
    gold = set(gold_sessions)
    marked_sessions = {s for n, s in notes if n in marked}
    return [n for n, s in notes if s in gold and (n in marked or s not in marked_sessions)]


MAX_DATA_BYTES = 4 << 30  # a data file (gzipped: its content) larger than this is refused; LongMemEval-M is 2.7 GB


def check_data_path(path: Path) -> Path:
    """`path` if it is a folder or a regular file of at most MAX_DATA_BYTES; a device (/dev/zero), pipe or
    socket, which would be read until memory runs out, or a larger file is a DatasetError naming it."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise DatasetError(f"{path}: no such file or folder") from None
    except OSError as exc:
        raise DatasetError(f"{path}: cannot be read: {exc.strerror or exc}") from None
    if stat.S_ISDIR(st.st_mode):
        return path
    if not stat.S_ISREG(st.st_mode):
        raise DatasetError(f"{path}: not a regular file (a device, pipe or socket); give a data file or folder")
    if st.st_size > MAX_DATA_BYTES:
        raise DatasetError(f"{path}: {st.st_size:,} bytes; data files are limited to {MAX_DATA_BYTES:,}")
    return path


def read_bytes(path: Path) -> bytes:
    """The bytes of a plain or gzipped data file (`check_data_path`; a gzip's content limited to MAX_DATA_BYTES
    too); a missing file or a corrupt gzip is a DatasetError naming it."""
    if check_data_path(path).is_dir():
        raise DatasetError(f"{path}: a folder; a data file is expected here")
    try:
        raw = Path(path).read_bytes()
        if raw[:2] != b"\x1f\x8b":
            return raw
        with gzip.GzipFile(fileobj=io.BytesIO(raw)) as fh:
            out = fh.read(MAX_DATA_BYTES + 1)
    except (EOFError, OSError, zlib.error) as exc:
        raise DatasetError(f"{path}: truncated or corrupt gzip ({exc})") from None
    if len(out) > MAX_DATA_BYTES:
        raise DatasetError(f"{path}: its gzipped content passes {MAX_DATA_BYTES:,} bytes, the limit of a data file")
    return out


@lru_cache(maxsize=8)
def _head(path: str, stamp: tuple[int, int], size: int) -> tuple[str, bool] | None:
    try:
        with open(path, "rb") as fh:
            magic = fh.read(2)
        opener = gzip.open if magic == b"\x1f\x8b" else open
        with opener(path, "rb") as fh:
            raw = fh.read(size + 1)
        return raw[:size].decode("utf-8", errors="replace"), len(raw) <= size
    except (OSError, EOFError, zlib.error):
        return None


def head(path: str | Path, size: int = 1 << 16) -> tuple[str, bool] | None:
    """(the first `size` characters of a plain or gzipped text file, whether that is the whole file), or
    None for a folder or an unreadable file; cached per file version, so detecting costs one read."""
    path = Path(path)
    if not path.is_file():
        return None
    st = path.stat()
    return _head(str(path), (st.st_mtime_ns, st.st_size), size)


_JSON_TOKEN = re.compile(r'"([^"\\]*(?:\\.[^"\\]*)*)"(\s*:)?|[\[\]{}]')  # a string (a key: colon after), a bracket


def first_record_fields(text: str) -> dict[str, str]:
    """The fields of the first record of the JSON list `text`, which may be cut short (a file's `head`), by path,
    each with how its value opens ("[", "{", or "" for a string, number or literal): ``[{"qa": [], "conversation":
    {"session_1": [{"text": ...`` -> ``{"qa": "[", "conversation": "{", "conversation.session_1": "[",
    "conversation.session_1[].text": ""}``. Key order plays no part; what the cut hides is absent; {} when `text`
    is no JSON list."""
    if not text.lstrip().startswith("["):
        return {}
    opened: list[str] = []  # per open bracket, the path of the value it opens ("" for the list and its record)
    fields: dict[str, str] = {}
    key = None  # the path of the field whose value comes next
    for found in _JSON_TOKEN.finditer(text):
        token = found.group()
        if found.group(2) is not None:
            if len(opened) > 1:
                key = f"{opened[-1]}.{found.group(1)}" if opened[-1] else found.group(1)
                fields[key] = ""
            continue
        if token in "[{":
            if key is not None:
                fields[key] = token
            opened.append(key if key is not None else f"{opened[-1]}[]" if len(opened) > 1 else "")
        elif token in "]}":
            opened.pop()
            if len(opened) <= 1:
                break  # the first record (or the list) is closed
        key = None
    return fields


def file_checksum(path: str | Path) -> str:
    """sha256 of a data file, recorded in every run."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def folder_checksum(path: str | Path, files: Sequence[Path] | None = None) -> str:
    """sha256 over the sorted (relative name, file sha256) pairs of a data folder's `files` (default: every
    file under it)."""
    root = Path(path)
    h = hashlib.sha256()
    chosen = map(Path, files) if files is not None else (p for p in root.rglob("*") if p.is_file())
    for file in sorted(chosen):
        h.update(f"{file.relative_to(root)}\0{file_checksum(file)}\n".encode())
    return h.hexdigest()


def data_checksum(path: str | Path, files: Sequence[Path] | None = None) -> str:
    """The checksum every run records: of `files`, those a format reads at `path` (`DatasetFormat.reads`),
    when given (a run folder or a README beside them changes nothing); else `file_checksum` of a file,
    `folder_checksum` of a folder."""
    if files is not None:
        return folder_checksum(Path(path) if Path(path).is_dir() else Path(path).parent, files)
    return folder_checksum(path) if Path(path).is_dir() else file_checksum(path)


_CASE_WARNINGS = {"gold_not_in_haystack": "questions have answer sessions that are not in their haystack "
                                          "(scored as misses)",
                  "no_gold": "questions are not abstention questions but have no answer sessions (scored as misses)"}


def case_warnings(cases: Sequence[Case], where: str | Path = "data") -> list[DataWarning]:
    """Questions that are misses by construction, one DataWarning per kind found: "gold_not_in_haystack" (an
    answer session id absent from the haystack) and "no_gold" (a non-abstention question without answer
    sessions)."""
    found: dict[str, list[str]] = {kind: [] for kind in _CASE_WARNINGS}
    for case in cases:
        sessions = {i.session_id for i in case.interactions}
        if any(g not in sessions for g in case.gold_session_ids):
            found["gold_not_in_haystack"].append(case.case_id)
        if not case.gold_session_ids and not case.is_abstention:
            found["no_gold"].append(case.case_id)
    return [w for kind, ids in found.items() for w in data_warning(kind, _CASE_WARNINGS[kind], ids, where)]


def compact_warnings(found: Sequence[DataWarning]) -> dict[str, dict[str, Any]]:
    """{kind: {"count", "first"}}: the form run.json's ``config.input_warnings`` records."""
    return {w.kind: {"count": w.count, "first": list(w.first)} for w in found}


def warn_about_input(found: Sequence[DataWarning]) -> None:
    """Each DataWarning as a Python DatasetWarning (what a script that ignores the dataset object still sees)."""
    for w in found:
        warnings.warn(w.message, DatasetWarning, stacklevel=3)


def gold_note_ids(case: Case, store: Any, evidence: Mapping[str, set[str]] | None = None) -> list[str]:
    """The notes holding the case's answer (`Case.gold_note_ids`, as its loader set them), else every note of its
    gold sessions; given `evidence` (question id -> marked notes), the marked notes of the gold sessions and every
    note of a gold session without marks."""
    if evidence is None and case.gold_note_ids:
        return list(case.gold_note_ids)
    notes = [(n.note_id, n.session_id) for n in store.notes]
    return evidence_notes(notes, case.gold_session_ids, set((evidence or {}).get(case.case_id, ())))
