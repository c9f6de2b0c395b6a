"""offline-v2: WordNet-typed atomic tags, a pet and a breed for the demo's dog, no catch-all parent."""

from __future__ import annotations

import json
from importlib.metadata import version

import pytest

from taggraph._infra.config import DEMO_DATA
from taggraph.datasets import load_dataset
from taggraph.runs.bench import build_store
from taggraph.core.store_stats import store_vocabulary
from taggraph.extractors import Extractor, get_extractor
from taggraph.extractors import offline_v2
from taggraph.extractors.lexicon import lexicon
from taggraph.extractors.offline import OfflineExtractor
from taggraph.extractors.offline_v2 import V2_PREFIX_CATEGORY, OfflineV2Extractor
from taggraph.core.notes import CATEGORIES

from tests.helpers.stores import shared_file

X = OfflineV2Extractor()


def tags(user: str, assistant: str = "", existing: list[str] | None = None) -> dict[str, tuple[str, ...]]:
    return X.extract(user, assistant, existing or []).tags()


def demo_dog_turn() -> tuple[str, str]:
    records = json.loads(DEMO_DATA.read_text())
    for record in records:
        for session in record["haystack_sessions"]:
            for user, assistant in zip(session[::2], session[1::2]):
                if "Shiba Inu named Miso" in user["content"]:
                    return user["content"], assistant["content"]
    raise AssertionError("the demo's dog turn is gone")


def test_registered_next_to_offline():
    assert isinstance(X, Extractor)
    assert isinstance(get_extractor("offline-v2"), OfflineV2Extractor)
    assert type(get_extractor("offline")) is OfflineExtractor
    assert X.name == "offline-v2" and get_extractor("offline").name == "offline"
    assert f"wn{version('wn')}" in X.cache_key and f"rules{offline_v2.RULES_VERSION}" in X.cache_key
    assert X.cache_key != OfflineExtractor().cache_key


def test_cache_key_changes_with_rules_version(monkeypatch):
    before = OfflineV2Extractor().cache_key
    monkeypatch.setattr(offline_v2, "RULES_VERSION", offline_v2.RULES_VERSION + "x")
    assert OfflineV2Extractor().cache_key != before


def test_demo_dog_is_a_pet_and_a_breed_not_a_company():
    user, assistant = demo_dog_turn()
    t = tags(user, assistant)
    assert {"pet/dog", "breed/shiba_inu", "pet/dog/miso"} <= set(t["extra"])
    assert not [p for c in CATEGORIES for p in t[c] if "shiba" in p and not p.startswith("breed/")]
    assert "weekday/saturday" in t["when"]


def test_nouns_get_typed_atomic_tags():
    t = tags("Can you suggest a lasagna recipe? I play rugby and want a laptop and an espresso for my blog.")
    assert {"dish/lasagna", "sport/rugby", "computer/laptop", "drink/beverage/espresso"} <= set(t["what"])
    assert "food/recipe" in t["what"]  # offline's keyword table wins over WordNet
    assert not [p for p in t["what"] if p.startswith("topic/") or "_" in p.split("/")[-1]]  # atomic nouns


def test_wordnet_collocations_and_possessions():
    t = tags("My leather jacket got wet on the way to check my blood pressure.")
    assert "health/blood_pressure" in t["what"]
    assert "clothing/jacket" in t["extra"]
    assert "equipment" in tags("I sold my camera equipment.")["extra"]  # a noun naming its category: depth 1


def test_the_category_word_a_question_uses_is_on_the_path():
    """"a piece of jewelry", "my relatives", "sports": WordNet's anchor word or category sits between
    the top-level category and the noun, so the question word matches a concept above the tag."""
    t = tags("I bought a gold necklace for my aunt and went swimming.")
    assert "accessory/jewelry/necklace" in t["what"] and "activity/sport/swimming" in t["what"]
    assert "family/relative/aunt" in t["who"]
    assert "food/recipe" in tags("A lasagna recipe, please.")["what"]  # WordNet's "message" sense is not added
    assert lexicon().prefix("birthday") == "period"  # time_period adds nothing to period
    assert lexicon().prefix("pizza") == "dish" and lexicon().prefix("kubernetes") is None


def test_breed_without_possession_is_only_a_topic():
    t = tags("Are corgis good with children?")
    assert "breed/corgi" in t["what"]
    assert not [p for p in t["extra"] if p.startswith("pet/")]


def test_every_emitted_prefix_has_a_slot_and_no_catch_all():
    user, assistant = demo_dog_turn()
    store = build_store(load_dataset(DEMO_DATA, limit=1)[0], "offline-v2")
    tops = {p.split("/", 1)[0] for p in store.ontology.counts}
    assert "topic" not in tops
    assert tops - {"user"} <= set(V2_PREFIX_CATEGORY)


def test_reuses_an_existing_path_with_the_same_name():
    assert "hobby/tennis" in tags("I played tennis today.", existing=["hobby/tennis"])["what"]


def test_deterministic_and_batch_equals_single():
    pairs = [("I adopted a corgi named Biscuit.", ""), ("I baked bread with my sister in Lisbon.", "")]
    batch = [e.tags() for e in X.extract_many(pairs, [])]
    again = [e.tags() for e in OfflineV2Extractor().extract_many(pairs, [])]
    single = [X.extract(*pairs[0], []).tags()]
    single.append(X.extract(*pairs[1], [p for c in CATEGORIES for p in single[0][c]]).tags())
    assert batch == again == single
    assert "pet/dog/biscuit" in batch[0]["extra"] and "family/relative/sister" in batch[1]["who"]


def test_lexicon_types_by_nearest_anchor_and_lexicographer_file():
    lex = lexicon()
    assert lex.category("corgi") == "breed" and lex.is_a("corgi", "dog") and not lex.is_a("corgi", "cat")
    assert lex.category("cat") == "animal" and lex.category("coffee") == "drink"
    assert lex.category("anxiety") == "state"  # no anchor above it: its lexicographer file (noun.state)
    assert lex.category("kubernetes") is None


def test_dev_case_has_no_dominant_top_level():
    case = load_dataset(shared_file("longmemeval_s_dev.json.gz"), limit=1)[0]
    v = store_vocabulary(build_store(case, "offline-v2"))
    assert v["top_levels"] >= 60
    assert v["largest_top_level_occurrences"] / v["tag_occurrences"] <= 0.2
