"""``ollama:MODEL``: an embedding model an Ollama server serves (``/api/embed``)."""

from __future__ import annotations


import numpy as np

from taggraph.embedders.base import Embedder


class OllamaEmbedder(Embedder):
    """An Ollama embedding model via the official client (``/api/embed``, one request per batch).

    `timeout` (default `taggraph._infra.model_clients.GENERATION_TIMEOUT`) is a total deadline per batch and the reply is
    capped (`taggraph._infra.model_clients.ollama_call`); a failed batch, or a reply without one finite vector per text, raises
    ServerError naming the model and the host, and nothing of it is cached. `host` defaults to ``$OLLAMA_HOST``,
    else the client's default (http://127.0.0.1:11434).
    Texts are sent as they are (no ``search_query:``/``search_document:`` prefixes).
    """

    def __init__(self, model: str = "nomic-embed-text", host: str | None = None,
                 timeout: float | None = None, **kw) -> None:
        from taggraph._infra.model_clients import GENERATION_TIMEOUT, check_timeout  # httpx, ollama load only when used
        super().__init__(**kw)
        self.model = model
        self.host = host
        self.name = f"ollama:{model}"
        self.timeout = check_timeout(GENERATION_TIMEOUT if timeout is None else timeout, self.name)
        self.device = "server"
        self._client = None

    def _embed(self, texts: list[str]) -> np.ndarray:
        from taggraph._infra.model_clients import ollama_call, ollama_client
        if self._client is None:
            self._client = ollama_client(self.host, self.timeout)
        body = {"model": self.model, "input": texts}
        return ollama_call(self._client, "/api/embed", body, self.timeout, lambda reply: _vectors(reply, len(texts)))


def _vectors(reply: object, n: int) -> np.ndarray:
    """The `n` embeddings of an Ollama /api/embed reply as float32 rows; ValueError when the reply holds
    another number of them, rows that are not lists of numbers of one length (strings and booleans are no
    numbers), a value that is not a finite number, or a row of zeros (no direction to compare)."""
    embeddings = reply.get("embeddings") if isinstance(reply, dict) else None
    if not isinstance(embeddings, list) or len(embeddings) != n:
        got = f"{len(embeddings)} embeddings" if isinstance(embeddings, list) else "no embeddings list"
        raise ValueError(f"the reply holds {got} for {n} texts")
    if not all(isinstance(row, list) and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in row)
               for row in embeddings):
        raise ValueError("the reply's embeddings are not rows of numbers of one length")
    try:
        rows = np.asarray(embeddings, dtype=np.float32)
    except ValueError:
        raise ValueError("the reply's embeddings are not rows of numbers of one length") from None
    if rows.ndim != 2 or not rows.shape[1] or not np.isfinite(rows).all():
        raise ValueError("the reply's embeddings are empty or hold a value that is not a finite number")
    if not np.abs(rows).sum(axis=1).all():
        raise ValueError("the reply holds an embedding of zeros")
    return rows
