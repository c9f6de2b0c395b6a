"""One registry of retrieval methods by the names the paper uses.

``make_retriever(name, store)`` builds any of them over a MemoryStore; extra
keyword arguments override the registered parameters (ablations, depth sweeps).
"""

from __future__ import annotations

from typing import Any, Callable

from taggraph.retrieval.base import DEFAULT_DEPTH, Explanation, Result, Retriever
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


def _fusion(name: str, **defaults):
    def build(store, **kw):
        from taggraph.retrieval.fusion import TagGraphFusion
        return TagGraphFusion(store, name=name, **{**defaults, **kw})
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
# Ablation variants of AdaptiveGraph (paper, appendix F): one component removed each.
ABLATIONS: dict[str, Callable[..., Retriever]] = {
    "AdaptiveGraph-noDiffusion": _adaptive("AdaptiveGraph-noDiffusion", iterations=0),
    "AdaptiveGraph-noChronological": _adaptive("AdaptiveGraph-noChronological", chronological=False),
    "AdaptiveGraph-noFileSeeding": _adaptive("AdaptiveGraph-noFileSeeding", file_seeding=False),
}
# Beyond the paper (issue 14): TagGraph-Fusion and its ablations, one component switched off each.
FUSION_METHODS: dict[str, Callable[..., Retriever]] = {
    "TagGraph-Fusion": _fusion("TagGraph-Fusion"),
    **{f"TagGraph-Fusion-no{part}": _fusion(f"TagGraph-Fusion-no{part}", **{switch: False})
       for part, switch in (("Graph", "graph"), ("Dense", "dense"), ("Raw", "raw_turns"),
                            ("Session", "session"), ("Time", "time"))},
}
PAPER_METHODS = list(METHODS)
ALL_METHODS = {**METHODS, **ABLATIONS, **FUSION_METHODS}


def make_retriever(name: str, store: MemoryStore, **params: Any) -> Retriever:
    try:
        build = ALL_METHODS[name]
    except KeyError:
        raise KeyError(f"unknown method {name!r}; known: {', '.join(ALL_METHODS)}") from None
    return build(store, **params)


__all__ = ["ALL_METHODS", "ABLATIONS", "DEFAULT_DEPTH", "DENSE_METHODS", "Explanation", "FUSION_METHODS", "METHODS", "PAPER_METHODS",
           "Result", "Retriever", "make_retriever"]
