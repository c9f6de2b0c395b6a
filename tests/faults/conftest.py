"""The fault tier: every test here is `slow` (the whole tier takes minutes of attacks, servers and killed
processes); `make test-faults` runs it (CI after `make test`), `-m "not slow"` leaves it out."""

import pytest


def pytest_collection_modifyitems(items):
    for item in items:
        if item.path.parent.name == "faults":
            item.add_marker(pytest.mark.slow)
