"""The one tokenizer shared by BM25, TF-IDF, stopword filtering and tag matching.

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
