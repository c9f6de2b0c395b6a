"""``minilm-static``: MiniLM distilled into static token vectors with model2vec."""

from __future__ import annotations

from functools import cached_property, lru_cache
from pathlib import Path

import numpy as np

from taggraph.embedders.base import Embedder
from taggraph.embedders.minilm import bundled_minilm_path, quiet_transformers
from taggraph.embedders.model_builds import built_once


@lru_cache(maxsize=2)
def _static_model(folder: str):
    from model2vec import StaticModel
    return StaticModel.from_pretrained(folder)


class StaticEmbedder(Embedder):
    """The bundled all-MiniLM-L6-v2 distilled with model2vec (``distill``, its defaults:
    256 PCA dims, SIF weighting); a text is the normalized mean of its token vectors,
    reading at most 512 word pieces.

    On first use the distilled model is written to ``<TAGGRAPH_CACHE>/models/<cache_key>``
    (a temporary folder renamed into place, under a file lock, so parallel workers build
    it once). Distillation is deterministic, so every machine gets the same vectors.
    """

    name = "minilm-static"
    needs = ("model2vec", "pip install 'taggraph[dense]'")

    @cached_property  # reading package metadata costs ~0.25 ms: once per embedder, not per text
    def cache_key(self) -> str:
        from importlib.metadata import version
        return f"{self.name}-model2vec{version('model2vec')}"

    def model_folder(self) -> Path:
        return built_once(self.cache_key, "config.json", self._distill)

    @staticmethod
    def _distill(folder: Path) -> None:
        from model2vec.distill import distill
        with quiet_transformers():
            model = distill(model_name=bundled_minilm_path())
        model.save_pretrained(str(folder))

    def _embed(self, texts: list[str]) -> np.ndarray:
        return _static_model(str(self.model_folder())).encode(texts, use_multiprocessing=False)
