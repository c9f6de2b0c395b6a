"""Dataset formats: each turns a benchmark's files into `Case`s (`registry.load_cases` -> `Dataset`)."""

from taggraph.datasets.base import (Case, DatasetError, DatasetFormat, DataWarning, OwnMetrics, data_checksum,
                                    file_checksum, folder_checksum)
from taggraph.datasets.longmemeval import load_longmemeval
from taggraph.datasets.registry import Dataset, format_names, formats, get_format, load_cases, register_format

__all__ = ["Case", "DataWarning", "Dataset", "DatasetError", "DatasetFormat", "OwnMetrics", "data_checksum",
           "file_checksum", "first_per_type", "folder_checksum", "format_names", "formats", "get_format",
           "load_cases", "load_dataset", "load_longmemeval", "register_format"]


def first_per_type(cases: list[Case], n: int) -> list[Case]:
    """The first `n` cases of each question type, in file order (a deterministic stratified subset)."""
    seen: dict[str, int] = {}
    out = []
    for case in cases:
        if seen.get(case.question_type, 0) < n:
            seen[case.question_type] = seen.get(case.question_type, 0) + 1
            out.append(case)
    return out


def load_dataset(path, limit=None, fmt=None) -> list[Case]:
    """The cases of any registered format (`load_cases(...).cases`), its `DataWarning`s also raised as Python
    warnings; `fmt` (a format name) skips detection by content."""
    from taggraph.datasets.detect import load_any
    return load_any(path, limit=limit, fmt=fmt)
