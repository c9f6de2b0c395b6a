"""The ``openai:MODEL`` extractor: 5W+Extra tags from a model behind any OpenAI-compatible chat API."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import httpx

from taggraph._infra.model_clients import (
    GENERATION_TIMEOUT,
    OPENAI_DEFAULT_URL,
    blank_secrets,
    host_of,
    openai_client,
    parsed_json,
    read_bounded,
    shown,
)
from taggraph.errors import ConfigError
from taggraph.extractors.llm import HTTPStatusError, ServedExtractor, output_schema
from taggraph.extractors.prompt import MAX_PROMPT_TAGS


def _ok_json(status: int, body: bytes, redact: Callable[[str], str]):
    """The JSON of a reply's `body`, or HTTPStatusError with the server's own error message (blanked by
    `redact`, then cut to 300 characters)."""
    if status >= 400:
        text = body.decode("utf-8", "replace")
        try:
            error = parsed_json(body, redact).get("error", text)
            message = error.get("message", str(error)) if isinstance(error, dict) else str(error)
        except (ValueError, AttributeError):
            message = text
        message = shown(message, redact, 300) + (" (set OPENAI_API_KEY, or pass api_key)"
                                                  if status in (401, 403) else "")
        raise HTTPStatusError(status, message)
    return parsed_json(body, redact)


RESPONSE_FORMATS = ("json_schema", "json_object")


class OpenAIExtractor(ServedExtractor):
    """5W+Extra extraction by a model behind an OpenAI-compatible chat API (``openai:MODEL``): vLLM,
    llama.cpp's server, llama-cpp-python's server, LM Studio, Ollama's /v1, hosted APIs.

    host:    the API's base URL, e.g. http://127.0.0.1:8000/v1; default $OPENAI_BASE_URL,
             else https://api.openai.com/v1. The cache key leaves it out, as `ollama:` does:
             the same model on another server keeps its cache.
    api_key: sent as a bearer token; default $OPENAI_API_KEY, else none (local servers need none).
             Never part of the cache key or of a message.
    options: request fields sent with every request, default {"temperature": 0} (e.g. seed,
             max_tokens). ``response_format``: ``json_schema`` (default; the OpenAI standard,
             also vLLM, llama.cpp's server, LM Studio) or ``json_object`` (``{"type":
             "json_object", "schema": ...}``, what llama-cpp-python's server takes).
    max_items, max_tag_chars, max_summary_chars: bound the schema, as `GGUFExtractor` does, so a
             small grammar-constrained model closes its JSON within max_tokens (hosted strict
             mode may refuse such bounds; leave them None there).
    The rest as in `ServedExtractor`.
    """

    prefix, server = "openai", "OpenAI-compatible server"

    def __init__(self, model: str, host: str | None = None, api_key: str | None = None,
                 prompt_path: str | Path | None = None, options: dict | None = None,
                 timeout: float = GENERATION_TIMEOUT, retries: int = 3, backoff: float = 1.0,
                 concurrency: int = 4, cache: bool = True, max_tags: int = MAX_PROMPT_TAGS,
                 max_failures_in_a_row: int = 3, max_items: int | None = None, max_tag_chars: int | None = None,
                 max_summary_chars: int | None = None) -> None:
        options = {"response_format": RESPONSE_FORMATS[0], **(options or {})}
        if options["response_format"] not in RESPONSE_FORMATS:
            raise ConfigError(f"openai:{model}: response_format must be one of {', '.join(RESPONSE_FORMATS)}, "
                              f"got {options['response_format']!r}")
        self.api_key = api_key or os.environ.get("OPENAI_API_KEY") or None
        if self.api_key is not None and (not self.api_key.isprintable() or any(c.isspace() for c in self.api_key)
                                         or not self.api_key.isascii()):  # an HTTP header holds ASCII only
            raise ConfigError(f"openai:{model}: the API key (OPENAI_API_KEY or api_key) holds a space, newline, "
                              f"other control character or a non-ASCII character, so no server would take it; it is "
                              f"not shown here")
        super().__init__(model, host or os.environ.get("OPENAI_BASE_URL") or OPENAI_DEFAULT_URL, prompt_path,
                         options, timeout, retries, backoff, concurrency, cache, max_tags, max_failures_in_a_row)
        # Strict structured output (OpenAI's rule): every object closed to other keys.
        self.schema = {**output_schema(max_items, max_tag_chars, max_summary_chars), "additionalProperties": False}

    def _client(self, timeout: float) -> httpx.Client:
        # Plain httpx, not the `openai` package: one POST and one GET, and our own retries and
        # circuit breaker must see every failure (the package retries on its own and adds a dependency).
        return openai_client(self.host, self.api_key, timeout)

    def _models(self, client: httpx.Client) -> set[str]:
        response = client.get("models")
        return {str(m["id"]) for m in _ok_json(response.status_code, response.content, self.redact)["data"]}

    def redact(self, text: str) -> str:
        return blank_secrets(text, host_of(self.client), self.api_key)

    def _pull_hint(self) -> str:
        return "use one of its model ids (llama.cpp servers take --model_alias)"

    def _response_format(self) -> dict:
        if self.options["response_format"] == "json_object":
            return {"type": "json_object", "schema": self.schema}
        return {"type": "json_schema", "json_schema": {"name": "taggraph_5w_extra", "strict": True,
                                                       "schema": self.schema}}

    def _request(self, prompt: str, deadline: float) -> str:
        body = {**self.options, "model": self.model, "messages": [{"role": "user", "content": prompt}],
                "response_format": self._response_format(), "stream": False}
        try:
            with self.client.stream("POST", "chat/completions", json=body) as response:
                data = read_bounded(response, deadline)
            reply = _ok_json(response.status_code, data, self.redact)
        except HTTPStatusError as exc:
            if exc.status_code in (400, 422) and "response_format" in str(exc) \
                    and self.options["response_format"] == "json_schema":
                raise HTTPStatusError(exc.status_code, f"{exc.message} (this server may want the option "
                                       "response_format=json_object)") from None
            raise
        try:
            return reply["choices"][0]["message"]["content"] or ""
        except (KeyError, IndexError, TypeError):
            raise ValueError(f"the reply is not a chat completion: {shown(json.dumps(reply), self.redact)}") \
                from None
