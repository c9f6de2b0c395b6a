"""The public face: `import taggraph as tg`, `tg.Memory`, and the README's quick start run as written."""

import contextlib
import io
import re
from pathlib import Path

import pytest

import taggraph as tg
from taggraph._infra.config import DEFAULT_EXTRACTOR

README = Path(__file__).resolve().parents[2] / "README.md"
QUESTION = "what breed is my dog?"


def quick_start() -> str:
    text = README.read_text(encoding="utf-8")
    section = text[text.index("## Quick start in Python"):]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def test_readme_quick_start_runs_and_puts_the_dog_note_first():
    code = quick_start()
    lines = code.strip().splitlines()
    assert len(lines) <= 15 and max(map(len, lines)) <= 100  # a handful of readable lines (one of 282 before)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, str(README), "exec"), {})
    note_id, _, reason = out.getvalue().strip().partition(" - ")
    assert note_id == "s1#0"  # "I adopted my dog Miso" is the second remembered interaction
    promised = re.search(r"prints `s1#0 - (.*?), \.\.\.`", README.read_text()).group(1)
    assert reason.startswith(promised)  # the README's line, its number included


@pytest.fixture
def memory():
    m = tg.Memory()
    m.remember("I started yoga in the morning to sleep better.", "Nice!", session="s1")
    m.remember("I adopted my dog Miso, a Shiba Inu.", "Congratulations!", session="s2")
    m.remember("Can you suggest a pasta recipe for dinner?", "Try carbonara.", session="s3")
    return m


def test_the_public_names():
    assert {"Memory", "make_retriever", "get_extractor", "method_names", "register_method", "Retriever",
            "Evidence"} <= set(tg.__all__)
    assert "AdaptiveGraph" in tg.method_names() and "AdaptiveGraph-noFileSeeding-noDiffusion" in tg.method_names()


def test_fallbacks_are_said_in_words(memory):
    reason = memory.explain(QUESTION, "s2#0", method="AdaptiveGraph").reason
    # 'is' is kept (in no note), the other four words dropped: no seed, not "every token dropped"
    assert "no query token matches a tag and the note shares no query term (what, breed, my, dog dropped as " \
           "stopwords)" in reason and "plain PageRank" in reason
    assert "dropped as stopwords" in memory.explain(QUESTION, "s2#0", method="TagGraph-TFIDF").reason
    reason = memory.explain(QUESTION, "s2#0", method="TagGraph-Basic").reason
    assert "'dog' matches pet/dog;" in reason and "'breed' matches breed, which reaches breed/shiba_inu" in reason


def test_remember_after_query_updates_every_index(memory):
    for method in ("BM25", "TagGraph-Basic"):
        assert memory.query("pasta", method=method, k=1)[0].note_id == "s3#0"  # indexes built now
    memory.remember("My cat Tofu naps on the keyboard.", "Classic cat.", session="s4")
    for method in ("BM25", "TagGraph-Basic"):
        assert memory.query("what is my cat called?", method=method, k=1)[0].note_id == "s4#0", method


def test_save_and_load_answer_identically(tmp_path, memory):
    before = [(r.note_id, r.score) for r in memory.query(QUESTION, k=3)]
    memory.save(tmp_path / "m")
    loaded = tg.Memory.load(tmp_path / "m")
    assert [(r.note_id, r.score) for r in loaded.query(QUESTION, k=3)] == before
    assert loaded.store.extractor.name == DEFAULT_EXTRACTOR == "offline-v2"
    loaded.remember("My cat Tofu naps on the keyboard.", session="s4")  # a loaded memory keeps growing
    assert len(loaded) == 4


def test_unknown_method_is_a_config_error(memory):
    with pytest.raises(tg.errors.ConfigError, match="unknown method"):
        memory.query(QUESTION, method="Nope")


def test_a_note_below_the_first_k_is_said_to_be_below_k_not_a_depth():
    memory = tg.Memory()
    for i in range(10):
        memory.remember(f"note {i} " + "dog " * (3 - i) if i < 3 else f"tea number {i}", "ok", session=f"s{i}")
    reason = memory.explain("dog", "s2#0", k=2).reason
    assert "ranked 3, below the first 2 (the cut-off k = 2)" in reason and "depth" not in reason


def test_method_params_reach_the_method_and_survive_load(tmp_path, memory):
    params = {"AdaptiveGraph": {"alpha": 0.5}}
    tuned = tg.Memory(method_params=params)
    for note in memory.notes:
        tuned.remember(note.user, note.assistant, session=note.session_id)
    assert tuned.retriever("AdaptiveGraph").params.alpha == 0.5
    assert memory.retriever("AdaptiveGraph").params.alpha != 0.5  # the default elsewhere
    tuned.save(tmp_path / "m")
    assert tg.Memory.load(tmp_path / "m", method_params=params).retriever("AdaptiveGraph").params.alpha == 0.5
    with pytest.raises(tg.errors.ConfigError, match="alpha"):
        tg.Memory(method_params={"AdaptiveGraph": {"alpha": 7}})
    with pytest.raises(tg.errors.ConfigError, match="unknown method"):
        tg.Memory(method_params={"Nope": {}})
