"""LangChain's EnsembleRetriever as a method: the contract kit over the demo, and its order LangChain's own."""

from __future__ import annotations

import importlib.util
import sys

import pytest

from taggraph.methods import make_retriever
from taggraph.methods.registry import needs_extra
from taggraph.testing import BagOfWordsEmbedder, MethodContract, fixture_notes, fixture_store

langchain = pytest.mark.skipif(importlib.util.find_spec("langchain_classic") is None,
                               reason="needs taggraph[peers]: pip install 'taggraph[peers]'")


class TestLangChainEnsemble(MethodContract):
    pytestmark = [langchain]
    method = "LangChain-Ensemble"
    params = {"embedder": BagOfWordsEmbedder()}


@langchain
def test_the_order_is_langchains_ensemble_invoked_as_a_user_would():
    from langchain_classic.retrievers import EnsembleRetriever
    notes, asked_on = fixture_notes()
    retriever = make_retriever("LangChain-Ensemble", fixture_store(notes), embedder=BagOfWordsEmbedder())
    question = "what did I buy"
    ours = [i for i, _ in retriever.ranking(question, asked_on=asked_on)]
    vector = retriever.vectors.as_retriever(search_kwargs={"k": 40})
    theirs = EnsembleRetriever(retrievers=[retriever._bm25, vector], weights=[0.5, 0.5], id_key="note").invoke(question)
    assert ours == [doc.metadata["note"] for doc in theirs]
    assert "bm25" in retriever.evidence(question, notes[ours[0]], asked_on=asked_on).detail


def test_without_langchain_it_names_the_extra(monkeypatch):
    for name in ("langchain_classic", "langchain_classic.retrievers"):  # the package, and what a test imported of it
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.delitem(sys.modules, "taggraph.peers.langchain_ensemble", raising=False)
    assert needs_extra("LangChain-Ensemble") == "peers"
