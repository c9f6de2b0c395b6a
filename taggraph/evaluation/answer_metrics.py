"""Answer accuracy against a gold answer (paper, appendix F.2).

Both metrics compare after SQuAD v1.1 normalization (lowercase, punctuation and the
articles a/an/the removed, whitespace collapsed):

- token F1: harmonic mean of token precision and recall over the multiset of
  normalized tokens (SQuAD v1.1 ``f1_score``; 1.0 when both are empty);
- containment: the normalized gold is a whole-token substring of the normalized
  prediction (``" gold " in " prediction "``); 0 for an empty gold.
"""

from __future__ import annotations

import re
import string
from collections import Counter

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = str.maketrans("", "", string.punctuation)


def normalize_answer(text: str) -> str:
    """SQuAD v1.1 normalization: lowercase, drop punctuation and articles, collapse whitespace."""
    return " ".join(_ARTICLES.sub(" ", str(text).lower().translate(_PUNCT)).split())


def token_f1(prediction: str, gold: str) -> float:
    pred, ref = normalize_answer(prediction).split(), normalize_answer(gold).split()
    if not pred or not ref:
        return float(pred == ref)
    common = sum((Counter(pred) & Counter(ref)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(pred), common / len(ref)
    return 2 * precision * recall / (precision + recall)


def containment(prediction: str, gold: str) -> float:
    ref = normalize_answer(gold)
    return float(bool(ref) and f" {ref} " in f" {normalize_answer(prediction)} ")
