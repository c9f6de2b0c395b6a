"""Extractors by name: ``offline`` (default, spaCy, no network), ``offline-v2`` (``offline`` with a
WordNet-typed ontology), ``none`` (no tags),
``ollama:MODEL`` (LLM through an Ollama server), ``gguf:PATH`` (local llama.cpp model).
"""

from __future__ import annotations

from taggraph.config import DEFAULT_EXTRACTOR
from taggraph.errors import ConfigError
from taggraph.extraction.base import Extraction, Extractor


class NoTagsExtractor:
    """Stores interactions without tags (a control: graph methods get no entry points)."""

    name = "none"
    cache_key = "none"

    def extract(self, user_text: str, assistant_text: str, existing_tags: list[str]) -> Extraction:
        return Extraction()


def get_extractor(name: str = DEFAULT_EXTRACTOR, **options) -> Extractor:
    if name == "offline":
        from taggraph.extraction.offline import OfflineExtractor
        return OfflineExtractor(**options)
    if name == "offline-v2":
        from taggraph.extraction.offline_v2 import OfflineV2Extractor
        return OfflineV2Extractor(**options)
    if name == "none":
        return NoTagsExtractor()
    if name.startswith("ollama:"):
        from taggraph.extraction.llm import OllamaExtractor
        return OllamaExtractor(model=name.split(":", 1)[1], **options)
    if name.startswith("gguf:"):
        from taggraph.extraction.llm import GGUFExtractor
        return GGUFExtractor(model_path=name.split(":", 1)[1], **options)
    raise ConfigError(f"unknown extractor {name!r}: use offline, offline-v2, none, ollama:MODEL or gguf:PATH")


__all__ = ["Extraction", "Extractor", "NoTagsExtractor", "get_extractor"]
