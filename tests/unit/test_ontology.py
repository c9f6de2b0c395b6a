import pytest
from hypothesis import given, settings, strategies as st

from taggraph.core.ontology import Ontology, normalize_tag


@pytest.mark.parametrize("raw,expected", [
    ("Activity/Yoga Poses", "activity/yoga_pose"),
    ("city/San Diego", "city/san_diego"),
    ("n/a", None), ("N/A", None), (None, None), ("", None), ("  ", None), (42, None),
    ("a/b/c/d/e/f", "a/b/c/d"),
    ("#what:x", "what_x"),
    ("person/David-Chen", "person/david_chen"),
    ("pets/dogs", "pet/dog"),
    ("health//sleep/", "health/sleep"),
    ("food/n/a", "food"),
])
def test_normalize(raw, expected):
    assert normalize_tag(raw) == expected


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(max_size=80), st.none(), st.integers()))
def test_normalized_tags_obey_the_rules(raw):
    tag = normalize_tag(raw)
    if tag is not None:
        parts = tag.split("/")
        assert 1 <= len(parts) <= 4
        assert tag == tag.lower() and " " not in tag and "#" not in tag and ":" not in tag
        assert all(parts) and normalize_tag(tag) == tag  # idempotent


def test_markdown_round_trip_and_tree():
    onto = Ontology(["activity/yoga", "activity/running", "city/san_diego", "activity/yoga"])
    md = onto.to_markdown()
    assert md == "- activity\n  - running\n  - yoga\n- city\n  - san_diego\n"
    assert Ontology.parse_markdown(md) == ["activity", "activity/running", "activity/yoga", "city", "city/san_diego"]
    assert onto.children()["activity"] == ["activity/running", "activity/yoga"]
    assert onto.reuse() == pytest.approx(4 / 3)


def test_bad_ontology_markdown_names_line():
    with pytest.raises(ValueError, match="ontology.md:2"):
        Ontology.parse_markdown("- a\n      - b\n")
