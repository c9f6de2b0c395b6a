"""Tell a benchmark's format from its content and load it.

- a folder holding ``.yaml``/``.yml`` files -> ``"atant"`` (one split of stories);
- a JSON list (plain or gzipped) whose first record has ``haystack_sessions`` (or ``question_id``)
  -> ``"longmemeval"``;
- a JSON list whose first record has ``conversation`` and ``qa`` -> ``"locomo"``.
"""

from __future__ import annotations

import gzip
import re
import zlib
from pathlib import Path

from taggraph.datasets.base import Case, DatasetError, warn_about_input
from taggraph.datasets.longmemeval import read_json

FORMATS = ("longmemeval", "atant", "locomo")


def detect_format(path: str | Path) -> str:
    path = Path(path)
    if path.is_dir():
        if any(p.suffix in (".yaml", ".yml") for p in path.iterdir()):
            return "atant"
        raise DatasetError(f"{path}: a folder, but without .yaml/.yml files (ATANT stories); "
                           f"LongMemEval and LoCoMo are single JSON files")
    head = _peek(path)
    if head is not None and head.lstrip().startswith("["):
        if re.search(r'"(haystack_sessions|question_id|answer_session_ids)"\s*:', head):
            return "longmemeval"  # a partial record still goes to its loader, which names the missing field
        if re.search(r'"conversation"\s*:', head) and re.search(r'"qa"\s*:', head):
            return "locomo"
    data = read_json(path)  # small or unusual file: decide on the parsed content (and get its errors)
    first = data[0] if isinstance(data, list) and data else None
    if isinstance(first, dict) and {"haystack_sessions", "question_id", "answer_session_ids"} & set(first):
        return "longmemeval"
    if isinstance(first, dict) and "conversation" in first and "qa" in first:
        return "locomo"
    got = f"a list of records with fields {sorted(first)[:8]}" if isinstance(first, dict) else type(data).__name__
    raise DatasetError(f"{path}: unknown format: expected a JSON list of LongMemEval records "
                       f"('haystack_sessions') or LoCoMo samples ('conversation', 'qa'), or a folder of "
                       f"ATANT .yaml stories; got {got}")


def _peek(path: Path, size: int = 1 << 16) -> str | None:
    """The first `size` characters of a (gzipped) text file, or None when unreadable (read_json explains)."""
    try:
        with open(path, "rb") as fh:
            magic = fh.read(2)
        opener = gzip.open if magic == b"\x1f\x8b" else open
        with opener(path, "rb") as fh:
            return fh.read(size).decode("utf-8", errors="replace")
    except (OSError, EOFError, zlib.error):
        return None


def load_any(path: str | Path, limit: int | None = None, fmt: str | None = None) -> list[Case]:
    """Cases of any supported benchmark (format from `detect_format` unless `fmt` is given);
    ATANT's split is the folder name. Questions that are misses by construction are warned about
    (`warn_about_input`)."""
    if fmt is not None and fmt not in FORMATS:
        raise DatasetError(f"unknown format {fmt!r}; known: {', '.join(FORMATS)}")
    kind = fmt or detect_format(path)
    if kind == "atant":
        from taggraph.datasets.atant import load_atant
        cases = load_atant(path, limit=limit)
    elif kind == "locomo":
        from taggraph.datasets.locomo import load_locomo
        cases = load_locomo(path, limit=limit)
    else:
        from taggraph.datasets.longmemeval import load_longmemeval
        cases = load_longmemeval(path, limit=limit)
    warn_about_input(cases, path)
    return cases
