"""Dataset loaders: each turns a benchmark file into `Case`s."""

from taggraph.datasets.base import Case, DatasetError, data_checksum, file_checksum, folder_checksum
from taggraph.datasets.longmemeval import load_longmemeval

__all__ = ["Case", "DatasetError", "data_checksum", "file_checksum", "folder_checksum", "first_per_type", "load_longmemeval", "load_dataset"]


def first_per_type(cases: list[Case], n: int) -> list[Case]:
    """The first `n` cases of each question type, in file order (a deterministic stratified subset)."""
    seen: dict[str, int] = {}
    out = []
    for case in cases:
        if seen.get(case.question_type, 0) < n:
            seen[case.question_type] = seen.get(case.question_type, 0) + 1
            out.append(case)
    return out


def load_dataset(path, limit=None, fmt=None):
    """Cases of any supported benchmark: LongMemEval or LoCoMo JSON, or a folder of ATANT stories.

    `fmt` ("longmemeval", "locomo", "atant") skips detection by content.
    """
    from taggraph.datasets.detect import load_any
    return load_any(path, limit=limit, fmt=fmt)
