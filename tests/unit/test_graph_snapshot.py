"""The base graph is saved beside the notes once it was built (index/base_graph.npz) and a loaded store reads it
instead of taking every note in again: only where it covers the notes as they are, and then it is the graph a
rebuild makes, down to every array, lookup and ranking."""

import random

import numpy as np
import pytest

from taggraph._infra.atomic import load_arrays
from taggraph.core.store import GRAPH_SNAPSHOT, Interaction, MemoryStore
from taggraph.extractors.base import Extraction
from taggraph.methods import make_retriever

from tests.helpers.stores import make_store

TAGS = {"who": ["user", "person/sam", "person/ana"], "what": ["pet/dog", "pet/cat", "activity/yoga", "food/pasta",
        "activity/running", "health/sleep"], "where": ["city/paris", "city/rome"], "when": ["time/morning"]}
QUESTIONS = ("dog in paris", "morning yoga", "pasta with sam", "running in rome")


def rows(count: int, seed: int = 0) -> list:
    """`count` interactions with overlapping tag frames, so topics repeat and some are similar."""
    rng = random.Random(seed)
    made = []
    for i in range(count):
        tags = {cat: rng.sample(paths, rng.randint(0, min(2, len(paths)))) for cat, paths in TAGS.items()}
        words = " ".join(p.split("/")[-1] for paths in tags.values() for p in paths)
        made.append((f"s{i // 3}", f"Note {i} about {words}.", "Noted.", tags))
    return made


def remember(store, new_rows):
    for sid, user, assistant, tags in new_rows:
        store.remember(Interaction(sid, user, assistant), Extraction(**tags))


def rankings(store) -> dict:
    return {(m, q): [(r.note_id, r.score) for r in make_retriever(m, store).query(q, k=10)]
            for m in ("AdaptiveGraph", "TagGraph-Basic") for q in QUESTIONS}


def same_graph(a, b) -> None:
    """Equal in every array, lookup and in the networkx view the pages walk."""
    state_a, state_b = a.state(), b.state()
    assert state_a.keys() == state_b.keys() and all(np.array_equal(state_a[k], state_b[k]) for k in state_a)
    assert a.topics_with_tag == b.topics_with_tag and dict(a.topic_of_frame) == dict(b.topic_of_frame)
    assert [a.node_name(i) for i in range(len(a.node_kinds))] == [b.node_name(i) for i in range(len(b.node_kinds))]
    assert all(a.concept_number(p) == b.concept_number(p) for p in ("pet", "pet/dog", "city/rome", "nowhere"))
    assert sorted(a.g.edges(data=True)) == sorted(b.g.edges(data=True))
    assert dict(a.g.nodes(data=True)) == dict(b.g.nodes(data=True))


def saved(tmp_path, count=40):
    store = make_store(rows(count))
    store.graph.node_kinds  # read: the graph is built, so the save keeps it
    store.save(tmp_path / "s")
    store.close()
    return tmp_path / "s"


def test_a_loaded_store_reads_the_graph_it_saved_and_it_is_the_rebuilt_graph(tmp_path):
    folder = saved(tmp_path)
    loaded, fresh = MemoryStore.load(folder), make_store(rows(40))
    assert (folder / "index" / f"{GRAPH_SNAPSHOT}.npz").exists()
    same_graph(loaded.graph, fresh.graph)
    assert loaded._snapshots == {GRAPH_SNAPSHOT: 40}  # read, not taken in again
    assert rankings(loaded) == rankings(fresh)


def test_notes_after_the_snapshot_extend_the_graph_as_if_built_from_all(tmp_path):
    folder = saved(tmp_path, 30)
    store = MemoryStore.load(folder)
    remember(store, rows(45)[30:])
    store.save(folder)  # the graph was never read: the snapshot stays that of the first 30 notes
    store.close()
    loaded = MemoryStore.load(folder)
    same_graph(loaded.graph, make_store(rows(45)).graph)
    assert loaded._snapshots == {GRAPH_SNAPSHOT: 30}
    remember(loaded, rows(50)[45:])  # and grows after being read
    same_graph(loaded.graph, make_store(rows(50)).graph)
    assert rankings(loaded) == rankings(make_store(rows(50)))


def test_a_store_whose_graph_was_never_read_saves_none(tmp_path):
    store = make_store(rows(10))
    store.save(tmp_path / "s")
    store.close()
    assert not (tmp_path / "s" / "index" / f"{GRAPH_SNAPSHOT}.npz").exists()


def _rewrite(path, change):
    arrays = load_arrays(path)
    change(arrays)
    np.savez(path, **arrays)


TAMPERS = {
    "link out of range": lambda a: a["link_to"].__setitem__(0, len(a["kind"])),
    "file node not a file": lambda a: a["file_node"].__setitem__(0, a["topic_node"][0]),
    "a file too few": lambda a: a.update(file_node=a["file_node"][:-1]),
    "frame pair out of range": lambda a: a["frame_pairs"].__setitem__(0, 10 ** 6),
    "concepts out of order": lambda a: a.update(paths=a["pairs"], path_offsets=a["pair_offsets"]),
    "link kind unknown": lambda a: a["link_kind"].__setitem__(0, 9),
    "wrong type": lambda a: a.update(link_from=a["link_from"].astype(np.float64)),
}


@pytest.mark.parametrize("tamper", TAMPERS)
def test_a_graph_snapshot_that_does_not_fit_is_ignored_and_the_graph_built_from_the_notes(tmp_path, tamper):
    folder = saved(tmp_path)
    _rewrite(folder / "index" / f"{GRAPH_SNAPSHOT}.npz", TAMPERS[tamper])
    loaded = MemoryStore.load(folder)
    same_graph(loaded.graph, make_store(rows(40)).graph)
    assert GRAPH_SNAPSHOT not in loaded._snapshots
    assert rankings(loaded) == rankings(make_store(rows(40)))


def test_a_graph_snapshot_of_edited_notes_is_never_used(tmp_path):
    folder = saved(tmp_path)
    note = next(f for f in sorted((folder / "notes").iterdir()) if "#who:user" in f.read_text())
    note.write_text(note.read_text().replace("#who:user", "#who:user #where:city/oslo", 1))
    loaded = MemoryStore.load(folder)
    assert loaded.graph.concept_number("city/oslo") is not None
    assert GRAPH_SNAPSHOT not in loaded._snapshots


def test_a_loaded_store_saved_elsewhere_keeps_the_snapshots_it_did_not_build_again(tmp_path):
    folder = saved(tmp_path)
    store = MemoryStore.load(folder)
    remember(store, rows(44)[40:])
    store.save(tmp_path / "elsewhere")  # the graph never read in this process
    store.close()
    loaded = MemoryStore.load(tmp_path / "elsewhere")
    same_graph(loaded.graph, make_store(rows(44)).graph)
    assert loaded._snapshots == {GRAPH_SNAPSHOT: 40}  # carried over, then extended by the four notes after it
