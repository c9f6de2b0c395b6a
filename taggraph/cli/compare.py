"""`taggraph compare`: a thin client of `taggraph.experiments.run_comparison` and `taggraph.viz.compare_page`."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from taggraph.cli.app import command, warnings_as_lines


@command("compare")
def compare(
    runs: list[Path] = typer.Argument(..., help="Two or more run folders (bench or score); the first is the "
                                                "baseline of the others. One folder with --pair: two of its methods."),
    pair: list[str] = typer.Option([], help="Compare RUN:METHOD=RUN:METHOD (RUN: position 1, 2, ... or folder "
                                            "name), e.g. 1:BM25=2:BM25; repeatable. Default: same method names."),
    out: Optional[Path] = typer.Option(None, help="Output folder (never one of the runs, nor inside one); "
                                                  "default runs/<time>-compare."),
    force: bool = typer.Option(False, help="Replace a non-empty --out (a comparison or run folder)."),
    other_data: bool = typer.Option(False, "--other-data", help="Compare runs over different data (another "
                                                                "sha256, or other gold sessions), pairing questions "
                                                                "by id."),
) -> None:
    """Which methods got better or worse between runs: ΔMRR with CI, p and Holm/BH-adjusted p, its tie-aware
    twin, wins/losses/ties (without the questions where a side has no evidence: every session scored alike),
    changed questions (and which places rest on tie order), per question type.

    Every number is recomputed from the runs' rankings.
    Writes pairs.csv, per_type.csv, questions.csv (a row per pair and question),
    run.json and compare.html (charts; each changed question's explain page or
    the command writing it)."""
    from taggraph.cli.bench import default_out
    from taggraph.atomic import refuse_input_as_output
    from taggraph.experiments.run_comparison import PRINTED, compare_runs, recorded_data, save_comparison
    from taggraph.experiments.run_folders import check_run_folder
    from taggraph.viz.compare_page import compare_html

    folder = out or default_out(Path("compare"), "compare")
    refuse_input_as_output(folder, [*runs, *recorded_data(runs)], "compare")
    check_run_folder(folder, force)
    with warnings_as_lines():
        comparison = compare_runs(runs, pair, other_data)
    title = "taggraph compare: " + " vs ".join(r.label for r in comparison.runs)
    save_comparison(comparison, folder, {"compare.html": compare_html(comparison, folder, title)}, force)
    typer.echo(comparison.pairs[PRINTED].round(3).to_string(index=False, na_rep="–"))  # as compare.html
    typer.echo(f"\ncomparison folder: {folder}")
