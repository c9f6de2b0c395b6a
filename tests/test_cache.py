"""Disk caches: a corrupt cache.db is rebuilt with a warning, an unwritable one is one line naming the folder."""

from __future__ import annotations

import sqlite3

import diskcache
import pytest
from typer.testing import CliRunner

from taggraph.cache import open_cache
from taggraph.cli import app
from taggraph.errors import WriteError
from taggraph.extraction import offline
from taggraph.extraction.llm import OllamaExtractor
from taggraph.retrieval import embeddings


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
