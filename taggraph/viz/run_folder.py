"""A bench or score result written as its run folder with its reports: what `taggraph bench` and `taggraph score`
write, and `tg.bench(..., out=...)` / `tg.score(..., out=...)` from Python, so that `compare`, `score` and `fuse` read
either alike."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

from taggraph.datasets import Dataset
from taggraph.errors import ConfigError
from taggraph.runs.provenance import command_line
from taggraph.runs.folders import git_commit, save_bench
from taggraph.viz.report import report_pages


def write_run(result, out: Path, dataset: Dataset, force: bool = False, miss_pages: int = 10,
              command: str = "bench", argv: list[str] | None = None) -> Path:
    """Write `result` as run folder `out` (atomically; `force` replaces a run there) with report.md and report.html
    (titled by the `command` that made it, its provenance on the first screen: commit, date, the command line
    `argv` or this process's, the data and its sha256) and the explain and graph pages of its first `miss_pages`
    missed questions that the run drew (`viz.miss_pages.MissPages`)."""
    if not isinstance(dataset, Dataset):
        raise ConfigError("a run folder records its data's path and sha256: pass the dataset tg.load returned, "
                          f"not {type(dataset).__name__}")
    data = dataset.path
    result.config["command"] = command_line(argv)
    record = {"created": datetime.now(timezone.utc).isoformat(timespec="seconds"), "git_commit": git_commit(),
              "data": dataset.record()}
    pages = report_pages(result, f"taggraph {command}: {data.name or data}", str(data), dataset.benchmark,
                         dataset.cases, miss_pages, record=record)
    return save_bench(result, Path(out), dataset.record(), pages, force=force)
