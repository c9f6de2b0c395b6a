"""Models built once into the cache (``<TAGGRAPH_CACHE>/models/<key>``): under a file lock, into a folder renamed
into place when finished, so parallel workers build a model once and a killed build leaves no half model."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path


from taggraph._infra.config import cache_dir
from taggraph._infra.progress import progress


STALE_BUILD_SECONDS = 3600  # a model build folder older than this is a dead build's (a build takes ~10 s)


def built_once(key: str, marker: str, build, sound=None, about: str = "10-30 s") -> Path:
    """``<TAGGRAPH_CACHE>/models/<key>``, written by ``build(folder)`` on first use: into ``.building-<key>``
    renamed into place once `marker` is in it, under a file lock, so parallel workers build it once and a
    killed build leaves no half model. `sound(folder)` (default: `marker` is in it) tells a finished model from a
    damaged one, which is moved aside and built again. A killed build's folder is claimed by the next build of
    its key (it holds the lock, so that build is dead), and any ``.building-*`` an hour old by any build. A build
    shows a bar that names the model, its folder and `about` how long it takes, once per machine."""
    folder = cache_dir() / "models" / key
    sound = sound or (lambda f: (f / marker).exists())
    if sound(folder):
        return folder
    from filelock import FileLock
    folder.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(folder) + ".lock"):
        if not sound(folder):
            tmp = folder.parent / f".building-{key}"
            _claim_dead_builds(tmp)
            if folder.exists():  # damaged: moved aside at once, so no reader sees it half removed
                os.replace(folder, tmp)
                shutil.rmtree(tmp)
            with progress(total=1, desc=f"one-time build of model {key} into {folder} (about {about})") as bar:
                build_then_rename(tmp, folder, build)
                bar.update()
    return folder


def build_then_rename(tmp: Path, folder: Path, build) -> None:
    """``build(tmp)`` into the new folder `tmp`, then `tmp` renamed to `folder`; `tmp` is removed when the build
    fails, so no half-built `folder` is ever seen."""
    tmp.mkdir()
    try:
        build(tmp)
        os.replace(tmp, folder)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _claim_dead_builds(own: Path) -> None:
    """Remove `own` (a build folder whose lock the caller holds) and the ``.building-*`` beside it older than
    STALE_BUILD_SECONDS (those of other models, or named by an older taggraph, whose builds were killed)."""
    for folder in own.parent.glob(".building-*"):
        try:
            dead = folder == own or time.time() - folder.stat().st_mtime > STALE_BUILD_SECONDS
        except FileNotFoundError:  # claimed meanwhile by another build
            continue
        if dead:
            shutil.rmtree(folder, ignore_errors=True)
