"""One name per base-graph node, the same on the graph page, the explain page and in the notebooks.

- A concept is named by the last two segments of its path, with more parents while another concept's
  path ends the same way ('city/berkeley'; 'area/city' beside the top-level 'city'). A tag (a path
  some note carries) leads with its 5W categories, as a note's tag line writes it
  ('where:city/berkeley'; 'what,extra:food/pizza' when carried under two).
- A topic is named by its most telling tags (`topic_name`); when two topics would read the same, by
  more of their tags; one that still reads like another node gets its number ('city (topic 9)').
- A note is named by its id.
"""

from __future__ import annotations

import weakref
from collections import Counter, defaultdict

from taggraph.core.store import MemoryStore

_CACHE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # store -> (graph size, names)


def topic_name(store: MemoryStore, topic: str, n: int = 2) -> str:
    """A topic named by its `n` most telling tags, last segments joined by ' · '.

    Tags more than half the store's notes carry (``who:user`` on most notes) tell nothing and are left
    out unless nothing else is left. The rest go fewest notes first; ties: a non-``when`` tag before a
    temporal one, then the longer last segment ('registration_fee' before 'october'), then the path.
    """
    frame = store.graph.frame_of_topic[topic]
    count = store.ontology.counts
    temporal = {p for c, p in frame if c == "when"}
    paths = sorted({p for _, p in frame}, key=lambda p: (count.get(p, 0), p in temporal,
                                                         -len(p.rsplit("/", 1)[-1]), p))
    telling = [p for p in paths if count.get(p, 0) <= len(store) / 2] or paths
    tails = dict.fromkeys(p.rsplit("/", 1)[-1] for p in telling)  # 'lighting' once for two paths ending so
    return " · ".join(list(tails)[:n]) or topic.replace(":", " ")


def _concept_names(paths: list[str], categories: dict[str, list[str]]) -> dict[str, str]:
    """path -> its shortest tail of at least two segments that no other path ends with (else the whole
    path), led by 'cat:' when `categories` has the path."""
    split = {p: p.split("/") for p in paths}
    ends = Counter(tuple(s[-i:]) for s in split.values() for i in range(1, len(s) + 1))
    out = {}
    for p, s in split.items():
        tail = next((s[-i:] for i in range(min(2, len(s)), len(s) + 1) if ends[tuple(s[-i:])] == 1), s)
        cats = categories.get(p)
        out[p] = (",".join(cats) + ":" if cats else "") + "/".join(tail)
    return out


def _topic_names(store: MemoryStore, topics: list[str]) -> dict[str, str]:
    """topic -> `topic_name`, with more tags for the topics that would share a name."""
    names = {t: topic_name(store, t) for t in topics}
    for n in range(3, 1 + max((len(store.graph.frame_of_topic[t]) for t in topics), default=0)):
        shared = Counter(names.values())
        clash = [t for t in topics if shared[names[t]] > 1]
        if not clash:
            break
        names.update({t: topic_name(store, t, n) for t in clash})
    return names


def node_names(store: MemoryStore) -> dict[str, str]:
    """Base-graph node id -> its unique name (module docstring); computed once per state of the store."""
    g = store.graph.g
    cached = _CACHE.get(store)
    if cached is not None and cached[0] == (len(store), g.number_of_nodes()):
        return cached[1]
    categories: dict[str, list[str]] = defaultdict(list)
    for cat, path in sorted(store.graph.topics_with_tag):
        categories[path].append(cat)
    kinds = dict(g.nodes(data="kind"))
    concepts = _concept_names([g.nodes[n]["path"] for n, k in kinds.items() if k in ("tag", "ontology")],
                              categories)
    topics = _topic_names(store, [n for n, k in kinds.items() if k == "topic"])
    names = {n: concepts[g.nodes[n]["path"]] if k in ("tag", "ontology") else topics[n] if k == "topic"
             else g.nodes[n]["note_id"] for n, k in kinds.items()}
    shared = Counter(names.values())
    names.update({n: f"{name} (topic {n.partition(':')[2]})" for n, name in names.items()
                  if shared[name] > 1 and kinds[n] == "topic"})
    shared = Counter(names.values())
    names.update({n: f"{name} ({n})" for n, name in names.items() if shared[name] > 1 and kinds[n] != "file"})
    _CACHE[store] = ((len(store), g.number_of_nodes()), names)
    return names


def node_name(store: MemoryStore, node: str) -> str:
    """The unique name of one base-graph node of `store` (`node_names`); an id not in the graph as it is."""
    return node_names(store).get(node, node)
