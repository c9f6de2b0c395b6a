"""The one way taggraph talks to an Ollama server: clients that name the host when it fails.

Extraction, embeddings and answer generation build their clients with
`ollama_client`. A reply with status 200 that is not JSON (a proxy's login page,
a web server on the wrong port) raises ServerError naming the URL, the content
type and the start of what came back, instead of the client's bare
"Expecting value: line 1 column 1".
"""

from __future__ import annotations

import httpx
import ollama

from taggraph.errors import ServerError

CHECK_TIMEOUT = 10.0  # seconds for the up-front check: a healthy server lists its models in well under 1 s
GENERATION_TIMEOUT = 300.0  # seconds per generation request: a CPU-only 8B model can take minutes
_SHOWN_CHARS = 80  # characters of an unexpected reply quoted in the error


def _json_only(response: httpx.Response) -> None:
    content_type = response.headers.get("content-type", "")
    if response.status_code == 200 and "json" not in content_type:
        response.read()
        raise ServerError(f"{response.url} answered with {content_type or 'no content type'}, not JSON: "
                          f"{response.text[:_SHOWN_CHARS]!r} (is OLLAMA_HOST an Ollama server?)")


def ollama_client(host: str | None, timeout: float = GENERATION_TIMEOUT) -> ollama.Client:
    """An `ollama.Client` for `host` (None: $OLLAMA_HOST, else localhost:11434) that refuses non-JSON replies."""
    return ollama.Client(host=host, timeout=timeout, event_hooks={"response": [_json_only]})


def host_of(client: ollama.Client) -> str:
    """The URL a client talks to, for messages."""
    return str(client._client.base_url)
