from pathlib import Path

import pandas as pd
import pytest

from taggraph._infra.config import DEMO_DATA
from taggraph.datasets import load_dataset
from taggraph.runs.runner import build_store
from taggraph.core.store_stats import store_vocabulary
from taggraph.studies.vocabulary import case_vocabulary, vocabulary_stats
from taggraph.core.store import Interaction, MemoryStore

from tests.helpers.stores import make_store


def test_store_vocabulary_counts(hand_store):
    # 16 tag occurrences over 5 notes; "user" (4x) is the only path used twice or more
    # top levels: user (4), activity (2), health, time, pet (2), breed, city, month, food, cooking, pet_name
    assert store_vocabulary(hand_store) == {"case_id": "t", "notes": 5, "distinct_tags": 13, "tag_occurrences": 16,
                                            "top_levels": 11, "largest_top_level": "user",
                                            "largest_top_level_occurrences": 4}


def test_table_averages_over_cases_and_drops_empty_ones(hand_store):
    repeated = make_store([("a", "x", "", {"what": ["pet/dog"]}), ("b", "y", "", {"what": ["pet/dog", "n/a"]})], "r")
    untagged = MemoryStore("u")
    untagged.remember(Interaction("s", "hello"))
    table = vocabulary_stats({"hand": [hand_store, repeated, MemoryStore("empty")], "bare": [untagged]})
    hand = table.set_index("extraction").loc["hand"]
    assert hand["histories"] == 2  # the store without notes is excluded
    assert hand["notes/case"] == pytest.approx((5 + 2) / 2)
    assert hand["distinct tags/case"] == pytest.approx((13 + 1) / 2)
    assert hand["distinct tags/case (median)"] == pytest.approx(7)
    assert hand["tags/note"] == pytest.approx((16 / 5 + 2 / 2) / 2)  # "n/a" is not a tag
    assert hand["reuse"] == pytest.approx((16 / 13 + 2 / 1) / 2)
    bare = table.set_index("extraction").loc["bare"]
    assert bare["histories"] == 1 and bare["tags/note"] == 0 and pd.isna(bare["reuse"])
    assert hand["top-level categories/case"] == pytest.approx((11 + 1) / 2)
    assert hand["largest top-level share"] == pytest.approx((4 / 16 + 2 / 2) / 2)
    assert list(table.columns) == ["extraction", "histories", "notes/case", "distinct tags/case",
                                   "distinct tags/case (median)", "tags/note", "reuse",
                                   "top-level categories/case", "largest top-level share"]


def test_the_vocab_command_counts_histories_and_the_questions_asked_over_them(tmp_path):
    """LoCoMo's 8 fixture questions share 2 conversations: the table says 2 histories and 8 questions (it said
    "cases 2", a count of histories under the name of the questions)."""
    import json

    from typer.testing import CliRunner

    from taggraph.cli import app

    out = tmp_path / "v"
    locomo = Path(__file__).parents[1] / "fixtures" / "locomo" / "locomo_tiny.json"
    res = CliRunner().invoke(app, ["vocab", "--data", str(locomo), "--extractor", "none", "--out", str(out)])
    assert res.exit_code == 0, res.output
    row = pd.read_csv(out / "vocabulary.csv").iloc[0]
    assert row["histories"] == 2 and row["questions"] == 8 and "cases" not in row.index
    assert pd.read_csv(out / "per_case.csv")["questions"].tolist() == [6, 2]
    config = json.loads((out / "run.json").read_text())["config"]
    assert config["histories"] == 2 and config["questions"] == 8


def test_offline_extraction_on_demo_reuses_tags():
    case = load_dataset(DEMO_DATA, limit=1)[0]
    store = build_store(case, "offline")
    counts = case_vocabulary(case, "offline")
    assert counts == store_vocabulary(store)
    assert counts["tag_occurrences"] == sum(len(n.paths()) for n in store.notes)
    assert counts["distinct_tags"] == len({p for n in store.notes for p in n.paths()})
    row = vocabulary_stats({"offline": [store]}).iloc[0]
    assert row["reuse"] > 1.0  # "user" alone recurs across first-person turns


def _reuse_bounds():
    from benchmarks.history import reuse_bounds
    return reuse_bounds


def test_reuse_bounds_minting_budget_keeps_known_tags_and_the_first_new_ones():
    bounds = _reuse_bounds()
    notes = [["user", "dish/pizza", "city/rome"], ["user", "dish/pasta", "city/rome", "drink/wine"]]
    assert bounds.vocabulary(notes, lambda paths, seen: paths) == pytest.approx((7 / 5, 3 / 5, 7 / 2))
    # budget 1: note 1 keeps only "user"; note 2 keeps "user" (known) and "dish/pasta" (its first new one)
    assert bounds.vocabulary(notes, bounds.budget(1)) == pytest.approx((3 / 2, 1 / 2, 3 / 2))


def test_reuse_bounds_abstract_fallbacks_are_told_from_typed_tags():
    bounds = _reuse_bounds()
    assert bounds.abstract_fallback("idea/trouble") and bounds.abstract_fallback("term/kubernetes")
    assert not bounds.abstract_fallback("dish/pizza") and not bounds.abstract_fallback("breed/beagle")


def test_reuse_bounds_kept_store_remembers_the_same_notes_with_the_kept_tags(hand_store):
    bounds = _reuse_bounds()
    same = bounds.kept_store(hand_store, lambda paths, seen: paths)
    assert [(n.note_id, n.user, n.tags) for n in same.notes] == [(n.note_id, n.user, n.tags) for n in hand_store.notes]
    one_new = bounds.kept_store(hand_store, bounds.budget(1))
    # each note keeps "user" once known and one new tag: note 1 mints "user" only
    assert [n.paths() for n in one_new.notes][:2] == [["user"], ["user", "pet/dog"]]
