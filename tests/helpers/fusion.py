"""A TagGraph-Fusion retriever over the bag-of-words test embedder (`fusion`) and a small store of dated sessions
(`DATED`, `dated_store`), shared by the Fusion and the time-safety tests."""

from __future__ import annotations

from taggraph.core.store import Interaction, MemoryStore
from taggraph.extractors.base import Extraction
from taggraph.methods import make_retriever
from taggraph.methods.fusion.method import TagGraphFusion
from tests.helpers.embedders import BagOfWords

DATED = [  # the same topic in three sessions on three dates, plus unrelated sessions
    ("a", "I bought a road bike, a Trek.", "Nice bike.", "2023/01/10 (Tue) 10:00"),
    ("b", "I bought a road bike, a Canyon.", "Nice bike.", "2023/05/16 (Tue) 10:00"),
    ("c", "I bought a road bike, a Giant.", "Nice bike.", "2023/03/02 (Thu) 10:00"),
    ("d", "I like pasta with tomato sauce.", "Yum.", "2023/04/01 (Sat) 10:00"),
    ("e", "My cat Luna sleeps all day.", "Cats do.", "2023/05/27 (Sat) 10:00"),
    *[(f"f{i}", f"Tell me a fact about the number {i}.", "Here is one.", f"2023/02/{10 + i} 10:00")
      for i in range(6)],  # fillers, so that "road bike" is a rare term as in a real haystack
]


def fusion(store, **kw) -> TagGraphFusion:
    """TagGraph-Fusion over `store`, embedding with `BagOfWords` unless `embedder` is given."""
    return make_retriever("TagGraph-Fusion", store, embedder=kw.pop("embedder", BagOfWords()), **kw)


def dated_store(rows=DATED) -> MemoryStore:
    """A store of `rows` (session id, user, assistant, timestamp), every note tagged sport/cycling."""
    store = MemoryStore("t")
    for sid, user, assistant, ts in rows:
        store.remember(Interaction(sid, user, assistant, timestamp=ts), Extraction(what=["sport/cycling"]))
    return store
