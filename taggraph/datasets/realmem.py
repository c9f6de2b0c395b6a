"""RealMem format (RealMemBench's ``<Persona>_dialogues_256k.json``): detection and loading.

A file is one persona: ``{"_metadata": {...}, "dialogues": [session, ...]}`` (keys in either order) in time
order; a session is ``{session_uuid, current_time: "2025-12-23 (Tuesday)", dialogue_turns: [{speaker:
"User"|"Assistant", content, ...}], ...}``. The path is one such file, or a folder of them
(``*_dialogues*.json`` or ``.json.gz``, each a persona; other JSON files there are warned of, and a folder that
also holds the generic format's files is refused).

The protocol (ours, the data's natural one): a query is a user turn with ``is_query`` true (a JSON boolean, or
the string "True"/"False"; anything else is refused); its question is the turn's content, its type the turn's
``category_name``, its date its session's ``current_time``; its history is the persona's sessions *before* the
query's own session (the turns of its own session before it are left out: a question is asked of what the memory
held when the session began); its gold sessions are the ``memory_session_uuids`` of the assistant turn that
follows it. Notes pair a user turn with the assistant turn after it, as LongMemEval's loader does (speakers read
case-insensitively); session id = ``<persona>:<session_uuid>``, question id = ``<persona>:<query_id>``. The
queries of one persona ask of one memory that grows: their histories are prefixes of one another, so a bench run
builds it once and asks each query when it holds that query's sessions (`taggraph.runs.runner.group_by_growth`).

Dates: a ``current_time`` in no form `taggraph.core.text.parse_datetime` reads (a wrong weekday too), and a query
without one, are warned of, and so are history sessions dated on a later day than their query (kept: the
history is the sessions listed before).

Beside the session metrics, bench reports RealMemBench's own evaluation at its cut-off 20 (recall_any@20,
recall_all@20, ndcg_any@20; `taggraph.evaluation.benchmark_metrics.realmem_metrics` has 5, 10 and 20 per category).

Never read: ``extracted_memory`` and the answer turn's ``memory_used`` (the dataset authors' LLM-written memory
points and the gold memory's text: building notes from them would be an oracle).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path

from taggraph.datasets import generic
from taggraph.datasets.base import (UNDATED_QUESTIONS, Case, DatasetError, DatasetFormat, OwnMetrics, data_warning,
                                    first_record_fields, head, refuse_repeated, require, session_notes)
from taggraph.datasets.longmemeval import read_json
from taggraph.core.store import Interaction

CATEGORIES = ("Dynamic Incremental", "Implicit Preference", "Dynamic Updating", "Temporal-reasoning")
FILES = ("*_dialogues*.json", "*_dialogues*.json.gz")
_JSON = (".json", ".json.gz", ".jsonl", ".jsonl.gz")  # what a file that may hold data is named


@dataclass
class RealMemCase(Case):
    persona: str = ""
    session_index: int = 0  # the query's own session, in the persona's order (its history: the sessions before)


@dataclass
class Suspect:
    """What loads from persona files but is suspect, gathered for `load`'s warnings."""

    ungrounded: list[str] = field(default_factory=list)  # queries whose gold names no session before theirs
    unread: list[str] = field(default_factory=list)  # sessions whose current_time no form reads
    undated: list[str] = field(default_factory=list)  # queries whose session has no date read
    later: dict[str, list[str]] = field(default_factory=dict)  # query -> its history's sessions dated after it
    queryless: list[str] = field(default_factory=list)  # persona files without a query


def _flag(turn: dict, where: str) -> bool:
    """A turn's ``is_query``: a JSON boolean or RealMem's string "True"/"False" (absent: false); another value
    (1, "true") is refused rather than read as no query."""
    value = turn.get("is_query", False)
    if isinstance(value, bool) or value in ("True", "False"):
        return value in (True, "True")
    raise DatasetError(f"{where}: field 'is_query' must be true/false or \"True\"/\"False\", got {value!r}")


def _role(turn: dict, where: str) -> str:
    """'user' or 'assistant': a turn's ``speaker``, "User"/"Assistant" in any case."""
    speaker = require(turn, "speaker", str, where)
    if speaker.lower() not in ("user", "assistant"):
        raise DatasetError(f"{where}: field 'speaker' must be 'User' or 'Assistant', got {speaker[:40]!r}")
    return speaker.lower()


def _date(session: dict, where: str) -> str:
    """A session's ``current_time``; "" when absent or null (an undated session)."""
    value = session.get("current_time")
    if value is not None and not isinstance(value, str):
        raise DatasetError(f"{where}: field 'current_time' must be a date such as '2025-12-23 (Tuesday)', got "
                           f"{type(value).__name__}")
    return value or ""


def _gold(turn: dict, where: str) -> list[str]:
    """The session uuids of an answer turn's ``memory_session_uuids`` (a list, or its Python repr as written)."""
    value = turn.get("memory_session_uuids", [])
    if isinstance(value, str):
        try:
            value = ast.literal_eval(value) if value.strip() else []
        except (ValueError, SyntaxError):
            raise DatasetError(f"{where}: field 'memory_session_uuids' is no list: {value[:60]!r}") from None
    if not isinstance(value, list) or not all(isinstance(u, str) for u in value):
        raise DatasetError(f"{where}: field 'memory_session_uuids' must be a list of session uuids")
    return value


def _session_notes(sid: str, turns: list, date: str, where: str) -> list[Interaction]:
    """The session's notes: each user turn with the assistant turn after it (a turn without a partner alone)."""
    read = []
    for t, turn in enumerate(turns):
        tw = f"{where}: dialogue_turns[{t}]"
        if not isinstance(turn, dict):
            raise DatasetError(f"{tw}: a turn must be an object")
        read.append((_role(turn, tw), require(turn, "content", str, tw), date))
    return session_notes(sid, read)[0]


def _sessions(path: Path, data) -> list[dict]:
    """The persona's sessions, each an object with a string ``session_uuid`` of its own."""
    if not isinstance(data, dict) or not isinstance(data.get("dialogues"), list):
        raise DatasetError(f"{path}: expected an object with a 'dialogues' list (RealMem), got {type(data).__name__}")
    for s, session in enumerate(data["dialogues"]):
        if not isinstance(session, dict):
            raise DatasetError(f"{path}: dialogues[{s}]: a session must be an object")
        require(session, "session_uuid", str, f"{path}: dialogues[{s}]")
    refuse_repeated([s["session_uuid"] for s in data["dialogues"]], path, "dialogues", "session_uuid")
    return data["dialogues"]


def load_persona(path: Path, suspect: Suspect | None = None) -> list[RealMemCase]:
    """The persona's queries of one file; what is suspect in it is added to `suspect`."""
    suspect = Suspect() if suspect is None else suspect
    data = read_json(path, item="session")
    sessions = _sessions(path, data)
    meta = data.get("_metadata") if isinstance(data.get("_metadata"), dict) else {}
    persona = str(meta.get("person_name") or path.name.split("_dialogues")[0]).replace(" ", "_")
    history: list[Interaction] = []
    position: dict[str, int] = {}
    days: dict[str, int] = {}  # session id -> its day, of the sessions before
    cases = []
    for s, session in enumerate(sessions):
        where = f"{path}: dialogues[{s}]"
        uuid, date = session["session_uuid"], _date(session, where)
        sid, day = f"{persona}:{uuid}", generic.day_of(date)
        if date.strip() and day is None:
            suspect.unread.append(f"{sid} ({date[:30]!r})")
        turns = require(session, "dialogue_turns", list, where)
        for t, turn in enumerate(turns):
            tw = f"{where}: dialogue_turns[{t}]"
            if not (isinstance(turn, dict) and _flag(turn, tw)):
                continue
            answer = turns[t + 1] if t + 1 < len(turns) and isinstance(turns[t + 1], dict) else {}
            gold = _gold(answer, f"{where}: dialogue_turns[{t + 1}]")
            case_id = f"{persona}:{require(turn, 'query_id', str, tw)}"
            if not all(position.get(u, s) < s for u in gold):  # a query with no gold at all: the loader's own warning
                suspect.ungrounded.append(case_id)
            if day is None:
                suspect.undated.append(case_id)
            later = [] if day is None else [other for other, d in days.items() if d > day]
            if later:
                suspect.later[case_id] = later
            cases.append(RealMemCase(
                case_id=case_id, question=require(turn, "content", str, tw),
                question_type=str(turn.get("category_name") or "unknown"), interactions=list(history),
                gold_session_ids=[f"{persona}:{u}" for u in gold if position.get(u, s) < s],
                answer=str(answer.get("content", "")), question_date=date, persona=persona, session_index=s))
        history.extend(_session_notes(sid, turns, date, where))
        position[uuid] = s
        if day is not None:
            days[sid] = day
    if not cases:
        suspect.queryless.append(path.name)
    return cases


def persona_files(path: Path) -> list[Path]:
    """The persona files `load` reads at `path`: the file itself, or a folder's ``*_dialogues*.json`` (or
    ``.json.gz``)."""
    path = Path(path)
    return sorted(f for pattern in FILES for f in path.glob(pattern)) if path.is_dir() else [path]


def _unread_files(path: Path, files: list[Path]) -> list[str]:
    """The names of a folder's JSON files that are no persona file; a folder holding the generic format's files
    too is refused naming both (reading either would leave the other out)."""
    if not path.is_dir():
        return []
    both = [p.name for p in generic.files(path) if p.is_file()]
    if both:
        raise DatasetError(f"{path}: holds RealMem persona files ({files[0].name}{', ...' * (len(files) > 1)}) and "
                           f"the generic format's {' and '.join(both)}: reading one would leave the other out; put "
                           f"them in separate folders")
    return sorted(p.name for p in path.iterdir() if p.name.endswith(_JSON) and p.is_file() and p not in files)


def _warnings(path: Path, suspect: Suspect, unread_files: list[str]) -> list:
    """The DataWarnings of what `load` found suspect at `path`, one per kind found."""
    later = len({s for sessions in suspect.later.values() for s in sessions})
    return (data_warning("file_not_read", "JSON files in the folder are not read (a persona file is named "
                         "<Persona>_dialogues*.json or .json.gz)", unread_files, path)
            + data_warning("no_query", "persona files have no query (no turn with 'is_query' true): none of "
                           "their sessions is asked about", suspect.queryless, path)
            + data_warning("gold_not_before", "queries name gold sessions that are not before their own "
                           "session (left out of their gold)", suspect.ungrounded, path, per_question=True)
            + data_warning("unread_date", "sessions have a current_time in no form read ('2025-12-23 (Tuesday)', "
                           "ISO 8601; a weekday that is not the date's): their notes count as undated for the time "
                           "rules, and so do the queries they hold", suspect.unread, path)
            + data_warning("undated_question", UNDATED_QUESTIONS, suspect.undated, path, per_question=True)
            + data_warning("session_after_question", f"queries are asked before some sessions of their history "
                           f"({later} session{'s' * (later != 1)} dated on a later day): kept, as the persona lists "
                           f"them before the query's; the time rules read each by its own date",
                           [f"{q} ({', '.join(s[:3])}{', ...' * (len(s) > 3)})" for q, s in suspect.later.items()],
                           path, per_question=True))


def load(path: Path, limit: int | None = None) -> tuple[list[RealMemCase], list]:
    """Every query of every persona at `path` (the first `limit` when given), with the DataWarnings of what loads
    but is suspect (`_warnings`); no query at all is refused."""
    files = persona_files(path)
    if not files:
        raise DatasetError(f"{path}: a folder without RealMem persona files ({', '.join(FILES)})")
    unread_files = _unread_files(Path(path), files)
    suspect = Suspect()
    cases = [case for file in files for case in load_persona(file, suspect)]
    if not cases:
        raise DatasetError(f"{path}: no query: no turn of {'its personas' if len(files) > 1 else 'its sessions'} "
                           f"has field 'is_query' true")
    refuse_repeated([c.case_id for c in cases], path, "query", "question id")
    cases = cases[:limit] if limit else cases
    return cases, _warnings(Path(path), suspect, unread_files)


def detect(path: Path) -> bool:
    """A JSON object (plain or gzipped) holding a ``dialogues`` list or a ``_metadata`` object, keys in either
    order, or a folder of such persona files."""
    files = persona_files(path)
    if not files or not all(f.is_file() for f in files):
        return False
    found = head(files[0])
    fields = first_record_fields(f"[{found[0]}") if found and found[0].lstrip().startswith("{") else {}
    return fields.get("dialogues") == "[" or fields.get("_metadata") == "{"


FORMAT = DatasetFormat(
    name="realmem", expects="a RealMem persona file ({'_metadata', 'dialogues'}) or a folder of them",
    detect=detect, load=load, title="RealMem", case_type=RealMemCase, reads=persona_files,
    metrics=OwnMetrics("taggraph.evaluation.benchmark_metrics:realmem_metrics",  # its own evaluation's @20 columns
                       ("recall_any@20", "recall_all@20", "ndcg_any@20"), where=(("category", "all"),)))
