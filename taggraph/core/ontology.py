"""Hierarchical tag ontology: normalization, the parent-child tree, ontology.md.

Tags are slash-separated paths (``activity/yoga``). Normalization follows the
paper's tag rules (appendix B/C): lowercase, underscores for spaces, singular
nouns, depth 1 to 4; ``n/a``, null and empty values are dropped.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence
from functools import lru_cache

from taggraph.errors import InputError

NORMALIZATION_VERSION = "1"  # bump when normalize_tag's output can change (it is part of cache keys)
MAX_DEPTH = 4
MAX_SEGMENT_CHARS = 48  # longer segments are whole facts, not atomic tags (tag rule 9)
EMPTY_VALUES = {"", "n/a", "na", "none", "null", "nil", "unknown", "-"}

_NON_WORD = re.compile(r"[^\w]+")
_NA_SEGMENTS = re.compile(r"(?i)(?<![^/])n/a(?![^/])")  # "n/a" inside a path is one empty value


@lru_cache(maxsize=65536)
def singular(word: str) -> str:
    """Singular form of an English noun via lemminflect; other words unchanged."""
    if len(word) <= 3 or not word.isascii() or not word.isalpha() or not word.endswith("s"):
        return word
    from lemminflect import getLemma  # lazy: loading its tables costs ~0.2 s

    # in-vocabulary nouns only: OOV rules would also turn names into "singulars" (texas -> texa)
    lemmas = getLemma(word, upos="NOUN", lemmatize_oov=False)
    return lemmas[0] if lemmas else word


def normalize_segment(segment: str) -> str:
    """One path segment: NFKC, lowercase, runs of non-word characters -> '_', last word singular."""
    seg = _NON_WORD.sub("_", unicodedata.normalize("NFKC", segment).lower()).strip("_")
    if not seg:
        return ""
    words = seg.split("_")
    words[-1] = singular(words[-1])
    return "_".join(words)[:MAX_SEGMENT_CHARS].strip("_")


def normalize_tag(value: object) -> str | None:
    """A normalized path, or None for values the paper drops (n/a, null, empty, non-text).

    Paths deeper than four levels keep their first four segments.
    """
    if not isinstance(value, str):
        return None
    text = value.strip().strip("#")
    if text.lower() in EMPTY_VALUES:
        return None
    segments = [normalize_segment(s) for s in _NA_SEGMENTS.sub("", text).split("/")]
    segments = [s for s in segments if s and s not in EMPTY_VALUES]
    if not segments:
        return None
    return "/".join(segments[:MAX_DEPTH])


def prefixes(path: str) -> list[str]:
    """``a/b/c`` -> ``['a', 'a/b', 'a/b/c']``."""
    parts = path.split("/")
    return ["/".join(parts[: i + 1]) for i in range(len(parts))]


def parent(path: str) -> str | None:
    return path.rsplit("/", 1)[0] if "/" in path else None


def segment_words(path: str) -> tuple[str, ...]:
    """Words of a path's last segment (``health/doctor_visit`` -> ``('doctor', 'visit')``)."""
    return tuple(w for w in path.rsplit("/", 1)[-1].split("_") if w)


class TagView(Sequence[str]):
    """An ontology's paths, sorted: read-only and live (it grows with its ontology).

    What `MemoryStore.remember` gives an extractor as ``existing_tags``. It is sorted only when read
    (indexed or iterated), and then only the paths new since the last read are merged in; `since`
    gives the paths added after the first n, so an index over them can be updated instead of rebuilt.
    """

    def __init__(self, ontology: "Ontology") -> None:
        self.ontology = ontology
        self._sorted: list[str] = []

    def __len__(self) -> int:
        return len(self.ontology)

    def __contains__(self, path: object) -> bool:
        return path in self.ontology

    def __getitem__(self, index):
        return self._current()[index]

    def __iter__(self):
        return iter(self._current())

    def __repr__(self) -> str:
        return f"TagView({self._current()!r})"

    def since(self, n: int) -> list[str]:
        """The paths added after the first `n`, in the order they were added."""
        return self.ontology.in_order[n:]

    def _current(self) -> list[str]:
        """The sorted paths; a new list when the ontology grew, so an iteration in progress is not disturbed."""
        if len(self._sorted) < len(self):
            self._sorted = self._sorted + self.since(len(self._sorted))
            self._sorted.sort()  # timsort: one pass over the sorted run, then merges the few new paths in
        return self._sorted


class Ontology:
    """The case's growing set of paths, with how often each was used by notes."""

    def __init__(self, paths: Iterable[str] = ()) -> None:
        self.counts: Counter[str] = Counter()
        self.in_order: list[str] = []  # the paths in the order they were first used
        self.tag_view = TagView(self)
        self.add_all(paths)

    def __contains__(self, path: str) -> bool:
        return path in self.counts

    def __len__(self) -> int:
        return len(self.counts)

    def add(self, path: str) -> bool:
        """Count one use of `path`; True when it was new (minted, not reused)."""
        new = path not in self.counts
        self.counts[path] += 1
        if new:
            self.in_order.append(path)
        return new

    def add_all(self, paths: Iterable[str]) -> None:
        for p in paths:
            self.add(p)

    def tags(self) -> list[str]:
        """All used paths, sorted (a copy of `tag_view`, which an extractor receives)."""
        return list(self.tag_view)

    def nodes(self) -> list[str]:
        """Every path and every ancestor of one, sorted."""
        return sorted({pre for p in self.counts for pre in prefixes(p)})

    def children(self) -> dict[str, list[str]]:
        """Parent path -> sorted child paths; top-level paths under key ''."""
        tree: dict[str, set[str]] = {}
        for node in self.nodes():
            tree.setdefault(parent(node) or "", set()).add(node)
        return {k: sorted(v) for k, v in tree.items()}

    def reuse(self) -> float:
        """Tag occurrences divided by distinct tags (paper Table 2); 0.0 when empty."""
        return sum(self.counts.values()) / len(self.counts) if self.counts else 0.0

    def to_markdown(self) -> str:
        """Indented markdown hierarchy, two spaces per level (paper appendix C)."""
        tree = self.children()
        lines: list[str] = []

        def walk(node: str, depth: int) -> None:
            for child in tree.get(node, []):
                lines.append(f"{'  ' * depth}- {child.rsplit('/', 1)[-1]}")
                walk(child, depth + 1)

        walk("", 0)
        return "\n".join(lines) + ("\n" if lines else "")

    @staticmethod
    def parse_markdown(text: str, source: str = "ontology.md") -> list[str]:
        """Paths of an indented hierarchy (every node, leaves and ancestors)."""
        stack: list[str] = []
        paths = []
        for lineno, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            stripped = line.lstrip(" ")
            indent = len(line) - len(stripped)
            if not stripped.startswith("- ") or indent % 2:
                raise InputError(f"{source}:{lineno}: expected '- name' indented by 2 spaces per level")
            depth = indent // 2
            if depth > len(stack):
                raise InputError(f"{source}:{lineno}: indented deeper than its parent")
            stack[depth:] = [stripped[2:].strip()]
            paths.append("/".join(stack))
        return paths
