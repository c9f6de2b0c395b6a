"""What every dataset loader yields: cases of interactions with their question and gold."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

from taggraph.errors import InputError
from taggraph.store import Interaction


class DatasetError(InputError):
    """Malformed input; the message names the file, the record and the field."""


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
