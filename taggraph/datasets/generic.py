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
that follows are one note, dated by its first turn, or by the session's date when that turn has none;
a turn without a partner is a note alone. Note
ids are ``"<session>#<n>"``, n counting the session's notes from 0. Questions over one history share
one memory, built once. Each bad record is refused naming the file, the line and the field (a gold
note outside the question's gold sessions too); what loads but is suspect (an empty text, a gold
session absent from the history, a history no question asks about, a date the time rules cannot
read, a session dated after its question) becomes a `DataWarning`.

Dates (``DATE_FORMATS``): ``2024-03-02``, ``2024-03-02T14:30`` or any other ISO 8601 date or date and
time (an offset such as ``+02:00`` is read as UTC), ``2024/03/02``, ``2024/03/02 14:30``, either with a
weekday in parentheses (``2024/03/02 (Sat) 14:30``, LongMemEval's form). A date in another form
(``15/08/2024``, ``March 2, 2024``) is kept as text but reads as undated: the time rules (TagGraph-Fusion's)
are off for that note or question. A session is dated by its first dated turn, and so is each of its
notes whose first turn has no date; one dated on a later day
than its question is kept (format ``generic``) or left out of that question's history (format
``generic-past``, `load_generic(..., future_sessions="drop")`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from taggraph.datasets.base import (UNDATED_QUESTIONS, Case, DatasetError, DatasetFormat, OwnMetrics, data_warning,
                                    head, note_ids, read_bytes, refuse_surrogates, require, session_notes)
from taggraph.core.text import is_token, parse_timestamp
from taggraph.core.store import Interaction

TURNS, QUESTIONS = "turns.jsonl", "questions.jsonl"
TURN_FIELDS = {"history": str, "session": str, "role": str, "text": str, "date": str}
QUESTION_FIELDS = {"id": str, "history": str, "question": str, "gold_sessions": list, "date": str,
                   "answer": (str, int, float), "type": str, "gold_notes": list, "abstention": bool}
OPTIONAL = {"date", "answer", "type", "gold_notes", "abstention"}
DATE_FORMATS = "YYYY-MM-DD or any ISO 8601 date and time, YYYY/MM/DD, YYYY/MM/DD HH:MM"
FUTURE_SESSIONS = ("keep", "drop")  # what loading does with a session dated after its question


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
        except RecursionError:
            raise DatasetError(f"{where}: JSON nested too deeply to read (a record is one flat object)") from None
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


def _token(value: str, key: str, where: str) -> str:
    """`value`, unless it is no id `is_token` accepts."""
    if not is_token(value):
        raise DatasetError(f"{where}: field '{key}' must be one token (no whitespace, not empty), got {value!r}")
    return value


def _strings(record: dict, key: str, where: str) -> list[str]:
    values = record.get(key, [])
    if not all(isinstance(v, str) for v in values):
        raise DatasetError(f"{where}: field '{key}' must be a list of strings")
    return list(values)


def day_of(date: str) -> int | None:
    """The calendar day (days since 1970-01-01) of a date in one of DATE_FORMATS; None when empty or unread."""
    found = parse_timestamp(date) if date.strip() else None
    return None if found is None else int(found // 1)


def read_histories(path: Path) -> tuple[dict[str, list[Interaction]], list[str], list[str]]:
    """history -> its notes in order (sessions in first-seen order, each session's turns together), the
    lines of turns with empty text, and the lines of turns with a date no DATE_FORMATS reads."""
    sessions: dict[str, dict[str, list[tuple[str, str, str]]]] = {}
    empty, undated = [], []
    for n, record in read_jsonl(path):
        turn = _checked(record, TURN_FIELDS, f"{path} line {n}")
        if turn["role"] not in ("user", "assistant"):
            raise DatasetError(f"{path} line {n}: field 'role' must be 'user' or 'assistant', got {turn['role']!r}")
        _token(turn["session"], "session", f"{path} line {n}")
        if not turn["text"].strip():
            empty.append(f"line {n}")
        if turn.get("date", "").strip() and day_of(turn["date"]) is None:
            undated.append(f"line {n} ({turn['date'][:30]!r})")
        sessions.setdefault(turn["history"], {}).setdefault(turn["session"], []).append(
            (turn["role"], turn["text"], turn.get("date", "")))
    if not sessions:
        raise DatasetError(f"{path}: no turns")
    return {h: [note for sid, turns in by_session.items() for note in session_notes(sid, session_dated(turns))[0]]
            for h, by_session in sessions.items()}, empty, undated


def session_dated(turns: list[tuple[str, str, str]]) -> list[tuple[str, str, str]]:
    """(role, text, date) turns, each without a date given the session's: its first date DATE_FORMATS reads."""
    date = next((d for _, _, d in turns if day_of(d) is not None), "")
    return [(role, text, own if own.strip() else date) for role, text, own in turns]


def session_days(interactions: list[Interaction]) -> dict[str, int]:
    """session -> the day of its first dated note (sessions without a readable date are left out)."""
    days: dict[str, int] = {}
    for i in interactions:
        day = day_of(i.timestamp)
        if day is not None and i.session_id not in days:
            days[i.session_id] = day
    return days


def load_generic(turns: str | Path, questions: str | Path, limit: int | None = None,
                 future_sessions: str = "keep") -> tuple[list[Case], list]:
    """The cases of `questions` over the histories of `turns` (the first `limit` questions when given), and
    the DataWarnings of what loads but is suspect. Questions of one history share its interactions;
    `future_sessions="drop"` leaves out of each question's history the sessions dated on a later day."""
    if future_sessions not in FUTURE_SESSIONS:
        raise DatasetError(f"future_sessions must be one of {', '.join(FUTURE_SESSIONS)}, got {future_sessions!r}")
    turns, questions = Path(turns), Path(questions)
    histories, empty, undated_turns = read_histories(turns)
    days = {h: session_days(interactions) for h, interactions in histories.items()}
    notes: dict[str, dict[str, str]] = {}
    undated_questions: list[str] = []  # a date in no accepted form
    no_date: list[str] = []
    future: dict[str, list[str]] = {}  # question id -> its history's sessions dated after it
    later_sessions: set[tuple[str, str]] = set()  # (history, session) of those, each once
    cases: list[Case] = []
    asked: set[str] = set()
    first: dict[str, str] = {}
    for n, record in read_jsonl(questions):
        where = f"{questions} line {n}"
        q = _checked(record, QUESTION_FIELDS, where)
        qid, history = _token(q["id"], "id", where), q["history"]
        if qid in first:
            raise DatasetError(f"{where}: field 'id': duplicate question id {qid!r}, also {first[qid]}")
        first[qid] = f"line {n}"
        if history not in histories:
            raise DatasetError(f"{where}: field 'history': {history!r} has no turns in {turns}")
        asked.add(history)
        gold_notes, gold_sessions = _strings(q, "gold_notes", where), _strings(q, "gold_sessions", where)
        known = notes.setdefault(history, dict(note_ids(histories[history])))
        stray = [n for n in gold_notes if n not in known]
        if stray:
            raise DatasetError(f"{where}: field 'gold_notes': {stray[0]!r} is not a note of history {history!r} "
                               f"(note ids are '<session>#<n>', n counting a session's notes from 0)")
        outside = [n for n in gold_notes if known[n] not in gold_sessions]
        if outside:
            raise DatasetError(f"{where}: field 'gold_notes': {outside[0]!r} is in session {known[outside[0]]!r}, "
                               f"which is not in 'gold_sessions' {gold_sessions}; add the session or drop the note")
        asked_day = day_of(q.get("date", ""))
        if q.get("date", "").strip() and asked_day is None:
            undated_questions.append(f"{qid} ({q['date'][:30]!r})")
        elif not q.get("date", "").strip():
            no_date.append(qid)
        later = [] if asked_day is None else [s for s, day in days[history].items() if day > asked_day]
        if later:
            future[qid] = later
            later_sessions.update((history, s) for s in later)
        late_gold = [s for s in gold_sessions if s in later]
        if late_gold and future_sessions == "drop":
            raise DatasetError(f"{where}: gold session {late_gold[0]!r} is dated after the question "
                               f"({q['date']}); leaving it out would leave the answer out (fix the dates, or keep "
                               f"such sessions with format 'generic')")
        interactions = histories[history]
        if later and future_sessions == "drop":
            left_out = set(later)
            interactions = [i for i in interactions if i.session_id not in left_out]
        if limit is None or len(cases) < limit:
            cases.append(Case(case_id=qid, question=q["question"], question_type=q.get("type", "untyped"),
                              interactions=interactions, gold_session_ids=gold_sessions,
                              answer=str(q.get("answer", "")), question_date=q.get("date", ""),
                              gold_note_ids=gold_notes, is_abstention=q.get("abstention", False)))
    if not first:
        raise DatasetError(f"{questions}: no questions")
    unasked = [h for h in histories if h not in asked]
    later_total = len(later_sessions)  # a session after two questions of its history counts once
    fate = ("left out of their history (format generic-past)" if future_sessions == "drop" else
            "kept, so a method may retrieve a session from after the question (format generic-past leaves them out)")
    return cases, (data_warning("empty_text", "turns have an empty text", empty, turns)
                   + data_warning("history_without_questions", "histories have turns but no question "
                                  "(not loaded)", unasked, turns)
                   + data_warning("unread_date", f"turns have a date in no accepted form ({DATE_FORMATS}); their "
                                  "notes count as undated for the time rules", undated_turns, turns)
                   + data_warning("unread_date", f"questions have a date in no accepted form ({DATE_FORMATS}); "
                                  "the time rules are off for them", undated_questions, questions,
                                  per_question=True)
                   + data_warning("undated_question", UNDATED_QUESTIONS, no_date, questions, per_question=True)
                   + data_warning("session_after_question", f"questions are asked before some sessions of their "
                                  f"history ({later_total} session{'s' * (later_total != 1)} dated on a later day): {fate}",
                                  [f"{q} ({', '.join(s[:3])}{', ...' if len(s) > 3 else ''})" for q, s in future.items()],
                                  questions, per_question=True))


def files(path: Path) -> tuple[Path, Path]:
    """(turns.jsonl, questions.jsonl) of a folder, or of the folder holding either file."""
    folder = path if path.is_dir() else path.parent
    found = {name: next((p for p in (folder / name, folder / f"{name}.gz") if p.is_file()), folder / name)
             for name in (TURNS, QUESTIONS)}
    return found[TURNS], found[QUESTIONS]


def load(path: Path, limit: int | None = None, future_sessions: str = "keep") -> tuple[list[Case], list]:
    """`load_generic` of a folder (or of either file's folder)."""
    found = files(path)
    for file in found:
        if not file.is_file():
            raise DatasetError(f"{file}: no such file (your own data is {TURNS} and {QUESTIONS} in one folder)")
    cases, warnings = load_generic(*found, limit=limit, future_sessions=future_sessions)
    other = sorted(p.name for p in found[0].parent.iterdir() if p.is_file() and p not in found
                   and p.name.endswith((".json", ".json.gz", ".jsonl", ".jsonl.gz")))
    return cases, warnings + data_warning("file_not_read", f"data files in the folder are not read (your own data "
                                                           f"is {TURNS} and {QUESTIONS}; another format's files "
                                                           f"want a folder of their own)", other, found[0].parent)


def load_past(path: Path, limit: int | None = None) -> tuple[list[Case], list]:
    """`load`, each question's history without the sessions dated after it."""
    return load(path, limit, future_sessions="drop")


def detect(path: Path) -> bool:
    """A folder holding turns.jsonl or questions.jsonl (plain or .gz), or a JSON Lines file whose first record
    is a turn (``history``, ``role``, ``text``) or a question (``history``, ``question``)."""
    if path.is_dir():
        return any((path / name).is_file() for name in (TURNS, QUESTIONS, f"{TURNS}.gz", f"{QUESTIONS}.gz"))
    found = head(path)
    line = found[0].lstrip().split("\n", 1)[0] if found else ""
    try:
        first = json.loads(line)
    except (ValueError, RecursionError):
        return False
    return isinstance(first, dict) and "history" in first and ({"role", "text"} <= set(first) or "question" in first)


# Questions that name `gold_notes` are judged at note level too, as LoCoMo's evidence is (the others left out).
NOTE_METRICS = OwnMetrics("taggraph.evaluation.benchmark_metrics:locomo_metrics", ("MRR", "Success@5", "Success@10", "R@5", "R@10"),
                          where=(("level", "note"), ("category", "all")), prefix="note_")

# Chosen by name only (--format generic-past): the same files, sessions dated after their question left out.
PAST_FORMAT = DatasetFormat(
    name="generic-past", expects="the generic format's files; each question's history without the sessions dated "
                                 "after it", detect=lambda path: False, load=load_past, reads=files,
    metrics=NOTE_METRICS)
FORMAT = DatasetFormat(
    name="generic", expects=f"a folder with turns.jsonl and questions.jsonl (your own data, see "
                            f"docs/data-formats.md; dates {DATE_FORMATS})", detect=detect, load=load, reads=files, metrics=NOTE_METRICS)
