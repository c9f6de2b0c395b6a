"""The graph view's work is bounded by what it draws, not by the history's size."""

import json
import re
from collections import Counter

import pytest

from taggraph.extractors.base import Extraction
from taggraph.core.graph import BaseGraph
from taggraph.methods import make_retriever
from taggraph.core.store import Interaction, MemoryStore
from taggraph.errors import ConfigError
from taggraph.viz.graph.page import EXPLAINED_DRAWN, MAX_DRAWN, graph_html

PETS = ["dog", "cat", "parrot", "rabbit", "hamster", "turtle"]
HOBBIES = ["yoga", "chess", "pottery", "cycling", "knitting", "baking", "hiking", "fishing"]
CITIES = ["lisbon", "oslo", "kyoto", "denver", "lima"]


def long_store(notes: int) -> MemoryStore:
    """`notes` one-exchange sessions over a few repeating tags, plus one about a cat named Pickles."""
    store = MemoryStore("long")
    for i in range(notes):
        pet, hobby, city = PETS[i % 6], HOBBIES[i % 8], CITIES[i % 5]
        store.remember(Interaction(f"s{i}", f"My {pet} watched me do {hobby} in {city}.", "Sounds fun."),
                       Extraction(who=["user"], what=[f"pet/{pet}", f"activity/{hobby}"], where=[f"city/{city}"]))
    store.remember(Interaction("gold", "My cat is called Pickles.", "Lovely name."),
                   Extraction(who=["user"], what=["pet/cat"], extra=["pet_name/pickles"]))
    return store


@pytest.mark.parametrize("neighbourhood", [False, True])
def test_work_is_bounded_by_max_nodes_not_by_the_history(monkeypatch, neighbourhood):
    store = long_store(3000)
    retrievers = {m: make_retriever(m, store) for m in ("BM25", "TagGraph-Basic")}
    explained: Counter[str] = Counter()
    for name, r in retrievers.items():
        evidence = r.evidence
        monkeypatch.setattr(r, "evidence", lambda *a, _e=evidence, _m=name, **kw: (explained.update([_m]), _e(*a, **kw))[1])

    def no_copy(self, chronological=False):
        raise AssertionError("the whole base graph copied")

    monkeypatch.setattr(BaseGraph, "to_networkx", no_copy)
    question = "What is my cat called?"
    page = graph_html(store, question=question, gold_note_ids=["gold#0"], max_nodes=20, retrievers=retrievers,
                      results_by_method={m: r.query(question) for m, r in retrievers.items()},
                      neighbourhood_of=question if neighbourhood else None)
    data = json.loads(re.search(r"^var DATA = (.*);$", page, re.MULTILINE).group(1))
    assert sum(n["whole"] for n in data["nodes"]) <= 20
    assert "file:gold#0" in {n["id"] for n in data["nodes"] if n["sub"]}
    # the drawn notes, the gold one and each method's top notes are explained, not the 3001 notes
    assert explained and max(explained.values()) <= 20 + 5 + 2 + 1


def test_a_large_whole_graph_explains_only_the_notes_nearest_the_question(monkeypatch):
    """`--whole --max-nodes 2000` on a long history: every note drawn, but only the gold, the top-ranked and the
    EXPLAINED_DRAWN nearest are explained (AdaptiveGraph reads the whole graph per note: 2,000 of them took 27 s
    on a 2,000-session history); a click on another note says so and how to explain it."""
    store = long_store(1500)
    retrievers = {"BM25": make_retriever("BM25", store)}
    explained: Counter[str] = Counter()
    evidence = retrievers["BM25"].evidence
    monkeypatch.setattr(retrievers["BM25"], "evidence", lambda *a, **kw: (explained.update(["BM25"]), evidence(*a, **kw))[1])
    question = "What is my cat called?"
    page = graph_html(store, question=question, gold_note_ids=["gold#0"], max_nodes=MAX_DRAWN, retrievers=retrievers,
                      results_by_method={m: r.query(question) for m, r in retrievers.items()}, whole_graph=True)
    data = json.loads(re.search(r"^var DATA = (.*);$", page, re.MULTILINE).group(1))
    notes = [n for n in data["nodes"] if n["kind"] == "file" and n["whole"]]
    assert len(notes) > 1000 and explained["BM25"] <= EXPLAINED_DRAWN + 5 + 2 + 1
    assert sum(bool(n["why"]) for n in notes) == explained["BM25"]
    assert data["unexplained"].endswith("taggraph explain --question QUESTION_ID --note ")  # + the clicked note's id


@pytest.mark.parametrize("max_nodes", [MAX_DRAWN + 1, 100_000, 0])
def test_a_drawing_larger_than_a_page_can_hold_is_refused_in_one_line(max_nodes):
    with pytest.raises(ConfigError, match=f"max_nodes={max_nodes}: draw 1 to 2,000 nodes"):
        graph_html(long_store(10), question="What is my cat called?", max_nodes=max_nodes)
