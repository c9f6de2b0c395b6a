"""`taggraph compare`: a thin client of `taggraph.runs.compare` and `taggraph.viz.compare_page`."""

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
    explain_pages: int = typer.Option(3, help="Write the explain page of each pair's N worst regressions (a run "
                                              "folder without one) into the output folder's explain/; 0: none."),
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
    the command writing it), and explain/ with the pages of each pair's worst regressions."""
    from taggraph.cli.bench import default_out
    from taggraph._infra.atomic import refuse_input_as_output
    from taggraph.runs.compare import PRINTED, compare_runs, save_comparison
    from taggraph.runs.finished_runs import recorded_data
    from taggraph.runs.folders import check_run_folder
    from taggraph.viz.compare_page import compare_html, regressions

    folder = out or default_out(Path("compare"), "compare")
    refuse_input_as_output(folder, [*runs, *recorded_data(runs)], "compare")
    check_run_folder(folder, force)
    with warnings_as_lines():
        comparison = compare_runs(runs, pair, other_data)
    title = "taggraph compare: " + " vs ".join(r.label for r in comparison.runs)
    pages = regression_pages(regressions(comparison, explain_pages))
    save_comparison(comparison, folder, {"compare.html": compare_html(comparison, folder, title, pages), **pages},
                    force)
    typer.echo(comparison.pairs[PRINTED].round(3).to_string(index=False, na_rep="–"))  # as compare.html
    typer.echo(f"\ncomparison folder: {folder}")


def regression_pages(wanted: dict) -> dict[str, str]:
    """Each explain page `regressions` wants, drawn as `taggraph explain` draws it with its run's data, extractor,
    depth and recorded parameters; one that cannot be drawn (its data gone or changed, a method known only in the
    Python session that ran it) is left to the page's command, with a warning line."""
    import tempfile

    from taggraph.errors import TaggraphError
    from taggraph.views import explain
    from taggraph.runs.finished_runs import method_spec

    pages = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, (run, question, methods) in wanted.items():
            config, data = run.record.get("config", {}), run.record.get("data")
            specs = [method_spec(run, m) for m in methods]
            if not isinstance(data, dict) or None in specs:
                continue
            params = {m: {k: v for k, v in config.get("methods", {}).get(m, {}).items()
                          if k not in ("method", "origin") and isinstance(v, (bool, int, float, str))} for m in methods}
            page = Path(tmp) / "page.html"
            try:
                with warnings_as_lines():
                    explain(data["path"], question, None, page, str(config.get("extractor")), specs,
                            config.get("depth", 40), params, fmt=data.get("format"))
            except TaggraphError as exc:
                typer.echo(f"warning: no explain page of {question} for {run.label}: {exc}", err=True)
                continue
            pages[name] = page.read_text(encoding="utf-8")
    return pages
