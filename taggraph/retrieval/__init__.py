"""Retrieval methods over a MemoryStore: one module per method, one registry (`registry.py`),
the store-wide shared indexes (`index.py`)."""

from taggraph.retrieval.base import DEFAULT_DEPTH, Explanation, Result, Retriever
from taggraph.retrieval.registry import (ABLATIONS, ALL_METHODS, DENSE_METHODS, METHODS, PAPER_METHODS,
                                         check_methods, make_retriever)

__all__ = ["ABLATIONS", "ALL_METHODS", "DEFAULT_DEPTH", "DENSE_METHODS", "Explanation", "METHODS", "PAPER_METHODS",
           "Result", "Retriever", "check_methods", "make_retriever"]
