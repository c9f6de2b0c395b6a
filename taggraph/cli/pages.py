"""`taggraph explain` and `taggraph graph`: the explain page and the graph view of one question."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from taggraph.cli.app import (DATA_HELP, DEFAULT_DATA, EXTRACTOR_HELP, command, format_option, method_params,
                              methods_option, positive, warnings_as_lines)
from taggraph._infra.config import DEFAULT_EXTRACTOR
from taggraph.methods.fusion.signal_table import MEANINGS, UNIT

# the help's legend of TagGraph-Fusion's signals, from its table (two line breaks: rich keeps each a paragraph)
SIGNALS_HELP = (f"TagGraph-Fusion's signals (each one's part of the score, in {UNIT}):\n\n"
                + "\n\n".join(f"{name}: {meaning}" for name, meaning in MEANINGS.items()))


@command(help_text=SIGNALS_HELP)
def explain(
    data: Path = typer.Option(DEFAULT_DATA, help=DATA_HELP),
    fmt: Optional[str] = format_option(),
    question: str = typer.Option(..., help="Question id, e.g. demo_q06."),
    note: Optional[str] = typer.Option(None, help="Note id, e.g. 'demo_s24#0'; default: the gold note the graph page "
                                                  "opens on (of the first method that misses, its best-ranked gold "
                                                  "session's)."),
    out: Optional[Path] = typer.Option(None, help="Also write the explanation page (HTML) here."),
    graph_out: Optional[Path] = typer.Option(None, help="Also write the question's graph page (HTML) here; the two "
                                                        "pages link each other."),
    methods: Optional[str] = typer.Option(None, help="Comma-separated method names; default: the paper's seven "
                                                     "and TagGraph-Fusion."),
    extractor: str = typer.Option(DEFAULT_EXTRACTOR, help=EXTRACTOR_HELP),
    depth: int = typer.Option(40, help="Retrieval depth, as bench's --depth."),
    param: list[str] = typer.Option([], help="Method parameter METHOD.KEY=VALUE, as bench's --param."),
) -> None:
    """Why each method did (not) retrieve a note for a question, judged like the explain page."""
    from taggraph.views import explain as explain_question

    with warnings_as_lines():
        chosen = methods_option(methods) if methods is not None else None
        text = explain_question(data, question, note, out, extractor, chosen, positive(depth, "--depth"),
                                method_params(param, running=chosen), fmt=fmt, graph_out=graph_out)
    typer.echo(text)
    if out is not None:
        typer.echo(f"\nexplanation page: {out}")
    if graph_out is not None:
        typer.echo(f"graph page: {graph_out}")


@command()
def graph(
    data: Path = typer.Option(DEFAULT_DATA, help=DATA_HELP),
    fmt: Optional[str] = format_option(),
    question: str = typer.Option(..., help="Question id, e.g. demo_q01."),
    out: Path = typer.Option(..., help="HTML file to write (opens offline in any browser)."),
    methods: Optional[str] = typer.Option(None, help="Comma-separated methods whose results to highlight."),
    extractor: str = typer.Option(DEFAULT_EXTRACTOR, help=EXTRACTOR_HELP),
    neighbourhood: bool = typer.Option(False, help="Only nodes near the question's concepts and highlighted notes."),
    hops: int = typer.Option(2, help="Neighbourhood radius in edges."),
    max_nodes: int = typer.Option(400, help="Draw at most this many nodes in the whole graph (up to 2,000); the "
                                            "page's work is bounded by it, whatever the history's size."),
    depth: int = typer.Option(40, help="Retrieval depth, as bench's --depth (the side panel judges by it)."),
    param: list[str] = typer.Option([], help="Method parameter METHOD.KEY=VALUE, as bench's --param."),
    whole: bool = typer.Option(False, help="Open on the whole graph, not the subgraph that explains the miss."),
    explain_out: Optional[Path] = typer.Option(None, help="Also write the explain page of the gold note the graph "
                                                          "opens on here; the two pages link each other."),
) -> None:
    """Interactive graph of one question's store, gold and retrieved notes highlighted. It opens on the subgraph
    that explains where the methods rank the gold notes; its 'whole graph' check box shows the whole drawing."""
    from taggraph.views import graph as graph_question

    positive(max_nodes, "--max-nodes")
    positive(hops, "--hops")
    positive(depth, "--depth")
    with warnings_as_lines():
        chosen = methods_option(methods) if methods is not None else None
        graph_question(data, question, out, extractor, chosen, depth, method_params(param, running=chosen), fmt,
                       explain_out, hops=hops, max_nodes=max_nodes, whole_graph=whole,
                       neighbourhood=neighbourhood)
    typer.echo(f"graph page: {out}")
    if explain_out is not None:
        typer.echo(f"explanation page: {explain_out}")
