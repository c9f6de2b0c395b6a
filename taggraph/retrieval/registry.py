"""The one registry of retrieval methods, by the names the paper uses.

``make_retriever(name, store)`` builds any of them over a MemoryStore; extra
keyword arguments override the registered parameters (ablations, depth sweeps).
Method names are validated here and nowhere else (`check_methods`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Callable

from taggraph.errors import ConfigError
from taggraph.retrieval.base import Retriever
from taggraph.store import MemoryStore


def _bm25(store, **kw):
    from taggraph.retrieval.bm25 import BM25
    return BM25(store, **kw)


def _taggraph(name: str, **defaults):
    def build(store, **kw):
        from taggraph.retrieval.taggraph import TagGraph
        return TagGraph(store, name=name, **{**defaults, **kw})
    return build


def _adaptive(name: str, **defaults):
    def build(store, **kw):
        from taggraph.retrieval.adaptive import AdaptiveGraph
        return AdaptiveGraph(store, name=name, **{**defaults, **kw})
    return build


def _openclaw(name: str, **defaults):
    def build(store, **kw):
        from taggraph.retrieval.openclaw import OpenClaw
        return OpenClaw(store, name=name, **{**defaults, **kw})
    return build


# The dense + keyword hybrids with their registered parameters: the methods that take `embedder`.
DENSE_METHODS: dict[str, dict[str, Any]] = {"OpenClaw": {"source": "raw"}, "OC-notes": {"source": "notes"}}
METHODS: dict[str, Callable[..., Retriever]] = {
    "BM25": _bm25,
    "TagGraph-Basic": _taggraph("TagGraph-Basic"),
    "TagGraph-Stopwords": _taggraph("TagGraph-Stopwords", stopwords=True),
    "TagGraph-TFIDF": _taggraph("TagGraph-TFIDF", stopwords=True, tfidf=True),
    "AdaptiveGraph": _adaptive("AdaptiveGraph"),
    **{name: _openclaw(name, **params) for name, params in DENSE_METHODS.items()},
}
# Ablation variants of AdaptiveGraph (paper, appendix F): one component removed each, and the
# pair the distractor sweep needs (section 6.1: diffusion's value without file seeding).
ABLATIONS: dict[str, Callable[..., Retriever]] = {
    "AdaptiveGraph-noDiffusion": _adaptive("AdaptiveGraph-noDiffusion", iterations=0),
    "AdaptiveGraph-noChronological": _adaptive("AdaptiveGraph-noChronological", chronological=False),
    "AdaptiveGraph-noFileSeeding": _adaptive("AdaptiveGraph-noFileSeeding", file_seeding=False),
    "AdaptiveGraph-noFileSeeding-noDiffusion": _adaptive("AdaptiveGraph-noFileSeeding-noDiffusion",
                                                         file_seeding=False, iterations=0),
}
PAPER_METHODS = list(METHODS)
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


def make_retriever(name: str, store: MemoryStore, **params: Any) -> Retriever:
    """The registered method `name` over `store`; `params` override its registered settings."""
    check_methods([name])
    try:
        return ALL_METHODS[name](store, **params)
    except TypeError as exc:  # an unknown keyword: name it with the method
        if "unexpected keyword" not in str(exc):
            raise
        raise ConfigError(f"method {name!r}: {exc}") from None
