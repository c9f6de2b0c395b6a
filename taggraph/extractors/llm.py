"""LLM extractors: a model behind an Ollama server (``ollama:MODEL``), behind any OpenAI-compatible
server (``openai:MODEL``: vLLM, llama.cpp's server, LM Studio, hosted APIs), or a local GGUF file via
llama.cpp (``gguf:PATH``).

All render the same prompt (`taggraph.extractors.prompt`), ask for JSON that
follows `LLMOutput` at temperature 0, clean the reply with `parse_and_repair`
and cache the raw reply on disk in ``cache_dir()/extractions`` (`taggraph._infra.cache`) under
sha256(cache_key, rendered prompt). The rendered prompt holds the interaction
and the ontology tags shown, so a rerun with the same inputs sends no request
and an interrupted run resumes where it stopped. Only usable replies are cached
(JSON objects with at least one of the schema's keys): a failed request or an
unusable reply (null, empty, a number, an object without those keys) is asked
again on the next run, and one found in an older cache is asked again too.
Identical prompts in flight at once (concurrent workers) are requested once and
every caller gets that one reply.

A served model's `timeout` is a total deadline per request (connect, send,
wait and read together): a server that trickles its reply fails when the
deadline passes. A reply body over `taggraph._infra.model_clients.MAX_REPLY_BYTES` is refused
as it arrives, before anything parses or caches it.

A failed request does not raise: after the retries, `extract` returns an
Extraction with `error` set and no tags, and the store keeps the note untagged.
After `max_failures_in_a_row` failed requests in a row the server is taken for
down and `extract` raises ServerError naming the host (a circuit breaker), so an
outage costs a few requests, not one timeout per note. Configuration mistakes
(unknown model, missing package or file) are caught up front by
the served extractors' `check()` and the GGUFExtractor constructor. Every extractor
pickles (connections, caches and locks are opened again on the other side), so an
object can go to `run_bench(..., workers=2)`'s worker processes.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from pathlib import Path

import httpx
import ollama
from pydantic import BaseModel

from taggraph._infra.cache import open_cache
from taggraph._infra.config import cache_dir
from taggraph._infra.model_clients import (
    CHECK_TIMEOUT,
    before_deadline,
    blank_secrets,
    check_timeout,
    host_of,
    shown,
)
from taggraph.core.notes import CATEGORIES
from taggraph.errors import ConfigError, ServerError
from taggraph.extractors.base import Extraction
from taggraph.extractors.prompt import load_prompt, render, version_of
from taggraph.extractors.validate import parse_and_repair


class LLMOutput(BaseModel):
    """The reply a model must produce; its JSON schema is sent as the output format."""

    who: list[str]
    what: list[str]
    when: list[str]
    where: list[str]
    why: list[str]
    extra: list[str]
    summary: str


def output_schema(max_items: int | None = None, max_tag_chars: int | None = None,
                  max_summary_chars: int | None = None) -> dict:
    """JSON schema of LLMOutput, optionally bounded so a grammar-constrained small model stops."""
    schema = LLMOutput.model_json_schema()
    props = schema["properties"]
    for c in CATEGORIES:
        if max_items is not None:
            props[c]["maxItems"] = max_items
        if max_tag_chars is not None:
            props[c]["items"]["maxLength"] = max_tag_chars
    if max_summary_chars is not None:
        props["summary"]["maxLength"] = max_summary_chars
    return schema


class GenerationError(RuntimeError):
    """A model call failed for good; its message becomes `Extraction.error`."""


class CachedLLMExtractor:
    """Prompt, cache, validation and counters shared by the LLM extractors.

    `stats` counts, per instance: calls (`extract` calls), cache_hits, shared (calls
    served by an identical request already in flight), requests (model calls actually
    made, retries included), retries, failures (results with `error` set) and repaired
    (results whose reply needed `parse_and_repair` fixes); `repairs` counts each kind
    of fix, numbers masked ("what: normalized N tag(s)").
    """

    name: str
    reads_prompt = True  # takes prompt_path (the CLI's --prompt)
    concurrency: int = 1
    max_failures_in_a_row: int | None = None  # None: never stop (a local model has no outage)
    _runtime: tuple[str, ...] = ("_cache", "_stats_lock", "_in_flight")  # rebuilt by `_open`, never pickled

    def __init__(self, prompt_path: str | Path | None, cache: bool, max_tags: int) -> None:
        self.prompt = load_prompt(prompt_path)
        self.max_tags = max_tags
        self.use_cache = cache
        self.stats: Counter[str] = Counter()
        self.repairs: Counter[str] = Counter()
        self._failures_in_a_row = 0
        self._open()

    def _open(self) -> None:
        """The state that cannot be pickled: the disk cache, the lock, the requests in flight."""
        self._cache = open_cache(cache_dir() / "extractions") if self.use_cache else None
        self._stats_lock = threading.Lock()  # guards stats, the requests in flight and the failure count
        self._in_flight: dict[str, Future] = {}

    def __getstate__(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if k not in self._runtime}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._open()

    @property
    def cache_key(self) -> str:
        raise NotImplementedError

    def _generate(self, prompt: str) -> str:
        raise NotImplementedError

    def _count(self, repairs: Sequence[str] = (), **counts: int) -> None:
        with self._stats_lock:
            self.stats.update(counts)
            self.repairs.update(re.sub(r"\d+", "N", note) for note in repairs)

    def where(self) -> str:
        """The model's location, for messages."""
        return self.name

    def extract(self, user_text: str, assistant_text: str, existing_tags: Sequence[str]) -> Extraction:
        prompt = render(self.prompt.template, user_text, assistant_text, existing_tags, self.max_tags)
        key = hashlib.sha256(json.dumps([self.cache_key, prompt]).encode()).hexdigest()
        self._count(calls=1)
        try:
            extraction, repairs = self._reply(key, prompt)
        except GenerationError as exc:
            self._count(failures=1)
            return Extraction(error=f"{self.name}: {exc}")
        self._count(repairs, repaired=bool(repairs), failures=extraction.error is not None)
        return extraction

    def _reply(self, key: str, prompt: str) -> tuple[Extraction, list[str]]:
        """The parsed reply to `prompt` (`parse_and_repair`): from the cache, from an identical request in
        flight, else asked once; cached only when usable (a cached unusable reply is asked again)."""
        with self._stats_lock:
            future = self._in_flight.get(key)
            owner = future is None
            if owner:
                future = self._in_flight[key] = Future()
        if not owner:
            self._count(shared=1)
            return future.result()
        try:
            # looked up after claiming the key, so a reply cached meanwhile is never asked again
            raw = self._cache.get(key) if self._cache is not None else None
            parsed = parse_and_repair(raw) if isinstance(raw, str) else None
            usable = parsed is not None and parsed[0].error is None
            self._count(cache_hits=usable)
            if not usable:
                raw = self._generate_or_trip(prompt)
                parsed = parse_and_repair(raw)
                if self._cache is not None and parsed[0].error is None:
                    self._cache.set(key, raw)
            future.set_result(parsed)
            return parsed
        except BaseException as exc:
            future.set_exception(exc)
            raise
        finally:
            with self._stats_lock:
                del self._in_flight[key]

    def _generate_or_trip(self, prompt: str) -> str:
        """`_generate`, counting failures in a row; raises ServerError once they reach the limit."""
        try:
            raw = self._generate(prompt)
        except GenerationError as exc:
            with self._stats_lock:
                self._failures_in_a_row += 1
                tripped = self.max_failures_in_a_row is not None and self._failures_in_a_row >= self.max_failures_in_a_row
            if tripped:
                raise ServerError(f"{self.where()}: {self._failures_in_a_row} requests in a row failed, stopping "
                                  f"(last: {exc})") from None
            raise
        with self._stats_lock:
            self._failures_in_a_row = 0
        return raw


class ServedExtractor(CachedLLMExtractor):
    """An LLM behind an HTTP server (``PREFIX:MODEL``): retries, the circuit breaker, the up-front `check`.

    host:        the server's URL (each subclass says its default)
    options:     sent with every request, default {"temperature": 0}
    timeout:     seconds per generation request (`check` uses CHECK_TIMEOUT)
    retries:     extra attempts after a connection error, timeout, HTTP 408/429 or 5xx,
                 waiting backoff * 2**attempt seconds in between; other errors fail at once
    concurrency: cases `extract_to_stores` runs at once by default (match the server's
                 parallel slots, e.g. OLLAMA_NUM_PARALLEL)
    max_failures_in_a_row: failed requests (after their retries) in a row that stop the
                 run with ServerError
    """

    prefix: str  # "ollama", "openai": the name is PREFIX:MODEL
    server: str  # the kind of server, for messages
    served = True  # takes timeout and options (the CLI's --timeout, --option); `check` and `close` it
    _runtime = (*CachedLLMExtractor._runtime, "client")

    def __init__(self, model: str, host: str | None, prompt_path: str | Path | None, options: dict | None,
                 timeout: float, retries: int, backoff: float, concurrency: int, cache: bool, max_tags: int,
                 max_failures_in_a_row: int) -> None:
        self.model, self.name, self.host = model, f"{self.prefix}:{model}", host
        self.timeout = check_timeout(timeout, self.name)
        self.options = {"temperature": 0, **(options or {})}
        for option, value in self.options.items():
            if not _finite(value):
                raise ConfigError(f"{self.name}: option {option}={value!r} is not a finite number; a server "
                                  f"would read it as null or refuse it (e.g. {option}=0.2)")
        self.retries, self.backoff, self.concurrency = retries, backoff, concurrency
        self.max_failures_in_a_row = max_failures_in_a_row
        self.schema = output_schema()
        super().__init__(prompt_path, cache, max_tags)

    def _open(self) -> None:
        super()._open()
        self.client = self._client(self.timeout)

    def _client(self, timeout: float):
        """A client for `host` with `timeout` seconds per request."""
        raise NotImplementedError

    def _models(self, client) -> set[str]:
        """The model names `client`'s server offers."""
        raise NotImplementedError

    def _request(self, prompt: str, deadline: float) -> str:
        """One chat request for `prompt`, read until the monotonic `deadline` (`read_bounded`); returns the
        reply's content."""
        raise NotImplementedError

    def _retryable(self, exc: Exception) -> bool:
        """Whether a failed request is worth another attempt (HTTP 408/429/5xx, a lost connection)."""
        status = getattr(exc, "status_code", None)
        if status is not None:
            return status >= 500 or status in (408, 429)
        return isinstance(exc, (ConnectionError, httpx.TransportError))

    def _has(self, names: set[str]) -> bool:
        return self.model in names

    def _pull_hint(self) -> str:
        """The fix for a model the server does not have."""
        return "use one of its models"

    @property
    def cache_key(self) -> str:
        options = json.dumps(self.options, sort_keys=True)
        return f"{self.name}|prompt={self.prompt.version}|options={options}|schema={version_of(json.dumps(self.schema))}"

    def close(self) -> None:
        """Close the HTTP connection pool (the extractor is unusable afterwards)."""
        self.client.close()

    def where(self) -> str:
        return self.redact(f"{self.name} at {host_of(self.client)}")

    def redact(self, text: str) -> str:
        """`text` with any secret the extractor holds blanked out (an error line may quote a request): the
        password of a host URL such as http://user:PASSWORD@host."""
        return blank_secrets(text, host_of(self.client))

    def check(self) -> None:
        """Raise ServerError unless the server answers within CHECK_TIMEOUT and has the model
        (call before a long run)."""
        where = host_of(self.client)
        try:
            with self._client(CHECK_TIMEOUT) as client:
                names = before_deadline(lambda deadline: self._models(client), CHECK_TIMEOUT, f"{self.name} check")
        except (ConnectionError, httpx.HTTPError, ollama.ResponseError, HTTPStatusError, ValueError,
                KeyError, TypeError, ServerError) as exc:  # ValueError...: a 200 reply that is not a model list
            raise ServerError(self.redact(f"{self.server} at {where} is not usable: {exc}")) from None
        if not self._has(names):
            raise ServerError(self.redact(f"model {self.model!r} is not on {where} "
                                          f"(has: {_listing(names, self.redact)}); {self._pull_hint()}"))

    def _generate(self, prompt: str) -> str:
        attempt = 0
        while True:
            self._count(requests=1, retries=attempt > 0)
            try:
                return before_deadline(lambda deadline: self._request(prompt, deadline), self.timeout,
                                       f"{self.name} request")
            except (ollama.ResponseError, HTTPStatusError, ConnectionError, httpx.HTTPError, ValueError) as exc:
                # ValueError: a 200 reply that is not a chat response (proxy page, garbage)
                if not self._retryable(exc):
                    raise GenerationError(self.redact(str(exc) or type(exc).__name__)) from None
                if attempt == self.retries:
                    raise GenerationError(self.redact(f"{exc} (gave up after {attempt + 1} attempts)")) from None
            except ServerError as exc:  # a 200 reply that is not JSON (server.py's hook)
                raise ServerError(self.redact(str(exc))) from None
            time.sleep(self.backoff * 2**attempt)
            attempt += 1


class HTTPStatusError(Exception):
    """An error reply (HTTP status >= 400) of an OpenAI-compatible server, with the server's message."""

    def __init__(self, status_code: int, message: str) -> None:
        super().__init__(f"HTTP {status_code}: {message}")
        self.status_code, self.message = status_code, message


def _finite(value: object) -> bool:
    """False when `value` is, or holds, a float that is NaN or infinite (JSON has no such number)."""
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, dict):
        return all(_finite(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return all(_finite(v) for v in value)
    return True


LISTED_MODELS = 10  # model names an error line shows at most


def _listing(names: set[str], redact: Callable[[str], str]) -> str:
    """The first LISTED_MODELS of a server's model names for an error line, each blanked by `redact` and
    shortened, and how many more."""
    cut = (shown(n, redact, 60) for n in sorted(names)[:LISTED_MODELS])
    short = (n if n.isprintable() else repr(n) for n in cut)
    listed = ", ".join(short) or "none"
    return listed + (f" and {len(names) - LISTED_MODELS:,} more" if len(names) > LISTED_MODELS else "")


