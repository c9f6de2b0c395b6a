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
inverted index over bm25s's token ids (`StemIndex`, shared by the store like BM25's `TermIndex` and saved
beside the notes) instead of a `bm25s.BM25` because a bm25s index is static (it is built once over a whole
corpus) and `add` must be incremental: a note is indexed in O(its tokens).
BM25L and BM25+ give every note the same floor per query term (bm25s's "non-occurrence" score); the
notes that share a term get it added, the others are left out, which ranks them as bm25s does.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from itertools import islice
from datetime import datetime
from typing import Annotated, Literal

import numpy as np
import Stemmer
from bm25s.scoring import _select_idf_scorer, _select_tfc_scorer
from bm25s.tokenization import Tokenizer
from pydantic import Field

from taggraph.core.notes import Note
from taggraph.core.snapshot import check_runs, pack_runs, pack_strings, unpack_strings
from taggraph.core.store import MemoryStore
from taggraph._infra.growing import GrowingArray
from taggraph._infra.postings import Postings
from taggraph.methods.base import Evidence, Retriever
from taggraph.methods.scores import Scores, summed
from taggraph.methods.term_memo import TermMemo
from taggraph.core.text import MAX_QUERY_CHARS

TOKEN_PATTERN = r"(?u)[^\W_][^\W_]+|\b\d\b"  # bm25s's 2+ character runs, split at "_", and one-digit numbers
Variant = Literal["robertson", "lucene", "atire", "bm25l", "bm25+"]


def make_tokenizer(stem: bool = True, stopwords: bool = True) -> Tokenizer:
    """bm25s's tokenizer as BM25-stem uses it: English stopwords and PyStemmer's English stemmer, each optional."""
    return Tokenizer(splitter=TOKEN_PATTERN, stopwords="english" if stopwords else None,
                     stemmer=Stemmer.Stemmer("english") if stem else None)


class StemIndex:
    """Postings over bm25s token ids of one text of each note (`text(note)`), grown note by note: a store-wide
    index (`stem_index`) that BM25-stem and TagGraph-Fusion's stemmed lists share, kept by `Memory.save` as a
    snapshot (`taggraph.core.snapshot`'s protocol) with the tokenizer's vocabulary, so a loaded store reads it."""

    STATE_VERSION = 1  # bump when TOKEN_PATTERN, the stemmer or what is counted changes

    def __init__(self, text: Callable[[Note], str], stem: bool = True, stopwords: bool = True) -> None:
        self.text = text
        self.tokenizer = make_tokenizer(stem, stopwords)
        self._doc_len = GrowingArray(np.float64)
        self._postings = Postings()  # token id -> (note indexes, tfs)
        self._names: list[str] = []  # token id -> its stem (its word, unstemmed), read from the vocabulary as it grows

    def token_names(self) -> list[str]:
        """Each token id's stem (word when unstemmed): bm25s numbers tokens 0, 1, ... as first seen, in the order
        its vocabulary dict holds them, so the list grows by the dict's new tail."""
        vocabulary = self._vocabulary()
        if len(self._names) < len(vocabulary):
            self._names.extend(islice(vocabulary, len(self._names), None))
        return self._names

    def tokens(self, text: str, *, grow: bool) -> list[int]:
        """bm25s token ids of `text`; `grow` adds its new words to the vocabulary (notes), else they are dropped."""
        return next(self.tokenizer.streaming_tokenize([text], update_vocab=grow, allow_empty=False))

    def add(self, note: Note) -> None:
        ids = self.tokens(self.text(note), grow=True)
        doc = len(self._doc_len)
        self._doc_len.append(len(ids))
        for term, tf in Counter(ids).items():
            self._postings.append(term, doc, tf)

    @property
    def doc_len(self) -> np.ndarray:
        """Each note's number of token ids, by note index."""
        return self._doc_len.view

    def postings_arrays(self, term: int) -> tuple[np.ndarray, np.ndarray]:
        """(note indexes, term frequencies as float64) of the notes holding the token id `term`."""
        docs, tfs = self._postings.get(term)
        return docs, tfs.astype(np.float64)

    def state(self) -> dict[str, np.ndarray]:
        """The index as arrays: the vocabulary (each token by its id: stems, or words when unstemmed) and the
        postings end to end in token id order. bm25s's word -> stem and word -> stem id maps are caches the
        stemmer fills again."""
        stems, offsets = pack_strings(list(self._vocabulary()))
        terms = sorted(self._postings.keys())
        runs = [self._postings.get(t) for t in terms]
        counts, docs = pack_runs([d for d, _ in runs], np.int32)
        _, tfs = pack_runs([f for _, f in runs], np.int32)
        return {"vocabulary": stems, "offsets": offsets, "terms": np.array(terms, np.int64), "counts": counts,
                "docs": docs, "tfs": tfs, "doc_len": self.doc_len}

    def _vocabulary(self) -> dict[str, int]:
        """bm25s's token -> id map: stem -> id with a stemmer, word -> id without (ids 0, 1, ... as first seen)."""
        return self.tokenizer.stem_to_sid if self.tokenizer.stemmer is not None else self.tokenizer.word_to_id

    def load_state(self, arrays: dict[str, np.ndarray], notes: int) -> None:
        """Become the index `state` described over `notes` notes; ValueError for arrays that do not describe one."""
        vocabulary = unpack_strings(arrays["vocabulary"], arrays["offsets"])
        terms, doc_len, docs, tfs = arrays["terms"], arrays["doc_len"], arrays["docs"], arrays["tfs"]
        check_runs(arrays["counts"], docs, np.int32, increasing=True)
        check_runs(arrays["counts"], tfs, np.int32)
        if len(set(vocabulary)) != len(vocabulary) or terms.dtype != np.int64 or terms.shape != arrays["counts"].shape \
                or np.any(np.diff(terms) <= 0) or np.any(terms < 0) or np.any(terms >= len(vocabulary)) \
                or doc_len.dtype != np.float64 or doc_len.shape != (notes,) or np.any(docs < 0) \
                or np.any(docs >= notes) or np.any(tfs < 1) \
                or not np.array_equal(np.bincount(docs, weights=tfs, minlength=notes), doc_len):
            raise ValueError("StemIndex state: does not describe postings of its notes")
        self.tokenizer.reset_vocab()
        self._names = []
        self._vocabulary().update((token, i) for i, token in enumerate(vocabulary))
        self._doc_len = GrowingArray.of(doc_len)
        self._postings = Postings.packed(terms.tolist(), arrays["counts"], docs, tfs)


def stem_index(store: MemoryStore, name: str, text: Callable[[Note], str], stem: bool, stopwords: bool) -> StemIndex:
    """The store's shared StemIndex `name` over `text(note)` (one per tokenizer: "-nostem", "-nostop" appended when
    the stemmer or the stopwords are off), created and attached on first use."""
    name += ("" if stem else "-nostem") + ("" if stopwords else "-nostop")
    return store.shared_index(name, lambda: StemIndex(text, stem, stopwords))


class BM25Stem(Retriever):
    @dataclass(frozen=True)
    class Params:
        variant: Variant = "robertson"  # chosen on LongMemEval-S dev (docs/methods.md)
        k1: Annotated[float, Field(gt=0)] = 1.5  # > 0: with k1 = 0 and delta = 0, BM25L's floor is 0/0
        b: Annotated[float, Field(ge=0, le=1)] = 0.75
        delta: Annotated[float, Field(ge=0)] = 0.5  # BM25L and BM25+ only, as in bm25s
        stem: bool = True
        stopwords: bool = True

    INDEX = "stems"  # the name of the shared `StemIndex` of `indexed_text`

    def __init__(self, store, params: Params | None = None) -> None:
        super().__init__(store, params)
        self.index = stem_index(store, self.INDEX, self.indexed_text, self.params.stem, self.params.stopwords)
        self.tokenizer = self.index.tokenizer
        self._memo = TermMemo()  # term id -> (note indexes, contributions, floor) while the index holds as many notes

    def tokens(self, text: str, *, grow: bool) -> list[int]:
        """bm25s token ids of `text` (`StemIndex.tokens`)."""
        return self.index.tokens(text, grow=grow)

    @staticmethod
    def indexed_text(note: Note) -> str:
        """What is indexed of a note: its full Markdown, tag line included."""
        return note.to_markdown()

    def add(self, note: Note) -> None:
        pass  # the shared StemIndex itself is updated by the store

    @property
    def doc_len(self) -> np.ndarray:
        """Each note's number of token ids, by note index."""
        return self.index.doc_len

    def postings_arrays(self, term: int) -> tuple[np.ndarray, np.ndarray]:
        """(note indexes, term frequencies as float64) of the notes holding the token id `term`."""
        return self.index.postings_arrays(term)

    def _contributions(self, ids: list[int]) -> tuple[dict[int, tuple[np.ndarray, np.ndarray]], float]:
        """term id -> (note indexes, what one occurrence of the term in the query adds to each, above the
        floor), and the floor: what the query's terms give every note (0 but for BM25L and BM25+); memoized per
        term until the next add (a note's length never changes, so the number of notes tells the index's state)."""
        lengths = self.doc_len
        n = len(lengths)
        memo, avgdl = self._memo.at(n), None
        out, floor = {}, 0.0
        for term in set(ids):
            found = memo.get(term)
            if found is None:
                avgdl = (float(lengths.mean()) if n else 1.0) if avgdl is None else avgdl
                docs, tfs = self.postings_arrays(term)
                values, none = self._weights(len(docs), n, tfs, lengths[docs], avgdl)
                found = memo.put(term, (docs, values, none), len(docs))
            floor += found[2] * ids.count(term)
            out[term] = found[:2]
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

    def group_scores(self, text: str, group: np.ndarray, n_groups: int) -> np.ndarray:
        """The BM25 score of `text` for each of `n_groups` documents, each the notes of one group (`group[i]`:
        note i's group) read as one text: term frequencies and lengths summed, idf over the groups (TagGraph-Fusion's
        `session_stem`: a session as one document). Above the floor, as `score` (BM25L and BM25+)."""
        ids = self.tokens(text[:MAX_QUERY_CHARS], grow=False)
        lengths = np.bincount(group, weights=self.doc_len, minlength=n_groups)
        found = int((lengths > 0).sum())
        avgdl = float(lengths.sum() / found) if found else 1.0
        scores = np.zeros(n_groups)
        for term in set(ids):
            docs, tfs = self.postings_arrays(term)
            tf = np.bincount(group[docs], weights=tfs, minlength=n_groups)
            hit = np.flatnonzero(tf)
            scores[hit] += ids.count(term) * self._weights(len(hit), found, tf[hit], lengths[hit], avgdl)[0]
        return scores

    def score(self, text: str, *, asked_on: datetime | None = None) -> Scores:
        ids = self.tokens(text[:MAX_QUERY_CHARS], grow=False)
        contrib, floor = self._contributions(ids)
        scores = summed([contrib[term] for term in ids], len(self.doc_len))  # a repeated token counts again, as in bm25s
        reached = np.flatnonzero(scores)
        return Scores(reached, scores[reached] + floor)

    def evidence(self, text: str, note: Note, *, asked_on: datetime | None = None) -> Evidence:
        ids = self.tokens(text[:MAX_QUERY_CHARS], grow=False)
        contrib, floor = self._contributions(ids)
        names = self.index.token_names()
        matched = {}
        for term, (docs, values) in contrib.items():
            at = int(np.searchsorted(docs, note.index))  # a term's note indexes ascend
            if at < len(docs) and docs[at] == note.index and values[at] > 0:
                matched[names[term]] = round(float(values[at]) * ids.count(term), 4)
        matched = dict(sorted(matched.items(), key=lambda kv: -kv[1]))
        detail = {"matched_stems": matched, "query_stems": sorted({names[i] for i in ids}),
                  "variant": self.params.variant, "floor": round(floor, 4)}
        if not matched:
            return Evidence(missing="shares no query stem with the note", detail=detail)
        return Evidence(summary=f"BM25 ({self.params.variant}) over the query stems " + ", ".join(
            f"'{t}' {v:.3g}" for t, v in list(matched.items())[:5]), detail=detail)
