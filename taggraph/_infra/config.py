"""Settings read from the environment (one place, so notebooks and CLI agree).

TAGGRAPH_DATA   folder holding LongMemEval files (default: ../shared/data/longmemeval
                beside a source checkout, when present)
TAGGRAPH_CACHE  cache folder for extractions and embeddings (default: ~/.cache/taggraph)
"""

from __future__ import annotations

import os
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parents[1]  # taggraph/
# The bundled demo ships inside the package (package data), so it is there after any install.
DEMO_DATA = PACKAGE_DIR / "_data" / "demo" / "longmemeval_demo.json"
# The tagger when none is named: offline-v2 beats offline on every tag-walking method on
# LongMemEval-S dev (paired p < 0.001) and loses on none significantly (BM25 -0.001, p = 0.79);
# `--extractor offline` reproduces runs made before it became the default.
DEFAULT_EXTRACTOR = "offline-v2"


def data_dir() -> Path:
    """Where real LongMemEval files are looked for."""
    env = os.environ.get("TAGGRAPH_DATA")
    return Path(env) if env else PACKAGE_DIR.parent.parent / "shared" / "data" / "longmemeval"


def cache_dir() -> Path:
    """$TAGGRAPH_CACHE, else ~/.cache/taggraph, made if it can be; one that cannot (a read-only HOME, a file)
    is reported in one line by `taggraph._infra.cache.open_cache` when a cache is opened there."""
    env = os.environ.get("TAGGRAPH_CACHE")
    path = Path(env) if env else Path.home() / ".cache" / "taggraph"
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError:
        pass
    return path
