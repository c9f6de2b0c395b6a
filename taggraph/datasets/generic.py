"""Your own data: a folder with ``turns.jsonl`` and ``questions.jsonl`` (JSON Lines: one object a line,
UTF-8, plain or gzipped; blank lines are skipped).

``turns.jsonl``, one turn a line, in the order they were said::

    {"history": "h1", "session": "s1", "date": "2024-03-02", "role": "user", "text": "I adopted a beagle."}

- ``history`` (str): whose memory; ``session`` (str): a conversation within it;
  ``role``: ``"user"`` or ``"assistant"``; ``text`` (str); ``date`` (str, optional).

``questions.jsonl``, one question a line::

    {"id": "q1", "history": "h1", "question": "What breed is my dog?", "date": "2024-05-01",
     "answer": "a beagle", "gold_sessions": ["s1"], "type": "pets", "gold_notes": ["s1#0"]}

- ``id`` (str, unique), ``history`` (str, one of turns.jsonl's), ``question`` (str),
  ``gold_sessions`` (list of str: the sessions that hold the answer; empty for an abstention question);
- optional: ``date`` (str, when asked), ``answer`` (str or number), ``type`` (str, default
  ``"untyped"``), ``gold_notes`` (list of note ids, see below), ``abstention`` (bool, default false:
  the history holds no answer; the question is left out of every metric).

Notes: within a session (its turns kept together, in file order), a user turn and the assistant turn
that follows are one note, dated by its first turn; a turn without a partner is a note alone. Note
ids are ``"<session>#<n>"``, n counting the session's notes from 0. Questions over one history share
one memory, built once. Each bad record is refused naming the file, the line and the field; what
loads but is suspect (an empty text, a gold session absent from the history, a history no question
asks about) becomes a `DataWarning`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from taggraph.datasets.base import (Case, DatasetError, DatasetFormat, data_warning, head, note_ids, read_bytes,
                                    refuse_surrogates, require, session_notes)
from taggraph.store import Interaction

TURNS, QUESTIONS = "turns.jsonl", "questions.jsonl"
TURN_FIELDS = {"history": str, "session": str, "role": str, "text": str, "date": str}
QUESTION_FIELDS = {"id": str, "history": str, "question": str, "gold_sessions": list, "date": str,
                   "answer": (str, int, float), "type": str, "gold_notes": list, "abstention": bool}
OPTIONAL = {"date", "answer", "type", "gold_notes", "abstention"}


def read_jsonl(path: Path) -> Iterator[tuple[int, dict]]:
    """(line number, record) for each non-blank line of a (gzipped) JSON Lines file."""
    for n, line in enumerate(read_bytes(path).split(b"\n"), 1):
        where = f"{path} line {n}"
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise DatasetError(f"{where}: not UTF-8 (byte {exc.start}: {exc.reason})") from None
        if not text.strip():
            continue
        try:
            record = json.loads(text)
        except json.JSONDecodeError as exc:
            raise DatasetError(f"{where}: invalid JSON at column {exc.colno}: {exc.msg}") from None
        if not isinstance(record, dict):
            raise DatasetError(f"{where}: expected one JSON object a line, got {type(record).__name__}")
        refuse_surrogates(record, where, line)
        yield n, record


def _checked(record: dict, fields: dict, where: str) -> dict:
    """`record` with its required fields present and every field of its type; an unknown field is refused
    (a misspelt optional field would otherwise be dropped silently)."""
    unknown = sorted(set(record) - set(fields))
    if unknown:
        raise DatasetError(f"{where}: unknown field '{unknown[0]}' (known: {', '.join(fields)})")
    for key, kind in fields.items():
        if key in record or key not in OPTIONAL:
            require(record, key, kind, where)
    return record


def _strings(record: dict, key: str, where: str) -> list[str]:
    values = record.get(key, [])
    if not all(isinstance(v, str) for v in values):
        raise DatasetError(f"{where}: field '{key}' must be a list of strings")
    return list(values)


def read_histories(path: Path) -> tuple[dict[str, list[Interaction]], list[str]]:
    """history -> its notes in order (sessions in first-seen order, each session's turns together), and
    the lines of turns with empty text."""
    sessions: dict[str, dict[str, list[tuple[str, str, str]]]] = {}
    empty = []
    for n, record in read_jsonl(path):
        turn = _checked(record, TURN_FIELDS, f"{path} line {n}")
        if turn["role"] not in ("user", "assistant"):
            raise DatasetError(f"{path} line {n}: field 'role' must be 'user' or 'assistant', got {turn['role']!r}")
        if not turn["text"].strip():
            empty.append(f"line {n}")
        sessions.setdefault(turn["history"], {}).setdefault(turn["session"], []).append(
            (turn["role"], turn["text"], turn.get("date", "")))
    if not sessions:
        raise DatasetError(f"{path}: no turns")
    return {h: [note for sid, turns in by_session.items() for note in session_notes(sid, turns)[0]]
            for h, by_session in sessions.items()}, empty


def load_generic(turns: str | Path, questions: str | Path, limit: int | None = None) -> tuple[list[Case], list]:
    """The cases of `questions` over the histories of `turns` (the first `limit` questions when given), and
    the DataWarnings of what loads but is suspect. Questions of one history share its interactions."""
    turns, questions = Path(turns), Path(questions)
    histories, empty = read_histories(turns)
    notes: dict[str, set[str]] = {}
    cases: list[Case] = []
    asked: set[str] = set()
    first: dict[str, str] = {}
    for n, record in read_jsonl(questions):
        where = f"{questions} line {n}"
        q = _checked(record, QUESTION_FIELDS, where)
        qid, history = q["id"], q["history"]
        if qid in first:
            raise DatasetError(f"{where}: field 'id': duplicate question id {qid!r}, also {first[qid]}")
        first[qid] = f"line {n}"
        if history not in histories:
            raise DatasetError(f"{where}: field 'history': {history!r} has no turns in {turns}")
        asked.add(history)
        gold_notes = _strings(q, "gold_notes", where)
        known = notes.setdefault(history, {n for n, _ in note_ids(histories[history])})
        stray = [n for n in gold_notes if n not in known]
        if stray:
            raise DatasetError(f"{where}: field 'gold_notes': {stray[0]!r} is not a note of history {history!r} "
                               f"(note ids are '<session>#<n>', n counting a session's notes from 0)")
        if limit is None or len(cases) < limit:
            cases.append(Case(case_id=qid, question=q["question"], question_type=q.get("type", "untyped"),
                              interactions=histories[history], gold_session_ids=_strings(q, "gold_sessions", where),
                              answer=str(q.get("answer", "")), question_date=q.get("date", ""),
                              gold_note_ids=gold_notes, is_abstention=q.get("abstention", False)))
    if not first:
        raise DatasetError(f"{questions}: no questions")
    unasked = [h for h in histories if h not in asked]
    return cases, (data_warning("empty_text", "turns have an empty text", empty, turns)
                   + data_warning("history_without_questions", "histories have turns but no question "
                                  "(not loaded)", unasked, turns))


def files(path: Path) -> tuple[Path, Path]:
    """(turns.jsonl, questions.jsonl) of a folder, or of the folder holding either file."""
    folder = path if path.is_dir() else path.parent
    found = {name: next((p for p in (folder / name, folder / f"{name}.gz") if p.is_file()), folder / name)
             for name in (TURNS, QUESTIONS)}
    return found[TURNS], found[QUESTIONS]


def load(path: Path, limit: int | None = None) -> tuple[list[Case], list]:
    """`load_generic` of a folder (or of either file's folder)."""
    found = files(path)
    for file in found:
        if not file.is_file():
            raise DatasetError(f"{file}: no such file (your own data is {TURNS} and {QUESTIONS} in one folder)")
    return load_generic(*found, limit=limit)


def detect(path: Path) -> bool:
    """A folder holding turns.jsonl or questions.jsonl (plain or .gz), or a JSON Lines file whose first record
    is a turn (``history``, ``role``, ``text``) or a question (``history``, ``question``)."""
    if path.is_dir():
        return any((path / name).is_file() for name in (TURNS, QUESTIONS, f"{TURNS}.gz", f"{QUESTIONS}.gz"))
    found = head(path)
    line = found[0].lstrip().split("\n", 1)[0] if found else ""
    try:
        first = json.loads(line)
    except ValueError:
        return False
    return isinstance(first, dict) and "history" in first and ({"role", "text"} <= set(first) or "question" in first)


FORMAT = DatasetFormat(
    name="generic", expects="a folder with turns.jsonl and questions.jsonl (your own data, see the README)",
    detect=detect, load=load)
