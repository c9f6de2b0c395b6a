"""`taggraph runs`: the runs index of a folder of run folders (`taggraph.viz.runs_page`), with a compare page for
each pair of its runs over the same data."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from taggraph.cli.app import command, warnings_as_lines


@command("runs")
def runs(
    folder: Path = typer.Argument(..., help="A folder of run folders (bench, score or fuse; searched at any depth)."),
    out: Optional[Path] = typer.Option(None, help="The page to write; default FOLDER/runs.html."),
    compare: bool = typer.Option(True, help="Write a compare page (FOLDER/compare/A-vs-B) for each pair of runs over "
                                            "the same data that share a method name, replacing an older one."),
) -> None:
    """One offline page over a folder of runs: each run's date, commit, data and sha256, methods and MRRs, a link
    to its report; filter and sort the rows, overlay the per-type MRR of two or more runs, and tick two runs for
    their compare page."""
    from itertools import combinations

    from taggraph._infra.atomic import atomic_write
    from taggraph.errors import InputError, TaggraphError
    from taggraph.runs.compare import compare_runs, save_comparison
    from taggraph.viz.compare_page import compare_html
    from taggraph.viz.runs_page import find_runs, runs_html

    if not folder.is_dir():
        raise InputError(f"{folder}: not a folder")
    found = find_runs(folder)
    if not found:
        raise InputError(f"{folder}: no run folder (run.json and summary.csv) in it")
    page = out or folder / "runs.html"
    pages = {}
    for (i, a), (j, b) in combinations(enumerate(found), 2):
        if not compare or not a.checksum or a.checksum != b.checksum or not set(a.summary["method"]) & set(
                b.summary["method"]):
            continue
        target = folder / "compare" / f"{a.name.replace('/', '_')}-vs-{b.name.replace('/', '_')}"
        try:
            with warnings_as_lines():
                comparison = compare_runs([a.path, b.path])
        except TaggraphError as exc:  # other gold, edited rankings: the page shows the command instead
            typer.echo(f"warning: {a.name} and {b.name} not compared: {exc}", err=True)
            continue
        title = f"taggraph compare: {a.name} vs {b.name}"
        save_comparison(comparison, target, {"compare.html": compare_html(comparison, target, title)}, force=True)
        pages[i, j] = target / "compare.html"
    atomic_write(page, runs_html(found, page, pages, f"taggraph runs: {folder.resolve().name}"))
    typer.echo(f"{len(found)} run(s), {len(pages)} compare page(s)\nruns page: {page}")


START, END = "<!-- results-table:start -->", "<!-- results-table:end -->"


@command("results-table")
def results_table(
    runs: list[Path] = typer.Argument(..., help="Run folders, one column each, in this order."),
    into: Optional[Path] = typer.Option(None, help=f"Replace the table between {START} and {END} in this file "
                                                   "(a README); default: print it."),
    metric: str = typer.Option("MRR", help="The summary.csv column shown."),
) -> None:
    """The results table of run folders in Markdown: a row per method, a column per run (its name and judged n),
    the best of each column in bold; printed, or written into a file between its markers."""
    import pandas as pd

    from taggraph._infra.atomic import atomic_write
    from taggraph.errors import InputError
    from taggraph.evaluation.tables import results_markdown

    summaries = {}
    for run in runs:
        if not (run / "summary.csv").is_file():
            raise InputError(f"{run}: no summary.csv (not a bench, score or fuse run folder)")
        summary = pd.read_csv(run / "summary.csv")
        if metric not in summary:
            raise InputError(f"{run}/summary.csv: no column {metric!r}")
        summaries[run.resolve().name] = summary
    table = results_markdown(summaries, metric)
    if into is None:
        typer.echo(table)
        return
    text = into.read_text(encoding="utf-8")
    if text.count(START) != 1 or text.count(END) != 1 or text.index(START) > text.index(END):
        raise InputError(f"{into}: needs one {START} line and one {END} line after it, around the table")
    head, rest = text.split(START)
    atomic_write(into, f"{head}{START}\n{table}\n{END}{rest.split(END, 1)[1]}")
    typer.echo(f"results table of {len(runs)} run(s) written into {into}")
