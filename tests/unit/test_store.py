import json
import multiprocessing

import pytest

from taggraph.methods import make_retriever
from taggraph.core.store import Interaction, MemoryStore, StoreError, safe_filename

from tests.helpers.stores import HAND_ROWS, make_store


def test_save_load_answers_identically(tmp_path, hand_store):
    hand_store.save(tmp_path / "case")
    hand_store.close()
    loaded = MemoryStore.load(tmp_path / "case")
    assert [n.note_id for n in loaded] == [n.note_id for n in hand_store]
    assert [n.tags for n in loaded] == [n.tags for n in hand_store]
    for method in ["BM25", "TagGraph-Basic", "TagGraph-TFIDF", "AdaptiveGraph"]:
        for q in ["what breed is my dog", "yoga in the morning", "pet cat name"]:
            a = [(r.note_id, round(r.score, 12)) for r in make_retriever(method, hand_store).query(q)]
            b = [(r.note_id, round(r.score, 12)) for r in make_retriever(method, loaded).query(q)]
            assert a == b, (method, q)
    assert (tmp_path / "case" / "ontology.md").read_text().startswith("- activity\n")
    manifest = json.loads((tmp_path / "case" / "manifest.json").read_text())
    assert manifest["notes"][1]["session_id"] == "s2" and manifest["extractor"] == "none"


def test_remember_after_save_is_written(tmp_path):
    store = make_store(HAND_ROWS[:2])
    store.save(tmp_path / "c")
    store.remember(Interaction("s9", "hello", "hi"))
    store.close()
    assert len(MemoryStore.load(tmp_path / "c")) == 3


@pytest.mark.parametrize("note_id", ["../../etc/passwd", "a/b\\c", "x\x00y", "é" * 10_000, ".hidden", "", "CON"])
def test_safe_filenames(note_id):
    name = safe_filename(note_id)
    assert "/" not in name and "\\" not in name and "\x00" not in name and not name.startswith(".")
    assert len(name) < 100 and name.endswith(".md")
    assert safe_filename(note_id + "x") != name


def test_hostile_ids_stay_inside_store(tmp_path):
    store = MemoryStore("c")
    for i, sid in enumerate(["../../escape", "a/b", "x\x00y", "z" * 5000]):
        store.remember(Interaction(sid, f"user {i}", "assistant"))
    store.save(tmp_path / "s")
    store.close()
    files = list((tmp_path / "s").rglob("*.md"))
    assert all((tmp_path / "s") in f.parents for f in files)
    assert [n.session_id for n in MemoryStore.load(tmp_path / "s")] == ["../../escape", "a/b", "x\x00y", "z" * 5000]


def test_manifest_pointing_outside_is_refused(tmp_path, hand_store):
    hand_store.save(tmp_path / "s")
    hand_store.close()
    m = tmp_path / "s" / "manifest.json"
    data = json.loads(m.read_text())
    data["notes"][0]["file"] = "../../outside.md"
    m.write_text(json.dumps(data))
    with pytest.raises(StoreError, match=r"notes\[0\].*outside"):
        MemoryStore.load(tmp_path / "s")


def test_corrupt_manifest_names_file(tmp_path):
    (tmp_path / "manifest.json").write_text("{not json")
    with pytest.raises(StoreError, match="manifest.json"):
        MemoryStore.load(tmp_path)


def test_missing_note_file_names_it(tmp_path, hand_store):
    hand_store.save(tmp_path / "s")
    hand_store.close()
    victim = next((tmp_path / "s" / "notes").iterdir())
    victim.unlink()
    with pytest.raises(StoreError, match=victim.name):
        MemoryStore.load(tmp_path / "s")


def _hold_lock(path, ready, release):
    store = MemoryStore("other")
    store.save(path)
    ready.set()
    release.wait(10)


def test_second_writer_is_refused(tmp_path):
    ctx = multiprocessing.get_context("spawn")
    ready, release = ctx.Event(), ctx.Event()
    proc = ctx.Process(target=_hold_lock, args=(tmp_path / "s", ready, release))
    proc.start()
    try:
        assert ready.wait(30)
        with pytest.raises(StoreError, match="another process"):
            MemoryStore("me").save(tmp_path / "s")
    finally:
        release.set()
        proc.join(10)


def test_duplicate_note_id_is_refused(hand_store):
    with pytest.raises(StoreError, match="duplicate"):
        hand_store.remember(Interaction("s1", "x", "y", note_id="s1#0"))


def test_default_note_ids_count_turns_per_session():
    store = MemoryStore()
    for _ in range(3):
        store.remember(Interaction("sess", "u", "a"))
    assert [n.note_id for n in store] == ["sess#0", "sess#1", "sess#2"]


def test_a_new_note_appends_one_journal_line_and_leaves_the_manifest(tmp_path):
    store = make_store(HAND_ROWS[:2])
    store.save(tmp_path / "c")
    manifest = (tmp_path / "c" / "manifest.json").read_bytes()
    for i in range(3):
        store.remember(Interaction("s9", f"hello {i}", "hi"))
    assert (tmp_path / "c" / "manifest.json").read_bytes() == manifest  # O(1) per note: not rewritten
    journal = (tmp_path / "c" / "manifest.journal").read_text().splitlines()
    assert [json.loads(line)["note_id"] for line in journal] == ["s9#0", "s9#1", "s9#2"]
    store.close()
    assert not (tmp_path / "c" / "manifest.journal").exists()
    assert [n["note_id"] for n in json.loads((tmp_path / "c" / "manifest.json").read_text())["notes"]][-1] == "s9#2"


def test_a_crash_keeps_every_journaled_note_and_drops_a_torn_line(tmp_path):
    store = make_store(HAND_ROWS[:2])
    store.save(tmp_path / "c")
    store.remember(Interaction("s9", "kept", "hi"))
    store._journal.write('{"note_id": "s9#1", "fi')  # the process dies mid-line: no close, no flush
    store._journal.flush()
    loaded = MemoryStore.load(tmp_path / "c")
    assert [n.note_id for n in loaded][-1] == "s9#0" and len(loaded) == 3


def test_files_follow_the_umask_and_leftovers_are_removed(tmp_path):
    import os
    old = os.umask(0o022)
    try:
        (tmp_path / "c").mkdir()
        (tmp_path / "c" / ".ontology.md.abc.tmp").write_text("half")  # left by a killed writer
        store = make_store(HAND_ROWS[:2])
        store.save(tmp_path / "c")
        store.close()
    finally:
        os.umask(old)
    assert not list((tmp_path / "c").rglob("*.tmp"))
    for f in ["manifest.json", "ontology.md", *(f"notes/{p.name}" for p in (tmp_path / "c" / "notes").iterdir())]:
        assert (tmp_path / "c" / f).stat().st_mode & 0o777 == 0o644, f


@pytest.mark.parametrize("change,message", [
    (lambda m: m.update(format=99), "field 'format' is 99"),
    (lambda m: m["notes"][0].update(note_id=7), "'note_id' and 'file' must be strings"),
])
def test_manifest_fields_are_checked(tmp_path, hand_store, change, message):
    hand_store.save(tmp_path / "s")
    hand_store.close()
    m = tmp_path / "s" / "manifest.json"
    data = json.loads(m.read_text())
    change(data)
    m.write_text(json.dumps(data))
    with pytest.raises(StoreError, match=message):
        MemoryStore.load(tmp_path / "s")


def test_hand_edited_note_is_normalized_on_load_or_refused_naming_the_file(tmp_path):
    store = MemoryStore("c")
    store.remember(Interaction("s", "hello world", "ok"))
    store.save(tmp_path)
    store.close()
    note_file = next((tmp_path / "notes").iterdir())
    body = note_file.read_text().split("\n", 1)[1]
    note_file.write_text("#who:Bob Smith #what:foo bar\n" + body)
    loaded = MemoryStore.load(tmp_path)
    assert loaded.notes[0].tags["who"] == ("bob_smith",) and loaded.notes[0].user == "hello world"
    loaded.save(tmp_path)
    loaded.close()
    assert note_file.read_text() == "#who:bob_smith #what:foo_bar #when:n/a #where:n/a #why:n/a #extra:n/a\n" + body
    note_file.write_text("#mood:happy\n" + body)
    with pytest.raises(StoreError, match=f"{note_file}:1: unknown tag category 'mood'"):
        MemoryStore.load(tmp_path)
    assert note_file.read_text() == "#mood:happy\n" + body  # nothing rewritten


@pytest.mark.parametrize("line, message", [
    ("[1, 2]", r"manifest.journal:1: a note entry must be a JSON object, got list"),
    ("DUPLICATE", r"manifest.journal:1: note 's1#0' is listed twice"),
])
def test_a_tampered_journal_line_is_named_in_one_line(tmp_path, line, message):
    store = make_store(HAND_ROWS[:2])
    store.save(tmp_path / "c")
    store.close()
    first = json.loads((tmp_path / "c" / "manifest.json").read_text())["notes"][0]
    listed_again = dict(first, summary="edited")  # not the manifest's entry as it is, so not a crash's leftover
    text = json.dumps(listed_again) if line == "DUPLICATE" else line
    (tmp_path / "c" / "manifest.journal").write_text(text + "\n", encoding="utf-8")
    with pytest.raises(StoreError, match=message):
        MemoryStore.load(tmp_path / "c")
