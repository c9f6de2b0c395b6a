"""One of our embedders handed to ChromaDB as its embedding function: the bundled all-MiniLM-L6-v2, nothing downloaded.

ChromaDB's own default would fetch an ONNX export of the same weights and, in stock chromadb, build an ONNX session
per call; ours loads the model once per process and reads vectors through the shared disk cache.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from chromadb import Documents, EmbeddingFunction, Embeddings

from taggraph.embedders.base import Embedder


class TaggraphEmbedding(EmbeddingFunction[Documents]):
    """ChromaDB's embedding function over a taggraph `Embedder` (documents through `embed`, queries through
    `embed_queries`)."""

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder

    def __call__(self, input: Documents) -> Embeddings:  # noqa: A002 - ChromaDB's name for the argument
        return list(np.asarray(self.embedder.embed(list(input)), dtype=np.float32))

    def embed_query(self, input: Documents) -> Embeddings:  # noqa: A002
        return list(np.asarray(self.embedder.embed_queries(list(input)), dtype=np.float32))

    @staticmethod
    def name() -> str:
        return "taggraph"

    def get_config(self) -> dict[str, Any]:
        return {"embedder": self.embedder.name}

    @staticmethod
    def build_from_config(config: dict[str, Any]) -> TaggraphEmbedding:
        from taggraph.embedders.base import get_embedder
        return TaggraphEmbedding(get_embedder(config["embedder"]))
