"""LongMemEval loader (S, M and oracle; plain JSON or .gz).

Each question is a case; its haystack sessions become interactions in order:
a user turn with the assistant turn that follows is one note. A turn without a
partner (an assistant turn opening a session, two user turns in a row) is a
note of its own with the other side empty, so no text is lost. A session id
listed twice in one haystack with identical turns (5 records of the S dev
split) keeps both copies, as the benchmark lists them; their notes get distinct
ids ("<session>#<turn>" keeps counting). The same id with different turns, and
an empty session, are errors.
"""

from __future__ import annotations

import gzip
import json
import zlib
from pathlib import Path

from taggraph.datasets.base import Case, DatasetError
from taggraph.store import Interaction

QUESTION_TYPES = ("single-session-user", "single-session-assistant", "single-session-preference",
                  "multi-session", "knowledge-update", "temporal-reasoning")


def read_json(path: Path):
    """Parse a JSON or gzipped JSON file; errors name the file and the problem."""
    try:
        raw = path.read_bytes()
        if raw[:2] == b"\x1f\x8b":
            raw = gzip.decompress(raw)
        return json.loads(raw.decode("utf-8"))
    except FileNotFoundError:
        raise DatasetError(f"{path}: no such file") from None
    except (EOFError, OSError, zlib.error) as exc:
        raise DatasetError(f"{path}: truncated or corrupt gzip ({exc})") from None
    except UnicodeDecodeError as exc:
        raise DatasetError(f"{path}: not UTF-8 (byte {exc.start}: {exc.reason})") from None
    except json.JSONDecodeError as exc:
        raise DatasetError(f"{path}: invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}") from None


def _field(record: dict, key: str, kind, where: str):
    if key not in record:
        raise DatasetError(f"{where}: missing field '{key}'")
    value = record[key]
    if not isinstance(value, kind) or isinstance(value, bool) and kind is not bool:
        want = kind.__name__ if isinstance(kind, type) else "/".join(k.__name__ for k in kind)
        raise DatasetError(f"{where}: field '{key}' must be {want}, got {type(value).__name__}")
    return value


def session_interactions(session_id: str, date: str, turns: list, where: str) -> list[Interaction]:
    """Pair each user turn with the assistant turn that follows it."""
    out: list[Interaction] = []
    pending_user: str | None = None
    for t, turn in enumerate(turns):
        tw = f"{where}[{t}]"
        if not isinstance(turn, dict):
            raise DatasetError(f"{tw}: a turn must be an object with 'role' and 'content'")
        role = _field(turn, "role", str, tw)
        content = _field(turn, "content", str, tw)
        if role == "user":
            if pending_user is not None:
                out.append(Interaction(session_id, pending_user, "", date))
            pending_user = content
        elif role == "assistant":
            out.append(Interaction(session_id, pending_user or "", content, date))
            pending_user = None
        else:
            raise DatasetError(f"{tw}: field 'role' must be 'user' or 'assistant', got {role!r}")
    if pending_user is not None:
        out.append(Interaction(session_id, pending_user, "", date))
    return out


def parse_record(record, where: str) -> Case:
    if not isinstance(record, dict):
        raise DatasetError(f"{where}: a record must be an object")
    qid = _field(record, "question_id", str, where)
    where = f"{where} (question_id {qid!r})"
    question = _field(record, "question", str, where)
    qtype = _field(record, "question_type", str, where)
    answer = _field(record, "answer", (str, int, float), where)
    sids = _field(record, "haystack_session_ids", list, where)
    dates = _field(record, "haystack_dates", list, where)
    sessions = _field(record, "haystack_sessions", list, where)
    gold = _field(record, "answer_session_ids", list, where)
    if not (len(sids) == len(dates) == len(sessions)):
        raise DatasetError(f"{where}: haystack_session_ids, haystack_dates and haystack_sessions differ in "
                           f"length ({len(sids)}, {len(dates)}, {len(sessions)})")
    if not sessions:
        raise DatasetError(f"{where}: field 'haystack_sessions' is empty")
    interactions: list[Interaction] = []
    first_seen: dict[str, int] = {}
    for i, (sid, date, turns) in enumerate(zip(sids, dates, sessions)):
        sw = f"{where}: haystack_sessions[{i}]"
        if not isinstance(sid, str) or not isinstance(date, str):
            raise DatasetError(f"{where}: haystack_session_ids[{i}] and haystack_dates[{i}] must be strings")
        if not isinstance(turns, list):
            raise DatasetError(f"{sw}: must be a list of turns")
        if not turns:
            raise DatasetError(f"{sw}: empty session {sid!r}")
        if sid in first_seen and sessions[first_seen[sid]] != turns:
            raise DatasetError(f"{where}: haystack_session_ids[{i}]: duplicate session id {sid!r} with "
                               f"different turns than haystack_sessions[{first_seen[sid]}]")
        first_seen.setdefault(sid, i)
        interactions.extend(session_interactions(sid, date, turns, sw))
    if not all(isinstance(g, str) for g in gold):
        raise DatasetError(f"{where}: field 'answer_session_ids' must hold strings")
    return Case(case_id=qid, question=question, question_type=qtype, interactions=interactions,
                gold_session_ids=list(gold), answer=str(answer),
                question_date=str(record.get("question_date", "")))


def load_longmemeval(path: str | Path, limit: int | None = None) -> list[Case]:
    """All cases of a LongMemEval file (the first `limit` when given); refuses a repeated question_id."""
    path = Path(path)
    records = read_json(path)
    if not isinstance(records, list):
        raise DatasetError(f"{path}: expected a JSON list of question records, got {type(records).__name__}")
    records = records[:limit] if limit else records
    cases = [parse_record(r, f"{path}: record {i}") for i, r in enumerate(records)]
    first: dict[str, int] = {}
    for i, case in enumerate(cases):
        if case.case_id in first:
            raise DatasetError(f"{path}: record {i} (question_id {case.case_id!r}): duplicate question_id, "
                               f"also record {first[case.case_id]}")
        first[case.case_id] = i
    return cases
