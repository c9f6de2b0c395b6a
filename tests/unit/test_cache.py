"""Disk caches: a corrupt cache.db is rebuilt with a warning, an unreadable entry is computed again with one
warning, an unwritable cache is one line naming the folder."""

from __future__ import annotations

import sqlite3
import warnings

import diskcache
import pytest
from typer.testing import CliRunner

from taggraph._infra.cache import open_cache
from taggraph.cli import app
from taggraph.errors import WriteError
from taggraph.extractors import offline
from taggraph.extractors.ollama import OllamaExtractor
from taggraph.embedders import base as embeddings
from tests.helpers.fake_ollama import FakeOllama
from tests.helpers.fake_ollama import reply


def _garbage(folder):
    folder.mkdir(parents=True)
    (folder / "cache.db").write_bytes(b"this is not sqlite" * 100)


def _truncated(folder):
    cache = diskcache.Cache(str(folder))
    for i in range(100):
        cache.set(str(i), "x" * 5000)
    cache.close()
    db = folder / "cache.db"
    db.write_bytes(db.read_bytes()[: db.stat().st_size // 3])


@pytest.mark.parametrize("damage", [_garbage, _truncated])
def test_corrupt_cache_is_rebuilt_saying_so(tmp_path, damage):
    folder = tmp_path / "extractions"
    damage(folder)
    with pytest.warns(UserWarning, match=f"{folder}: cache was unreadable .*rebuilt it empty"):
        cache = open_cache(folder)
    cache.set("k", "v")
    assert cache.get("k") == "v"


@pytest.mark.parametrize("name, open_", [
    ("extractions", lambda: OllamaExtractor("m", host="http://127.0.0.1:9")._cache),
    ("offline_extractions", lambda: offline._disk_cache()),
    ("embeddings", lambda: embeddings._disk_cache(str(embeddings.cache_dir() / "embeddings"))),
])
def test_every_cache_user_survives_a_garbage_cache(tmp_path, monkeypatch, name, open_):
    monkeypatch.setenv("TAGGRAPH_CACHE", str(tmp_path))
    offline._disk_cache.cache_clear()
    _garbage(tmp_path / name)
    with pytest.warns(UserWarning, match="rebuilt it empty"):
        cache = open_()
    assert cache.get("missing") is None
    offline._disk_cache.cache_clear()


def test_unwritable_cache_is_one_line_naming_the_folder(tmp_path, monkeypatch):
    def read_only(*args, **kwargs):  # what sqlite says in a read-only folder (root ignores chmod, so simulated)
        raise sqlite3.OperationalError("attempt to write a readonly database")
    monkeypatch.setenv("TAGGRAPH_CACHE", str(tmp_path))
    monkeypatch.setattr(diskcache, "Cache", read_only)
    with pytest.raises(WriteError, match=f"{tmp_path / 'x'}: cache cannot be written .*TAGGRAPH_CACHE"):
        open_cache(tmp_path / "x")
    offline._disk_cache.cache_clear()
    res = CliRunner().invoke(app, ["bench", "--limit", "1", "--methods", "BM25", "--out", str(tmp_path / "run")])
    offline._disk_cache.cache_clear()
    assert res.exit_code == 2 and res.output.strip().splitlines()[-1].startswith(
        f"error: {tmp_path / 'offline_extractions'}: cache cannot be written")


def test_unreadable_offline_entries_are_computed_again_with_one_warning(tmp_path, monkeypatch):
    monkeypatch.setenv("TAGGRAPH_CACHE", str(tmp_path))
    offline._disk_cache.cache_clear()
    pairs = [("I adopted a beagle in Paris.", "Nice!"), ("My sister Ana studies law.", "Great.")]
    first = offline.OfflineExtractor().extract_many(pairs, [])
    offline._disk_cache.cache_clear()
    with sqlite3.connect(tmp_path / "offline_extractions" / "cache.db") as db:  # what the probe did
        assert db.execute("update Cache set value=substr(value,1,20)").rowcount == 2
    with pytest.warns(UserWarning) as said:
        again = offline.OfflineExtractor().extract_many(pairs, [])
    lines = [str(w.message) for w in said if "cache entry was unreadable" in str(w.message)]
    assert again == first and len(lines) == 1 and "offline_extractions" in lines[0]
    offline._disk_cache.cache_clear()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the entries were overwritten: no warning now
        assert offline.OfflineExtractor().extract_many(pairs, []) == first
    offline._disk_cache.cache_clear()


def test_an_llm_reply_file_overwritten_with_garbage_is_asked_again_with_one_warning(tmp_path, monkeypatch):
    monkeypatch.setenv("TAGGRAPH_CACHE", str(tmp_path))
    server = FakeOllama().start()
    server.default = reply(what=["yoga"]) + " " * 40_000  # large enough for diskcache to keep it in a .val file
    try:
        OllamaExtractor("llama3.2", host=server.url).extract("I do yoga.", "", [])
        files = list((tmp_path / "extractions").rglob("*.val"))
        for f in files:
            f.write_bytes(b"\xff\xfe" * 50)
        with pytest.warns(UserWarning, match="extractions: a cache entry was unreadable") as said:
            result = OllamaExtractor("llama3.2", host=server.url).extract("I do yoga.", "", [])
    finally:
        server.stop()
    assert len(files) == 1 and result.what == ["yoga"] and len(server.chats()) == 2
    assert len([w for w in said if "unreadable" in str(w.message)]) == 1


def test_the_cli_says_an_unreadable_entry_in_one_warning_line(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from taggraph.cli import app
    monkeypatch.setenv("TAGGRAPH_CACHE", str(tmp_path))
    offline._disk_cache.cache_clear()
    args = ["bench", "--methods", "BM25", "--limit", "1", "--extractor", "offline", "--miss-pages", "0"]
    assert CliRunner().invoke(app, [*args, "--out", str(tmp_path / "a")]).exit_code == 0
    offline._disk_cache.cache_clear()
    with sqlite3.connect(tmp_path / "offline_extractions" / "cache.db") as db:
        db.execute("update Cache set value=substr(value,1,20)")
    res = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "b")])
    offline._disk_cache.cache_clear()
    said = [line for line in res.stderr.splitlines() if "cache entry was unreadable" in line]
    assert res.exit_code == 0 and len(said) == 1 and said[0].startswith("warning: "), res.stderr
