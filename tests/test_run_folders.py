"""Run folders: what a run killed while it writes its folder leaves, and what the next run into it does."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pandas as pd
import pytest

from taggraph.atomic import ClaimedFolder
from taggraph.experiments import run_folders

KILLED_WHILE_WRITING = textwrap.dedent("""
    import os, signal, sys
    import pandas as pd
    from taggraph.experiments import run_folders
    real = run_folders.atomic_write
    def killed(path, text):
        real(path, text)
        os.kill(os.getpid(), signal.SIGKILL)
    run_folders.atomic_write = killed
    run_folders.save_run(sys.argv[1], {"summary": pd.DataFrame({"run": ["killed"]})}, run_folders.run_record({}, {}))
""")


def save_tiny_run(out: Path, label: str) -> Path:
    return run_folders.save_run(out, {"summary": pd.DataFrame({"run": [label]})}, run_folders.run_record({}, {}))


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
