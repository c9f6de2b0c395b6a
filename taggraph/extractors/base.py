"""The extractor interface, as the extractors room sees it.

`Extraction` and `Extractor` are defined in `taggraph.core.fivew`, below the store that
calls extractors; they are named here so extractor modules import from their own room.
"""

from taggraph.core.fivew import MAX_SUMMARY_CHARS, MAX_TAGS_PER_CATEGORY, Extraction, Extractor

__all__ = ["MAX_SUMMARY_CHARS", "MAX_TAGS_PER_CATEGORY", "Extraction", "Extractor"]
