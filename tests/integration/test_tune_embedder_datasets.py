"""tune_embedder on several datasets (e.g. the folds of a protocol): pairs from all of them, and a card that lists
every data file and each dataset's questions."""

import hashlib
import json

import pytest

import taggraph as tg
from taggraph._infra.config import DEMO_DATA
from taggraph.datasets.base import file_checksum
from taggraph.errors import ConfigError
from taggraph.studies.tune_embedder import tune_embedder

pytest.importorskip("sentence_transformers")


def test_one_step_on_two_datasets_lists_both_in_the_card(monkeypatch, tmp_path):
    monkeypatch.setenv("TAGGRAPH_CACHE", str(tmp_path / "cache"))
    other = tmp_path / "other" / "demo_copy.json"
    other.parent.mkdir()
    other.write_bytes(DEMO_DATA.read_bytes())
    (other.parent / "LICENSE").write_text("MIT License\n\nfor the test\n")
    demo = tg.load(DEMO_DATA)
    first, second = demo.select(demo.cases[:2]), tg.load(other, limit=3)
    folder = tune_embedder([first, second], "two-sets", max_steps=1)
    card = json.loads((folder / "model_card.json").read_text())
    assert card["steps"] == 1 and card["questions"] == 5
    assert [d["path"] for d in card["data"]] == [str(DEMO_DATA), str(other)]
    assert card["data"][1]["sha256"] == file_checksum(other) and card["data"][1]["licence"]["title"] == "MIT License"
    ids = "\n".join(sorted(c.case_id for c in first.cases))
    assert card["datasets"][0] == {"path": str(DEMO_DATA), "questions": 2,
                                   "case_ids_sha256": hashlib.sha256(ids.encode()).hexdigest()}
    assert card["datasets"][1]["questions"] == 3
    assert "demo_copy.json | 3 |" in (folder / "README.md").read_text()
    with pytest.raises(ConfigError, match="at least one dataset"):
        tune_embedder([], "none")
