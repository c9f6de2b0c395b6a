"""Detection by name, for callers that want the format's name and a plain list of cases
(`taggraph.datasets.registry` holds the formats and `load_cases`)."""

from __future__ import annotations

from pathlib import Path

from taggraph.datasets.base import Case, warn_about_input
from taggraph.datasets.registry import detect_format as _detect, format_names, load_cases

FORMATS = tuple(format_names())


def detect_format(path: str | Path) -> str:
    """The name of the registered format of `path` (`registry.detect_format`)."""
    return _detect(path).name


def load_any(path: str | Path, limit: int | None = None, fmt: str | None = None) -> list[Case]:
    """`load_cases(...).cases`, each of its DataWarnings also raised as a Python DatasetWarning."""
    dataset = load_cases(path, fmt=fmt, limit=limit)
    warn_about_input(dataset.warnings)
    return dataset.cases
