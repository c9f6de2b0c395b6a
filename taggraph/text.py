"""The one tokenizer shared by BM25, TF-IDF, stopword filtering and tag matching, and `snippet`.

Lowercase runs of letters and digits (Unicode-aware, so non-Latin scripts
tokenize too); underscores and punctuation split tokens. No stemming here:
BM25 over notes stays plain Okapi, as in the paper.
"""

from __future__ import annotations

import re

_TOKEN = re.compile(r"[^\W_]+")
MAX_QUERY_CHARS = 10_000  # longer queries are cut, not rejected


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
