"""Tables and charts of a store's tags for the notebooks: one note's tags, the ontology tree,
tag reuse, top-level categories per extractor, near-duplicate tags."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from difflib import SequenceMatcher
from itertools import combinations, product

import pandas as pd
import plotly.express as px
import plotly.graph_objects as go

from taggraph.core.notes import Note
from taggraph.core.ontology import Ontology, parent, prefixes
from taggraph.core.store import MemoryStore


def note_tags(store: MemoryStore, note: Note) -> pd.DataFrame:
    """The note's tags: category, path, depth, uses in the case, the note that first used the path
    (minted it), and whether this note reused it."""
    first: dict[str, str] = {}
    for n in store.notes:
        for p in n.paths():
            first.setdefault(p, n.note_id)
    return pd.DataFrame([{"category": c, "path": p, "depth": len(prefixes(p)), "uses": store.ontology.counts[p],
                          "minted_by": first[p], "reused": first[p] != note.note_id}
                         for c, p in note.tag_pairs()],
                        columns=["category", "path", "depth", "uses", "minted_by", "reused"])


def ontology_frame(ontology: Ontology) -> pd.DataFrame:
    """One row per ontology node: id (path), parent ('' at the top), label, uses (notes carrying
    exactly this path; 0 for pure taxonomy nodes), kind (tag or ontology)."""
    return pd.DataFrame([{"id": n, "parent": parent(n) or "", "label": n.rsplit("/", 1)[-1],
                          "uses": ontology.counts.get(n, 0), "kind": "tag" if n in ontology else "ontology"}
                         for n in ontology.nodes()], columns=["id", "parent", "label", "uses", "kind"])


def ontology_sunburst(ontology: Ontology, title: str = "Ontology (area: tag uses)") -> go.Figure:
    """Sunburst of the tree: a node's area is its own uses plus its descendants'."""
    return px.sunburst(ontology_frame(ontology), ids="id", parents="parent", names="label", values="uses", title=title,
                       hover_data=["kind"], maxdepth=3, height=650)


def top_tags(ontology: Ontology, n: int = 20) -> pd.DataFrame:
    """The n most used tag paths."""
    return pd.DataFrame(ontology.counts.most_common(n), columns=["path", "uses"])


def top_level_shares(stores_by_extractor: Mapping[str, Iterable[MemoryStore]], n: int = 10) -> go.Figure:
    """Grouped bars: each extractor's share of tag occurrences (`ontology.counts`, over all its stores)
    under each top-level category (first path segment), for the union of each extractor's `n` largest.
    A catch-all parent (offline's ``topic/``) shows as one tall bar."""
    rows = []
    for extractor, stores in stores_by_extractor.items():
        tops: Counter[str] = Counter()
        for store in stores:
            for path, uses in store.ontology.counts.items():
                tops[path.split("/", 1)[0]] += uses
        total = sum(tops.values()) or 1
        rows += [{"extractor": extractor, "top_level": t, "share": u / total} for t, u in tops.items()]
    df = pd.DataFrame(rows, columns=["extractor", "top_level", "share"])
    largest = set(df.sort_values("share", ascending=False).groupby("extractor").head(n)["top_level"])
    df = df[df["top_level"].isin(largest)].sort_values("share", ascending=False)
    return px.bar(df, x="top_level", y="share", color="extractor", barmode="group",
                  title=f"Share of tag uses per top-level category (each extractor's {n} largest)",
                  labels={"top_level": "top-level category", "share": "share of tag uses"})


def near_duplicates(ontology: Ontology, threshold: float = 0.8, min_chars: int = 4, limit: int = 50) -> pd.DataFrame:
    """Tag paths whose last segments are near-identical (difflib ratio >= `threshold`; segments
    shorter than `min_chars` are not compared), and the same segment under different parents:
    the near-duplicate labels that prompting for reuse does not prevent (``device/fitbit_inspire_hr``
    / ``device/fitbit_inspirehr``, ``pet/dog`` / ``animal/dog``). Most similar first."""
    by_leaf: dict[str, list[str]] = {}
    for path in ontology.tags():
        by_leaf.setdefault(path.rsplit("/", 1)[-1], []).append(path)
    leaves = sorted((leaf for leaf in by_leaf if len(leaf) >= min_chars), key=len)
    pairs = [(leaf, leaf, 1.0) for leaf, paths in by_leaf.items() if len(paths) > 1]
    for i, a in enumerate(leaves):
        matcher = SequenceMatcher(None, "", a, autojunk=False)  # caches `a`
        for b in leaves[i + 1:]:
            if len(b) * threshold > len(a) * (2 - threshold):  # ratio <= 2 len(a) / (len(a) + len(b))
                break
            matcher.set_seq1(b)
            if matcher.quick_ratio() >= threshold and matcher.ratio() >= threshold:
                pairs.append((a, b, matcher.ratio()))
    rows = [{"tag_a": pa, "tag_b": pb, "ratio": round(r, 3), "uses_a": ontology.counts[pa],
             "uses_b": ontology.counts[pb]}
            for a, b, r in pairs
            for pa, pb in (combinations(by_leaf[a], 2) if a == b else product(by_leaf[a], by_leaf[b]))]
    table = pd.DataFrame(rows, columns=["tag_a", "tag_b", "ratio", "uses_a", "uses_b"])
    return table.sort_values(["ratio", "tag_a"], ascending=[False, True]).head(limit).reset_index(drop=True)
