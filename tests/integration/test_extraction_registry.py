"""Extractors given as objects or names everywhere: `get_extractor`'s forms, Memory, run_bench, the CLI.

`WordExtractor` below is "a user's extractor": the tests name it `test_extraction_registry:WordExtractor`
(pytest puts tests/ on sys.path, and joblib's workers inherit it).
"""

from __future__ import annotations

import json
import pickle
import re
import threading

import pytest
from typer.testing import CliRunner

import taggraph as tg
from taggraph.cli import app
from taggraph._infra.config import DEMO_DATA
from taggraph.datasets import load_dataset
from taggraph.errors import ConfigError
from taggraph.runs import runner
from taggraph.runs.bench import run_bench
from taggraph.extractors import (EXTRACTORS, NoTagsExtractor, check_portable, extractor_spec, get_extractor,
                                 register_extractor, registry)
from taggraph.extractors.ollama import OllamaExtractor
from taggraph.extractors.offline_v2 import OfflineV2Extractor

SPEC = f"{__name__}:WordExtractor"


class WordExtractor:
    """Tags a turn with its first three words of five letters or more, as ``PREFIX/word``."""

    name = SPEC

    def __init__(self, prefix: str = "word") -> None:
        self.prefix = prefix

    @property
    def cache_key(self) -> str:
        return f"words-{self.prefix}"

    def extract(self, user_text, assistant_text, existing_tags) -> tg.Extraction:
        words = [w.lower() for w in re.findall(r"[A-Za-z]{5,}", user_text)][:3]
        return tg.Extraction(what=[f"{self.prefix}/{w}" for w in words])


class NamelessExtractor(WordExtractor):
    """A user's extractor whose name builds nothing."""

    name = "my-words"


class LockedExtractor(WordExtractor):
    """One that cannot be pickled (it holds a lock)."""

    def __init__(self) -> None:
        super().__init__()
        self.lock = threading.Lock()


def make_words() -> WordExtractor:
    """A factory function, as `module:function`."""
    return WordExtractor("made")


WORDS = WordExtractor("instance")  # an extractor object, as `module:OBJECT`


@pytest.fixture(autouse=True)
def isolated(tmp_path, monkeypatch):
    monkeypatch.setenv("TAGGRAPH_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(runner, "_EXTRACTORS", {})
    monkeypatch.setattr(registry.EXTRACTORS, "_registered", {})


def installed(tmp_path, monkeypatch, entry_points: str) -> None:
    """A distribution whose entry_points.txt declares `entry_points` in the group, found on sys.path."""
    dist = tmp_path / "site" / "words_plugin-1.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: words-plugin\nVersion: 1.0\n", encoding="utf-8")
    (dist / "entry_points.txt").write_text(f"[{EXTRACTORS.group}]\n{entry_points}\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    monkeypatch.setattr(registry.EXTRACTORS, "_installed", None)  # entry points are read once: again


def test_every_form_builds_an_extractor(tmp_path, monkeypatch):
    obj = WordExtractor()
    assert get_extractor(obj) is obj
    assert isinstance(get_extractor(), OfflineV2Extractor) and isinstance(get_extractor("none"), NoTagsExtractor)
    assert isinstance(get_extractor("ollama:llama3.2", host="http://127.0.0.1:9"), OllamaExtractor)
    built = get_extractor(SPEC, prefix="topic")
    assert isinstance(built, WordExtractor) and built.prefix == "topic"
    assert get_extractor(f"{__name__}:make_words").prefix == "made"
    assert get_extractor(f"{__name__}:WORDS") is WORDS
    register_extractor("mine", WordExtractor)
    assert get_extractor("mine").prefix == "word" and get_extractor("mine:pets").prefix == "pets"
    installed(tmp_path, monkeypatch, f"words = {SPEC}")
    assert get_extractor("words").prefix == "word" and get_extractor("words:food", ).prefix == "food"


@pytest.mark.parametrize("spec, message", [
    ("nope", r"unknown extractor 'nope': use gguf:PATH, none, offline, offline-v2, ollama:MODEL, openai:MODEL, "
             r"package\.module:Class, an extractor object, or a name from register_extractor or the entry-point "
             r"group 'taggraph.extractors'"),
    ("no_such_module:Thing", r"no module named 'no_such_module' \(install its package"),
    (f"{__name__}:Missing", rf"{__name__} has no 'Missing'"),
    (f"{__name__}:SPEC", r"is a str, not a class, function or extractor"),
    ("json:dumps", r"what extractor 'json:dumps' built is a str, not an extractor: it lacks name, cache_key"),
    ("ollama:", r"names no model: write ollama:MODEL"),
    ("__main__:Mine", r"defined in a script, notebook or function.*importable module, or pass the object"),
])
def test_bad_names_are_one_config_error(spec, message):
    with pytest.raises(ConfigError, match=message):
        get_extractor(spec) if spec != "json:dumps" else get_extractor(spec, obj=1)


def test_bad_objects_and_options_are_config_errors(tmp_path, monkeypatch):
    with pytest.raises(ConfigError, match="int, not an extractor: it lacks name, cache_key, extract"):
        get_extractor(42)
    with pytest.raises(ConfigError, match=r"options \['prefix'\] go with an extractor name"):
        get_extractor(WordExtractor(), prefix="x")
    with pytest.raises(ConfigError, match="not a built-in one"):
        register_extractor("ollama", WordExtractor)
    installed(tmp_path, monkeypatch, f"broken = no_such_plugin_module:Thing\nmisnamed = {__name__}:Missing")
    for name in ("broken", "misnamed"):
        with pytest.raises(ConfigError, match=rf"'{name}': entry point '{name} = .*' \(taggraph.extractors\) of package words-plugin 1.0 fails to load"):
            get_extractor(name)
    with pytest.raises(ConfigError, match=r"unknown extractor 'nope'.*\(installed: broken, misnamed\)"):
        get_extractor("nope")


def test_extractor_spec_rebuilds_the_same_class():
    assert extractor_spec("offline") == "offline"
    assert extractor_spec(OfflineV2Extractor()) == "offline-v2"
    assert extractor_spec(OllamaExtractor("qwen3:4b", host="http://127.0.0.1:9")) == "ollama:qwen3:4b"
    assert extractor_spec(WordExtractor("x")) == SPEC
    assert extractor_spec(NamelessExtractor()) == f"{__name__}:NamelessExtractor"  # its name builds nothing
    assert type(get_extractor(extractor_spec(NamelessExtractor()))) is NamelessExtractor


def test_memory_takes_objects_and_reloads_them_by_name(tmp_path):
    memory = tg.Memory(extractor=WordExtractor("hobby"))
    note = memory.remember("I started climbing and pottery classes", "Nice!")
    assert note.tags["what"] == ("hobby/started", "hobby/climbing", "hobby/pottery")
    memory.save(tmp_path / "m")
    again = tg.Memory.load(tmp_path / "m")  # the manifest's name is the class's spec: it rebuilds
    assert type(again.store.extractor) is WordExtractor
    assert tg.Memory.load(tmp_path / "m", extractor=NamelessExtractor()).store.extractor.name == "my-words"

    named = tg.Memory(extractor=NamelessExtractor())
    named.remember("I adopted a puppy", "Congrats!")
    named.save(tmp_path / "n")
    with pytest.raises(ConfigError, match=r"n: recorded extractor 'my-words' cannot be built \(unknown extractor.*"
                                          r"pass it, e\.g\. Memory\.load\(folder, extractor=MyExtractor\(\)\)"):
        tg.Memory.load(tmp_path / "n")
    assert "\n" not in str(pytest.raises(ConfigError, tg.Memory.load, tmp_path / "n").value)
    loaded = tg.Memory.load(tmp_path / "n", extractor=f"{__name__}:NamelessExtractor")
    assert loaded.remember("Another puppy story", "").tags["what"] == ("word/another", "word/puppy", "word/story")


def test_extractors_pickle_and_objects_that_do_not_say_so():
    check_portable(WordExtractor())
    check_portable("anything")
    with pytest.raises(ConfigError, match=r"LockedExtractor cannot be sent to worker processes .*pass it by name "
                                          rf"\('{__name__}:LockedExtractor'\), or run with one worker"):
        check_portable(LockedExtractor())
    ollama = pickle.loads(pickle.dumps(OllamaExtractor("llama3.2", host="http://127.0.0.1:9")))
    assert ollama.client is not None and ollama.where().startswith("ollama:llama3.2 at http://127.0.0.1:9")


def _cases(n: int = 4):
    return load_dataset(DEMO_DATA, limit=n)


def test_run_bench_with_an_object_on_two_workers_equals_one_worker_and_the_name():
    cases, methods = _cases(2), ["BM25", "TagGraph-Basic"]
    one = run_bench(cases, methods, extractor=WordExtractor())
    two = run_bench(cases, methods, extractor=WordExtractor(), workers=2)  # the name on two workers: the CLI test
    by_name = run_bench(cases, methods, extractor=SPEC)
    untagged = run_bench(cases, methods, extractor="none")
    columns = ["question_id", "method", "ranked_note_ids"]
    assert one.rankings[columns].equals(two.rankings[columns]) and one.rankings[columns].equals(by_name.rankings[columns])
    graph = one.rankings["method"] == "TagGraph-Basic"
    assert not one.rankings[graph]["ranked_note_ids"].equals(untagged.rankings[graph]["ranked_note_ids"])
    assert one.config["extractor"] == two.config["extractor"] == SPEC
    assert one.config["extractor_cache_key"] == "words-word"
    json.dumps(one.config)  # run.json can hold it
    with pytest.raises(ConfigError, match="cannot be sent to worker processes"):
        run_bench(cases, methods, extractor=LockedExtractor(), workers=2)


def test_cli_bench_takes_module_class_on_two_workers(tmp_path):
    res = CliRunner().invoke(app, ["bench", "--limit", "3", "--methods", "BM25,TagGraph-Basic", "--extractor", SPEC,
                                   "--workers", "2", "--miss-pages", "1", "--out", str(tmp_path / "run")])
    assert res.exit_code == 0, res.output
    assert json.loads((tmp_path / "run" / "run.json").read_text())["config"]["extractor"] == SPEC
    res = CliRunner().invoke(app, ["bench", "--limit", "1", "--extractor", "nope", "--out", str(tmp_path / "bad")])
    assert res.exit_code == 2 and "unknown extractor 'nope'" in res.output and len(res.output.strip().splitlines()) == 1
