"""A scripted Ollama-API HTTP server for tests (the real `ollama` client talks to it).

Endpoints, shaped like Ollama's own replies:

- ``POST /api/chat``: streams NDJSON chunks when ``stream`` is true or absent
  (Ollama's default), else one JSON object; the last object carries ``done: true``,
  ``done_reason`` and the timing/count fields. An unknown model gives 404.
- ``POST /api/embed``: ``{"model", "embeddings": [[...], ...]}``, deterministic
  vectors of `embed_dim` floats derived from each input's hash; `embed_reply` (a `Raw`), when set,
  is sent instead.
- ``GET /api/tags``: the served models; ``GET /api/version``.
- errors as ``{"error": "..."}`` with their HTTP status.

Chat replies come from `script` (a queue, first in first out), then from
`default`. Each reply is the assistant's content (str), an `Error(status,
message)`, `Raw(status, body, headers)` (sent as it is: a redirect, a body that is
not JSON), `DROP` (close the socket without answering), or a callable taking the
request body and returning one of those (it may sleep to provoke a timeout).
Every request is recorded in `requests` as ``{"method", "path", "body"}``.

Faults in front of every endpoint: `page` (a string) makes each request answer
200 with that text as ``text/html``, like a proxy's login page; `delay` (seconds)
makes each request wait that long before answering, like a hung server; `trickle` (seconds) sends
each JSON reply one byte at a time, that long apart, like a server that never quite stops answering.
"""

from __future__ import annotations

import hashlib
import json
import socket
import sys
import threading
import time
from collections import deque
from dataclasses import dataclass
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

EMPTY_REPLY = '{"who": [], "what": [], "when": [], "where": [], "why": [], "extra": [], "summary": ""}'


@dataclass(frozen=True)
class Error:
    status: int
    message: str


@dataclass(frozen=True)
class Raw:
    status: int
    body: str
    headers: tuple[tuple[str, str], ...] = (("Content-Type", "application/json"),)


DROP = object()


def _now() -> str:
    return datetime.now(timezone.utc).isoformat().replace("+00:00", "Z")


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address) -> None:
        """Stay quiet when a client hung up (e.g. after its timeout); report anything else."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class FakeOllama:
    """Start with `start()` (binds a free port on 127.0.0.1), stop with `stop()`; `url` is the host."""

    def __init__(self, models: tuple[str, ...] = ("llama3.2:latest",), default=EMPTY_REPLY,
                 embed_dim: int = 8) -> None:
        self.models, self.default, self.embed_dim = models, default, embed_dim
        self.script: deque = deque()
        self.page: str | None = None
        self.delay = 0.0
        self.trickle = 0.0
        self.embed_reply: Raw | None = None
        self.requests: list[dict] = []
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        assert self._server is not None, "server not started"
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def queue(self, *replies) -> None:
        self.script.extend(replies)

    def chats(self) -> list[dict]:
        """Bodies of the /api/chat requests received so far."""
        return [r["body"] for r in self.requests if r["path"] == "/api/chat"]

    def start(self) -> FakeOllama:
        self._server = _Server(("127.0.0.1", 0), self._handler())
        threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return self

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        """The request handler class (a subclass serving another API overrides this)."""
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:  # keep test output quiet
                pass

            def do_GET(self) -> None:
                fake._record(self, None)
                if fake._fault(self):
                    return
                if self.path == "/api/tags":
                    self._json(200, {"models": [fake._model_info(m) for m in fake.models]})
                elif self.path == "/api/version":
                    self._json(200, {"version": "0.6.0"})
                else:
                    self._json(404, {"error": "404 page not found"})

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                fake._record(self, body)
                if fake._fault(self):
                    return
                if self.path not in ("/api/chat", "/api/embed"):
                    return self._json(404, {"error": "404 page not found"})
                if not fake._knows(body.get("model", "")):
                    return self._json(404, {"error": f"model \"{body.get('model')}\" not found, try pulling it first"})
                if self.path == "/api/embed":
                    return self._raw(fake.embed_reply) if fake.embed_reply else self._json(200, fake._embed(body))
                reply = fake._next_reply(body)
                if reply is DROP:
                    self.close_connection = True
                    return
                if isinstance(reply, Error):
                    return self._json(reply.status, {"error": reply.message})
                if isinstance(reply, Raw):
                    return self._raw(reply)
                if body.get("stream", True):
                    self._stream(body["model"], str(reply))
                else:
                    self._json(200, fake._chat_chunk(body["model"], str(reply), done=True))

            def _json(self, status: int, payload: dict) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json; charset=utf-8")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if not fake.trickle:
                    return self.wfile.write(data)
                for i in range(len(data)):
                    self.wfile.write(data[i : i + 1])
                    self.wfile.flush()
                    time.sleep(fake.trickle)

            def _raw(self, reply: Raw) -> None:
                data = reply.body.encode()
                self.send_response(reply.status)
                for name, value in (*reply.headers, ("Content-Length", str(len(data)))):
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

            def _stream(self, model: str, content: str) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "application/x-ndjson")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                pieces = [content[i : i + 16] for i in range(0, len(content), 16)]
                parts = [fake._chat_chunk(model, p, done=False) for p in pieces]
                for part in [*parts, fake._chat_chunk(model, "", done=True)]:
                    line = json.dumps(part).encode() + b"\n"
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(line), line))
                self.wfile.write(b"0\r\n\r\n")

        return Handler

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    # -- helpers used by the handler -----------------------------------------------

    def _record(self, handler: BaseHTTPRequestHandler, body: dict | None) -> None:
        with self._lock:
            self.requests.append({"method": handler.command, "path": handler.path, "body": body})

    def _fault(self, handler: BaseHTTPRequestHandler) -> bool:
        """Wait `delay`, then answer with `page` when set; True when the request is answered."""
        time.sleep(self.delay)
        if self.page is None:
            return False
        data = self.page.encode()
        handler.send_response(200)
        handler.send_header("Content-Type", "text/html; charset=utf-8")
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)
        return True

    def _knows(self, model: str) -> bool:
        return model in self.models or f"{model}:latest" in self.models

    def _next_reply(self, body: dict):
        with self._lock:
            reply = self.script.popleft() if self.script else self.default
        return reply(body) if callable(reply) else reply

    @staticmethod
    def _model_info(name: str) -> dict:
        return {"name": name, "model": name, "modified_at": _now(), "size": 1_000_000,
                "digest": hashlib.sha256(name.encode()).hexdigest(),
                "details": {"format": "gguf", "family": "llama", "parameter_size": "1B",
                            "quantization_level": "Q4_K_M"}}

    @staticmethod
    def _chat_chunk(model: str, content: str, done: bool) -> dict:
        chunk = {"model": model, "created_at": _now(),
                 "message": {"role": "assistant", "content": content}, "done": done}
        if done:
            chunk.update(done_reason="stop", total_duration=1_000_000, load_duration=10_000,
                         prompt_eval_count=10, prompt_eval_duration=100_000, eval_count=5,
                         eval_duration=500_000)
        return chunk

    def _embed(self, body: dict) -> dict:
        inputs = body.get("input", "")
        inputs = [inputs] if isinstance(inputs, str) else inputs
        vectors = []
        for text in inputs:
            digest = hashlib.sha256(text.encode()).digest()
            vectors.append([digest[i % len(digest)] / 255 for i in range(self.embed_dim)])
        return {"model": body["model"], "embeddings": vectors, "total_duration": 1_000_000,
                "load_duration": 10_000, "prompt_eval_count": len(inputs)}


def reply(**fields) -> str:
    """A model reply: the empty extraction with `fields` set, as JSON."""
    return json.dumps({**json.loads(EMPTY_REPLY), **fields})


def free_port() -> int:
    """A local port nothing listens on (now)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
