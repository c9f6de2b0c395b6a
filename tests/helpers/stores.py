"""Small stores by hand (`HAND_ROWS`, `make_store`) and the real LongMemEval data when this machine has it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from taggraph.core.store import Interaction, MemoryStore
from taggraph.datasets import Case
from taggraph.extractors.base import Extraction

SHARED_DATA = Path(os.environ.get("TAGGRAPH_DATA", Path(__file__).resolve().parents[3] / "shared" / "data" / "longmemeval"))


def make_store(rows, case_id="t"):
    """rows: (session_id, user, assistant, {category: [paths]})."""
    store = MemoryStore(case_id)
    for sid, user, assistant, tags in rows:
        store.remember(Interaction(sid, user, assistant), Extraction(**tags))
    return store


HAND_ROWS = [
    ("s1", "I do yoga every morning to sleep better.", "Yoga helps.",
     {"who": ["user"], "what": ["activity/yoga", "health/sleep"], "when": ["time/morning"]}),
    ("s2", "My dog Max is a beagle.", "Beagles are friendly.",
     {"who": ["user"], "what": ["pet/dog"], "extra": ["breed/beagle"]}),
    ("s3", "I went running in San Diego last May.", "Nice city for running.",
     {"who": ["user"], "what": ["activity/running"], "where": ["city/san_diego"], "when": ["month/may"]}),
    ("s4", "Can you give me a pasta recipe?", "Boil the pasta, add sauce.",
     {"what": ["food/pasta", "cooking/recipe"]}),
    ("s5", "I adopted a cat named Luna.", "Congratulations on Luna.",
     {"who": ["user"], "what": ["pet/cat"], "extra": ["pet_name/luna"]}),
]


def shared_file(name: str) -> Path:
    path = SHARED_DATA / name
    if not path.exists():
        pytest.skip(f"real LongMemEval data not found at {path} (set TAGGRAPH_DATA)")
    return path


def turn_cases(*turns_per_case) -> list[Case]:
    """Cases of (user, assistant) turns, one case per argument: q0, q1, ... with sessions s{case}_{turn}."""
    return [Case(f"q{c}", "?", "t", [Interaction(f"s{c}_{i}", user, assistant) for i, (user, assistant) in enumerate(turns)])
            for c, turns in enumerate(turns_per_case)]
