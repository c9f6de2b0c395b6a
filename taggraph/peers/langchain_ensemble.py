"""LangChain's BM25 + vector EnsembleRetriever as a method: LangChain's own retrievers and rank fusion, no LLM.

Chosen as the second peer because it is what a user building agent memory on LangChain picks for hybrid search,
and because it installs here cleanly (langchain-classic 1.0.8, langchain-community 0.4.2, rank-bm25; nothing
upgraded), while mem0 (``infer=False``) would have downgraded protobuf (7.36 to 6.33).

LangChain makes no LongMemEval choice of its own (it ships no benchmark script), so a document is our unit: one
interaction as written (`Note.raw_text`, the user's and the assistant's turns), ranked by LangChain's defaults:
``BM25Retriever`` (rank-bm25's Okapi BM25 over LangChain's default preprocessing, ``str.split``) and an
``InMemoryVectorStore`` retriever (cosine) over our bundled all-MiniLM-L6-v2, fused by
``EnsembleRetriever`` (weighted reciprocal rank fusion, weights 0.5 / 0.5, c = 60). Each list keeps the first 40
(our depth; LangChain's default is 4). The fused RRF value is not returned, so a note scores its place in the fused
order (the number of fused notes less its rank, plus one). The question's date is not read.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any, Literal

import numpy as np
from langchain_classic.retrievers import EnsembleRetriever
from langchain_community.retrievers import BM25Retriever
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from langchain_core.vectorstores import InMemoryVectorStore
from pydantic import Field

from taggraph.core.notes import Note
from taggraph.embedders.base import Embedder, get_embedder
from taggraph.methods.base import DEFAULT_DEPTH, Evidence, Retriever
from taggraph.methods.params import DEVICE, EMBEDDER
from taggraph.methods.scores import Scores

KEY = "note"  # the metadata field each document carries its note index in (EnsembleRetriever's id_key)


class TaggraphEmbeddings(Embeddings):
    """LangChain's Embeddings over a taggraph `Embedder`."""

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self.embedder.embed(list(texts)).tolist()

    def embed_query(self, text: str) -> list[float]:
        return self.embedder.embed_queries([text])[0].tolist()


class LangChainEnsemble(Retriever):
    """LangChain's EnsembleRetriever of BM25Retriever and an in-memory vector store, over each interaction."""

    @dataclass(frozen=True)
    class Params:
        bm25_weight: Annotated[float, Field(ge=0)] = 0.5  # LangChain's EnsembleRetriever weights, as its docs show
        vector_weight: Annotated[float, Field(ge=0)] = 0.5
        c: Annotated[int, Field(ge=0)] = 60  # EnsembleRetriever's default RRF constant
        k: Annotated[int, Field(ge=1)] = DEFAULT_DEPTH  # each retriever's list length
        embedder: Annotated[str | Embedder, EMBEDDER] = "minilm"
        device: Annotated[Literal["auto", "cpu", "cuda"] | str, DEVICE] = "auto"

    def __init__(self, store, params: Params | None = None) -> None:
        super().__init__(store, params)
        self.embedder = get_embedder(self.params.embedder, self.params.device)
        self.vectors = InMemoryVectorStore(TaggraphEmbeddings(self.embedder))
        self.documents: list[Document] = []
        self._bm25: BM25Retriever | None = None  # rebuilt when notes arrive (its IDF is over every document)
        self._memo: tuple[tuple[str, int], dict[str, dict[int, int]]] | None = None

    def config(self) -> dict[str, Any]:
        """The parameters, with the embedder's name and the device it runs on."""
        return {**super().config(), "embedder": self.embedder.name, "device": self.embedder.device}

    def add_many(self, notes: list[Note]) -> None:
        """Index `notes`, embedded in one call."""
        docs = [Document(page_content=note.raw_text, metadata={KEY: note.index}) for note in notes]
        self.vectors.add_documents(docs, ids=[str(note.index) for note in notes])
        self.documents += docs
        self._bm25, self._memo = None, None

    def add(self, note: Note) -> None:
        self.add_many([note])

    def _ranks(self, text: str) -> dict[str, dict[int, int]]:
        """Note -> its rank in the BM25 list, the vector list and the fused list, once per (text, notes)."""
        key = (text, len(self.documents))
        if self._memo is not None and self._memo[0] == key:
            return self._memo[1]
        ranks: dict[str, dict[int, int]] = {"bm25": {}, "vector": {}, "fused": {}}
        if text.strip() and self.documents:
            if self._bm25 is None:
                self._bm25 = BM25Retriever.from_documents(self.documents)
            self._bm25.k = self.params.k
            vector = self.vectors.as_retriever(search_kwargs={"k": self.params.k})
            lists = {"bm25": self._bm25.invoke(text), "vector": vector.invoke(text)}
            ensemble = EnsembleRetriever(retrievers=[self._bm25, vector], c=self.params.c, id_key=KEY,
                                         weights=[self.params.bm25_weight, self.params.vector_weight])
            lists["fused"] = ensemble.weighted_reciprocal_rank([lists["bm25"], lists["vector"]])
            ranks = {name: {doc.metadata[KEY]: r for r, doc in enumerate(docs, 1)} for name, docs in lists.items()}
        self._memo = (key, ranks)
        return ranks

    def score(self, text: str, *, asked_on: datetime | None = None) -> Scores:
        """Each fused note scored by its place in LangChain's fused order (module docstring)."""
        fused = self._ranks(text)["fused"]
        values = np.zeros(len(self.store))
        for i, r in fused.items():
            values[i] = len(fused) - r + 1
        return Scores.of_dense(values)

    def evidence(self, text: str, note: Note, *, asked_on: datetime | None = None) -> Evidence:
        """The note's ranks in LangChain's BM25 and vector lists and in their fusion."""
        ranks = self._ranks(text)
        i, k = note.index, self.params.k
        detail = {name: ranks[name].get(i) for name in ("bm25", "vector", "fused")}
        if detail["fused"] is None:
            why = "the question is blank" if not text.strip() else f"in neither list of the first {k}"
            return Evidence(missing=f"not fused: {why}", detail=detail)
        parts = [f"{name} rank {detail[name]}" for name in ("bm25", "vector") if detail[name] is not None]
        return Evidence(summary=f"{' and '.join(parts)} of {k}; LangChain's weighted RRF (c = {self.params.c}) "
                                f"puts it {detail['fused']}", detail=detail)
