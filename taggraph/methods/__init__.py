"""Retrieval methods over a MemoryStore: the method contract (`base.py`) and its parameter checks (`params.py`),
one module per method, one registry (`registry.py`), the store-wide shared indexes (`index.py`)."""

from taggraph.methods.base import DEFAULT_DEPTH, Evidence, Explanation, Result, Retriever, check_k
from taggraph.methods.scores import Scores
from taggraph.methods.params import DEVICE, EMBEDDER, Component
from taggraph.methods.signals import Contrast, Rival, Signal
from taggraph.methods.registry import (DEFAULT_METHODS, PAPER_METHODS, Method, ablations_of, build_retrievers, check_methods,
                                         check_params, embeds, make_retriever, method, method_names, register_method,
                                         registered_methods)

__all__ = ["Contrast", "Rival", "Signal"]  # a method's score in parts, and a note beside those above it
__all__ += ["DEFAULT_DEPTH", "DEVICE", "EMBEDDER", "Component", "Evidence", "Explanation", "Method", "DEFAULT_METHODS", "PAPER_METHODS",
           "Result", "Retriever", "Scores", "ablations_of", "build_retrievers", "check_k", "check_methods", "check_params",
           "embeds", "make_retriever", "method", "method_names", "register_method", "registered_methods"]
