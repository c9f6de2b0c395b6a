"""LoCoMo format (``locomo10.json``): detection and loading; its evidence metrics are
`taggraph.evaluation.benchmark_metrics.locomo_metrics`, added to the summary as ``note_*`` columns.

The file is a list of samples ``{sample_id, conversation, qa}``. ``conversation``
holds ``speaker_a``, ``speaker_b``, ``session_<n>`` (turns ``{speaker, dia_id:
"D<n>:<i>", text, img_url?, blip_caption?}``) and ``session_<n>_date_time``;
``qa`` holds ``{question, answer, evidence: [dia_id], category}`` (category 5,
adversarial, has ``adversarial_answer`` instead of ``answer``).

Notes: within a session a turn and the next turn, when spoken by the other
speaker, form one note (user = the opening turn, assistant = the reply, each
prefixed with its speaker); a turn followed by one of the same speaker is a note
alone. A shared image adds ``[image: <blip_caption>]`` to its turn's text. Note
id = dia_id of the note's first turn; session id = ``"<sample_id>:session_<n>"``.
Sessions are read in numeric order, each dated by the ``session_<n>_date_time`` of its number; two keys
naming one number (``session_01`` beside ``session_1``) are refused, as is a key naming a session in another
form (``"session_3 "``) and a repeated ``sample_id``. A turn with neither text nor image is warned of, and so is
a dia_id written on two turns (a note the second opens is ``D<n>:<i>#2``).

One `LocomoCase` per question. Relevant notes (``gold_note_ids``) are the notes
holding an evidence dia_id; ``gold_session_ids`` their sessions. Evidence is
read leniently (every ``D<n>:<i>`` in each string, leading zeros ignored; the typo ``D:<n>:<i>``,
as in conv-43's ``D:11:26``, is read as ``D<n>:<i>`` and warned of); evidence naming no turn of the
conversation is kept in ``unresolved_evidence``, a string with no readable id (``D``) in
``unreadable_evidence``, each warned of with its count.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from taggraph.datasets.base import (Case, DatasetError, DatasetFormat, OwnMetrics, UNDATED_QUESTIONS, data_warning,
                                    first_record_fields, head, refuse_repeated)
from taggraph.datasets.longmemeval import read_json
from taggraph.core.store import Interaction
from taggraph.core.text import parse_note_date

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
_DIA = re.compile(r"D(\d+):(\d+)")
_TYPO_DIA = re.compile(r"D:(\d+):(\d+)")  # 'D:11:26' for D11:26 (LoCoMo, conv-43:q18)
_SEPARATORS = re.compile(r"[\s;,]*")  # what may stand between the ids of one evidence string
_SESSION = re.compile(r"session_(\d+)")
_SESSION_DATE = re.compile(r"session_(\d+)_date_time")


@dataclass
class LocomoCase(Case):
    sample_id: str = ""
    category: int = 0
    adversarial_answer: str = ""
    unresolved_evidence: list[str] = field(default_factory=list)
    retyped_evidence: list[str] = field(default_factory=list)  # as written: 'D:<n>:<i>' read as D<n>:<i>
    unreadable_evidence: list[str] = field(default_factory=list)  # as written: no dia_id read from it
    empty_turns: list[str] = field(default_factory=list)  # its conversation's turns without text or image
    repeated_dia_ids: list[str] = field(default_factory=list)  # its conversation's dia_ids written on two turns


def dia_ids(text: str) -> list[str]:
    """Normalized dia_ids in `text`: ``"D08:05; D9:1"`` -> ``["D8:5", "D9:1"]``."""
    return [f"D{int(a)}:{int(b)}" for a, b in _DIA.findall(text)]


def evidence_ids(text: str) -> tuple[list[str], bool, bool]:
    """(normalized dia_ids, whether a 'D:<n>:<i>' typo was read, whether anything else was left unread) of
    one evidence string: ``"D:11:26"`` -> ``(["D11:26"], True, False)``, ``"D"`` -> ``([], False, True)``."""
    retyped = bool(_TYPO_DIA.search(text))
    text = _TYPO_DIA.sub(r"D\1:\2", text)
    return dia_ids(text), retyped, not _SEPARATORS.fullmatch(_DIA.sub("", text))


def _turn_text(turn: dict, where: str) -> tuple[str, str, str]:
    for key in ("speaker", "dia_id", "text"):
        if not isinstance(turn.get(key), str):
            raise DatasetError(f"{where}: field '{key}' must be a string")
    text = turn["text"]
    if turn.get("blip_caption"):
        text += f" [image: {turn['blip_caption']}]"
    ids = dia_ids(turn["dia_id"])
    if len(ids) != 1:
        raise DatasetError(f"{where}: field 'dia_id' must look like 'D<n>:<i>', got {turn['dia_id']!r}")
    return turn["speaker"], ids[0], f"{turn['speaker']}: {text}"


def numbered_keys(conv: dict, pattern: re.Pattern, where: str) -> dict[int, str]:
    """session number -> the key of `conv` `pattern` reads it from; two keys of one number ('session_01' beside
    'session_1') are refused, naming both."""
    keys: dict[int, str] = {}
    for key in conv:
        if found := pattern.fullmatch(key):
            other = keys.setdefault(int(found.group(1)), key)
            if other != key:
                raise DatasetError(f"{where}: field 'conversation': keys {other!r} and {key!r} both name session "
                                   f"{int(found.group(1))}; rename one (their turns would merge into one session)")
    return keys


def conversation_notes(sample_id: str, conv: dict,
                       where: str) -> tuple[list[Interaction], dict[str, str], list[str], list[str]]:
    """(interactions in order, dia_id -> note id, the turns without text or image, the dia_ids written on more
    than one turn) of one conversation; evidence naming a repeated dia_id counts its first turn. A key naming a
    session in no form read ('session_3 ', 'Session_3') is refused: its turns would be left out."""
    stray = [k for k in conv if "session" in k.lower() and not (_SESSION.fullmatch(k) or _SESSION_DATE.fullmatch(k))]
    if stray:
        raise DatasetError(f"{where}: field 'conversation': key {stray[0]!r} is neither session_<n> nor "
                           f"session_<n>_date_time; rename it (its session would be left out)")
    dates = numbered_keys(conv, _SESSION_DATE, where)
    interactions: list[Interaction] = []
    note_of: dict[str, str] = {}
    empty: list[str] = []
    seen: set[str] = set()
    repeated: list[str] = []
    opened: dict[str, int] = {}  # dia_id -> the notes it opens so far

    def note(speaker: str, dia: str, text: str) -> tuple[str, str, str, str]:
        """A note opened by a turn: (speaker, dia_id, text, note id), the id `D<n>:<i>#<k>` for the k-th note a
        repeated dia_id opens."""
        opened[dia] = opened.get(dia, 0) + 1
        return speaker, dia, text, dia if opened[dia] == 1 else f"{dia}#{opened[dia]}"

    for n, key in sorted(numbered_keys(conv, _SESSION, where).items()):
        turns = conv[key]
        if not isinstance(turns, list):
            raise DatasetError(f"{where}: field '{key}' must be a list of turns")
        sid, date = f"{sample_id}:session_{n}", str(conv.get(dates.get(n), ""))
        pending: tuple[str, str, str, str] | None = None
        for i, turn in enumerate(turns):
            if not isinstance(turn, dict):
                raise DatasetError(f"{where}: {key}[{i}] must be an object")
            speaker, dia, text = _turn_text(turn, f"{where}: {key}[{i}]")
            if not turn["text"].strip() and not turn.get("blip_caption"):
                empty.append(f"{sample_id} {key}[{i}] ({dia})")
            if dia in seen:
                repeated.append(f"{sample_id} {key}[{i}] ({dia})")
            seen.add(dia)
            if pending is not None and speaker != pending[0]:
                interactions.append(Interaction(sid, pending[2], text, date, pending[3]))
                note_of.setdefault(dia, pending[3])
                pending = None
                continue
            if pending is not None:
                interactions.append(Interaction(sid, pending[2], "", date, pending[3]))
            pending = note(speaker, dia, text)
            note_of.setdefault(dia, pending[3])
        if pending is not None:
            interactions.append(Interaction(sid, pending[2], "", date, pending[3]))
    if not interactions:
        raise DatasetError(f"{where}: the conversation has no session_<n> turns")
    return interactions, note_of, empty, repeated


def asked_after(interactions: list[Interaction]) -> str:
    """The day a conversation's questions are asked: its last session's (ISO), or "" when no session date reads.

    Our choice (docs/methods.md): LoCoMo records no date for its questions, which are asked over
    the whole conversation, so they are dated by its last session; TagGraph-Fusion's date windows ("in June")
    then read against that day."""
    moments = [m for m in map(parse_note_date, {i.timestamp for i in interactions}) if m is not None]
    return max(moments).date().isoformat() if moments else ""


def parse_sample(sample, where: str) -> list[LocomoCase]:
    if not isinstance(sample, dict):
        raise DatasetError(f"{where}: a sample must be an object with sample_id, conversation, qa")
    for key, kind in (("sample_id", (str, int)), ("conversation", dict), ("qa", list)):
        if not isinstance(sample.get(key), kind):
            raise DatasetError(f"{where}: missing or malformed field '{key}'")
    sample_id = str(sample["sample_id"])
    where = f"{where} (sample_id {sample_id!r})"
    interactions, note_of, empty, repeated = conversation_notes(sample_id, sample["conversation"], where)
    session_of = {i.note_id: i.session_id for i in interactions}
    asked = asked_after(interactions)
    cases = []
    for q, qa in enumerate(sample["qa"]):
        qw = f"{where}: qa[{q}]"
        if not isinstance(qa, dict) or not isinstance(qa.get("question"), str):
            raise DatasetError(f"{qw}: field 'question' must be a string")
        category = qa.get("category")
        if category not in CATEGORIES:
            raise DatasetError(f"{qw}: field 'category' must be 1-5, got {category!r}")
        evidence = qa.get("evidence", [])
        if not isinstance(evidence, list):
            raise DatasetError(f"{qw}: field 'evidence' must be a list of dia_ids")
        read = {str(e): evidence_ids(str(e)) for e in evidence}
        found = [d for ids, _, _ in read.values() for d in ids]
        gold = list(dict.fromkeys(note_of[d] for d in found if d in note_of))
        cases.append(LocomoCase(
            case_id=f"{sample_id}:q{q}", question=qa["question"], question_type=CATEGORIES[category],
            interactions=interactions, gold_session_ids=list(dict.fromkeys(session_of[g] for g in gold)),
            answer=str(qa.get("answer", "")), sample_id=sample_id, category=category, gold_note_ids=gold,
            question_date=asked,
            adversarial_answer=str(qa.get("adversarial_answer", "")),
            unresolved_evidence=[d for d in found if d not in note_of],
            retyped_evidence=[e for e, (_, retyped, _) in read.items() if retyped],
            unreadable_evidence=[e for e, (_, _, unread) in read.items() if unread], empty_turns=empty,
            repeated_dia_ids=repeated))
    return cases


def load_locomo(path: str | Path, limit: int | None = None) -> list[LocomoCase]:
    """Every question of every sample (the first `limit` questions when given); refuses a repeated sample_id."""
    path = Path(path)
    data = read_json(path, item="sample")
    if not isinstance(data, list):
        raise DatasetError(f"{path}: expected a JSON list of LoCoMo samples, got {type(data).__name__}")
    cases = [c for i, s in enumerate(data) for c in parse_sample(s, f"{path}: sample {i}")]
    refuse_repeated([str(s["sample_id"]) for s in data], path, "sample", "sample_id")
    return cases[:limit] if limit else cases


def detect(path: Path) -> bool:
    """A JSON list (plain or gzipped) whose first sample holds a ``conversation`` object or a ``qa`` list, in
    either order (the file's head may reach only the first); the loader names what else is missing."""
    found = head(path)
    fields = first_record_fields(found[0]) if found else {}
    return fields.get("conversation") == "{" or fields.get("qa") == "["


def load(path: Path, limit: int | None = None) -> tuple[list[LocomoCase], list]:
    """`load_locomo`, with a DataWarning for questions whose evidence names no turn of their conversation,
    one for evidence read from the 'D:<n>:<i>' typo, one for evidence with no readable dia_id, one for turns
    without text or image and one for dia_ids written on two turns."""
    cases = load_locomo(path, limit)
    unresolved = [c.case_id for c in cases if c.unresolved_evidence]
    retyped = [f"{c.case_id} ({e!r})" for c in cases for e in c.retyped_evidence]
    unreadable = [f"{c.case_id} ({e!r})" for c in cases for e in c.unreadable_evidence]
    undated = [c.case_id for c in cases if c.asked_on is None]  # a conversation without a readable session date
    conversations = {c.sample_id: c.interactions for c in cases}.values()  # its questions share its turns
    empty = [turn for turns in {c.sample_id: c.empty_turns for c in cases}.values() for turn in turns]
    repeated = [turn for turns in {c.sample_id: c.repeated_dia_ids for c in cases}.values() for turn in turns]
    unread = sorted({f"{i.session_id} ({i.timestamp[:30]!r})" for turns in conversations for i in turns
                     if i.timestamp.strip() and parse_note_date(i.timestamp) is None})
    return cases, (data_warning("evidence_not_found", "questions name evidence that is no turn of their "
                                "conversation (left out of their gold notes)", unresolved, path, per_question=True)
                   + data_warning("evidence_typo", "evidence ids are written 'D:<session>:<turn>'; read as "
                                  "D<session>:<turn>", retyped, path, per_question=True)
                   + data_warning("evidence_unreadable", "evidence strings name no dia_id 'D<session>:<turn>' "
                                  "(left out of their gold notes)", unreadable, path, per_question=True)
                   + data_warning("undated_question", UNDATED_QUESTIONS, undated, path, per_question=True)
                   + data_warning("unread_date", "sessions have a date_time in no form read (LoCoMo's \"1:56 pm on 8 "
                                  "May, 2023\", ISO 8601): their notes count as undated for the time rules", unread,
                                  path)
                   + data_warning("empty_text", "turns have an empty text and no image: their notes hold only the "
                                  "speaker's name", empty, path)
                   + data_warning("dia_id_repeated", "turns repeat a dia_id of their conversation: evidence naming "
                                  "it counts the first turn that has it (a note a later one opens is "
                                  "'D<n>:<i>#2')", repeated, path))


FORMAT = DatasetFormat(
    name="locomo", expects="a JSON list of LoCoMo samples ('conversation', 'qa')", detect=detect, load=load,
    title="LoCoMo", case_type=LocomoCase, folder=False,
    metrics=OwnMetrics("taggraph.evaluation.benchmark_metrics:locomo_metrics", ("MRR", "Success@5", "Success@10", "R@5", "R@10"),
                       where=(("level", "note"), ("category", "all")), prefix="note_"))  # R@k: evidence recall
