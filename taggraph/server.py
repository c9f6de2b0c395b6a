"""The one way taggraph talks to a model server: clients that name the host when it fails.

Extraction, embeddings and answer generation build their Ollama clients with
`ollama_client`; the ``openai:`` extractor builds its client with `openai_client`.
A reply with status 200 that is not JSON (a proxy's login page, a web server on
the wrong port) raises ServerError naming the URL, the content type and the start
of what came back, instead of the client's bare "Expecting value: line 1 column 1";
an ``openai:`` client's redirect raises ServerError naming where it points. Secrets
(a URL's password, the API key) are blanked out before a reply is cut for a message.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import httpx
import ollama

from taggraph.errors import ServerError

CHECK_TIMEOUT = 10.0  # seconds for the up-front check: a healthy server lists its models in well under 1 s
GENERATION_TIMEOUT = 300.0  # seconds per generation request: a CPU-only 8B model can take minutes
OPENAI_DEFAULT_URL = "https://api.openai.com/v1"  # the base URL when neither base_url nor $OPENAI_BASE_URL is set
SHOWN_CHARS = 80  # characters of an unexpected reply quoted in an error line


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
    """An `ollama.Client` for `host` (None: $OLLAMA_HOST, else localhost:11434) that refuses non-JSON replies."""
    return ollama.Client(host=host, timeout=timeout,
                         event_hooks={"response": [_json_only("is OLLAMA_HOST an Ollama server?")]})


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
