"""A scripted OpenAI-compatible HTTP server for tests (what vLLM, llama.cpp's server, LM Studio serve).

Endpoints under ``/v1``, shaped like the OpenAI API's replies:

- ``POST /v1/chat/completions``: ``{"id", "object": "chat.completion", "model", "choices":
  [{"index": 0, "message": {"role": "assistant", "content"}, "finish_reason": "stop"}], "usage"}``.
  An unknown model gives 404; a ``response_format`` type not in `formats` gives 400, as a
  server without that structured-output mode does.
- ``GET /v1/models``: ``{"object": "list", "data": [{"id", "object": "model", ...}]}``.
- errors as ``{"error": {"message", "type", "code"}}`` with their HTTP status; with `api_key` set,
  a request without ``Authorization: Bearer <api_key>`` gets 401.

Chat replies come from `script`, then `default`, as in `FakeOllama` (content str, `Error`,
`Raw`, `DROP`, or a callable of the request body), plus `Envelope(payload)`: answer 200 with
`payload` as the whole JSON body (a reply that is not a chat completion). The faults `page`
and `delay` and the `requests` record are FakeOllama's.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler

from tests.helpers.fake_ollama import DROP, EMPTY_REPLY, Error, FakeOllama, Raw

__all__ = ["DROP", "EMPTY_REPLY", "Envelope", "Error", "FakeOpenAI", "Raw"]


@dataclass(frozen=True)
class Envelope:
    """A whole 200 JSON body to send instead of a chat completion."""

    payload: object


class FakeOpenAI(FakeOllama):
    """Start with `start()`, stop with `stop()`; `base_url` is what OPENAI_BASE_URL takes."""

    def __init__(self, models: tuple[str, ...] = ("smollm2",), default=EMPTY_REPLY,
                 formats: tuple[str, ...] = ("json_schema", "json_object"), api_key: str | None = None) -> None:
        super().__init__(models, default)
        self.formats, self.api_key = formats, api_key

    @property
    def base_url(self) -> str:
        return f"{self.url}/v1"

    def chats(self) -> list[dict]:
        """Bodies of the /v1/chat/completions requests received so far."""
        return [r["body"] for r in self.requests if r["path"] == "/v1/chat/completions"]

    def _knows(self, model: str) -> bool:
        return model in self.models

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(super()._handler()):
            def do_GET(self) -> None:
                fake._record(self, None)
                if fake._fault(self) or not self._authorized():
                    return
                if self.path == "/v1/models":
                    self._json(200, {"object": "list", "data": [
                        {"id": m, "object": "model", "created": 1_700_000_000, "owned_by": "fake"}
                        for m in fake.models]})
                else:
                    self._error(404, f"Unknown path {self.path}", "not_found")

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                fake._record(self, body)
                if fake._fault(self) or not self._authorized():
                    return
                if self.path != "/v1/chat/completions":
                    return self._error(404, f"Unknown path {self.path}", "not_found")
                if not fake._knows(body.get("model", "")):
                    return self._error(404, f"The model `{body.get('model')}` does not exist", "model_not_found")
                kind = (body.get("response_format") or {}).get("type", "text")
                if kind not in (*fake.formats, "text"):
                    return self._error(400, f"response_format type {kind!r} is not supported", "invalid_request")
                reply = fake._next_reply(body)
                if reply is DROP:
                    self.close_connection = True
                    return
                if isinstance(reply, Error):
                    return self._error(reply.status, reply.message, "server_error")
                if isinstance(reply, Envelope):
                    return self._json(200, reply.payload)
                if isinstance(reply, Raw):
                    return self._raw(reply)
                self._json(200, {"id": "chatcmpl-fake", "object": "chat.completion", "created": int(time.time()),
                                 "model": body["model"], "choices": [{
                                     "index": 0, "message": {"role": "assistant", "content": str(reply)},
                                     "finish_reason": "stop"}],
                                 "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}})

            def _authorized(self) -> bool:
                if fake.api_key is None or self.headers.get("Authorization") == f"Bearer {fake.api_key}":
                    return True
                self._error(401, "Incorrect API key provided", "invalid_api_key")
                return False

            def _error(self, status: int, message: str, code: str) -> None:
                self._json(status, {"error": {"message": message, "type": code, "param": None, "code": code}})

        return Handler
