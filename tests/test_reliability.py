"""Issue 24: nothing lost, nothing silently wrong (signals, concurrent writers, full disks, odd text)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from taggraph.config import DEMO_DATA
from taggraph.datasets import DatasetError, load_cases

FIXTURES = Path(__file__).parent / "fixtures"
LONE = "\udc80"


def demo_record() -> dict:
    return json.loads(DEMO_DATA.read_text())[0]


@pytest.mark.parametrize("field", ["session id", "text", "question id"])
def test_longmemeval_lone_surrogate_is_one_error_naming_record_and_field(tmp_path, field):
    """A lone surrogate escape (legal JSON) crashed the metric library (exit 139) or spaCy; now refused at load."""
    r = demo_record()
    if field == "session id":
        r["haystack_session_ids"][1] += LONE
        expected = "record 0: field 'haystack_session_ids[1]'"
    elif field == "text":
        r["haystack_sessions"][2][0]["content"] += LONE
        expected = "record 0: field 'haystack_sessions[2][0].content'"
    else:
        r["question_id"] += LONE
        expected = "record 0: field 'question_id'"
    path = tmp_path / "data.json"
    path.write_text(json.dumps([r]))  # ensure_ascii: written as the escape \udc80
    with pytest.raises(DatasetError, match="lone surrogate") as err:
        load_cases(path)
    assert f"{path}: {expected}" in str(err.value) and "\n" not in str(err.value)
    str(err.value).encode("utf-8")  # the message itself prints


def test_escaped_surrogate_pairs_load(tmp_path):
    """An emoji written as a surrogate-pair escape is ordinary text."""
    r = demo_record()
    r["question"] += " 🐶"
    path = tmp_path / "data.json"
    path.write_text(json.dumps([r]))
    assert "\\ud83d\\udc36" in path.read_text()
    assert load_cases(path)[0].question.endswith("🐶")


def test_generic_locomo_atant_lone_surrogate_named(tmp_path):
    folder = tmp_path / "mine"
    shutil.copytree(FIXTURES / "generic", folder)
    turns = folder / "turns.jsonl"
    lines = turns.read_text().splitlines()
    first = json.loads(lines[0])
    first["session"] += LONE
    turns.write_text("\n".join([json.dumps(first)] + lines[1:]) + "\n")
    with pytest.raises(DatasetError, match=f"{turns} line 1: field 'session' holds a lone surrogate"):
        load_cases(folder)

    locomo = json.loads((FIXTURES / "locomo" / "locomo_tiny.json").read_text())
    locomo[0]["qa"][1]["question"] += LONE
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps(locomo))
    with pytest.raises(DatasetError, match=r"sample 0: field 'qa\[1\]\.question' holds a lone surrogate"):
        load_cases(path)

    atant = tmp_path / "atant"
    shutil.copytree(FIXTURES / "atant", atant)
    story = sorted(atant.rglob("*.yaml"))[0]
    story.write_text(story.read_text().replace("story_id:", 'odd: "x\\udc80"\nstory_id:', 1))
    with pytest.raises(DatasetError, match=f"{story}: field 'odd' holds a lone surrogate"):
        load_cases(story.parent)
