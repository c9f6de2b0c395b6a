"""TagGraph-Fusion's cue learnt from MemPalace's hybrid_v4 (lab study 41, where it is `user_overlap`):
`keyword_overlap`, the share of the question's keywords that start a word of the session's document of the
people's own turns. Weight 0 by default (the lead decides on defaults); the preset `KEYWORD_OVERLAP` is the weight
lab study 41 fitted in every fold."""

from __future__ import annotations

import re
from functools import cache
from weakref import WeakKeyDictionary

import numpy as np

from taggraph.core.notes import Note
from taggraph.errors import ConfigError
from taggraph.methods.fusion.features import SPEAKER

KEYWORD_OVERLAP = {"keyword_overlap": 8.0}  # the preset: TagGraph-Fusion with weights=KEYWORD_OVERLAP (lab 41)
KEYWORD = re.compile(r"[a-z]{3,}")


def people_turns(note: Note) -> list[str]:
    """The turns said by the people who hold the memory: the user's, and the other turn too when a named speaker
    heads it (a conversation between two people has no assistant), lowercased, their "Name: " heads dropped."""
    named = SPEAKER.match(note.assistant or "")
    return [SPEAKER.sub("", t, count=1).lower() for t in ([note.user] + ([note.assistant] if named else [])) if t.strip()]


@cache
def stop_words() -> frozenset[str]:
    """scikit-learn's English stop words, the list lab study 41 adopted the cue with (spaCy's gave LongMemEval-S
    -0.0004 there). Imported when first read; scikit-learn comes with sentence-transformers (the dense and int8
    extras that Fusion's default embedder needs) and with the lab extra."""
    try:
        from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS
    except ImportError as error:
        raise ConfigError("TagGraph-Fusion's keyword_overlap reads scikit-learn's English stop words: "
                          "pip install 'taggraph[int8]' (or [dense], [lab])") from error
    return frozenset(ENGLISH_STOP_WORDS)


def keywords(text: str) -> set[str]:
    """The question's distinct words of 3 letters or more, English stop words out."""
    return {w for w in KEYWORD.findall(text.lower()) if w not in stop_words()}


class PeopleDocs:
    """Each session's document of the people's turns (lowercased), grown as the store grows."""

    def __init__(self) -> None:
        self.turns: list[list[str]] = []
        self.joined: list[str | None] = []
        self.seen = 0

    def sync(self, notes: list[Note], codes: np.ndarray, n_sessions: int) -> list[str]:
        """The documents by session code, after reading the notes added since the last call."""
        while len(self.turns) < n_sessions:
            self.turns.append([])
            self.joined.append(None)
        for note, code in zip(notes[self.seen:], codes[self.seen:].tolist()):
            self.turns[code] += people_turns(note)
            self.joined[code] = None
        self.seen = len(notes)
        for code, doc in enumerate(self.joined):
            if doc is None:
                self.joined[code] = "\n".join(self.turns[code])
        return self.joined


_DOCS: WeakKeyDictionary = WeakKeyDictionary()  # per TagGraph-Fusion instance: its sessions' documents


def keyword_overlap(fusion, text: str, codes: np.ndarray, n_sessions: int) -> np.ndarray:
    """Per session, the share of `text`'s keywords that start a word of its document of the people's turns."""
    docs = _DOCS.setdefault(fusion, PeopleDocs()).sync(fusion.store.notes, codes, n_sessions)
    words = keywords(text)
    if not words:
        return np.zeros(n_sessions)
    starts = [re.compile(rf"\b{w}") for w in words]
    return np.array([sum(bool(s.search(d)) for s in starts) for d in docs], dtype=float) / len(words)
