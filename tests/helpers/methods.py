"""A toy method that keeps the contract: the base of the contract tests' broken variants."""

from __future__ import annotations

from collections import Counter

from taggraph.core.text import tokenize
from taggraph.methods import Evidence, Retriever


class WordCount(Retriever):
    """Counts the question's words in each note's raw text: a plug-in method that keeps the contract."""

    def __init__(self, store, params=None):
        super().__init__(store, params)
        self.counts: list[Counter] = []

    def add(self, note):
        self.counts.append(Counter(tokenize(note.raw_text)))

    def score(self, text, *, asked_on=None):
        words = tokenize(text)
        scores = {i: float(sum(c[w] for w in words)) for i, c in enumerate(self.counts)}
        return {i: s for i, s in scores.items() if s}

    def evidence(self, text, note, *, asked_on=None):
        shared = sorted(set(tokenize(text)) & set(self.counts[note.index]))
        return Evidence(summary="shares " + ", ".join(shared)) if shared else Evidence(missing="shares no word")
