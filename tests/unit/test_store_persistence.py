"""A save writes only what the folder lacks, in one durable step and one commit; the index snapshots beside the
notes are used only where they cover the notes as they are, and a save killed at any write leaves a folder
that loads and ranks as a rebuild from its notes."""

import multiprocessing
import os
import zipfile

import numpy as np
import pytest

import taggraph._infra.atomic as atomic_module
import taggraph.core.store as store_module
from taggraph.core import snapshot
from taggraph.core.store import Interaction, MemoryStore, StoreError
from taggraph.extractors.base import Extraction
from taggraph.methods import make_retriever
from taggraph.methods.index import concept_matcher, term_index

from tests.helpers.stores import HAND_ROWS, make_store

KEEP = (term_index, concept_matcher)
METHODS = ("BM25", "TagGraph-TFIDF")
QUESTIONS = ("what breed is my dog", "yoga in the morning", "pet cat name", "running city", "pasta recipe")
MORE_ROWS = [("s6", "My beagle Max loves running with me.", "Dogs need exercise.",
              {"who": ["user"], "what": ["pet/dog", "activity/running"], "extra": ["breed/beagle"]}),
             ("s7", "I cooked pasta for my cat's birthday.", "Cats do not eat pasta.",
              {"what": ["food/pasta", "pet/cat"]})]


def remember(store, rows):
    for sid, user, assistant, tags in rows:
        store.remember(Interaction(sid, user, assistant), Extraction(**tags))


def rankings(store) -> dict:
    return {(method, q): [(r.note_id, r.score) for r in make_retriever(method, store).query(q, k=10)]
            for method in METHODS for q in QUESTIONS}


def rebuilt(folder) -> MemoryStore:
    """The store of the notes in `folder`, every index built from them (no snapshot read)."""
    fresh = MemoryStore("rebuilt")
    for note in MemoryStore.load(folder).notes:
        fresh.add_note(note)
    return fresh


def saved(tmp_path, rows=HAND_ROWS):
    """A folder saved with both snapshots."""
    store = make_store(rows)
    store.save(tmp_path / "s", keep=KEEP)
    store.close()
    return tmp_path / "s"


def test_a_save_writes_only_the_notes_the_folder_lacks_and_makes_them_durable_at_once(tmp_path, monkeypatch):
    folder = saved(tmp_path)
    before = {f.name: f.stat().st_ino for f in (folder / "notes").iterdir()}
    writes, durable = [], []
    real_write, real_durable = store_module.atomic_write_bytes, store_module.make_durable
    monkeypatch.setattr(store_module, "atomic_write_bytes",
                        lambda path, data, flushed=True: (writes.append((path.name, flushed)),
                                                          real_write(path, data, flushed)))
    monkeypatch.setattr(store_module, "make_durable", lambda paths: (durable.append(list(paths)), real_durable(paths)))
    store = MemoryStore.load(folder)
    remember(store, MORE_ROWS)
    store.save(folder)
    store.close()
    new = [store_module.safe_filename(n) for n in ("s6#0", "s7#0")]
    assert writes == [(name, False) for name in new]  # no fsync each ...
    assert [[p.name for p in paths] for paths in durable] == [new]  # ... one step for all
    assert {f.name: f.stat().st_ino for f in (folder / "notes").iterdir() if f.name in before} == before
    assert [n.note_id for n in MemoryStore.load(folder)] == [n.note_id for n in make_store(HAND_ROWS + MORE_ROWS)]


def test_a_save_elsewhere_or_over_a_changed_folder_writes_every_note(tmp_path, monkeypatch):
    folder = saved(tmp_path)
    store = MemoryStore.load(folder)
    other = MemoryStore.load(folder)
    remember(other, MORE_ROWS[:1])
    other.save(folder)
    other.close()
    writes = []
    real_write = store_module.atomic_write_bytes
    monkeypatch.setattr(store_module, "atomic_write_bytes",
                        lambda path, data, flushed=True: (writes.append(path), real_write(path, data, flushed)))
    store.save(tmp_path / "elsewhere")
    store.close()
    assert len(writes) == len(HAND_ROWS)
    writes.clear()
    store.save(folder, replace=True)  # changed by `other` since: nothing of it is taken as this store's
    store.close()
    assert len(writes) == len(HAND_ROWS)
    assert rankings(MemoryStore.load(folder)) == rankings(rebuilt(folder)) == rankings(make_store(HAND_ROWS))


def test_a_loaded_store_reads_its_indexes_from_the_snapshots_and_ranks_as_rebuilt(tmp_path):
    folder = saved(tmp_path, HAND_ROWS + MORE_ROWS)
    assert sorted(p.name for p in (folder / snapshot.FOLDER).iterdir()) == ["concepts.npz", "terms.npz"]
    loaded, fresh = MemoryStore.load(folder), rebuilt(folder)
    for build in KEEP:
        restored, built = build(loaded).state(), build(fresh).state()
        assert restored.keys() == built.keys() and all(np.array_equal(restored[k], built[k]) for k in built)
    assert loaded._snapshots == {"terms": 7, "concepts": 7}  # read, not rebuilt
    assert rankings(loaded) == rankings(fresh)
    assert term_index(loaded).df == term_index(fresh).df and list(term_index(loaded).df) == list(term_index(fresh).df)


def test_a_snapshot_of_the_first_notes_is_extended_by_the_rest(tmp_path):
    folder = saved(tmp_path)
    store = MemoryStore.load(folder)
    remember(store, MORE_ROWS)
    store.save(folder)  # builds no index: the snapshots stay those of the first five notes
    store.close()
    loaded = MemoryStore.load(folder)
    assert rankings(loaded) == rankings(rebuilt(folder))
    assert loaded._snapshots == {"terms": 5, "concepts": 5}
    remember(loaded, [("s8", "Luna the cat sleeps all morning.", "Cats sleep a lot.", {"what": ["pet/cat"]})])
    assert rankings(loaded) == rankings(make_store(HAND_ROWS + MORE_ROWS + [
        ("s8", "Luna the cat sleeps all morning.", "Cats sleep a lot.", {"what": ["pet/cat"]})]))


def test_a_snapshot_of_other_notes_is_never_used(tmp_path):
    folder = saved(tmp_path)
    note_file = folder / "notes" / store_module.safe_filename("s2#0")
    note_file.write_text(note_file.read_text().replace("#what:pet/dog", "#what:pet/dog #what:sport/surfing"))
    loaded = MemoryStore.load(folder)
    assert rankings(loaded) == rankings(rebuilt(folder))
    assert loaded._snapshots == {}
    assert loaded.notes[1].tags["what"] == ("pet/dog", "sport/surfing") and 1 in concept_matcher(loaded).files[
        "sport/surfing"]


def _rewrite(path, change):
    arrays = atomic_module.load_arrays(path)
    change(arrays)
    np.savez(path, **arrays)


@pytest.mark.parametrize("tamper", ["truncated", "bit flipped", "swapped", "pickled", "compressed", "postings out of range",
                                    "postings out of order", "lengths too long", "parent after child"])
def test_a_tampered_snapshot_is_ignored_and_the_index_built_from_the_notes(tmp_path, tamper):
    folder = saved(tmp_path)
    terms, concepts = folder / "index" / "terms.npz", folder / "index" / "concepts.npz"
    if tamper == "truncated":
        terms.write_bytes(terms.read_bytes()[:len(terms.read_bytes()) // 2])
    elif tamper == "bit flipped":
        raw = bytearray(terms.read_bytes())
        raw[len(raw) // 2] ^= 1
        terms.write_bytes(bytes(raw))
    elif tamper == "swapped":
        terms.write_bytes(concepts.read_bytes())
    elif tamper == "pickled":
        _rewrite(terms, lambda a: a.update(docs=np.array([object()] * len(a["docs"]), dtype=object)))
    elif tamper == "compressed":
        with zipfile.ZipFile(terms) as archive:
            members = {m: archive.read(m) for m in archive.namelist()}
        with zipfile.ZipFile(terms, "w", zipfile.ZIP_DEFLATED) as archive:
            for name, data in members.items():
                archive.writestr(name, data)
    elif tamper == "postings out of range":
        _rewrite(terms, lambda a: a["docs"].__setitem__(0, 99))
    elif tamper == "postings out of order":
        _rewrite(terms, lambda a: a["docs"].__setitem__(slice(None), a["docs"][::-1]))
    elif tamper == "lengths too long":
        _rewrite(terms, lambda a: a["counts"].__setitem__(0, a["counts"][0] + 1))
    else:
        _rewrite(concepts, lambda a: a.update(zip(("concepts", "concept_offsets"),
                                                  snapshot.pack_strings(["pet/dog", "pet"]))))
    loaded = MemoryStore.load(folder)
    assert rankings(loaded) == rankings(rebuilt(folder))
    assert loaded._snapshots == ({"concepts": 5} if tamper != "parent after child" else {"terms": 5})


def test_a_snapshot_is_no_pickle_and_a_hostile_header_allocates_nothing(tmp_path):
    folder = saved(tmp_path)
    with zipfile.ZipFile(folder / "index" / "terms.npz") as archive:
        assert all(m.compress_type == zipfile.ZIP_STORED for m in archive.infolist())
    fields = b"{'descr': '<f8', 'fortran_order': False, 'shape': (10000000000000,), }"
    fields += b" " * (63 - (10 + len(fields)) % 64) + b"\n"
    header = b"\x93NUMPY\x01\x00" + len(fields).to_bytes(2, "little") + fields
    with zipfile.ZipFile(folder / "index" / "terms.npz", "w") as archive:
        archive.writestr("docs.npy", header + b"\0" * 16)
    with pytest.raises(ValueError, match="claims more data"):
        atomic_module.load_arrays(folder / "index" / "terms.npz")
    assert rankings(MemoryStore.load(folder)) == rankings(rebuilt(folder))


@pytest.mark.parametrize("inside", [True, False])
def test_a_note_file_that_is_a_link_is_read_only_inside_the_store(tmp_path, inside):
    folder = saved(tmp_path)
    victim = folder / "notes" / store_module.safe_filename("s1#0")
    target = (folder / "kept.md") if inside else (tmp_path / "outside.md")
    victim.rename(target)
    victim.symlink_to(target)
    if inside:
        assert [n.user for n in MemoryStore.load(folder)][0] == HAND_ROWS[0][1]
    else:
        with pytest.raises(StoreError, match=r"notes\[0\].*points outside the store"):
            MemoryStore.load(folder)


class Killed(BaseException):
    """Raised at the chosen write: a Ctrl-C, or, in a forked child, the process ends there at once."""


def _cut_at(at: int, hard: bool, monkeypatch) -> None:
    """The save dies at its `at`-th moment of writing (`hard`: os._exit, no cleanup at all): before each atomic
    file write and once its temporary file holds the data (before the rename), before the durable step and before
    the journal is opened."""
    seen = []

    def point() -> None:
        seen.append(None)
        if len(seen) == at:
            if hard:
                os._exit(9)
            raise Killed

    def before(real):
        def run(*args, **kwargs):
            point()
            return real(*args, **kwargs)
        return run

    def file(path, write, durable, real=atomic_module._atomic):
        point()
        return real(path, lambda fh: (write(fh), fh.flush(), point()), durable)

    monkeypatch.setattr(atomic_module, "_atomic", file)
    monkeypatch.setattr(store_module, "make_durable", before(store_module.make_durable))
    monkeypatch.setattr(store_module, "open", before(open), raising=False)  # the journal (flush)


def _save_cut(folder, rows, at, hard, first):
    """The store of `rows` saved to `folder` (the first save when `first`, else the one after HAND_ROWS'), cut at
    write `at`; True when the save finished before that write."""
    store = MemoryStore("c") if first else MemoryStore.load(folder)
    remember(store, rows)
    with pytest.MonkeyPatch.context() as patch:
        _cut_at(at, hard, patch)
        try:
            store.save(folder, keep=KEEP)
        except Killed:
            return False
    store.close()
    return True


def _child(folder, rows, at, first):
    os._exit(0 if _save_cut(folder, rows, at, True, first) else 1)


@pytest.mark.parametrize("hard", [False, True], ids=["interrupted", "killed"])
@pytest.mark.parametrize("first", [True, False], ids=["first save", "save of new notes"])
def test_a_save_cut_at_any_write_loads_and_ranks_as_a_rebuild_of_its_notes(tmp_path, hard, first):
    rows = HAND_ROWS if first else MORE_ROWS
    before = [] if first else [n.note_id for n in make_store(HAND_ROWS)]
    after = [n.note_id for n in make_store(HAND_ROWS + ([] if first else MORE_ROWS))]
    at = 1
    while True:
        folder = tmp_path / f"cut{at}"
        if not first:
            saved(tmp_path).rename(folder)
        if hard:
            proc = multiprocessing.get_context("fork").Process(target=_child, args=(folder, rows, at, first))
            proc.start()
            proc.join(60)
            assert proc.exitcode in (0, 9), proc.exitcode
            done = proc.exitcode == 0
        else:
            done = _save_cut(folder, rows, at, False, first)
        if (folder / "manifest.json").exists():
            loaded = MemoryStore.load(folder)
            assert [n.note_id for n in loaded] in (before, after), f"cut at write {at}"
            assert rankings(loaded) == rankings(rebuilt(folder)), f"cut at write {at}"
        else:
            assert first, f"cut at write {at}: the manifest is gone"
        again = MemoryStore.load(folder) if (folder / "manifest.json").exists() else MemoryStore("c")
        remember(again, [r for r in HAND_ROWS + MORE_ROWS if r[1] not in {n.user for n in again}][:len(after) - len(again)])
        again.save(folder, keep=KEEP)  # the save resumes: the same store as an uncut one
        again.close()
        assert not list(folder.rglob("*.tmp")), f"cut at write {at}: leftovers stay"
        assert rankings(MemoryStore.load(folder)) == rankings(make_store(HAND_ROWS + ([] if first else MORE_ROWS)))
        if done:
            break
        at += 1
    assert at > 2 * (len(rows) + 4)  # each note file, ontology.md, manifest.json and both snapshots were cut


STEMMED = ({}, {"stem": False}, {"stopwords": False})  # BM25-stem's tokenizers: each its own shared StemIndex


def stem_rankings(store) -> dict:
    return {(str(p), q): [(r.note_id, r.score) for r in make_retriever("BM25-stem", store, **p).query(q, k=10)]
            for p in STEMMED for q in QUESTIONS + ("running dogs loves beagles",)}


@pytest.mark.parametrize("tamper", [None, "term id out of range", "postings out of order"])
def test_bm25_stem_indexes_are_kept_and_read_back_with_their_vocabulary(tmp_path, tamper):
    store = make_store(HAND_ROWS + MORE_ROWS)
    before = stem_rankings(store)  # the queries also teach the tokenizers their words
    store.save(tmp_path / "s")
    store.close()
    names = {"stems": 7, "stems-nostem": 7, "stems-nostop": 7}
    assert {p.stem for p in (tmp_path / "s" / snapshot.FOLDER).iterdir()} >= names.keys()
    if tamper == "term id out of range":
        _rewrite(tmp_path / "s" / "index" / "stems.npz", lambda a: a["terms"].__setitem__(-1, 10 ** 6))
    elif tamper == "postings out of order":
        _rewrite(tmp_path / "s" / "index" / "stems.npz", lambda a: a["docs"].__setitem__(slice(None), a["docs"][::-1]))
    loaded = MemoryStore.load(tmp_path / "s")
    assert stem_rankings(loaded) == before == stem_rankings(rebuilt(tmp_path / "s"))
    assert {k: v for k, v in loaded._snapshots.items() if k.startswith("stems")} == (
        names if tamper is None else {"stems-nostem": 7, "stems-nostop": 7})  # a tampered one is built again
    new = [("s8", "Luna the cat sleeps all morning; she loves running mice.", "Cats sleep a lot.", {"what": ["pet/cat"]})]
    remember(loaded, new)
    assert stem_rankings(loaded) == stem_rankings(make_store(HAND_ROWS + MORE_ROWS + new))
