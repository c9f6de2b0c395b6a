"""run.json records where each method comes from: a built-in's registry target, a
``module:Class`` given by the user, an entry point's value with its package and version, and the sha256 of
the class's source file; a recorded configuration builds the method again."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import taggraph as tg
from taggraph._infra.config import DEMO_DATA
from taggraph.datasets import load_dataset
from taggraph.runs.bench import run_bench
from taggraph.methods import registry
from taggraph.runs.provenance import method_origin

from tests.helpers.stores import HAND_ROWS, make_store

REPO = Path(__file__).resolve().parents[2]
TAGGRAPH = str(Path(sys.executable).with_name("taggraph"))

MINE = '''
import taggraph as tg


class Recency(tg.Retriever):
    """Later notes first."""

    def add(self, note):
        pass

    def score(self, text, *, asked_on=None):
        return {i: float(i) for i in range(len(self.store.notes))}
'''


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def clean(monkeypatch):
    monkeypatch.setattr(registry.METHODS, "_registered", dict(registry.METHODS._registered))
    monkeypatch.setattr(registry.METHODS, "_installed", None)  # entry points read again


def test_run_json_records_each_methods_origin_package_and_source(tmp_path, clean):
    (tmp_path / "mymethods.py").write_text(MINE)
    info = tmp_path / "mymethods-3.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: mymethods\nVersion: 3.1\n")
    (info / "entry_points.txt").write_text("[taggraph.methods]\nRecencyEP = mymethods:Recency\n")
    env = {**os.environ, "TQDM_DISABLE": "1", "PYTHONPATH": os.pathsep.join([str(tmp_path), str(REPO)])}
    run = subprocess.run([TAGGRAPH, "bench", "--methods", "BM25,mymethods:Recency,RecencyEP", "--extractor", "none",
                          "--limit", "2", "--out", "run"], cwd=tmp_path, capture_output=True, text=True,
                         timeout=600, env=env)
    assert run.returncode == 0, run.stderr
    methods = json.loads((tmp_path / "run" / "run.json").read_text())["config"]["methods"]
    source = sha256(tmp_path / "mymethods.py")
    assert methods["Recency"]["origin"] == "mymethods:Recency"
    assert methods["Recency"]["provenance"]["source_sha256"] == source
    assert methods["RecencyEP"]["origin"] == "mymethods:Recency"
    assert methods["RecencyEP"]["provenance"] == {"class": "mymethods:Recency", "dist": "mymethods",
                                                  "version": "3.1", "source_sha256": source}
    assert methods["BM25"]["origin"] == "taggraph.methods.bm25:BM25"
    assert methods["BM25"]["provenance"]["dist"] == "taggraph"
    assert methods["BM25"]["provenance"]["source_sha256"] == sha256(REPO / "taggraph" / "methods" / "bm25.py")
    assert (tmp_path / "run" / "report.html").exists()


def test_a_recorded_configuration_builds_the_method_again(clean):
    cases = load_dataset(DEMO_DATA)[:1]
    config = run_bench(cases, ["TagGraph-Stopwords"], extractor="none").config["methods"]["TagGraph-Stopwords"]
    assert config["origin"] == "taggraph.methods.taggraph_traversal:TagGraph"
    recorded = {k: v for k, v in config.items() if k != "method"}
    assert tg.make_retriever("TagGraph-Stopwords", make_store(HAND_ROWS), **recorded).params.stopwords is True


def test_a_variant_or_a_notebook_class_records_no_origin_it_cannot_be_built_from(clean):
    bm25 = registry.method("BM25").cls()
    tg.register_method("BM25-k1-2", bm25, k1=2.0)
    variant = method_origin("BM25-k1-2")
    assert "origin" not in variant and variant["provenance"]["class"] == "taggraph.methods.bm25:BM25"
    scope = {"__name__": "a_notebook_cell"}
    exec(compile(MINE, "cell", "exec", dont_inherit=True), scope)
    tg.register_method("NotebookRecency", scope["Recency"])
    assert method_origin("NotebookRecency") == {}
