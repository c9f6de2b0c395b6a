"""Dataset loaders: each turns a benchmark file into `Case`s."""

from taggraph.datasets.base import Case, DatasetError, file_checksum
from taggraph.datasets.longmemeval import load_longmemeval

__all__ = ["Case", "DatasetError", "file_checksum", "load_longmemeval", "load_dataset"]


def load_dataset(path, limit=None):
    """Load any supported benchmark file (LongMemEval JSON for now)."""
    return load_longmemeval(path, limit=limit)
