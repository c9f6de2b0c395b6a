"""The ``none`` extractor: interactions stored without tags."""

from __future__ import annotations

from taggraph.extractors.base import Extraction


class NoTagsExtractor:
    """Stores interactions without tags (a control: graph methods get no entry points)."""

    name = "none"
    cache_key = "none"

    def extract(self, user_text: str, assistant_text: str, existing_tags: list[str]) -> Extraction:
        return Extraction()
