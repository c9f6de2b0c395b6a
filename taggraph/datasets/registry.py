"""The dataset formats, in one place, and loading a dataset once: `load_cases(path)` -> `Dataset`.

Built in: longmemeval, locomo, realmem, atant and generic (your own JSON Lines; `taggraph.datasets.generic`).
Each lives in its own module as ``FORMAT``, a `DatasetFormat` (detection, loading, abstention rule and
gold notes by its loader, own metrics), and has one line in `BUILTIN_FORMATS`, whose order is the order of
detection: adding a built-in format is one module and one line. An installed package
adds one with an entry point in the group ``taggraph.datasets`` naming a `DatasetFormat` or a function
returning one (``myformat = mypackage.data:FORMAT``), or at run time with `register_format`. Names are
resolved by `FORMATS`, a `taggraph.registry.Registry`: an installed format never replaces a built-in one
(it is ignored, and `broken_formats` says why in one line).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from taggraph.datasets import generic, longmemeval
from taggraph.datasets.base import (Case, DatasetError, DatasetFormat, DataWarning, case_warnings, check_data_path,
                                    check_ids, data_checksum, head)
from taggraph._infra import entry_points
from taggraph.errors import ConfigError
from taggraph.registry import Registry, load_attr, register


def _adopt(name: str, found: Any) -> DatasetFormat:
    """The DatasetFormat an entry point names, or the one the function it names returns."""
    if callable(found) and not isinstance(found, DatasetFormat):
        try:
            found = found()
        except Exception as exc:  # the plug-in's own factory: confined to that plug-in
            raise ConfigError(f"calling it fails: {entry_points.one_line(exc)}") from None
    if not isinstance(found, DatasetFormat):
        raise ConfigError(f"it names a {type(found).__name__}, not a DatasetFormat")
    return found


# The built-in formats, name -> its DatasetFormat, in the order detection tries them (the loosest test, your own
# JSON Lines, last).
BUILTIN_FORMATS = {
    "longmemeval": "taggraph.datasets.longmemeval:FORMAT",  # a JSON list of LongMemEval records
    "locomo": "taggraph.datasets.locomo:FORMAT",  # a JSON list of LoCoMo conversations
    "realmem": "taggraph.datasets.realmem:FORMAT",  # an object, so no JSON list format claims it
    "atant": "taggraph.datasets.atant:FORMAT",  # a folder of YAML stories
    "generic-past": "taggraph.datasets.generic:PAST_FORMAT",
    "generic": "taggraph.datasets.generic:FORMAT",  # your own JSON Lines
}
def _admit(name: str, fmt: Any) -> DatasetFormat:
    """`fmt` if it is a DatasetFormat named `name` (what `FORMATS` keeps of a registration)."""
    if not isinstance(fmt, DatasetFormat):
        raise ConfigError(f"register_format expects a DatasetFormat, got {type(fmt).__name__}")
    if fmt.name != name:
        raise ConfigError(f"cannot register dataset format {fmt.name!r} as {name!r}: a format goes by its own name")
    return fmt


FORMATS = Registry("format", builtins=BUILTIN_FORMATS, adopt=_adopt, admit=_admit)


def register_format(fmt: DatasetFormat, replace: bool = False) -> DatasetFormat:
    """Add `fmt` to the registry (detected after those before it): ``register("format", fmt.name, fmt)``; a
    name taken is refused unless `replace`."""
    return register("format", getattr(fmt, "name", None), fmt, replace=replace)


def broken_formats() -> dict[str, str]:
    """The installed formats that are not used: name -> the one-line reason (fails to load, or names a
    built-in format)."""
    FORMATS.values()  # loads every installed format
    return FORMATS.problems()


def formats() -> list[DatasetFormat]:
    """The registered formats, in detection order (built-ins first)."""
    return FORMATS.values()


def format_names() -> list[str]:
    return [f.name for f in formats()]


def get_format(name: str) -> DatasetFormat:
    """The registered format `name`; an unknown name is refused naming the known ones."""
    for fmt in formats():
        if fmt.name == name:
            return fmt
    problems = broken_formats()
    if name in problems:
        raise ConfigError(problems[name])
    raise ConfigError(f"unknown format {name!r}; known: {', '.join(format_names())}")


def input_paths(path: str | Path, fmt: str | None = None) -> list[Path]:
    """What reading the data at `path` reads: the path and the files its format reads there (a generic
    `turns.jsonl` given as the path reads `questions.jsonl` beside it), so no output overwrites either. A path no
    format reads is only itself (its loader then says why)."""
    path = Path(path)
    try:
        chosen = get_format(fmt) if fmt else detect_format(path)
        chosen.check_kind(path)
    except (DatasetError, ConfigError):
        return [path]
    return [path, *(chosen.reads(path) if chosen.reads else [])]


def detect_format(path: str | Path) -> DatasetFormat:
    """The first registered format whose `detect` accepts `path`; otherwise a one-line DatasetError that says
    what `path` holds and names every known format."""
    path = check_data_path(Path(path))
    for fmt in formats():
        if fmt.detect(path):
            return fmt
    expected = [f"{f.expects} ({f.name})" for f in formats()]
    failed = "".join(f"; not tried: {why}" for why in broken_formats().values())
    raise DatasetError(f"{path}: unknown format: expected {', '.join(expected[:-1])} or {expected[-1]}; "
                       f"got {_describe(path)}{failed}")


def _describe(path: Path) -> str:
    """What an undetected path holds, in a few words; a file that is neither JSON nor JSON Lines gets the
    parser's error (`longmemeval.read_json`: invalid JSON, not UTF-8, corrupt gzip)."""
    if path.is_dir():
        return f"a folder without .yaml/.yml files, {generic.TURNS} or {generic.QUESTIONS}"
    found = head(path)
    lines = [line for line in found[0].splitlines() if line.strip()] if found else []
    whole = lines[:2] if found and (found[1] or len(lines) > 2) else []  # lines not cut by the head
    try:
        records = [json.loads(line) for line in whole]
    except (ValueError, RecursionError):
        records = []
    if len(records) == 2 and all(isinstance(r, dict) for r in records):
        return f"JSON Lines with fields {sorted(records[0])[:8]}"
    data = longmemeval.read_json(path)
    first = data[0] if isinstance(data, list) and data else None
    return f"a list of records with fields {sorted(first)[:8]}" if isinstance(first, dict) else type(data).__name__


@dataclass
class Dataset(Sequence):
    """A loaded dataset: its cases (the dataset is a sequence of them), its format and its `warnings`
    (`DataWarning`s: the loader's, then the questions that are misses by construction), parsed once.
    `record()` is what run.json records of it."""

    path: Path
    format: DatasetFormat
    cases: list[Case]
    load_warnings: list[DataWarning] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.cases)

    def __getitem__(self, i):
        return self.cases[i]

    def __iter__(self) -> Iterator[Case]:
        return iter(self.cases)

    @property
    def warnings(self) -> list[DataWarning]:
        return self.load_warnings + case_warnings(self.cases, self.path)

    def select(self, cases: Sequence[Case]) -> Dataset:
        """The same dataset with only `cases` (a subset: `--limit`, `--per-type`), its loader's warnings about
        questions narrowed to theirs."""
        ids = {c.case_id for c in cases}
        return Dataset(self.path, self.format, list(cases),
                       [w for w in (w.only(ids) for w in self.load_warnings) if w is not None])

    @cached_property
    def checksum(self) -> str:
        return data_checksum(self.path, self.format.reads(self.path) if self.format.reads else None)

    @property
    def benchmark(self) -> str | None:
        """The paper's Table 1 benchmark these cases match (`DatasetFormat.paper_benchmark`), or None."""
        return self.format.paper_benchmark(self.cases) if self.format.paper_benchmark else None

    @property
    def name(self) -> str:
        """How tables name the dataset: the paper's benchmark, else the format's `title`."""
        return self.benchmark or self.format.title.format(name=self.path.name, stem=self.path.name.split(".")[0])

    def record(self) -> dict[str, Any]:
        """Path (absolute: a run folder read from elsewhere still finds it), format and checksum, as run.json
        records the data."""
        return {"path": str(Path(self.path).absolute()), "format": self.format.name, "sha256": self.checksum}


def load_cases(path: str | Path, fmt: str | None = None, limit: int | None = None) -> Dataset:
    """The dataset at `path`, detected by content (`fmt`: a registered format's name skips detection) and
    parsed once; the first `limit` questions when given."""
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise ConfigError(f"limit must be a whole number of questions >= 1 (or None: every question), got {limit!r}")
    path = check_data_path(Path(path))
    chosen = get_format(fmt) if fmt else detect_format(path)
    chosen.check_kind(path)
    loaded = chosen.load(path, limit)
    cases, found = loaded if isinstance(loaded, tuple) else (loaded, [])
    check_ids(cases, path)
    return Dataset(path, chosen, list(cases), list(found)).select(cases)  # warnings about questions: those loaded


def data_warnings(cases: Sequence[Case]) -> list[DataWarning]:
    """A Dataset's `warnings`; of plain cases, `case_warnings`."""
    return cases.warnings if isinstance(cases, Dataset) else case_warnings(cases)


def format_of(cases: Sequence[Case]) -> DatasetFormat | None:
    """A Dataset's format; of plain cases, the one registered format whose loader yields their class."""
    if isinstance(cases, Dataset):
        return cases.format
    kinds = {type(c) for c in cases}
    found = [f for f in formats() if kinds == {f.case_type}]
    return found[0] if len(found) == 1 else None


def resolve(ref: Any) -> Any:
    """A callable, or the object a "module:attribute" name refers to."""
    return load_attr(ref, "dataset format metrics") if isinstance(ref, str) else ref
