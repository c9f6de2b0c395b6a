"""Six session cues read from MemPalace's hybrid_v4 (issue 66, item 6), in our own words and code, for the lab
protocol `benchmarks.peer_signals_cv` (not in the package). Each is a value per session of one question, in [0, 1]
for the word cues (a share of what the question names), z-scored over the sessions with evidence for the two
cosine cues (as TagGraph-Fusion scales its note signals, weakest at 0).

- `user_overlap`: share of the question's distinct keywords (>= 3 letters, scikit-learn's English stop words out)
  that start a word of the session's document of the people's own turns (LongMemEval: the user's; a conversation
  between two named people: both, their "Name: " heads dropped).
- `quoted`: share of the question's quoted phrases (3-60 characters in double quotes, or in single quotes that
  open after a space or the start and close before a space, punctuation or the end) found in the session's whole
  text (every turn).
- `names`: share of the question's proper names (a capitalized word of 3-16 letters, not opening a sentence, no
  day or month name) found as a whole word, any case, in the session's document of the people's turns.
- `ago`: closeness of the session's date to the day "N days / weeks / months / years ago", "yesterday", "last
  week / month / year", "recently" name from the question date: 1 within a tolerance growing with the span, falling
  linearly to 0 at three tolerances.
- `user_doc`: cosine of the question to the session's document of the people's turns (cut at DENSE_CHARS).
- `preference_doc`: cosine of the question to a document "User has mentioned: a; b; ..." of the clauses that
  first-person phrasings of preference, habit, concern or memory ("I prefer ...", "I've been struggling with ...",
  "I used to ...") open in the people's turns; sessions without such a clause have no evidence.
"""

from __future__ import annotations

import re
from datetime import datetime

import numpy as np
from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

from taggraph.core.text import days
from taggraph.methods.fusion.features import DENSE_CHARS, SPEAKER
from taggraph.methods.fusion.signals import normalized

CUES = ("user_overlap", "quoted", "names", "ago", "user_doc", "preference_doc")
WORD = re.compile(r"[a-z]{3,}")
QUOTED = re.compile(r"\"([^\"]{3,60})\"|(?:^|(?<=[\s(]))'([^']{3,60})'(?=[\s.,;:!?)]|$)")
NAME = re.compile(r"\b[A-Z][a-z]{2,15}\b")
SENTENCE_START = re.compile(r"(?:^|[.!?]\s+|\n)\s*[\"'(]?$")
CALENDAR = {"Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday", "January", "February",
            "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"}
NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
           "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "a couple of": 2, "a few": 3}
# free choice: (days a unit spans, the tolerance in days for one unit, the tolerance's cap), after hybrid_v4's
UNITS = {"day": (1, 2, 3), "week": (7, 3, 14), "month": (30, 7, 30), "year": (365, 30, 60)}
AGO = re.compile(r"\b(\d+|a couple of|a few|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)\s+"
                 r"(day|week|month|year)s?\s+ago\b")
LAST = re.compile(r"\b(yesterday|last (week|month|year)|recently)\b")
CLAUSE = r"([^,.!?;\n]{5,80})"
PREFERENCE = [re.compile(p + CLAUSE, re.I) for p in (
    r"\bi prefer ", r"\bi usually ", r"\bi want to ", r"\bi(?:'m| am) looking (?:to|for) ",
    r"\bi(?:'m| am) thinking (?:about|of) ", r"\bi(?:'m| am) (?:worried|concerned) about ",
    r"\bi(?:'ve| have) been (?:having (?:trouble|issues|problems) with|feeling|struggling with|dealing with|"
    r"worried about|concerned about|trying to|considering|thinking about|working on|focused on|interested in|"
    r"noticing|experiencing) ",
    r"\b(?:lately|recently),? i(?:'ve been|'m| am| have been) ",
    r"\bi (?:still )?remember (?:the |my )?", r"\bi used to ", r"\bgrowing up,? ",
    r"\bwhen i was (?:in high school|in college|young|a kid|growing up),? ")]
MAX_CLAUSES = 12  # free choice, as hybrid_v4's


def people_turns(note) -> list[str]:
    """The turns of a note said by the people who hold the memory: the user's, and the other turn too when a named
    speaker heads it (a conversation between two people has no assistant); speaker heads dropped."""
    named = SPEAKER.match(note.assistant or "")
    return [SPEAKER.sub("", t, count=1) for t in ([note.user] + ([note.assistant] if named else [])) if t.strip()]


def whole_text(note) -> str:
    return "\n".join(SPEAKER.sub("", t, count=1) for t in (note.user, note.assistant) if t.strip())


def keywords(text: str) -> set[str]:
    return {w for w in WORD.findall(text.lower()) if w not in ENGLISH_STOP_WORDS}


def quoted_phrases(text: str) -> list[str]:
    return [(a or b).strip().lower() for a, b in QUOTED.findall(text) if len((a or b).strip()) >= 3]


def proper_names(text: str) -> set[str]:
    return {m.group() for m in NAME.finditer(text)
            if m.group() not in CALENDAR and not SENTENCE_START.search(text[:m.start()])}


def preference_doc(turns: list[str]) -> str:
    """'User has mentioned: a; b' from the clauses the preference phrasings open, in order, each once; '' if none."""
    found = dict.fromkeys(m.group(1).strip().lower() for t in turns for p in PREFERENCE for m in p.finditer(t))
    clauses = [c for c in found if len(c) >= 5][:MAX_CLAUSES]
    return "User has mentioned: " + "; ".join(clauses) if clauses else ""


def ago_target(text: str) -> tuple[float, float] | None:
    """(days back from the question date, tolerance in days) the question's first relative date names, or None."""
    q = text.lower()
    if m := AGO.search(q):
        count = int(m.group(1)) if m.group(1).isdigit() else NUMBERS[m.group(1)]
        span, tol, cap = UNITS[m.group(2)]
        return count * span, min(tol * count, cap)
    if m := LAST.search(q):
        return {"yesterday": (1, 1), "recently": (14, 14), "last week": (7, 3), "last month": (30, 7),
                "last year": (365, 30)}[m.group(1)]
    return None


class HistoryCues:
    """One history's session documents (by Fusion's session codes), built once for all its questions."""

    def __init__(self, fusion):
        codes, n = fusion.session_code, len(fusion.sessions)
        people, whole = [[] for _ in range(n)], [[] for _ in range(n)]
        for note, code in zip(fusion.store.notes, codes.tolist()):
            people[code] += people_turns(note)
            whole[code].append(whole_text(note))
        self.people = ["\n".join(t) for t in people]
        self.people_lower = [d.lower() for d in self.people]
        self.whole_lower = ["\n".join(t).lower() for t in whole]
        self.day = np.full(n, np.nan)
        dated = ~np.isnan(fusion.days)
        np.fmin.at(self.day, codes[dated], fusion.days[dated])
        self.embedder = fusion.embedder
        self.doc_vectors = self.embedder.embed([d[:DENSE_CHARS] for d in self.people])
        prefs = [preference_doc(t) for t in people]
        self.has_pref = np.array([bool(p) for p in prefs])
        self.pref_vectors = self.embedder.embed([p for p in prefs if p]) if self.has_pref.any() else None

    def cues(self, question: str, asked_on: datetime | None, query_vector: np.ndarray) -> np.ndarray:
        """(n_sessions, len(CUES)) for one question."""
        n = len(self.people)
        out = np.zeros((n, len(CUES)))
        words = keywords(question)
        if words:
            starts = [re.compile(rf"\b{w}") for w in words]
            out[:, 0] = [sum(bool(s.search(d)) for s in starts) / len(words) for d in self.people_lower]
        phrases = quoted_phrases(question)
        if phrases:
            out[:, 1] = [sum(p in d for p in phrases) / len(phrases) for d in self.whole_lower]
        names = proper_names(question)
        if names:
            found = [re.compile(rf"\b{n}\b", re.I) for n in names]
            out[:, 2] = [sum(bool(f.search(d)) for f in found) / len(names) for d in self.people]
        target = ago_target(question)
        if target and asked_on is not None:
            back, tol = target
            gap = np.abs(self.day - (days(asked_on) - back))
            out[:, 3] = np.nan_to_num(np.clip(1 - (gap - tol) / (2 * tol), 0, 1))
        out[:, 4] = normalized(self.doc_vectors @ query_vector, "zscore", True)
        if self.pref_vectors is not None:
            cos = np.full(n, np.nan)
            cos[self.has_pref] = self.pref_vectors @ query_vector
            out[:, 5] = normalized(cos, "zscore", True)
        return out
