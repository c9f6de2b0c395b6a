"""Extractors by name or as objects (`get_extractor`; the forms are in `taggraph.extractors.registry`):
``offline-v2`` (default: spaCy rules with a WordNet-typed ontology), ``offline`` (the first version),
``none`` (no tags), ``ollama:MODEL`` (an Ollama server), ``openai:MODEL`` (any OpenAI-compatible
server), ``gguf:PATH`` (a local llama.cpp model), ``package.module:Class``, names from
`register_extractor` or the entry-point group ``taggraph.extractors``, or any `Extractor` object.
"""

from __future__ import annotations

from taggraph.extractors.base import Extraction, Extractor
from taggraph.extractors.no_tags import NoTagsExtractor
from taggraph.extractors.registry import (EXTRACTORS, check_portable, extractor_spec, get_extractor, rebuild_extractor,
                                          register_extractor)

__all__ = ["EXTRACTORS", "Extraction", "Extractor", "NoTagsExtractor", "check_portable", "extractor_spec", "get_extractor",
           "rebuild_extractor", "register_extractor"]
