"""The store-wide indexes several methods share, each grown one note at a time.

- `TermIndex` (`term_index(store)`): term statistics for BM25, TF-IDF overlap and
  stopword filtering;
- `ConceptMatcher` (`concept_matcher(store)`): lexical entry points into the base
  graph's concepts and their ontology adjacency, for TagGraph, AdaptiveGraph, the
  failure diagnostics and the graph view;
- `filter_tokens`: the paper's 15% document-frequency stopword rule.

The store keeps one instance of each (`MemoryStore.shared_index`); both offer `taggraph.core.snapshot`'s
protocol, so a saved store keeps them beside its notes and a loaded one reads them back instead of rebuilding.
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Callable

import numpy as np

from taggraph._infra.growing import GrowingArray
from taggraph._infra.postings import Postings
from taggraph.core.notes import Note
from taggraph.core.snapshot import check_runs, pack_runs, pack_strings, unpack_runs, unpack_strings
from taggraph.core.ontology import parent, prefixes, segment_words, singular
from taggraph.core.store import MemoryStore
from taggraph.core.text import tokenize
from taggraph.methods.scores import Scores

STOPWORD_DF = 0.15  # paper, appendix E: tokens in more than 15% of a case's files are generic


class TermIndex:
    """Term statistics over one text of each note: `text(note)`, by default its full Markdown.

    Postings are numpy arrays that grow in place (`Postings`): a query reads them without a copy, an added
    note appends to its terms' arrays (bm25s likewise keeps postings as arrays; its index cannot grow).
    """

    STATE_VERSION = 1  # bump when tokenize or what is counted changes

    def __init__(self, text: Callable[[Note], str] = Note.to_markdown) -> None:
        self.text = text
        self._doc_len = GrowingArray(np.float64)
        self.df: Counter[str] = Counter()
        self._terms_with_df = np.zeros(2, np.int64)  # [df] -> number of terms with that df (the mean idf reads it)
        self._postings = Postings()  # term -> (note indexes, tfs)
        self.total_len = 0

    @property
    def n_docs(self) -> int:
        return len(self._doc_len)

    @property
    def doc_len(self) -> np.ndarray:
        """Each note's number of tokens, by note index."""
        return self._doc_len.view

    def add(self, note: Note) -> None:
        """Index `text(note)`; by default the full text (tag line and body), as the BM25 baseline reads it."""
        counts = Counter(tokenize(self.text(note)))
        doc, length = self.n_docs, sum(counts.values())
        self._doc_len.append(length)
        self.total_len += length
        before = np.fromiter((self.df[term] for term in counts), np.int64, len(counts))
        for term, tf in counts.items():
            self.df[term] += 1
            self._postings.append(term, doc, tf)
        self._count_dfs(before)

    def state(self) -> dict[str, np.ndarray]:
        """The index as arrays (`taggraph.core.snapshot`): terms in the order first seen, postings end to end."""
        terms = list(self._postings.keys())
        runs = [self._postings.get(t) for t in terms]
        counts, docs = pack_runs([d for d, _ in runs], np.int32)
        _, tfs = pack_runs([t for _, t in runs], np.int32)
        terms, offsets = pack_strings(terms)
        return {"terms": terms, "term_offsets": offsets, "counts": counts, "docs": docs, "tfs": tfs,
                "doc_len": self.doc_len}

    def load_state(self, arrays: dict[str, np.ndarray], notes: int) -> None:
        """Become the index `state` described over `notes` notes; ValueError for arrays that do not describe one:
        a repeated term, postings out of note order or range, document lengths other than their postings' sum."""
        terms = unpack_strings(arrays["terms"], arrays["term_offsets"])
        check_runs(arrays["counts"], arrays["docs"], np.int32, increasing=True)
        check_runs(arrays["counts"], arrays["tfs"], np.int32)
        docs, tfs, doc_len = arrays["docs"], arrays["tfs"], arrays["doc_len"]
        if len(set(terms)) != len(terms) or len(terms) != len(arrays["counts"]) or doc_len.dtype != np.float64 \
                or doc_len.shape != (notes,) or np.any(docs < 0) or np.any(docs >= notes) or np.any(tfs < 1) \
                or not np.array_equal(np.bincount(docs, weights=tfs, minlength=notes), doc_len):
            raise ValueError("TermIndex state: does not describe postings of its notes")
        self._doc_len = GrowingArray.of(doc_len)
        self.total_len = int(doc_len.sum())
        self.df = Counter(dict(zip(terms, arrays["counts"].tolist())))
        self._postings = Postings.packed(terms, arrays["counts"], docs, tfs)
        self._terms_with_df = np.zeros(2, np.int64)
        self._count_dfs(np.zeros(len(terms), np.int64), arrays["counts"].astype(np.int64))

    def _count_dfs(self, before: np.ndarray, after: np.ndarray | None = None) -> None:
        """Move terms from their df `before` to `after` (default one more) in the terms per df."""
        after = before + 1 if after is None else after
        if len(after) and after.max() >= len(self._terms_with_df):
            grown = np.zeros(max(2 * len(self._terms_with_df), int(after.max()) + 1), np.int64)
            grown[:len(self._terms_with_df)] = self._terms_with_df
            self._terms_with_df = grown
        np.add.at(self._terms_with_df, after, 1)
        np.subtract.at(self._terms_with_df, before, 1)

    @property
    def terms_with_df(self) -> np.ndarray:
        """[df] -> number of terms found in exactly df notes ([0] unused)."""
        return self._terms_with_df

    def is_generic(self, term: str, threshold: float = STOPWORD_DF) -> bool:
        """True for a token found in more than `threshold` of the case's files."""
        return self.n_docs > 0 and self.df.get(term, 0) / self.n_docs > threshold

    def tfidf_overlap(self, terms: list[str]) -> Scores:
        """Content overlap of each note with the query terms, weighted by TF-IDF.

        weight(t, d) = (1 + ln tf) * ln((1 + N) / (1 + df)); a note's overlap is the
        sum over distinct query terms it contains, divided by the best note's sum,
        so values lie in (0, 1]. Rarer terms contribute more.
        """
        n = self.n_docs
        scores = np.zeros(n)
        for term in dict.fromkeys(terms):
            arrays = self.postings_arrays(term)
            if arrays is None:
                continue
            docs, tf = arrays
            idf = math.log((1 + n) / (1 + self.df[term]))
            scores[docs] += _one_plus_log(tf) * idf  # each note once per term: the sums run in term order
        top = scores.max(initial=0.0)
        if top <= 0:
            return Scores.of_dense(np.zeros(0))
        reached = scores > 0
        return Scores(np.flatnonzero(reached), scores[reached] / top)

    def postings_arrays(self, term: str) -> tuple[np.ndarray, np.ndarray] | None:
        """(note indexes, term frequencies as float64) of the notes holding `term`; None when none does."""
        post = self._postings.get(term)
        if post is None:
            return None
        return post[0], post[1].astype(np.float64)


def _one_plus_log(tf: np.ndarray) -> np.ndarray:
    """1 + ln(tf) for integer term frequencies, each as `math.log` rounds it (np.log may differ in the last bit,
    which would reorder tied notes); a term has few distinct frequencies, so this is a lookup."""
    distinct, where = np.unique(tf, return_inverse=True)
    return np.array([1 + math.log(t) for t in distinct.tolist()])[where]


def term_index(store: MemoryStore) -> TermIndex:
    """The store's shared TermIndex, created and attached on first use."""
    return store.shared_index("terms", TermIndex)


def raw_term_index(store: MemoryStore) -> TermIndex:
    """The store's shared TermIndex over the raw turns (`Note.raw_text`: no tag line)."""
    return store.shared_index("raw_terms", lambda: TermIndex(lambda note: note.raw_text))


class ConceptMatcher:
    """Lexical entry points and adjacency of the base graph's concepts, grown with the store.

    - ``by_word``: word -> concept paths whose last segment contains it;
    - ``neighbours``: concept -> parent and child concepts (the ontology edges);
    - ``files``: concept -> note indexes reached by concept -> topic -> file. A topic is a
      note's tag frame (taggraph.core.graph), so these are the notes whose frame holds the concept.
    Plain dicts instead of networkx walks: the same edges, ~10x faster to traverse.
    """

    STATE_VERSION = 1

    def __init__(self) -> None:
        self.by_word: dict[str, set[str]] = {}
        self.neighbours: dict[str, set[str]] = {}
        self.files: dict[str, list[int]] = {}
        self.version = 0  # bumped when the ontology grows (invalidates cached expansions)

    def add(self, note: Note) -> None:
        for path in note.paths():
            for pre in prefixes(path):
                if pre not in self.neighbours:
                    self._add_concept(pre)
            self.files.setdefault(path, []).append(note.index)

    def state(self) -> dict[str, np.ndarray]:
        """The matcher as arrays (`taggraph.core.snapshot`): its concepts in the order made (the rest follows from
        them) and the notes of each tag."""
        position = {concept: i for i, concept in enumerate(self.neighbours)}
        concepts, offsets = pack_strings(list(self.neighbours))
        counts, notes = pack_runs([np.asarray(n) for n in self.files.values()], np.int32)
        return {"concepts": concepts, "concept_offsets": offsets, "counts": counts, "notes": notes,
                "tags": np.array([position[path] for path in self.files], dtype=np.int64)}

    def load_state(self, arrays: dict[str, np.ndarray], notes: int) -> None:
        """Become the matcher `state` described over `notes` notes; ValueError for arrays that do not describe one."""
        concepts = unpack_strings(arrays["concepts"], arrays["concept_offsets"])
        runs = unpack_runs(arrays["counts"], arrays["notes"], np.int32, increasing=True)
        tags = arrays["tags"]
        if tags.dtype != np.int64 or tags.shape != (len(runs),) or np.any(tags < 0) or np.any(tags >= len(concepts)) \
                or len(set(tags.tolist())) != len(tags) or np.any(arrays["notes"] < 0) \
                or np.any(arrays["notes"] >= notes):
            raise ValueError("ConceptMatcher state: does not describe tags of its notes")
        for concept in concepts:
            up = parent(concept)
            if concept in self.neighbours or (up is not None and up not in self.neighbours):
                raise ValueError(f"ConceptMatcher state: concept {concept!r} repeated or before its parent")
            self._add_concept(concept)
        self.files = {concepts[tag]: run.tolist() for tag, run in zip(tags.tolist(), runs)}

    def _add_concept(self, pre: str) -> None:
        self.version += 1
        self.neighbours[pre] = set()
        up = parent(pre)
        if up is not None:
            self.neighbours[pre].add(up)
            self.neighbours[up].add(pre)
        for word in segment_words(pre):
            self.by_word.setdefault(word, set()).add(pre)

    def match(self, token: str) -> list[str]:
        return sorted(self.by_word.get(token, set()) | self.by_word.get(singular(token), set()))


def concept_matcher(store) -> ConceptMatcher:
    """The store's shared ConceptMatcher, created and attached on first use."""
    return store.shared_index("concepts", ConceptMatcher)


def filter_tokens(tokens: list[str], terms, stopwords: bool, threshold: float,
                  fallback: bool = False) -> tuple[list[str], list[str]]:
    """(kept, dropped) distinct query tokens; with `stopwords`, generic tokens are dropped.

    With `fallback` (beyond the paper, off by default) a query whose tokens would all
    be dropped keeps them all: in tiny stores (LongMemEval oracle, ~10 notes) the 15%
    threshold otherwise empties most queries.
    """
    distinct = list(dict.fromkeys(tokens))
    if not stopwords:
        return distinct, []
    kept = [t for t in distinct if not terms.is_generic(t, threshold)]
    if fallback and not kept:
        return distinct, []
    return kept, [t for t in distinct if t not in kept]
