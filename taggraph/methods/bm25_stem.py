"""BM25-stem: BM25 over stems, stopwords dropped, one of five BM25 variants (beyond the paper).

The paper's BM25 (`bm25.py`, rank-bm25's Okapi over plain tokens) stays as it is; this is a separate
method. It reads the same full note text (tag line included) but tokenizes it apart from scoring, as
bm25s does: bm25s's `Tokenizer` lowercases, splits, drops bm25s's English stopword list (33 function
words) and stems with PyStemmer's English (Snowball) stemmer, so "running" and "runs" meet at "run".
Speaker names and dates stay tokens: no name or month is on the stopword list, a name is stemmed alike
in the note and the question, and the split (`TOKEN_PATTERN`) keeps bm25s's runs of two or more letters
or digits plus one-digit numbers ("May 5"), which bm25s's default pattern drops; it also splits at "_".

Scores are those of bm25s's `BM25(method=variant, k1, b, delta)`, computed with bm25s's own idf and
term-frequency formulas (`bm25s.scoring`); tests/unit/test_bm25_stem.py checks parity. We keep our own
inverted index over bm25s's token ids instead of a `bm25s.BM25` because a bm25s index is static (it is
built once over a whole corpus) and `add` must be incremental: a note is indexed in O(its tokens).
BM25L and BM25+ give every note the same floor per query term (bm25s's "non-occurrence" score); the
notes that share a term get it added, the others are left out, which ranks them as bm25s does.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Literal

import numpy as np
import Stemmer
from bm25s.scoring import _select_idf_scorer, _select_tfc_scorer
from bm25s.tokenization import Tokenizer
from pydantic import Field

from taggraph.core.notes import Note
from taggraph._infra.growing import GrowingArray
from taggraph.methods.base import Evidence, Retriever
from taggraph.methods.scores import Scores
from taggraph.core.text import MAX_QUERY_CHARS

TOKEN_PATTERN = r"(?u)[^\W_][^\W_]+|\b\d\b"  # bm25s's 2+ character runs, split at "_", and one-digit numbers
Variant = Literal["robertson", "lucene", "atire", "bm25l", "bm25+"]


def make_tokenizer(stem: bool = True, stopwords: bool = True) -> Tokenizer:
    """bm25s's tokenizer as BM25-stem uses it: English stopwords and PyStemmer's English stemmer, each optional."""
    return Tokenizer(splitter=TOKEN_PATTERN, stopwords="english" if stopwords else None,
                     stemmer=Stemmer.Stemmer("english") if stem else None)


class BM25Stem(Retriever):
    @dataclass(frozen=True)
    class Params:
        variant: Variant = "robertson"  # chosen on LongMemEval-S dev (docs/methods.md)
        k1: Annotated[float, Field(gt=0)] = 1.5  # > 0: with k1 = 0 and delta = 0, BM25L's floor is 0/0
        b: Annotated[float, Field(ge=0, le=1)] = 0.75
        delta: Annotated[float, Field(ge=0)] = 0.5  # BM25L and BM25+ only, as in bm25s
        stem: bool = True
        stopwords: bool = True

    def __init__(self, store, params: Params | None = None) -> None:
        super().__init__(store, params)
        self.tokenizer = make_tokenizer(self.params.stem, self.params.stopwords)
        self._doc_len = GrowingArray(np.float64)
        self._postings: dict[int, tuple[GrowingArray, GrowingArray]] = {}  # token id -> (note indexes, tfs)

    def tokens(self, text: str, *, grow: bool) -> list[int]:
        """bm25s token ids of `text`; `grow` adds its new words to the vocabulary (notes), else they are dropped."""
        return next(self.tokenizer.streaming_tokenize([text], update_vocab=grow, allow_empty=False))

    def indexed_text(self, note: Note) -> str:
        """What is indexed of a note: its full Markdown, tag line included."""
        return note.to_markdown()

    def add(self, note: Note) -> None:
        ids = self.tokens(self.indexed_text(note), grow=True)
        doc = len(self._doc_len)
        self._doc_len.append(len(ids))
        for term, tf in Counter(ids).items():
            post = self._postings.get(term)
            if post is None:
                post = self._postings[term] = (GrowingArray(np.int32, 1), GrowingArray(np.int32, 1))
            post[0].append(doc)
            post[1].append(tf)

    @property
    def doc_len(self) -> np.ndarray:
        """Each note's number of token ids, by note index."""
        return self._doc_len.view

    def postings_arrays(self, term: int) -> tuple[np.ndarray, np.ndarray]:
        """(note indexes, term frequencies as float64) of the notes holding the token id `term`."""
        docs, tfs = self._postings[term]
        return docs.view, tfs.view.astype(np.float64)

    def _contributions(self, ids: list[int]) -> tuple[dict[int, tuple[np.ndarray, np.ndarray]], float]:
        """term id -> (note indexes, what one occurrence of the term in the query adds to each, above the
        floor), and the floor: what the query's terms give every note (0 but for BM25L and BM25+)."""
        lengths = self.doc_len
        n, avgdl = len(lengths), float(lengths.mean()) if len(lengths) else 1.0
        out, floor = {}, 0.0
        for term in set(ids):
            docs, tfs = self.postings_arrays(term)
            values, none = self._weights(len(docs), n, tfs, lengths[docs], avgdl)
            floor += none * ids.count(term)
            out[term] = (docs, values)
        return out, floor

    def _weights(self, df: int, n: int, tf: np.ndarray, lengths: np.ndarray, avgdl: float) -> tuple[np.ndarray, float]:
        """bm25s's weight of one term in documents of term frequencies `tf` and `lengths` (the term in `df` of `n`
        documents, `avgdl` their mean length), above the floor every document gets; and that floor (BM25L and
        BM25+'s non-occurrence score, else 0)."""
        p = self.params
        idf = _select_idf_scorer(p.variant)(df, N=n)
        tfc = _select_tfc_scorer(p.variant)
        shape = {"l_avg": avgdl, "k1": p.k1, "b": p.b, "delta": p.delta}
        none = idf * tfc(tf_array=0.0, l_d=avgdl, **shape) if p.variant in ("bm25l", "bm25+") else 0.0
        return idf * tfc(tf_array=tf, l_d=lengths, **shape) - none, none

    def score(self, text: str, *, asked_on: datetime | None = None) -> Scores:
        ids = self.tokens(text[:MAX_QUERY_CHARS], grow=False)
        contrib, floor = self._contributions(ids)
        scores = np.zeros(len(self.doc_len))
        for term in ids:  # a repeated query token counts again, as in bm25s
            docs, values = contrib[term]
            scores[docs] += values  # a term's notes are distinct: the sums run in query order
        reached = np.flatnonzero(scores)
        return Scores(reached, scores[reached] + floor)

    def evidence(self, text: str, note: Note, *, asked_on: datetime | None = None) -> Evidence:
        ids = self.tokens(text[:MAX_QUERY_CHARS], grow=False)
        contrib, floor = self._contributions(ids)
        names = {i: word for word, i in self.tokenizer.get_vocab_dict().items()}
        matched = {}
        for term, (docs, values) in contrib.items():
            where = np.flatnonzero(docs == note.index)
            if len(where) and values[where[0]] > 0:
                matched[names[term]] = round(float(values[where[0]]) * ids.count(term), 4)
        matched = dict(sorted(matched.items(), key=lambda kv: -kv[1]))
        detail = {"matched_stems": matched, "query_stems": sorted({names[i] for i in ids}),
                  "variant": self.params.variant, "floor": round(floor, 4)}
        if not matched:
            return Evidence(missing="shares no query stem with the note", detail=detail)
        return Evidence(summary=f"BM25 ({self.params.variant}) over the query stems " + ", ".join(
            f"'{t}' {v:.3g}" for t, v in list(matched.items())[:5]), detail=detail)
