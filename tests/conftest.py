import atexit
import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

from taggraph.extractors.base import Extraction
from taggraph.methods import registry
from taggraph.core.store import Interaction, MemoryStore

# The tiers (unit, integration, browser) share helpers by module name (a fake server, a toy method, Chromium's
# fixtures): each tier's folder is importable whichever tier pytest collects.
sys.path[:0] = [str(Path(__file__).parent / tier) for tier in ("unit", "integration", "browser")]
os.environ.setdefault("TQDM_DISABLE", "1")
os.environ["TAGGRAPH_CACHE"] = tempfile.mkdtemp(prefix="taggraph-test-cache-")  # tests never see a user's cache
atexit.register(shutil.rmtree, os.environ["TAGGRAPH_CACHE"], ignore_errors=True)  # one per process (xdist worker)
# The distilled static MiniLM (a minute to build) is built once per test run, not once per worker: every process's
# cache links its models folder to one shared folder, made (and removed at exit) by the process that starts the
# run; the workers it starts inherit its name. The model's own file lock keeps two workers from building it twice.
if "TAGGRAPH_TEST_MODELS" not in os.environ:
    os.environ["TAGGRAPH_TEST_MODELS"] = tempfile.mkdtemp(prefix="taggraph-test-models-")
    atexit.register(shutil.rmtree, os.environ["TAGGRAPH_TEST_MODELS"], ignore_errors=True)
os.symlink(os.environ["TAGGRAPH_TEST_MODELS"], Path(os.environ["TAGGRAPH_CACHE"]) / "models")
SHARED_DATA = Path(os.environ.get("TAGGRAPH_DATA", Path(__file__).resolve().parents[2] / "shared" / "data" / "longmemeval"))


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


@pytest.fixture
def hand_store():
    return make_store(HAND_ROWS)


@pytest.fixture
def clean_registry(monkeypatch):
    """Registrations made by a test stay in that test, and those other test modules left do not reach it."""
    monkeypatch.setattr(registry.METHODS, "_registered", {})


def shared_file(name: str) -> Path:
    path = SHARED_DATA / name
    if not path.exists():
        pytest.skip(f"real LongMemEval data not found at {path} (set TAGGRAPH_DATA)")
    return path
