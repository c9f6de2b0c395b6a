"""BM25: Okapi BM25 over the full note text, no graph (paper, section 3.3.2).

Scores equal rank-bm25's ``BM25Okapi`` (k1=1.5, b=0.75, epsilon=0.25, including
its floor for negative idf: epsilon x the mean idf, below 0 when that mean is) -
tests/unit/test_bm25.py checks parity. We keep our own inverted index instead of calling
BM25Okapi because BM25Okapi cannot add a document without rebuilding, and
`remember` must be incremental.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated

from pydantic import Field

import numpy as np

from taggraph.core.notes import Note
from taggraph.methods.base import Evidence, Retriever
from taggraph.methods.scores import Scores, summed
from taggraph.methods.index import TermIndex, term_index
from taggraph.methods.term_memo import TermMemo
from taggraph.core.text import query_tokens


NORM = object()  # the memo's key of the per-note length norms (no term is this object)


class BM25(Retriever):
    @dataclass(frozen=True)
    class Params:
        k1: Annotated[float, Field(ge=0)] = 1.5
        b: Annotated[float, Field(ge=0, le=1)] = 0.75
        epsilon: Annotated[float, Field(ge=0)] = 0.25

    def __init__(self, store, params: Params | None = None, terms: TermIndex | None = None) -> None:
        super().__init__(store, params)
        self.terms = term_index(store) if terms is None else terms  # another text of the notes, e.g. raw turns
        self._idf_cache: tuple[int, float] | None = None  # (n_docs, average idf)
        # term -> (note indexes, contributions) while the index holds (n_docs, total_len): a warm query sums these;
        # every add changes avgdl and so every value, and a query after one recomputes its terms
        self._memo = TermMemo()

    def add(self, note: Note) -> None:
        self._idf_cache = None  # the shared TermIndex itself is updated by the store

    def _average_idf(self) -> float:
        """The mean idf over all terms, from the number of terms per df (a query after an add reads at most one
        number per note, not one per term; the sum's order differs from rank-bm25's term loop by rounding only)."""
        if self._idf_cache is None or self._idf_cache[0] != self.terms.n_docs:
            per_df = self.terms.terms_with_df
            df = np.flatnonzero(per_df[1:]) + 1
            terms = per_df[df].astype(np.float64)
            n = self.terms.n_docs
            avg = float(terms @ (np.log(n - df + 0.5) - np.log(df + 0.5)) / terms.sum()) if len(df) else 0.0
            self._idf_cache = (n, avg)
        return self._idf_cache[1]

    def idf(self, term: str) -> float:
        df = self.terms.df.get(term, 0)
        if df == 0:
            return 0.0
        n = self.terms.n_docs
        value = math.log(n - df + 0.5) - math.log(df + 0.5)
        return value if value >= 0 else self.params.epsilon * self._average_idf()

    def _contributions(self, tokens: list[str]) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """term -> (note indexes, per-note contribution of one occurrence of the term), memoized per term until the
        next add."""
        at = (self.terms.n_docs, self.terms.total_len)
        memo = self._memo.at(at)
        k1, b = self.params.k1, self.params.b
        out = {}
        for term in dict.fromkeys(tokens):  # query order: tied terms read the same in every process
            found = memo.get(term)
            if found is None:
                arrays = self.terms.postings_arrays(term)
                if arrays is None:
                    continue
                docs, tf = arrays
                norm = memo.get(NORM)
                if norm is None:  # each note's length norm, once per index state: a term's notes read theirs
                    norm = memo.put(NORM, k1 * (1 - b + b * self.terms.doc_len / (at[1] / max(at[0], 1))), at[0])
                contributions = self.idf(term) * tf * (k1 + 1) / (tf + norm[docs])  # as rank-bm25 rounds it
                found = memo.put(term, (docs, contributions), len(docs))
            out[term] = found
        return out

    def score(self, text: str, *, asked_on: datetime | None = None) -> Scores:
        tokens = query_tokens(text)
        contrib = self._contributions(tokens)
        # repeated query tokens count again, as in rank-bm25
        scores = summed([contrib[term] for term in tokens if term in contrib], self.terms.n_docs)
        # a note without a query term scores 0; where the epsilon floor makes some score negative (a tiny memory
        # whose terms are mostly in over half its notes), those 0s rank above them, as in rank-bm25's order
        return Scores.of_dense(scores, np.ones(len(scores), bool) if (scores < 0).any() else None)

    def evidence(self, text: str, note: Note, *, asked_on: datetime | None = None) -> Evidence:
        tokens = query_tokens(text)
        terms = {}
        for term, (docs, values) in self._contributions(tokens).items():
            at = int(np.searchsorted(docs, note.index))  # a term's note indexes ascend
            if at < len(docs) and docs[at] == note.index:
                terms[term] = round(float(values[at]) * tokens.count(term), 4)
        matched = dict(sorted(terms.items(), key=lambda kv: -kv[1]))
        if not matched:
            return Evidence(missing="shares no query term with the note", detail={"matched_terms": matched})
        floored = [t for t in matched if math.log(self.terms.n_docs - self.terms.df[t] + 0.5)
                   < math.log(self.terms.df[t] + 0.5)]
        return Evidence(summary="BM25 over the query terms " + ", ".join(
                            f"'{t}' {v:.3g}" for t, v in list(matched.items())[:5]),
                        fallback=self._floor_words(floored) if floored else None,
                        detail={"matched_terms": matched})

    def _floor_words(self, floored: list[str]) -> str:
        """What rank-bm25's epsilon rule did to `floored` (terms with negative idf): it sets their idf to
        epsilon x the mean idf of all terms, which is a floor above 0 only while that mean is positive; on
        a small store the mean is often negative too, and the 'floored' idf stays negative."""
        eps, mean = self.params.epsilon, self._average_idf()
        head = f"{floored} occur in more than half of the {self.terms.n_docs} notes, so their negative idf is"
        if mean >= 0:
            return f"{head} floored at {eps} x the mean idf {mean:.3g} = {eps * mean:.3g}"
        return (f"{head} set to {eps} x the mean idf as rank-bm25 does; the mean idf is itself negative here "
                f"({eps} x {mean:.3g} = {eps * mean:.3g}), so their idf stays negative and they lower the score")
