"""taggraph.runs.embed_job: filling the embedding cache before a bench run."""

from __future__ import annotations

import numpy as np
import pytest

from taggraph.errors import ConfigError
from taggraph._infra.config import DEMO_DATA
from taggraph.datasets import load_dataset
from taggraph.runs.runner import build_store
from taggraph.runs.embed_job import dense_chunks, fill_embedding_cache
from taggraph.methods import make_retriever
from taggraph.embedders.base import Embedder


@pytest.fixture(autouse=True)
def _tmp_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TAGGRAPH_CACHE", str(tmp_path / "cache"))


class LengthEmbedder(Embedder):
    """Fake: a vector from the text's length and letters; records every text the model sees."""

    name = "test-length"

    def __init__(self) -> None:
        super().__init__(cache=True)
        self.seen: list[str] = []

    def _embed(self, texts: list[str]) -> np.ndarray:
        self.seen += texts
        return np.array([[len(t) + 1.0, t.count("e") + 1.0, t.count("a") + 1.0] for t in texts])


@pytest.fixture(scope="module")
def cases():
    return load_dataset(DEMO_DATA, limit=3)


def test_chunks_are_what_openclaw_indexes(cases):
    chunks = dense_chunks(cases, ["OpenClaw", "OC-notes"], extractor="none")
    for name in ("OpenClaw", "OC-notes"):
        expected = []
        for case in cases:
            expected += make_retriever(name, build_store(case, "none"), embedder=LengthEmbedder()).chunks
        assert chunks[name] == expected


def test_fill_embeds_each_distinct_chunk_once_and_bench_then_runs_warm(cases):
    emb = LengthEmbedder()
    table = fill_embedding_cache(cases, embedder=emb, extractor="none").set_index("method")
    distinct = set(emb.seen)
    assert len(emb.seen) == len(distinct) == table.loc["all", "embedded"] == table.loc["all", "distinct"]
    assert table.loc["OpenClaw", "chunks"] + table.loc["OC-notes", "chunks"] == table.loc["all", "chunks"]
    assert emb.seen == sorted(emb.seen, key=len)  # shortest first: little padding per batch

    again = fill_embedding_cache(cases, embedder=emb, extractor="none").set_index("method")
    assert again.loc["all", "embedded"] == 0 and again.loc["all", "cached_before"] == len(distinct)

    emb.seen.clear()
    retriever = make_retriever("OC-notes", build_store(cases[0], "none"), embedder=emb)
    retriever.query(cases[0].question, k=5)
    assert emb.seen == [cases[0].question]  # every chunk came from the cache


def test_chunk_parameters_follow_method_params(cases):
    small = dense_chunks(cases[:1], ["OpenClaw"], "none", {"OpenClaw": {"chunk_chars": 80, "overlap_chars": 0}})
    default = dense_chunks(cases[:1], ["OpenClaw"], "none")
    assert len(small["OpenClaw"]) > len(default["OpenClaw"])
    assert max(map(len, small["OpenClaw"])) <= 80


def test_only_dense_methods(cases):
    with pytest.raises(ConfigError, match="not methods that embed chunks: \\['BM25'\\]"):
        fill_embedding_cache(cases, ["OpenClaw", "BM25"], embedder=LengthEmbedder())


def test_a_history_several_questions_share_is_built_and_chunked_once(monkeypatch):
    """LoCoMo's questions share their conversation: its chunks come once, not once per question."""
    from pathlib import Path

    from taggraph.runs import embed_job as embed_cache

    locomo = load_dataset(Path(__file__).parents[1] / "fixtures" / "locomo" / "locomo_tiny.json")
    built = []
    monkeypatch.setattr(embed_cache, "build_store", lambda case, extractor: built.append(case.case_id)
                        or build_store(case, extractor))
    chunks = dense_chunks(locomo, ["OpenClaw"], extractor="none")
    assert built == ["conv-t1:q0", "conv-t2:q0"] and len(locomo) == 8
    assert chunks["OpenClaw"] == [c for case in (locomo[0], locomo[6]) for c in
                                  make_retriever("OpenClaw", build_store(case, "none"), embedder=LengthEmbedder()).chunks]
