"""LongMemEval format (S, M and oracle; plain JSON or .gz): detection, loading, abstention and gold notes.

Each question is a case; its haystack sessions become interactions in order:
a user turn with the assistant turn that follows is one note. A turn without a
partner (an assistant turn opening a session, two user turns in a row) is a
note of its own with the other side empty, so no text is lost. A session id
listed twice in one haystack with identical turns (5 records of the S dev
split) keeps both copies, as the benchmark lists them; their notes get distinct
ids ("<session>#<turn>" keeps counting). The same id with different turns, and
an empty session, are errors. A question whose id ends in ``_abs`` is an
abstention question. Its gold notes are the notes holding a turn marked
``has_answer`` (a gold session without marks: all its notes).
"""

from __future__ import annotations

import json
import re
import statistics
from collections.abc import Sequence
from pathlib import Path

from taggraph.datasets.base import (Case, DatasetError, DatasetFormat, evidence_notes, head, note_ids, read_bytes,
                                    refuse_repeated, refuse_surrogates, require, session_notes)
from taggraph.core.store import Interaction

QUESTION_TYPES = ("single-session-user", "single-session-assistant", "single-session-preference",
                  "multi-session", "knowledge-update", "temporal-reasoning")


def read_json(path: Path, item: str = "record"):
    """Parse a JSON or gzipped JSON file; errors name the file and the problem (a lone surrogate escape: the
    `item` and field, `refuse_surrogates`)."""
    raw = read_bytes(path)
    try:
        data = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise DatasetError(f"{path}: not UTF-8 (byte {exc.start}: {exc.reason})") from None
    except json.JSONDecodeError as exc:
        raise DatasetError(f"{path}: invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}") from None
    except RecursionError:
        raise DatasetError(f"{path}: JSON nested too deep to read (no benchmark nests so)") from None
    refuse_surrogates(data, str(path), raw, item)
    return data


def _turns(turns: list, date: str, where: str) -> list[tuple[str, str, str]]:
    """(role, content, date) of each turn of a session, each checked."""
    out = []
    for t, turn in enumerate(turns):
        tw = f"{where}[{t}]"
        if not isinstance(turn, dict):
            raise DatasetError(f"{tw}: a turn must be an object with 'role' and 'content'")
        role, content = require(turn, "role", str, tw), require(turn, "content", str, tw)
        if role not in ("user", "assistant"):
            raise DatasetError(f"{tw}: field 'role' must be 'user' or 'assistant', got {role!r}")
        out.append((role, content, date))
    return out


def parse_record(record, where: str) -> Case:
    if not isinstance(record, dict):
        raise DatasetError(f"{where}: a record must be an object")
    qid = require(record, "question_id", str, where)
    where = f"{where} (question_id {qid!r})"
    question = require(record, "question", str, where)
    qtype = require(record, "question_type", str, where)
    answer = require(record, "answer", (str, int, float), where)
    sids = require(record, "haystack_session_ids", list, where)
    dates = require(record, "haystack_dates", list, where)
    sessions = require(record, "haystack_sessions", list, where)
    gold = require(record, "answer_session_ids", list, where)
    if not (len(sids) == len(dates) == len(sessions)):
        raise DatasetError(f"{where}: haystack_session_ids, haystack_dates and haystack_sessions differ in "
                           f"length ({len(sids)}, {len(dates)}, {len(sessions)})")
    if not sessions:
        raise DatasetError(f"{where}: field 'haystack_sessions' is empty")
    interactions: list[Interaction] = []
    marks: list[bool] = []  # per note: holds a turn marked has_answer
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
        notes, pairs = session_notes(sid, _turns(turns, date, sw))
        interactions += notes
        marks += [any(t is not None and turns[t].get("has_answer") for t in pair) for pair in pairs]
    if not all(isinstance(g, str) for g in gold):
        raise DatasetError(f"{where}: field 'answer_session_ids' must hold strings")
    numbered = note_ids(interactions)
    return Case(case_id=qid, question=question, question_type=qtype, interactions=interactions,
                gold_session_ids=list(gold), answer=str(answer),
                question_date=str(record.get("question_date", "")),
                gold_note_ids=evidence_notes(numbered, gold, {n for (n, _), m in zip(numbered, marks) if m}),
                is_abstention=qid.endswith("_abs"))


def load_longmemeval(path: str | Path, limit: int | None = None) -> list[Case]:
    """All cases of a LongMemEval file (the first `limit` when given); refuses a repeated question_id."""
    path = Path(path)
    records = read_json(path)
    if not isinstance(records, list):
        raise DatasetError(f"{path}: expected a JSON list of question records, got {type(records).__name__}")
    records = records[:limit] if limit else records
    cases = [parse_record(r, f"{path}: record {i}") for i, r in enumerate(records)]
    refuse_repeated([c.case_id for c in cases], path, "record", "question_id")
    return cases


_KEYS = re.compile(r'"(haystack_sessions|question_id|answer_session_ids)"\s*:')


def detect(path: Path) -> bool:
    """A JSON list (plain or gzipped) whose first record has ``haystack_sessions``, ``question_id`` or
    ``answer_session_ids``; a partial record still goes to the loader, which names the missing field."""
    found = head(path)
    if found is None or not found[0].lstrip().startswith("["):
        return False
    text, whole = found
    if _KEYS.search(text):
        return True
    try:
        first = json.loads(text)[0] if whole else None
    except (ValueError, IndexError, KeyError, RecursionError):
        return False
    return isinstance(first, dict) and bool({"haystack_sessions", "question_id", "answer_session_ids"} & set(first))


def paper_benchmark(cases: Sequence[Case]) -> str | None:
    """The paper's Table 1 benchmark the cases are drawn from, judged by their haystacks (the file name
    plays no part): 'LongMemEval (oracle)' when every haystack holds only its question's evidence
    sessions, 'LongMemEval-S' when the median haystack has 30-100 sessions (S: 39-58, median 47, on its
    dev split; M: ~500), else None - so the bundled demo (13 sessions, distractors included) is not set
    beside the paper's numbers."""
    judged = [c for c in cases if c.gold_session_ids]
    if not judged:
        return None
    if all({i.session_id for i in c.interactions} <= set(c.gold_session_ids) for c in judged):
        return "LongMemEval (oracle)"
    if 30 <= statistics.median(len({i.session_id for i in c.interactions}) for c in cases) <= 100:
        return "LongMemEval-S"
    return None


FORMAT = DatasetFormat(
    name="longmemeval", expects="a JSON list of LongMemEval question records ('haystack_sessions')",
    detect=detect, load=load_longmemeval, paper_benchmark=paper_benchmark, folder=False)
