"""ATANT format (a folder of YAML stories): detection, loading and its content-match relevance labels (paper, sections 4.1 and 4.4; appendices F.1, H, I).

A split (Core, or a stress round R2-R5) is a folder of YAML story files::

    story_id: s01
    story_name: New job
    category: Career        # Career, Daily Life, Health, Learning, Life Events, Relationships
    batches:                # one interaction each, in story order; no assistant text
      - {batch: 1, time: "2025-01-06 09:00", user_input: "I start at Acme on Monday."}
    questions:              # and/or final_verification: (both are read, in that order)
      - {question: "Where do I work?", expected_contains: ["Acme"]}

One `AtantCase` per question, over all batches of its story. Each batch is its own
session ``"<story_id>:b<batch>"`` holding one note, so session ranks are note ranks.
ATANT has no gold labels; relevance is content match on the batch's user_input,
case-insensitive:

- strict (``gold_session_ids``): the batch contains every expected substring;
- permissive (``permissive_session_ids``): it contains at least one.

The MRR tables under both criteria are `taggraph.evaluation.benchmark_metrics.atant_metrics`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from taggraph.datasets.base import Case, DatasetError, DatasetFormat, OwnMetrics, check_data_path, refuse_surrogates
from taggraph.core.store import Interaction

CATEGORIES = ("Career", "Daily Life", "Health", "Learning", "Life Events", "Relationships")
QUESTION_SECTIONS = ("questions", "final_verification")


@dataclass
class AtantCase(Case):
    """A Case with ATANT's story metadata and the permissive gold set."""

    split: str = ""
    story_id: str = ""
    category: str = ""
    expected_contains: list[str] = field(default_factory=list)
    permissive_session_ids: list[str] = field(default_factory=list)


def content_match(text: str, expected: Sequence[str]) -> tuple[bool, bool]:
    """(strict, permissive): `text` contains every / at least one expected substring, ignoring case."""
    low = text.lower()
    hits = [e.lower() in low for e in expected]
    return all(hits) and bool(hits), any(hits)


def _get(record: dict, key: str, kind: type | tuple, where: str):
    if key not in record:
        raise DatasetError(f"{where}: missing field '{key}'")
    value = record[key]
    if not isinstance(value, kind) or isinstance(value, bool):
        want = kind.__name__ if isinstance(kind, type) else "/".join(k.__name__ for k in kind)
        raise DatasetError(f"{where}: field '{key}' must be {want}, got {type(value).__name__}")
    return value


def load_story(path: Path, split: str) -> list[AtantCase]:
    """The cases (one per question) of one story file; errors name the file and the field."""
    try:
        story = yaml.safe_load(check_data_path(path).read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise DatasetError(f"{path}: invalid YAML: {exc}".replace("\n", " ")) from None
    except UnicodeDecodeError as exc:
        raise DatasetError(f"{path}: not UTF-8 (byte {exc.start}: {exc.reason})") from None
    if not isinstance(story, dict):
        raise DatasetError(f"{path}: a story file must be a mapping with story_id, category, batches, questions")
    refuse_surrogates(story, str(path))
    story_id = str(_get(story, "story_id", (str, int), str(path)))
    category = _get(story, "category", str, str(path))
    batches = _get(story, "batches", list, str(path))
    if not batches:
        raise DatasetError(f"{path}: field 'batches' is empty")
    interactions, seen = [], set()
    for i, b in enumerate(batches):
        where = f"{path}: batches[{i}]"
        if not isinstance(b, dict):
            raise DatasetError(f"{where}: a batch must be a mapping with batch, time, user_input")
        number = _get(b, "batch", (int, str), where)
        if number in seen:
            raise DatasetError(f"{where}: field 'batch' repeats batch {number!r}")
        seen.add(number)
        interactions.append(Interaction(f"{story_id}:b{number}", _get(b, "user_input", str, where),
                                        "", str(b.get("time", ""))))
    questions = []
    for section in QUESTION_SECTIONS:
        items = story.get(section) or []
        if not isinstance(items, list):
            raise DatasetError(f"{path}: field '{section}' must be a list of questions")
        questions += [(f"{section}[{i}]", q) for i, q in enumerate(items)]
    if not questions:
        raise DatasetError(f"{path}: no questions (fields {' / '.join(QUESTION_SECTIONS)} are missing or empty)")
    cases = []
    for n, (name, q) in enumerate(questions, 1):
        where = f"{path}: {name}"
        if not isinstance(q, dict):
            raise DatasetError(f"{where}: a question must be a mapping with question, expected_contains")
        expected = _get(q, "expected_contains", list, where)
        if not expected or not all(isinstance(e, (str, int, float)) for e in expected):
            raise DatasetError(f"{where}: field 'expected_contains' must be a non-empty list of strings")
        expected = [str(e) for e in expected]
        strict, permissive = [], []
        for it in interactions:
            s, p = content_match(it.user, expected)
            strict += [it.session_id] * s
            permissive += [it.session_id] * p
        cases.append(AtantCase(case_id=f"{story_id}q{n}", question=_get(q, "question", str, where),
                               question_type=category, interactions=interactions,
                               gold_session_ids=strict, answer=" | ".join(expected), split=split,
                               story_id=story_id, category=category, expected_contains=expected,
                               permissive_session_ids=permissive))
    return cases


def story_files(folder: Path) -> list[Path]:
    """The ``*.yaml``/``*.yml`` story files of a split's folder, in name order: what `load_atant` reads."""
    return sorted(p for p in Path(folder).iterdir() if p.suffix in (".yaml", ".yml"))


def load_atant(folder: str | Path, split: str | None = None, limit: int | None = None) -> list[AtantCase]:
    """Every question of every ``*.yaml``/``*.yml`` story in `folder` (files in name order).

    `split` names the split in results (default: the folder name); `limit` keeps the
    first N questions.
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise DatasetError(f"{folder}: not a folder of ATANT story files")
    files = story_files(folder)
    if not files:
        raise DatasetError(f"{folder}: no .yaml/.yml story files")
    cases = [c for f in files for c in load_story(f, split or folder.name)]
    ids = [c.case_id for c in cases]
    if len(set(ids)) != len(ids):
        dup = next(i for i in ids if ids.count(i) > 1)
        raise DatasetError(f"{folder}: story_id repeats across files (question id {dup!r})")
    return cases[:limit] if limit else cases


def detect(path: Path) -> bool:
    """A folder holding ``.yaml``/``.yml`` files (one split of stories)."""
    return path.is_dir() and any(p.suffix in (".yaml", ".yml") for p in path.iterdir())


FORMAT = DatasetFormat(
    name="atant", expects="a folder of ATANT .yaml stories", detect=detect,
    load=lambda path, limit=None: load_atant(path, limit=limit), title="ATANT ({name})", case_type=AtantCase,
    reads=story_files, folder=True,
    metrics=OwnMetrics("taggraph.evaluation.benchmark_metrics:atant_metrics", ("MRR_strict", "MRR_permissive"),
                       where=(("category", "all"),)))
