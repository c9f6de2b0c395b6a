"""What every dataset loader yields: cases of interactions with their question and gold."""

from __future__ import annotations

import hashlib
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from taggraph.errors import InputError
from taggraph.store import Interaction


class DatasetError(InputError):
    """Malformed input; the message names the file, the record and the field."""


class DatasetWarning(UserWarning):
    """Input that loads but cannot be scored as it is (gold outside the haystack, no gold)."""


FIRST_IDS = 5  # question ids a warning quotes
_WARNINGS = {"gold_not_in_haystack": "have answer sessions that are not in their haystack (scored as misses)",
             "no_gold": "are not abstention questions but have no answer sessions (scored as misses)"}


@dataclass
class Case:
    """One question over one user's history (a LongMemEval question, an ATANT story question...)."""

    case_id: str
    question: str
    question_type: str
    interactions: list[Interaction]
    gold_session_ids: list[str] = field(default_factory=list)
    answer: str = ""
    question_date: str = ""

    @property
    def is_abstention(self) -> bool:
        return self.case_id.endswith("_abs")


def file_checksum(path: str | Path) -> str:
    """sha256 of a data file, recorded in every run."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def folder_checksum(path: str | Path) -> str:
    """sha256 over the sorted (relative name, file sha256) pairs of a data folder (ATANT splits)."""
    root = Path(path)
    h = hashlib.sha256()
    for file in sorted(p for p in root.rglob("*") if p.is_file()):
        h.update(f"{file.relative_to(root)}\0{file_checksum(file)}\n".encode())
    return h.hexdigest()


def data_checksum(path: str | Path) -> str:
    """The checksum every run records: `file_checksum` of a file, `folder_checksum` of a folder."""
    return folder_checksum(path) if Path(path).is_dir() else file_checksum(path)


def input_warnings(cases: list[Case]) -> dict[str, dict[str, Any]]:
    """Questions that are misses by construction, as {kind: {"count", "first": question ids}}, only the
    kinds found: "gold_not_in_haystack" (an answer session id absent from the haystack) and "no_gold"
    (a non-abstention question without answer sessions). Runs record this in run.json."""
    found: dict[str, list[str]] = {kind: [] for kind in _WARNINGS}
    for case in cases:
        sessions = {i.session_id for i in case.interactions}
        if any(g not in sessions for g in case.gold_session_ids):
            found["gold_not_in_haystack"].append(case.case_id)
        if not case.gold_session_ids and not case.is_abstention:
            found["no_gold"].append(case.case_id)
    return {kind: {"count": len(ids), "first": ids[:FIRST_IDS]} for kind, ids in found.items() if ids}


def warn_about_input(cases: list[Case], path: str | Path) -> None:
    """One DatasetWarning per kind of `input_warnings` in the file at `path`, with the count and first ids."""
    for kind, found in input_warnings(cases).items():
        warnings.warn(f"{path}: {found['count']} questions {_WARNINGS[kind]}; first: {', '.join(found['first'])}",
                      DatasetWarning, stacklevel=3)
