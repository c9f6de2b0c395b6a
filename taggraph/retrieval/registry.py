"""The one registry of retrieval methods, by the names the paper uses.

``make_retriever(name, store)`` builds any of them over a MemoryStore; extra
keyword arguments override the registered parameters (ablations, depth sweeps).
Method names are validated here and nowhere else (`check_methods`).
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from taggraph.errors import ConfigError
from taggraph.retrieval.base import Retriever
from taggraph.store import MemoryStore


@dataclass(frozen=True)
class Entry:
    """A registered method: its class (``module:Class``, imported on first use) and fixed settings."""

    target: str
    defaults: dict[str, Any] = field(default_factory=dict)

    def cls(self) -> type[Retriever]:
        module, _, name = self.target.partition(":")
        return getattr(importlib.import_module(module), name)

    def __call__(self, store: MemoryStore, name: str, **params: Any) -> Retriever:
        return self.cls()(store, name=name, **{**self.defaults, **params})


def _bm25(**defaults) -> Entry:
    return Entry("taggraph.retrieval.bm25:BM25", defaults)


def _taggraph(**defaults) -> Entry:
    return Entry("taggraph.retrieval.taggraph:TagGraph", defaults)


def _adaptive(**defaults) -> Entry:
    return Entry("taggraph.retrieval.adaptive:AdaptiveGraph", defaults)


def _openclaw(**defaults) -> Entry:
    return Entry("taggraph.retrieval.openclaw:OpenClaw", defaults)


def _fusion(**defaults) -> Entry:
    return Entry("taggraph.retrieval.fusion:TagGraphFusion", defaults)


# The dense + keyword hybrids with their registered parameters: the methods that take `embedder`.
DENSE_METHODS: dict[str, dict[str, Any]] = {"OpenClaw": {"source": "raw"}, "OC-notes": {"source": "notes"}}
METHODS: dict[str, Entry] = {
    "BM25": _bm25(),
    "TagGraph-Basic": _taggraph(),
    "TagGraph-Stopwords": _taggraph(stopwords=True),
    "TagGraph-TFIDF": _taggraph(stopwords=True, tfidf=True),
    "AdaptiveGraph": _adaptive(),
    **{name: _openclaw(**params) for name, params in DENSE_METHODS.items()},
    "TagGraph-Fusion": _fusion(),  # beyond the paper (issue 14)
}
PAPER_METHODS = ["BM25", "TagGraph-Basic", "TagGraph-Stopwords", "TagGraph-TFIDF", "AdaptiveGraph", *DENSE_METHODS]
# Ablation variants of AdaptiveGraph (paper, appendix F): one component removed each, and the
# pair the distractor sweep needs (section 6.1: diffusion's value without file seeding).
ABLATIONS: dict[str, Entry] = {
    "AdaptiveGraph-noDiffusion": _adaptive(iterations=0),
    "AdaptiveGraph-noChronological": _adaptive(chronological=False),
    "AdaptiveGraph-noFileSeeding": _adaptive(file_seeding=False),
    "AdaptiveGraph-noFileSeeding-noDiffusion": _adaptive(file_seeding=False, iterations=0),
    # beyond the paper (issue 13): no sibling expansion through top-level ontology nodes
    "TagGraph-TFIDF-boundTopLevel": _taggraph(stopwords=True, tfidf=True, bound_top_level=True),
    # TagGraph-Fusion with one component switched off each (issue 14)
    **{f"TagGraph-Fusion-no{part}": _fusion(**{switch: False})
       for part, switch in (("Graph", "graph"), ("Dense", "dense"), ("Raw", "raw_turns"),
                            ("Session", "session"), ("Time", "time"), ("Requests", "requests"))},
}
ALL_METHODS = {**METHODS, **ABLATIONS}


def check_methods(names: Iterable[str]) -> list[str]:
    """`names` as a list; ConfigError naming the unknown ones and the known ones."""
    names = list(names)
    unknown = [m for m in names if m not in ALL_METHODS]
    if unknown:
        raise ConfigError(f"unknown method(s) {unknown}; known: {', '.join(ALL_METHODS)}")
    if not names:
        raise ConfigError(f"no method given; known: {', '.join(ALL_METHODS)}")
    return names


def embeds(name: str) -> bool:
    """Whether method `name`, as registered, runs a sentence embedder (so needs sentence-transformers):
    the dense hybrids, and TagGraph-Fusion unless its dense part is off."""
    entry = ALL_METHODS[name]
    return "embedder" in inspect.signature(entry.cls().__init__).parameters and entry.defaults.get("dense", True)


def ablations_of(method: str) -> list[str]:
    """The registered ablations of `method` that switch off one component: ``<method>-no<Part>``."""
    prefix = f"{method}-no"
    return [name for name in ABLATIONS if name.startswith(prefix) and "-no" not in name[len(prefix):]]


def check_params(name: str, params: dict[str, Any]) -> dict[str, Any]:
    """`params` if method `name` takes each of them with a value of its default's type; ConfigError otherwise.

    Only command-line kinds of values (bool, int, float, str) are checked; a default of None
    accepts anything; an int is accepted where the default is a float.
    """
    check_methods([name])
    signature = inspect.signature(ALL_METHODS[name].cls().__init__)
    allowed = {k: p.default for k, p in signature.parameters.items() if k not in ("self", "store", "name")}
    for key, value in params.items():
        if key not in allowed:
            raise ConfigError(f"method {name!r} has no parameter {key!r}; its parameters: {', '.join(allowed)}")
        default = allowed[key]
        if default is inspect.Parameter.empty or default is None or value is None \
                or not isinstance(value, (bool, int, float, str)):  # objects (an Embedder) are the caller's
            continue
        ok = isinstance(value, type(default)) if isinstance(default, (bool, str)) else \
            isinstance(value, (int, float)) and not isinstance(value, bool) and \
            (isinstance(default, float) or isinstance(value, int))
        if not ok:
            raise ConfigError(f"method {name!r}: parameter {key!r} must be {type(default).__name__} "
                              f"like its default {default!r}, got {value!r}")
    return params


def make_retriever(name: str, store: MemoryStore, **params: Any) -> Retriever:
    """The registered method `name` over `store`; `params` override its registered settings."""
    return ALL_METHODS[name](store, name, **check_params(name, params))
