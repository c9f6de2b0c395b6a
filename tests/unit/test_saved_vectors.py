"""The vectors a memory's methods embedded are saved beside its notes and read back by `load`, so a loaded memory
ranks as before without its embedder computing a vector (its disk cache empty)."""

from __future__ import annotations

import numpy as np
import pytest

from taggraph import Memory
from taggraph.embedders import saved
from taggraph.methods.base import MethodError

pytest.importorskip("onnxruntime")  # TagGraph-Fusion's default embedder, minilm-int8

FUSION = "TagGraph-Fusion"
TURNS = [("I adopted a beagle named Rex last spring.", "Beagles are friendly hounds."),
         ("My sister lives in Lisbon and teaches piano.", "Lisbon is lovely in May."),
         ("I ran my first half marathon in 1:52.", "Congratulations on the race!"),
         ("Can you suggest a vegetarian pasta sauce?", "Try a roasted pepper and walnut sauce.")]
QUESTIONS = ["what breed is my dog?", "where does my sister live?", "any tips for dinner tonight?"]


@pytest.fixture()
def folder(tmp_path):
    memory = Memory()
    for i, (user, assistant) in enumerate(TURNS):
        memory.remember(user, assistant, session=f"s{i}", timestamp=f"2023/05/0{i + 1} (Mon) 10:00")
    before = {q: [(r.note_id, r.score) for r in memory.query(q, method=FUSION, k=4)] for q in QUESTIONS}
    return memory.save(tmp_path / "memory"), before


def no_model(monkeypatch, memory: Memory) -> list[str]:
    """As on a new machine, the memory's Fusion embedder without its disk cache, its model embedding questions
    only (a question is no note's text: it is embedded once per process); the note texts it was asked for."""
    asked: list[str] = []
    embedder = memory.retriever(FUSION).embedder
    model = embedder._embed

    def questions_only(texts):
        asked.extend(t for t in texts if t not in QUESTIONS)
        if asked:
            raise AssertionError("the model was asked to embed a note's text")
        return model(texts)

    monkeypatch.setattr(embedder, "cache", False)
    monkeypatch.setattr(embedder, "_embed", questions_only)
    return asked


def test_a_loaded_memory_ranks_from_its_saved_vectors_without_the_model(folder, monkeypatch):
    path, before = folder
    assert len(list((path / "index").glob(f"{saved.PREFIX}*.npz"))) == 1
    loaded = Memory.load(path)
    asked = no_model(monkeypatch, loaded)
    after = {q: [(r.note_id, r.score) for r in loaded.query(q, method=FUSION, k=4)] for q in QUESTIONS}
    assert after == before and asked == []


def test_a_save_after_load_keeps_the_vectors_it_read(folder, monkeypatch, tmp_path):
    path, before = folder
    loaded = Memory.load(path)
    loaded.query(QUESTIONS[0], method=FUSION, k=4)
    again = Memory.load(loaded.save(tmp_path / "copy"))
    asked = no_model(monkeypatch, again)
    assert [(r.note_id, r.score) for r in again.query(QUESTIONS[2], method=FUSION, k=4)] == before[QUESTIONS[2]]
    assert asked == []


@pytest.mark.parametrize("damage", ["not unit", "torn", "another model"])
def test_a_damaged_vector_file_is_ignored_and_the_texts_embedded_again(folder, monkeypatch, damage):
    path, before = folder
    (file,) = (path / "index").glob(f"{saved.PREFIX}*.npz")
    arrays = dict(np.load(file))
    if damage == "not unit":
        arrays["vectors"] = arrays["vectors"] * 2
        np.savez(file, **arrays)
    elif damage == "torn":
        file.write_bytes(file.read_bytes()[:-100])
    else:
        arrays["cache_key"] = np.frombuffer(b"another-model", np.uint8)
        np.savez(file, **arrays)
    loaded = Memory.load(path)
    asked = no_model(monkeypatch, loaded)
    with pytest.raises(MethodError, match="the model was asked to embed a note"):
        loaded.query(QUESTIONS[0], method=FUSION, k=4)
    assert asked
