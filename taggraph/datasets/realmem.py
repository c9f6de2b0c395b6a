"""RealMem format (RealMemBench's ``<Persona>_dialogues_256k.json``): detection and loading.

A file is one persona: ``{"_metadata": {...}, "dialogues": [session, ...]}`` in time order; a session is
``{session_uuid, current_time: "2025-12-23 (Tuesday)", dialogue_turns: [{speaker: "User"|"Assistant", content,
...}], ...}``. The path is one such file, or a folder of them (``*_dialogues*.json``, each a persona).

The protocol (ours, the data's natural one): a query is a user turn with ``is_query`` true; its question is the
turn's content, its type the turn's ``category_name``, its date its session's ``current_time``; its history is the
persona's sessions *before* the query's own session (the turns of its own session before it are left out: a
question is asked of what the memory held when the session began); its gold sessions are the
``memory_session_uuids`` of the assistant turn that follows it. Notes pair a user turn with the assistant turn
after it, as LongMemEval's loader does; session id = ``<persona>:<session_uuid>``, question id =
``<persona>:<query_id>``. The queries of one persona ask of one memory that grows: their histories are prefixes of
one another, so a bench run builds it once and asks each query when it holds that query's sessions
(`taggraph.experiments.runner.group_by_growth`).

Never read: ``extracted_memory`` and the answer turn's ``memory_used`` (the dataset authors' LLM-written memory
points and the gold memory's text: building notes from them would be an oracle).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

from taggraph.datasets.base import Case, DatasetError, DatasetFormat, data_warning, head, refuse_repeated, require
from taggraph.datasets.longmemeval import read_json
from taggraph.store import Interaction

CATEGORIES = ("Dynamic Incremental", "Implicit Preference", "Dynamic Updating", "Temporal-reasoning")
FILES = "*_dialogues*.json"
_HEAD = re.compile(r'^\s*\{\s*"_metadata"\s*:.*"dialogues"\s*:', re.S)


@dataclass
class RealMemCase(Case):
    persona: str = ""
    session_index: int = 0  # the query's own session, in the persona's order (its history: the sessions before)


def _flag(value) -> bool:
    """RealMem writes its flags as strings ("True"/"False"); a JSON boolean reads the same."""
    return value is True or value == "True"


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


def _session_notes(persona: str, session: dict, where: str) -> list[Interaction]:
    """The session's notes: each user turn with the assistant turn after it (a turn without a partner alone)."""
    sid, date = f"{persona}:{session['session_uuid']}", str(session.get("current_time", ""))
    notes, pending = [], None
    for t, turn in enumerate(require(session, "dialogue_turns", list, where)):
        tw = f"{where}: dialogue_turns[{t}]"
        if not isinstance(turn, dict):
            raise DatasetError(f"{tw}: a turn must be an object")
        speaker, text = require(turn, "speaker", str, tw), require(turn, "content", str, tw)
        if speaker == "User":
            if pending is not None:
                notes.append(Interaction(sid, pending, "", date))
            pending = text
        else:
            notes.append(Interaction(sid, pending or "", text, date))
            pending = None
    if pending is not None:
        notes.append(Interaction(sid, pending, "", date))
    return notes


def load_persona(path: Path) -> tuple[list[RealMemCase], list[str]]:
    """(the persona's queries, the ids of queries whose gold names no earlier session) of one file."""
    data = read_json(path, item="session")
    if not isinstance(data, dict) or not isinstance(data.get("dialogues"), list):
        raise DatasetError(f"{path}: expected an object with a 'dialogues' list (RealMem), got {type(data).__name__}")
    meta = data.get("_metadata") if isinstance(data.get("_metadata"), dict) else {}
    persona = str(meta.get("person_name") or path.name.split("_dialogues")[0]).replace(" ", "_")
    sessions = data["dialogues"]
    refuse_repeated([s.get("session_uuid") if isinstance(s, dict) else None for s in sessions], path, "dialogues",
                    "session_uuid")
    history: list[Interaction] = []
    position: dict[str, int] = {}
    cases, ungrounded = [], []
    for s, session in enumerate(sessions):
        where = f"{path}: dialogues[{s}]"
        if not isinstance(session, dict):
            raise DatasetError(f"{where}: a session must be an object")
        uuid = require(session, "session_uuid", str, where)
        turns = session.get("dialogue_turns") or []
        for t, turn in enumerate(turns):
            if not (isinstance(turn, dict) and _flag(turn.get("is_query"))):
                continue
            tw = f"{where}: dialogue_turns[{t}]"
            answer = turns[t + 1] if t + 1 < len(turns) and isinstance(turns[t + 1], dict) else {}
            gold = _gold(answer, f"{where}: dialogue_turns[{t + 1}]")
            case_id = f"{persona}:{require(turn, 'query_id', str, tw)}"
            if not all(position.get(u, s) < s for u in gold) or not gold:
                ungrounded.append(case_id)
            cases.append(RealMemCase(
                case_id=case_id, question=require(turn, "content", str, tw),
                question_type=str(turn.get("category_name") or "unknown"), interactions=list(history),
                gold_session_ids=[f"{persona}:{u}" for u in gold if position.get(u, s) < s],
                answer=str(answer.get("content", "")), question_date=str(session.get("current_time", "")),
                persona=persona, session_index=s))
        history.extend(_session_notes(persona, session, where))
        position[uuid] = s
    return cases, ungrounded


def persona_files(path: Path) -> list[Path]:
    """The persona files `load` reads at `path`: the file itself, or a folder's ``*_dialogues*.json``."""
    path = Path(path)
    return sorted(path.glob(FILES)) if path.is_dir() else [path]


def load(path: Path, limit: int | None = None) -> tuple[list[RealMemCase], list]:
    """Every query of every persona at `path` (the first `limit` when given), with a DataWarning for queries
    whose gold names no session before theirs (scored without those sessions; none in RealMem's dev half)."""
    files = persona_files(path)
    if not files:
        raise DatasetError(f"{path}: a folder without RealMem persona files ({FILES})")
    cases, ungrounded = [], []
    for file in files:
        found, missing = load_persona(file)
        cases += found
        ungrounded += missing
    refuse_repeated([c.case_id for c in cases], path, "query", "question id")
    cases = cases[:limit] if limit else cases
    return cases, data_warning("gold_not_before", "queries name gold sessions that are not before their own "
                               "session (left out of their gold)", ungrounded, path, per_question=True)


def detect(path: Path) -> bool:
    """A JSON object opening with ``_metadata`` and holding ``dialogues``, or a folder of such persona files."""
    files = persona_files(path)
    if not files or not all(f.is_file() for f in files):
        return False
    found = head(files[0])
    return found is not None and bool(_HEAD.match(found[0]))


DETECT_ORDER = 25  # after LoCoMo (a JSON list); an object, so no other JSON format claims it
FORMAT = DatasetFormat(
    name="realmem", expects="a RealMem persona file ({'_metadata', 'dialogues'}) or a folder of them",
    detect=detect, load=load, title="RealMem", case_type=RealMemCase, reads=persona_files)
