"""The tokenizer of BM25, TF-IDF, stopword filtering and tag matching (BM25-stem alone tokenizes as bm25s does:
`methods/bm25_stem.py`), `snippet`, and what several rooms
read text with: `chunk_text` (OpenClaw's chunks, Fusion's), `parse_datetime` and `parse_timestamp` (note and
question dates).

Lowercase runs of letters and digits (Unicode-aware, so non-Latin scripts
tokenize too); underscores and punctuation split tokens. No stemming here:
BM25 over notes stays plain Okapi, as in the paper.
"""

from __future__ import annotations

import re
from datetime import datetime

_TOKEN = re.compile(r"[^\W_]+")
MAX_QUERY_CHARS = 10_000  # longer queries are cut, not rejected
_PARENTHESES = re.compile(r"\s*\(([^)]*)\)")
_WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")


def is_token(value: object) -> bool:
    """Whether `value` is an id as TREC runs and rankings.csv can hold it: a non-empty string without
    whitespace (they separate ids by whitespace)."""
    return isinstance(value, str) and bool(value) and not any(c.isspace() for c in value)


def tokenize(text: str) -> list[str]:
    return _TOKEN.findall(text.lower())


def query_tokens(text: str) -> list[str]:
    return tokenize(text[:MAX_QUERY_CHARS])


def snippet(text: str, n: int) -> str:
    """`text` cut to at most `n` characters at a word boundary, '…' marking the cut (a first word longer
    than `n` is cut inside): evidence shows whole words and tags, never '#where:city/b'."""
    if len(text) <= n:
        return text
    head = text[:n - 1]
    if not text[n - 1].isspace() and (space := re.search(r"\s\S*$", head)) and space.start() > 0:
        head = head[:space.start()]
    return head.rstrip() + "…"


def chunk_text(text: str, chunk_chars: int = 1600, overlap_chars: int = 320) -> list[str]:
    """Split on line boundaries into chunks of at most `chunk_chars` characters.

    A line longer than `chunk_chars` is first cut into `chunk_chars`-sized pieces.
    Each new chunk starts with the previous chunk's last whole lines totalling at
    most `overlap_chars` characters (newlines counted), fewer if the next line
    would not fit otherwise. Always at least one chunk ("" for empty text).
    """
    pieces = [line[i:i + chunk_chars] for line in text.split("\n")
              for i in range(0, max(len(line), 1), chunk_chars)]
    chunks: list[str] = []
    current: list[str] = []
    size = 0  # sum of len(line) + 1 over `current`: the joined chunk is size - 1 long
    for piece in pieces:
        if current and size + len(piece) > chunk_chars:
            chunks.append("\n".join(current))
            carry: list[str] = []
            size = 0
            for line in reversed(current):
                if size + len(line) + 1 > overlap_chars:
                    break
                carry.insert(0, line)
                size += len(line) + 1
            while carry and size + len(piece) > chunk_chars:
                size -= len(carry.pop(0)) + 1
            current = carry
        current.append(piece)
        size += len(piece) + 1
    chunks.append("\n".join(current))
    return chunks


def parse_datetime(text: str) -> datetime | None:
    """The date-time "2023/05/30 (Tue) 23:40", "2023/05/30" or ISO 8601 text names (aware when it gives an
    offset); None when it names none of these, or names a weekday in parentheses that is not its date's
    ("2023/05/30 (Mon)": which of the two is wrong cannot be told)."""
    cleaned = _PARENTHESES.sub("", text).strip()
    moment = _read_date_time(cleaned)
    if moment is None:
        return None
    for named in _PARENTHESES.findall(text):
        day = named.strip().lower()
        weekday = _WEEKDAYS.index(day[:3]) if day[:3] in _WEEKDAYS and day.isalpha() else None
        if weekday is not None and weekday != moment.weekday():
            return None
    return moment


def _read_date_time(cleaned: str) -> datetime | None:
    for fmt in ("%Y/%m/%d %H:%M", "%Y/%m/%d"):
        try:
            return datetime.strptime(cleaned, fmt)
        except ValueError:
            continue
    try:
        return datetime.fromisoformat(cleaned)
    except ValueError:
        return None


def days(moment: datetime) -> float:
    """Days since 1970-01-01 (UTC; a naive date-time counts as UTC), without overflow at year 1 or 9999."""
    offset = moment.utcoffset().total_seconds() if moment.tzinfo is not None else 0.0
    return ((moment.replace(tzinfo=None) - datetime(1970, 1, 1)).total_seconds() - offset) / 86400


LOCOMO_DATE = "%I:%M %p on %d %B, %Y"  # LoCoMo's session date_time: "1:56 pm on 8 May, 2023"


def parse_note_date(text: str) -> datetime | None:
    """A note's or session's date as TagGraph-Fusion reads it: what `parse_datetime` reads, or LoCoMo's session
    date_time (`LOCOMO_DATE`); None when neither reads `text`."""
    moment = parse_datetime(text)
    if moment is not None:
        return moment
    try:
        return datetime.strptime(text.strip(), LOCOMO_DATE)
    except ValueError:
        return None


def parse_timestamp(text: str) -> float | None:
    """`days` of what `parse_datetime` reads in `text`; None when it reads none."""
    moment = parse_datetime(text)
    return None if moment is None else days(moment)
