"""The ``ollama:MODEL`` extractor: 5W+Extra tags from a model an Ollama server serves."""

from __future__ import annotations

import os
from pathlib import Path

import ollama

from taggraph._infra.model_clients import (
    GENERATION_TIMEOUT,
    chat_content,
    ollama_client,
    ollama_post,
)
from taggraph.extractors.llm import ServedExtractor
from taggraph.extractors.prompt import MAX_PROMPT_TAGS


class OllamaExtractor(ServedExtractor):
    """5W+Extra extraction by a model served by Ollama (``ollama:MODEL``).

    host: default $OLLAMA_HOST, else the client's default (localhost:11434). options are
    Ollama model options; add e.g. {"num_ctx": 8192} when prompts with large ontologies get
    truncated. The rest as in `ServedExtractor`.
    """

    prefix, server = "ollama", "Ollama server"

    def __init__(self, model: str, host: str | None = None, prompt_path: str | Path | None = None,
                 options: dict | None = None, timeout: float = GENERATION_TIMEOUT, retries: int = 3,
                 backoff: float = 1.0, concurrency: int = 4, cache: bool = True,
                 max_tags: int = MAX_PROMPT_TAGS, max_failures_in_a_row: int = 3) -> None:
        super().__init__(model, host or os.environ.get("OLLAMA_HOST"), prompt_path, options, timeout, retries,
                         backoff, concurrency, cache, max_tags, max_failures_in_a_row)

    def _client(self, timeout: float) -> ollama.Client:
        return ollama_client(self.host, timeout)

    def _models(self, client: ollama.Client) -> set[str]:
        return {m.model for m in client.list().models}

    def _has(self, names: set[str]) -> bool:
        return self.model in names or f"{self.model}:latest" in names

    def _pull_hint(self) -> str:
        return f"run `ollama pull {self.model}`"

    def _request(self, prompt: str, deadline: float) -> str:
        body = {"model": self.model, "messages": [{"role": "user", "content": prompt}], "stream": False,
                "format": self.schema, "options": self.options}
        return chat_content(ollama_post(self.client, "/api/chat", body, deadline, self.redact))
