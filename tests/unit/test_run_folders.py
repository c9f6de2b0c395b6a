"""Run folders: what a run killed while it writes its folder leaves, and what the next run into it does."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pandas as pd
import pytest

from filelock import FileLock

from taggraph._infra.atomic import ClaimedFolder
from taggraph.errors import ConfigError, WriteError
from taggraph.runs import folders as run_folders

KILLED_WHILE_WRITING = textwrap.dedent("""
    import os, signal, sys
    import pandas as pd
    from taggraph.runs import folders as run_folders
    real = run_folders.atomic_write
    def killed(path, text):
        real(path, text)
        os.kill(os.getpid(), signal.SIGKILL)
    run_folders.atomic_write = killed
    run_folders.save_run(sys.argv[1], {"summary": pd.DataFrame({"run": ["killed"]})}, run_folders.run_record({}, {}))
""")


def save_tiny_run(out: Path, label: str, force: bool = False) -> Path:
    return run_folders.save_run(out, {"summary": pd.DataFrame({"run": [label]})}, run_folders.run_record({}, {}),
                                force=force)


def ran(out: Path) -> list[str]:
    return pd.read_csv(out / "summary.csv")["run"].tolist()


def hidden(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.glob(".*"))


def set_aside_by_a_killed_run(out: Path) -> Path:
    """What `--force` killed while it replaced `out` left: the previous run in a hidden .old folder, whose lock file
    no process holds."""
    aside = out.parent / f".{out.name}.k1ll3d.old"
    aside.mkdir()
    os.rename(out, aside / "run")
    (out.parent / f"{aside.name}.lock").touch()
    return aside


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.glob(".*") if ".partial" in p.name)


def test_the_next_run_removes_what_a_killed_run_left(tmp_path):
    """A kill -9 while `bench --out X` wrote X left a hidden .X.<random>.partial folder that nothing mentioned or
    removed."""
    out = tmp_path / "X"
    killed = subprocess.run([sys.executable, "-c", KILLED_WHILE_WRITING, str(out)])
    assert killed.returncode == -9 and not out.exists() and leftovers(tmp_path)
    save_tiny_run(out, "next")
    assert leftovers(tmp_path) == [] and pd.read_csv(out / "summary.csv")["run"].tolist() == ["next"]


def test_a_folder_another_run_is_writing_is_left_alone(tmp_path):
    out = tmp_path / "X"
    with ClaimedFolder(out, "partial") as writing:
        (writing / "summary.csv").write_text("run\nother\n")
        save_tiny_run(out, "this")
        assert (writing / "summary.csv").exists()
    assert pd.read_csv(out / "summary.csv")["run"].tolist() == ["this"]


def test_a_finished_run_kept_beside_out_is_named_not_removed(tmp_path):
    out = tmp_path / "X"
    with ClaimedFolder(out, "partial") as kept:  # as a run whose move into place failed leaves it
        (kept / "run.json").write_text(json.dumps(run_folders.run_record({}, {})))
    with pytest.warns(UserWarning, match=f"{kept}: a finished run kept beside --out {out}"):
        save_tiny_run(out, "next")
    assert (kept / "run.json").exists() and leftovers(tmp_path) == [kept.name]


def test_a_run_set_aside_by_a_killed_run_is_put_back_when_its_successor_never_landed(tmp_path):
    """kill -9 between setting the old run aside and moving the new one in left --out missing, the old run
    hidden in .old, until a later run."""
    out = tmp_path / "X"
    save_tiny_run(out, "previous")
    set_aside_by_a_killed_run(out)
    with pytest.warns(UserWarning, match="put back the run a stopped run had set aside"), \
            pytest.raises(ConfigError, match="folder exists and is not empty"):
        run_folders.check_run_folder(out)
    assert ran(out) == ["previous"] and hidden(tmp_path) == []


def test_a_run_set_aside_by_a_killed_run_is_removed_once_its_successor_landed(tmp_path):
    """kill -9 after the new run landed left the previous one in .old and the lock files for good."""
    out = tmp_path / "X"
    save_tiny_run(out, "previous")
    set_aside_by_a_killed_run(out)
    save_tiny_run(tmp_path / "new", "new")
    os.rename(tmp_path / "new", out)
    (tmp_path / ".X.l4nd3d.partial.lock").touch()  # the claim of the run that landed
    save_tiny_run(out, "next", force=True)
    assert ran(out) == ["next"] and hidden(tmp_path) == []


def test_what_a_live_run_holds_is_left_alone(tmp_path):
    out = tmp_path / "X"
    save_tiny_run(out, "previous")
    writing = FileLock(str(tmp_path / ".X.l1v3.partial.lock"), timeout=0)
    with writing, ClaimedFolder(out, "old") as aside:  # a live run replacing X: its old run set aside
        os.rename(out, aside / "run")
        run_folders.check_run_folder(out)
        assert not out.exists() and ran(aside / "run") == ["previous"]
        assert Path(writing.lock_file).exists()


def test_a_run_that_fails_to_land_puts_the_previous_one_back(tmp_path, monkeypatch):
    out = tmp_path / "X"
    save_tiny_run(out, "previous")
    real, tries = os.rename, []

    def refused(src, dst):
        if Path(dst) == out and ".partial" in str(src):
            tries.append(src)
            if len(tries) == 2:  # once the previous run is set aside
                raise PermissionError(errno.EACCES, "Permission denied")
        real(src, dst)

    monkeypatch.setattr(os, "rename", refused)
    with pytest.raises(WriteError, match="cannot move the finished run into place"):
        save_tiny_run(out, "next", force=True)
    assert ran(out) == ["previous"] and [p for p in hidden(tmp_path) if ".old" in p] == []
