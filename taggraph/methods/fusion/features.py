"""TagGraph-Fusion's per-note and per-session features, each a plain array computation: what each signal reads
from a note (its texts, turns, speakers, date) and how a list becomes evidence (`evidence_vector`, `top_notes`).
The table of signals that use them is `taggraph.methods.fusion.signal_table`."""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from taggraph.core.notes import Note
from taggraph.core.text import days, parse_note_date

SPEAKER_SHARE = 0.1  # free choice: a "Name: " prefix is a speaker if it heads at least 10% of the turns
SPEAKER = re.compile(r"([A-Z][\w'-]*(?: [A-Z][\w'-]*){0,2}): ")  # "Caroline: ...", as the LoCoMo loader writes turns
DENSE_CHARS = 1000  # free choice: MiniLM reads ~256 word pieces (~1,000 characters); the rest is cut here


def evidence_vector(scores: dict[int, float] | Any, n: int) -> np.ndarray:
    """Scores (a dict {note index: score}, or `Scores` arrays) as a length-n vector, NaN where there is no
    evidence: notes not scored, and negative or zero BM25 scores (rank-bm25's idf floor for terms in over half the
    notes)."""
    v = np.full(n, np.nan)
    if isinstance(scores, dict):
        index = np.fromiter(scores.keys(), dtype=np.int64, count=len(scores))
        values = np.fromiter(scores.values(), dtype=np.float64, count=len(scores))
    else:
        index, values = np.asarray(scores.index, dtype=np.int64), np.asarray(scores.value, dtype=np.float64)
    v[index[values > 0]] = values[values > 0]
    return v


def top_notes(v: np.ndarray, m: int) -> np.ndarray:
    """Indexes of the m largest positive entries (ties: earlier first), read from the entries at or above the m-th
    largest rather than from a sort of all of them."""
    if m >= len(v):
        best = np.argsort(-v, kind="stable")
    else:
        near = np.flatnonzero(v >= np.partition(v, len(v) - m)[len(v) - m])  # ascending: the sort below keeps ties so
        best = near[np.argsort(-v[near], kind="stable")][:m]
    return best[v[best] > 0]


def dense_text(note: Note) -> str:
    """What is embedded for a note: its user turn (the assistant's when the user's is empty), cut."""
    return (note.user or note.assistant)[:DENSE_CHARS]


def request_text(note: Note) -> str:
    """What is embedded for a note when a request is asked: its raw turn, user and assistant, cut."""
    return note.raw_text[:DENSE_CHARS]


def turn_texts(note: Note) -> list[str]:
    """Each turn of a note on its own, as the dataset wrote it (LoCoMo's "Speaker: text"; LongMemEval's turns
    carry no name, the roles being user and assistant), each cut at DENSE_CHARS (the user turn is the text
    `dense` embeds, so its vector comes from the embedder's cache)."""
    return [t[:DENSE_CHARS] for t in (note.user, note.assistant) if t.strip()] or [note.raw_text[:DENSE_CHARS]]


def turn_speakers(note: Note) -> list[str | None]:
    """The name heading each of `turn_texts` ("Caroline: ..."), None where there is none."""
    return [m.group(1) if (m := SPEAKER.match(t)) else None for t in turn_texts(note)]


def session_turns(turns: np.ndarray, session_code: np.ndarray, n_sessions: int) -> np.ndarray:
    """(n_sessions, 2): each session's best `turns` value (max-sim) and the mean of its two best (one note:
    that one), over its notes with turn evidence (> 0); 0 for a session without any."""
    out = np.zeros((n_sessions, 2))
    has = turns > 0
    if not has.any():
        return out
    order = np.lexsort((-turns[has], session_code[has]))
    sess, vals = session_code[has][order], turns[has][order]
    first = np.r_[True, sess[1:] != sess[:-1]]
    second = np.r_[False, first[:-1] & ~first[1:]]  # a session's second-best value, right after its best
    out[sess[first], 0] = out[sess[first], 1] = vals[first]
    out[sess[second], 1] = (vals[np.r_[second[1:], False]] + vals[second]) / 2
    return out


def note_day(timestamp: str) -> float | None:
    """Days since 1970 for a note's timestamp (`parse_note_date`: LoCoMo's "1:56 pm on 8 May, 2023" too)."""
    moment = parse_note_date(timestamp)
    return None if moment is None else days(moment)

