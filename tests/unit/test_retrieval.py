"""`taggraph.runs.retrieval`: what the pages draw of one question, each method scoring it once per call."""

import pandas as pd

from taggraph.methods import make_retriever
from taggraph.methods.bm25 import BM25
from taggraph.runs.retrieval import explain_note, file_explanations, missed_explanations

from tests.helpers.stores import make_store

TWO_TURNS = [  # gold session s2: its gold note (s2#0) says little; its other turn names the breed
    ("s1", "I do yoga every morning.", "Yoga helps.", {"what": ["activity/yoga"]}),
    ("s2", "My dog Max came home today.", "Welcome, Max!", {"what": ["pet/dog"]}),
    ("s2", "He is a beagle, a real beagle.", "Beagles are friendly.", {"extra": ["breed/beagle"]}),
    ("s3", "Can you give me a pasta recipe?", "Boil the pasta.", {"what": ["food/pasta"]}),
]


class CountingBM25(BM25):
    """BM25 that counts how often it scores a question (every ranking and explanation starts with one)."""

    calls = 0

    def score(self, text, *, asked_on=None):
        type(self).calls += 1
        return super().score(text, asked_on=asked_on)


def counting(store):
    CountingBM25.calls = 0
    retriever = CountingBM25(store)
    retriever.name = "BM25"
    retriever.sync()
    return {"BM25": retriever}


def test_explain_note_scores_each_method_once_and_explains_as_the_retriever_does():
    store = make_store(TWO_TURNS)
    bm25 = make_retriever("BM25", store)
    for question, note in (("beagle", "s2#0"), ("dog max", "s2#0"), ("pasta recipe", "s2#1")):
        retrievers = counting(store)
        [(method, explained)] = explain_note(store, question, note, retrievers, depth=2, gold=["s2#0", "s2#1"]).items()
        assert CountingBM25.calls == 1, question  # once: ranking, rank giver and explanation read the same scores
        assert explained.ranking == bm25.rank(question, len(store))
        assert explained.explanation == bm25.explain(question, explained.shown_id, 2)
    assert explained.shown_id == "s2#1"  # 'pasta recipe' reaches no note of s2: the note asked about stands


def test_explain_note_explains_the_note_that_gives_the_gold_session_its_rank():
    store = make_store(TWO_TURNS)
    [explained] = explain_note(store, "beagle", "s2#0", counting(store), gold=["s2#0"]).values()
    assert CountingBM25.calls == 1
    assert (explained.shown_id, explained.explanation.note_id, explained.explanation.rank) == ("s2#1", "s2#1", 1)


def test_missed_explanations_score_each_question_once_per_method():
    store = make_store(TWO_TURNS)
    units = pd.DataFrame([{"question_id": "t", "question": "yoga", "note_id": n, "category": "x"}
                          for n in ("s2#0", "s2#1", "s3#0")])
    retrievers = counting(store)
    missed = list(missed_explanations(units, {"t": store}, retrievers, k=1))
    assert CountingBM25.calls == 1
    bm25 = make_retriever("BM25", store)
    assert [(u.note_id, e) for u, _, e in missed] == [(n, bm25.explain("yoga", n)) for n in ("s2#0", "s2#1", "s3#0")]


def test_file_explanations_score_once_and_explain_every_note_as_the_retriever_does():
    store = make_store(TWO_TURNS)
    explained = file_explanations(store, "dog beagle", counting(store))["BM25"]
    assert CountingBM25.calls == 1
    bm25 = make_retriever("BM25", store)
    reached = {store.notes[i].note_id for i, _ in bm25.ranking("dog beagle")}
    assert explained == {n.note_id: bm25.explain("dog beagle", n.note_id, len(store) if n.note_id in reached else 40)
                         for n in store.notes}
