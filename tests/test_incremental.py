"""After N incremental remembers, every method answers exactly as after a full rebuild."""

import pytest

from taggraph.config import DEMO_DATA
from taggraph.datasets import load_dataset
from taggraph.extraction import get_extractor
from taggraph.retrieval import ablations_of, make_retriever
from taggraph.store import MemoryStore

METHODS = ["BM25", "TagGraph-Basic", "TagGraph-Stopwords", "TagGraph-TFIDF", "AdaptiveGraph",
           *ablations_of("AdaptiveGraph"), "AdaptiveGraph-noFileSeeding-noDiffusion", "TagGraph-TFIDF-boundTopLevel",
           *ablations_of("TagGraph-Fusion")]


@pytest.fixture(scope="module")
def case():
    return load_dataset(DEMO_DATA)[4]


@pytest.mark.parametrize("method", METHODS)
def test_incremental_equals_rebuild(case, method):
    extractor = get_extractor("offline")
    grown = MemoryStore("grown", extractor)
    half = len(case.interactions) // 2
    grown.remember_many(case.interactions[:half])
    retriever = make_retriever(method, grown)
    retriever.query(case.question)  # index used before it grows
    for interaction in case.interactions[half:]:
        retriever.remember(interaction)
    rebuilt = MemoryStore("rebuilt", extractor)
    rebuilt.remember_many(case.interactions)
    fresh = make_retriever(method, rebuilt)
    for query in [case.question, "what did I buy", "morning yoga", "Lisbon restaurant"]:
        a, b = retriever.query(query), fresh.query(query)
        assert [r.note_id for r in a] == [r.note_id for r in b]
        assert [r.score for r in a] == pytest.approx([r.score for r in b], abs=1e-12)
