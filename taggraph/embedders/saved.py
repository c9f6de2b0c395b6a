"""The vectors a memory's methods embedded, kept beside its notes: ``index/embeddings-<key>.npz``.

`Memory.save` writes one file per embedder (its `cache_key`) holding each embedded text's SHA-256 (the disk cache's
key) and its float32 vector; `Memory.load` hands them to the embedder (`Embedder.preload`), so a loaded memory's
first query embeds only what no save had embedded, on any machine, with its disk cache empty. A vector is a pure
function of (model, text): the file is a cache and its rows replace no computation but the same one. A file that
is torn, hand-made or of another shape is ignored (the texts are then embedded again), as snapshots are.
Format: .npz without pickles, for the reasons `taggraph.core.snapshot` gives.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np

from taggraph._infra.atomic import atomic_save_arrays, load_arrays

PREFIX = "embeddings-"


def text_digests(texts: list[str]) -> np.ndarray:
    """(len(texts), 32) uint8: each text's SHA-256, as the embedders' disk cache keys them."""
    joined = b"".join(hashlib.sha256(t.encode("utf-8", "surrogatepass")).digest() for t in texts)
    return np.frombuffer(joined, dtype=np.uint8).reshape(len(texts), 32)


def path_of(folder: Path, cache_key: str) -> Path:
    """The file of `cache_key`'s vectors in the store folder's ``index/`` (the key hashed: names stay portable)."""
    return folder / f"{PREFIX}{hashlib.sha256(cache_key.encode('utf-8')).hexdigest()[:16]}.npz"


def write(folder: Path, embedder, embedded: list[tuple[list[str], np.ndarray]]) -> None:
    """Keep, as `embedder`'s file in `folder` (atomically), the vectors of `embedded` (per method: its texts and
    their float32 rows) and those the embedder took from a saved memory (`Embedder.preloaded`), each text once."""
    kept_digests, kept_vectors = embedder.preloaded()
    parts = [(text_digests(texts), vectors) for texts, vectors in embedded if texts] + [(kept_digests, kept_vectors)]
    parts = [(d, v) for d, v in parts if len(d)]
    if not parts:
        return
    digests = np.concatenate([d for d, _ in parts])
    vectors = np.concatenate([np.asarray(v, dtype=np.float32) for _, v in parts])
    _, first = np.unique(digests, axis=0, return_index=True)
    first.sort()
    folder.mkdir(parents=True, exist_ok=True)
    key = np.frombuffer(embedder.cache_key.encode("utf-8"), dtype=np.uint8)
    atomic_save_arrays(path_of(folder, embedder.cache_key), {"cache_key": key, "digests": digests[first],
                                                            "vectors": np.ascontiguousarray(vectors[first])})


def read(folder: Path, cache_key: str) -> tuple[np.ndarray, np.ndarray] | None:
    """(digests, vectors) of `cache_key`'s file in `folder`; None when there is none or it is not one `write`
    wrote for that key (torn, hand-made, another key, rows that are not finite unit or zero vectors)."""
    path = path_of(folder, cache_key)
    if not path.is_file():
        return None
    try:
        arrays = load_arrays(path)
        key, digests, vectors = arrays["cache_key"], arrays["digests"], arrays["vectors"]
    except (OSError, ValueError, KeyError):
        return None
    if key.dtype != np.uint8 or key.tobytes() != cache_key.encode("utf-8") or digests.dtype != np.uint8 \
            or digests.ndim != 2 or digests.shape[1] != 32 or vectors.dtype != np.float32 or vectors.ndim != 2 \
            or len(vectors) != len(digests) or not np.isfinite(vectors).all():
        return None
    norms = np.linalg.norm(vectors, axis=1)
    if not np.all((np.abs(norms - 1) < 1e-3) | (norms == 0)):
        return None
    return digests, vectors
