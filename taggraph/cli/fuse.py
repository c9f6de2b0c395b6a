"""`taggraph fuse`: a thin client of `taggraph.runs.fuse_runs.fuse_runs` (`taggraph.fuse_runs`)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from taggraph.cli.app import DATA_HELP, command, names, warnings_as_lines
from taggraph.errors import ConfigError


def _weights(spec: Optional[str]) -> list[float] | None:
    try:
        return [float(w) for w in names(spec)] if spec else None
    except ValueError:
        raise ConfigError(f"--weights: comma-separated numbers, one per run, got {spec!r}") from None


@command("fuse")
def fuse(
    runs: list[str] = typer.Argument(..., help="Two or more runs: RUN_FOLDER:METHOD (its trec/METHOD.run; the "
                                               "folder alone when it ran one method) or a TREC run file "
                                               "(FILE:NAME for one run of several in it)."),
    method: str = typer.Option("rrf", help="rrf | combsum | combmnz | wsum (as ranx fuses)."),
    norm: str = typer.Option("min-max", help="Score normalization per question before combsum, combmnz and "
                                             "wsum: min-max | zscore | max | sum | none."),
    weights: Optional[str] = typer.Option(None, help="wsum's weights, one per run, comma-separated."),
    k: float = typer.Option(60, help="RRF's k: each run adds 1 / (k + rank)."),
    level: str = typer.Option("sessions", help="Fuse the folders' ranked sessions (trec/METHOD.run) or their "
                                               "ranked notes (notes: trec/METHOD.notes.run; a fused note stands "
                                               "for its session and gives the note-level metrics too)."),
    name: Optional[str] = typer.Option(None, help="The fused run's name; default fused-METHOD[-NORM]."),
    data: Optional[Path] = typer.Option(None, help="The data the runs rank; default: the file the run folders' "
                                                   "run.json records (a --data given is checked against its "
                                                   "sha256). " + DATA_HELP.split("; default")[0] + "."),
    baseline: Optional[str] = typer.Option(None, help="Compare every run's MRR to this one (default the first), "
                                                      "paired per question."),
    out: Optional[Path] = typer.Option(None, help="Run folder (never an input's folder, nor inside one); "
                                                  "default runs/<time>-fuse."),
    force: bool = typer.Option(False, help="Replace an existing run folder."),
) -> None:
    """Fuse runs (RRF, CombSUM, CombMNZ, weighted sum) into a new run folder, scored beside its inputs.

    Runs from folders must share the data and qrels. The folder holds the fused TREC run and the
    rankings, summary and reports `taggraph score` writes; `score` and `compare` read it."""
    from taggraph.cli.bench import default_out, print_result
    from taggraph.runs.fuse_runs import fuse_runs
    from taggraph.viz.report import report_pages

    def pages(result, cases):
        return report_pages(result, "taggraph fuse: " + " + ".join(runs), str(cases.path), cases.benchmark)

    folder = out or default_out(Path("fuse"), "fuse")
    with warnings_as_lines():
        result = fuse_runs(runs, folder, method=method, norm=norm, weights=_weights(weights), k=k, name=name,
                           data=data, baseline=baseline, force=force, pages=pages, level=level)
    print_result(result, folder)
