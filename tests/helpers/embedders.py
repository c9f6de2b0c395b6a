"""Fake embedders: no model, deterministic."""

from __future__ import annotations

import numpy as np

from taggraph.testing import BagOfWordsEmbedder


class BagOfWords(BagOfWordsEmbedder):
    """The contract kit's deterministic fake embedder, recording each model call."""

    name = "test-bow"

    def __init__(self, dim: int = 1024, cache: bool = False, **kw) -> None:
        super().__init__(dim, cache, **kw)
        self.calls: list[list[str]] = []

    def _embed(self, texts: list[str]) -> np.ndarray:
        self.calls.append(list(texts))
        return super()._embed(texts)
