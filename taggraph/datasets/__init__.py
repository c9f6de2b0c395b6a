"""Dataset formats: each turns a benchmark's files into `Case`s (`registry.load_cases` -> `Dataset`)."""

from taggraph.datasets.base import (Case, DatasetError, DatasetFormat, DataWarning, OwnMetrics, data_checksum,
                                    file_checksum, folder_checksum, warn_about_input)
from taggraph.datasets.longmemeval import load_longmemeval
from taggraph.datasets.registry import Dataset, format_names, formats, get_format, load_cases, register_format
from taggraph.errors import ConfigError

__all__ = ["Case", "DataWarning", "Dataset", "DatasetError", "DatasetFormat", "OwnMetrics", "data_checksum",
           "file_checksum", "first_per_type", "folder_checksum", "format_names", "formats", "get_format",
           "load", "load_cases", "load_dataset", "load_longmemeval", "register_format"]


def first_per_type(cases: list[Case], n: int) -> list[Case]:
    """The first `n` cases of each question type, in file order (a deterministic stratified subset)."""
    seen: dict[str, int] = {}
    out = []
    for case in cases:
        if seen.get(case.question_type, 0) < n:
            seen[case.question_type] = seen.get(case.question_type, 0) + 1
            out.append(case)
    return out


def load(path, *, fmt: str | None = None, limit: int | None = None, per_type: int | None = None) -> Dataset:
    """The dataset at `path` in any registered format (`tg.load`): detected by content (`fmt`, a format's name,
    skips detection), the first `limit` questions, then the first `per_type` of each question type. A
    `Dataset`: a sequence of `Case`s with its `format` and `warnings`, each warning also raised as a Python
    `DatasetWarning`."""
    if per_type is not None and (isinstance(per_type, bool) or not isinstance(per_type, int) or per_type < 1):
        raise ConfigError(f"per_type must be a whole number of questions per type >= 1 (or None: every question), "
                          f"got {per_type!r}")
    dataset = load_cases(path, fmt=fmt, limit=limit)
    if per_type:
        dataset = dataset.select(first_per_type(dataset.cases, per_type))
    warn_about_input(dataset.warnings)
    return dataset


def load_dataset(path, limit=None, fmt=None) -> list[Case]:
    """`load(...)`'s cases as a plain list."""
    return load(path, fmt=fmt, limit=limit).cases
