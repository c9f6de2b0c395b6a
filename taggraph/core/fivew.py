"""The 5W+Extra record an extractor returns, and the extractor interface (paper, appendix B).

It sits below the store: `MemoryStore.remember` asks any `Extractor` for an
`Extraction` and turns it into a note's tags, without knowing which extractor it is.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from pydantic import BaseModel, Field

from taggraph.core.notes import CATEGORIES, Tags
from taggraph.core.ontology import normalize_tag

MAX_TAGS_PER_CATEGORY = 12
MAX_SUMMARY_CHARS = 300


class Extraction(BaseModel):
    """5W+Extra tags for one interaction (paper, appendix B schema)."""

    who: list[str] = Field(default_factory=list)
    what: list[str] = Field(default_factory=list)
    when: list[str] = Field(default_factory=list)
    where: list[str] = Field(default_factory=list)
    why: list[str] = Field(default_factory=list)
    extra: list[str] = Field(default_factory=list)
    summary: str = ""
    error: str | None = None  # set when extraction failed and the note was stored untagged

    def tags(self) -> Tags:
        """Normalized, de-duplicated paths per category, capped at MAX_TAGS_PER_CATEGORY."""
        out: Tags = {}
        for c in CATEGORIES:
            seen: dict[str, None] = {}
            for value in getattr(self, c):
                path = normalize_tag(value)
                if path is not None:
                    seen[path] = None
            out[c] = tuple(list(seen)[:MAX_TAGS_PER_CATEGORY])
        return out


@runtime_checkable
class Extractor(Protocol):
    """Every extractor (offline, Ollama, OpenAI-compatible, GGUF, yours) has a stable `name` (recorded in
    manifests and runs), a `cache_key` that changes whenever its output could change, and `extract`.

    Any object with these goes wherever an extractor name does (`taggraph.extractors.get_extractor`).
    Give yours a `name` that builds it again (``"package.module:Class"``, or a name registered with
    `register_extractor` or in the entry-point group ``taggraph.extractors``), so a saved store reloads
    with it by name. Optional, on the class: ``served = True`` (a server generates: it takes ``timeout``
    and ``options``; ``check()`` and ``close()`` are called when present), ``reads_prompt = True`` (it
    takes ``prompt_path``); the CLI reads these, never the name."""

    name: str

    @property
    def cache_key(self) -> str: ...

    def extract(self, user_text: str, assistant_text: str, existing_tags: list[str]) -> Extraction: ...
