"""Where the models `taggraph tune-embedder` writes live, and how the embedder ``tuned:NAME`` finds one.

A tuned model is the folder ``<TAGGRAPH_CACHE>/models/tuned/NAME``: a sentence-transformers model with its card,
``model_card.json``, written last and renamed into place with the rest, so a folder without a card is no model.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from taggraph._infra.config import cache_dir
from taggraph.errors import ConfigError
from taggraph.embedders.minilm import SentenceTransformerEmbedder

CARD = "model_card.json"
MODEL_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


def tuned_models_dir() -> Path:
    return cache_dir() / "models" / "tuned"


def check_model_name(name: str) -> str:
    """`name` if it is one folder name (letters, digits, '.', '_', '-'; not starting with a dot)."""
    if not MODEL_NAME.fullmatch(name):
        raise ConfigError(f"tuned model name {name!r}: use letters, digits, '.', '_' and '-' (not first)")
    return name


def tuned_model(name: str) -> tuple[Path, dict]:
    """(folder, card) of the tuned model `name`; a ConfigError in one line naming the folder looked in and the
    command that makes it when there is none."""
    folder = tuned_models_dir() / check_model_name(name)
    try:
        card = json.loads((folder / CARD).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        raise ConfigError(f"embedder 'tuned:{name}': no tuned model in {folder}; make it with: "
                          f"taggraph tune-embedder --data PATH --name {name}") from None
    return folder, card


class TunedEmbedder(SentenceTransformerEmbedder):
    """The tuned model `model` (``tuned:NAME``); its vectors are cached under the sha256 of its weights, so two
    tunings never share them."""

    def __init__(self, model: str, device: str = "auto", **kw) -> None:
        folder, card = tuned_model(model)
        super().__init__(str(folder), device, **kw)
        self.name = f"tuned:{model}"
        self.weights_sha256 = card["weights_sha256"]

    @property
    def cache_key(self) -> str:
        return f"{self.name}-{self.weights_sha256}"
