"""The one way taggraph talks to a model server: clients that name the host when it fails.

Extraction, embeddings and answer generation build their Ollama clients with
`ollama_client`; the ``openai:`` extractor builds its client with `openai_client`.
A reply with status 200 that is not JSON (a proxy's login page, a web server on
the wrong port) raises ServerError naming the URL, the content type and the start
of what came back, instead of the client's bare "Expecting value: line 1 column 1";
an ``openai:`` client's redirect raises ServerError naming where it points. Secrets
(a URL's password, the API key) are blanked out before a reply is cut for a message.

Every model request is bounded the same way: a total deadline (connect, send, wait
and read together, `before_deadline`; httpx's own timeouts are per read, so a server
trickling a byte at a time never trips them) and a reply body capped at
MAX_REPLY_BYTES as it arrives (`read_bounded`), before anything parses or caches it.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path

import httpx
import ollama
from pydantic import ValidationError

from taggraph.errors import ConfigError, ServerError

CHECK_TIMEOUT = 10.0  # seconds for the up-front check: a healthy server lists its models in well under 1 s
GENERATION_TIMEOUT = 300.0  # seconds per generation request: a CPU-only 8B model can take minutes
OPENAI_DEFAULT_URL = "https://api.openai.com/v1"  # the base URL when neither base_url nor $OPENAI_BASE_URL is set
SHOWN_CHARS = 80  # characters of an unexpected reply quoted in an error line
# Free choice: 1 MiB of HTTP body; the largest extraction reply the schema allows (parse_and_repair keeps
# 50,000 characters) fits several times over, even with every character escaped as \uXXXX, and so do an
# answer and a batch of 64 embeddings of 1,024 floats.
MAX_REPLY_BYTES = 1 << 20


class DeadlineExceeded(httpx.TimeoutException):
    """A request still unanswered (or still arriving) at its total deadline; retried as a timeout is."""


class ReplyTooLarge(ValueError):
    """A reply body over MAX_REPLY_BYTES; not retried (temperature 0 would send it again)."""


def read_bounded(response: httpx.Response, deadline: float) -> bytes:
    """The body of a streamed `response`, refused once it passes MAX_REPLY_BYTES or the monotonic `deadline`."""
    body = bytearray()
    for chunk in response.iter_bytes():
        body += chunk
        if len(body) > MAX_REPLY_BYTES:
            raise ReplyTooLarge(f"the reply is over {MAX_REPLY_BYTES:,} bytes; not read further")
        if time.monotonic() > deadline:
            raise DeadlineExceeded("the reply was still arriving at the deadline")
    return bytes(body)


def before_deadline(call, seconds: float, name: str):
    """`call(deadline)` with `seconds` as a total deadline (`deadline` is on time.monotonic): the caller waits
    that long at most, whatever the server trickles; `call` should stop reading once it passes
    (`read_bounded`), so its thread ends at its next chunk or read timeout."""
    deadline = time.monotonic() + seconds
    done: Future = Future()

    def run() -> None:
        try:
            done.set_result(call(deadline))
        except BaseException as exc:  # handed to the caller as it is
            done.set_exception(exc)

    # A thread, because httpx's timeouts are per read: a byte every 0.5 s would never trip them.
    threading.Thread(target=run, name=name, daemon=True).start()
    try:
        return done.result(timeout=seconds)
    except TimeoutError:
        raise DeadlineExceeded(f"timed out: no complete reply within the {seconds:g} s deadline") from None


def shown(text: str, redact: Callable[[str], str], chars: int = SHOWN_CHARS) -> str:
    """The start of a server's `text` for a message: secrets blanked out by `redact` first, then cut."""
    return redact(text)[:chars]


def parsed_json(body: bytes, redact: Callable[[str], str]) -> object:
    """`body` as JSON; ValueError quoting its start (blanked by `redact`) when it is not, nesting past the
    recursion limit included."""
    try:
        return json.loads(body)
    except RecursionError:
        raise ValueError("the reply is JSON nested too deeply") from None
    except ValueError:
        raise ValueError(f"the reply is not JSON: {shown(body.decode('utf-8', 'replace'), redact)!r}") from None


def blank_secrets(text: str, url: httpx.URL | str, api_key: str | None = None) -> str:
    """`text` with a client's secrets blanked out: the password of its `url` (http://user:PASSWORD@host) and
    its `api_key`; blank before cutting, so that no cut leaves a piece of a secret."""
    password = httpx.URL(str(url)).password
    text = text.replace(password, "***") if password else text
    return text.replace(api_key, "<OPENAI_API_KEY>") if api_key else text


def _json_only(hint: str, api_key: str | None = None,
               redirects: bool = True) -> Callable[[httpx.Response], None]:
    """A response hook that raises ServerError for a 200 reply that is not JSON and, unless `redirects`, for a
    redirect; `hint` ends the message, `api_key` is blanked out of it."""
    def check(response: httpx.Response) -> None:
        def blanked(text: str) -> str:
            return blank_secrets(text, response.request.url, api_key)
        content_type = response.headers.get("content-type", "")
        if response.is_redirect and not redirects:
            raise ServerError(blanked(f"{response.url} answered HTTP {response.status_code} redirect to "
                                      f"{response.headers.get('location', 'nowhere')}; give the final URL"))
        if response.status_code == 200 and "json" not in content_type:
            response.read()
            raise ServerError(blanked(f"{response.url} answered with {content_type or 'no content type'}, not "
                                      f"JSON: {blanked(response.text)[:SHOWN_CHARS]!r} ({hint})"))
    return check


def ollama_client(host: str | None, timeout: float = GENERATION_TIMEOUT) -> ollama.Client:
    """An `ollama.Client` for `host` (None: $OLLAMA_HOST, else localhost:11434) that refuses non-JSON replies
    and redirects (an Ollama server sends none; following one would send the prompt, a user's notes, elsewhere)."""
    return ollama.Client(host=host, timeout=timeout,
                         event_hooks={"response": [_json_only("is OLLAMA_HOST an Ollama server?", redirects=False)]})


def ollama_post(client: ollama.Client, path: str, body: dict, deadline: float,
                redact: Callable[[str], str]) -> object:
    """The JSON reply to `body` POSTed to the Ollama endpoint `path` (e.g. /api/chat) through `client`'s own
    httpx client, read by `read_bounded` until the monotonic `deadline` (the client's chat() and embed() read a
    reply whole, whatever its size and however slowly it comes). ConnectionError when nothing answers,
    ollama.ResponseError for an error status, ValueError for a body that is not JSON."""
    try:
        with client._client.stream("POST", path, json=body) as response:
            data = read_bounded(response, deadline)
    except httpx.ConnectError as exc:
        raise ConnectionError(f"Failed to connect to Ollama ({exc}); is it running? https://ollama.com/download") \
            from None
    if response.status_code >= 400:
        raise ollama.ResponseError(data.decode("utf-8", "replace"), response.status_code)
    return parsed_json(data, redact)


def chat_content(reply: object) -> str:
    """The message content of an Ollama chat reply (`ollama_post`'s); ValueError quoting its start when it is
    not one (callers blank secrets in their error lines)."""
    try:
        return ollama.ChatResponse.model_validate(reply).message.content or ""
    except ValidationError:  # its message spans lines
        raise ValueError(f"the reply is not a chat response: {json.dumps(reply)[:SHOWN_CHARS]}") from None


def ollama_call(client: ollama.Client, path: str, body: dict, timeout: float, parse: Callable[[object], object]):
    """`parse` of `ollama_post`'s reply within a total deadline of `timeout` seconds; any failure (no server,
    an error status, the deadline, a reply too large, not JSON, `parse` raising ValueError) is one ServerError
    naming the model, the host and what went wrong (a page that is not JSON, a redirect too), secrets blanked."""
    where = host_of(client)
    redact = lambda text: blank_secrets(text, where)  # noqa: E731
    try:
        return before_deadline(lambda deadline: parse(ollama_post(client, path, body, deadline, redact)), timeout,
                               f"ollama {path}")
    except (ConnectionError, httpx.HTTPError, ollama.ResponseError, ValueError, ServerError) as exc:
        raise ServerError(redact(f"ollama:{body.get('model')} at {where} ({path}) failed: "
                                 f"{str(exc) or type(exc).__name__}")) from None


def check_timeout(timeout: object, name: str) -> float:
    """`timeout` when it is a finite number of seconds > 0, else ConfigError naming `name`."""
    if not (isinstance(timeout, (int, float)) and not isinstance(timeout, bool) and timeout > 0
            and timeout != float("inf")):
        raise ConfigError(f"{name}: timeout must be a finite number of seconds > 0, got {timeout!r}")
    return float(timeout)


def openai_client(base_url: str, api_key: str | None, timeout: float = GENERATION_TIMEOUT) -> httpx.Client:
    """An `httpx.Client` for an OpenAI-compatible API at `base_url` (e.g. http://127.0.0.1:8000/v1), with
    ``Authorization: Bearer api_key`` when a key is given, that refuses non-JSON replies."""
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    return httpx.Client(base_url=base_url.rstrip("/") + "/", timeout=timeout, headers=headers,
                        event_hooks={"response": [_json_only("is OPENAI_BASE_URL an OpenAI-compatible server?",
                                                             api_key, redirects=False)]})


def host_of(client: ollama.Client | httpx.Client) -> str:
    """The URL a client talks to, for messages."""
    return str(getattr(client, "_client", client).base_url)


def start_llama_cpp_server(model: str | Path, port: int, alias: str = "local", n_ctx: int = 4096,
                           n_threads: int | None = None, log=subprocess.DEVNULL, wait: float = 120.0) -> subprocess.Popen:
    """``python -m llama_cpp.server`` (llama-cpp-python[server]) serving the GGUF `model` as `alias` on
    127.0.0.1:`port` (OpenAI-compatible, base URL http://127.0.0.1:PORT/v1), returned once /v1/models
    answers; ServerError when it exits first or does not answer within `wait` seconds. Stop it with
    ``terminate()``."""
    command = [sys.executable, "-m", "llama_cpp.server", "--model", str(model), "--model_alias", alias,
               "--host", "127.0.0.1", "--port", str(port), "--n_ctx", str(n_ctx)]
    if n_threads is not None:
        command += ["--n_threads", str(n_threads)]
    proc = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise ServerError(f"llama_cpp.server for {model} exited with status {proc.returncode} before answering")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/v1/models", timeout=1).status_code == 200:
                return proc
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    proc.kill()
    raise ServerError(f"llama_cpp.server for {model} did not answer on 127.0.0.1:{port} within {wait:g} s")
