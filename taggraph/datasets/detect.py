"""Detection by name, for callers that want the format's name and a plain list of cases
(`taggraph.datasets.registry` holds the formats and `load_cases`)."""

from __future__ import annotations

from pathlib import Path

from taggraph.datasets import load
from taggraph.datasets.base import Case
from taggraph.datasets.registry import detect_format as _detect, format_names

FORMATS = tuple(format_names())


def detect_format(path: str | Path) -> str:
    """The name of the registered format of `path` (`registry.detect_format`)."""
    return _detect(path).name


def load_any(path: str | Path, limit: int | None = None, fmt: str | None = None) -> list[Case]:
    """`taggraph.datasets.load(...)`'s cases as a plain list."""
    return load(path, fmt=fmt, limit=limit).cases
