import atexit
import os
import shutil
import tempfile
from pathlib import Path

import pytest

from taggraph.methods import registry

from tests.helpers.stores import HAND_ROWS, make_store

# What the tiers (unit, integration, browser, faults) share is the package tests.helpers; each tier has its conftest.
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


@pytest.fixture
def hand_store():
    return make_store(HAND_ROWS)


@pytest.fixture
def clean_registry(monkeypatch):
    """Registrations made by a test stay in that test, and those other test modules left do not reach it."""
    monkeypatch.setattr(registry.METHODS, "_registered", {})
