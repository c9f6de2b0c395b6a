"""CLI commands `taggraph explain` and `taggraph graph`; taggraph/cli.py calls `register(app)`."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from taggraph.config import DEMO_DATA


def explain(
    data: Path = typer.Option(DEMO_DATA, help="LongMemEval JSON(.gz) file; default: the bundled demo."),
    question: str = typer.Option(..., help="Question id, e.g. demo_q06."),
    note: Optional[str] = typer.Option(None, help="Note id, e.g. 'demo_s24#0'; default: the first gold note."),
    out: Optional[Path] = typer.Option(None, help="Also write the explanation page (HTML) here."),
    methods: Optional[str] = typer.Option(None, help="Comma-separated method names; default: the paper's seven."),
    extractor: str = typer.Option("offline", help="offline | none | ollama:MODEL | gguf:PATH"),
) -> None:
    """Why each method did (not) retrieve a note for a question."""
    from taggraph.cli import _expected_errors, _fail, _methods
    from taggraph.viz.explain import explain_command

    try:
        table = explain_command(data, question, note, out, extractor, _methods(methods))
    except _expected_errors() as exc:
        _fail(exc)
        return
    for row in table.to_dict("records"):
        typer.echo(f"{row['method']}: {row['reason']}")
        if row["key details"]:
            typer.echo(f"    {row['key details']}")
    if out is not None:
        typer.echo(f"\nexplanation page: {out}")


def graph(
    data: Path = typer.Option(DEMO_DATA, help="LongMemEval JSON(.gz) file; default: the bundled demo."),
    question: str = typer.Option(..., help="Question id, e.g. demo_q01."),
    out: Path = typer.Option(..., help="HTML file to write (opens offline in any browser)."),
    methods: Optional[str] = typer.Option(None, help="Comma-separated methods whose results to highlight."),
    extractor: str = typer.Option("offline", help="offline | none | ollama:MODEL | gguf:PATH"),
    neighbourhood: bool = typer.Option(False, help="Only nodes near the question's concepts and highlighted notes."),
    hops: int = typer.Option(2, help="Neighbourhood radius in edges."),
    max_nodes: int = typer.Option(400, help="Draw at most this many nodes."),
) -> None:
    """Interactive graph of one question's store, gold and retrieved notes highlighted."""
    from taggraph.cli import _expected_errors, _fail, _methods
    from taggraph.experiments.bench import build_store
    from taggraph.viz.explain import available_methods, find_case, gold_notes, retrieve_all
    from taggraph.viz.graphview import save_graph_html

    try:
        case = find_case(data, question)
        store = build_store(case, extractor)
        results = retrieve_all(store, case.question, available_methods(_methods(methods)))
        save_graph_html(out, store, question=case.question, results_by_method=results,
                        gold_note_ids=gold_notes(data, case, store), hops=hops, max_nodes=max_nodes,
                        neighbourhood_of=case.question if neighbourhood else None)
    except _expected_errors() as exc:
        _fail(exc)
        return
    typer.echo(f"graph page: {out}")


def register(app: typer.Typer) -> None:
    """Add the `explain` and `graph` commands to the taggraph CLI."""
    app.command("explain")(explain)
    app.command("graph")(graph)
