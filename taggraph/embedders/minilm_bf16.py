"""``minilm-bf16``: MiniLM under bfloat16 autocast, for a CPU with native bfloat16."""

from __future__ import annotations


import numpy as np

from taggraph.errors import ConfigError
from taggraph.embedders.minilm import SentenceTransformerEmbedder


def _native_bfloat16() -> bool:
    """Whether this CPU computes bfloat16 in hardware (AVX512-BF16 or AMX); torch 2.13 has only these private
    probes, and without such hardware bfloat16 is emulated: 1.7-3.8x slower than float32."""
    import torch
    return any(getattr(torch.cpu, probe, lambda: False)()
               for probe in ("_is_avx512_bf16_supported", "_is_amx_tile_supported"))


class BFloat16MiniLM(SentenceTransformerEmbedder):
    """The bundled all-MiniLM-L6-v2 run under bfloat16 autocast: about twice minilm's speed on a CPU with
    native bfloat16, vectors at cosine >= 0.9999 to minilm's; a free choice of ours for
    speed, cached apart from minilm's vectors. Refused on a CPU without native bfloat16 (slower there)."""

    def __init__(self, model_path: str | None = None, device: str = "auto", **kw) -> None:
        super().__init__(model_path, device, **kw)
        self.name = "minilm-bf16" if model_path is None else f"st-bf16:{model_path}"
        if self.device == "cpu" and not _native_bfloat16():
            raise ConfigError("embedder minilm-bf16: this CPU has no native bfloat16 (AVX512-BF16 or AMX), where "
                              "it runs 1.7-3.8x slower than float32; use --embedder minilm")

    def _embed(self, texts: list[str]) -> np.ndarray:
        import torch
        with torch.autocast(self.device, dtype=torch.bfloat16):
            return super()._embed(texts)
