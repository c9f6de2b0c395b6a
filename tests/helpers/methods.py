"""Toy methods that keep the contract: `WordCount` (the base of the contract tests' broken variants) and
`USER_METHOD`, the source of a method as a researcher writes it in a notebook cell (public names only)."""

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


# What a researcher writes in a notebook cell or a module of their own: public names only.
USER_METHOD = '''
from collections import Counter
from dataclasses import dataclass
from typing import Annotated

from pydantic import Field

import taggraph as tg


@tg.register_method("WordOverlap")
class WordOverlap(tg.Retriever):
    """Counts the question's words (of min_len letters or more) in each note's raw turn."""

    @dataclass(frozen=True)
    class Params:
        min_len: Annotated[int, Field(ge=1)] = 3

    def __init__(self, store, params=None):
        super().__init__(store, params)
        self.words = []

    def _words(self, text):
        return [w.strip(".,?!'").lower() for w in text.split() if len(w.strip(".,?!'")) >= self.params.min_len]

    def add(self, note):
        self.words.append(Counter(self._words(note.raw_text)))

    def score(self, text, *, asked_on=None):
        query = self._words(text)
        scores = {i: float(sum(c[w] for w in query)) for i, c in enumerate(self.words)}
        return {i: s for i, s in scores.items() if s}

    def evidence(self, text, note, *, asked_on=None):
        shared = sorted(set(self._words(text)) & set(self.words[note.index]))
        if not shared:
            return tg.Evidence(missing="shares no word of the question")
        return tg.Evidence(summary="shares " + ", ".join(shared), detail={"shared_words": shared})
'''
