"""The `taggraph` command line: thin wrappers over library functions.

Errors in the input end the command with one line naming the file, record and
field (exit status 2); `--debug` shows the traceback instead.
"""

from __future__ import annotations

import sys
from datetime import datetime
from pathlib import Path
from typing import Optional

import typer

from taggraph.config import DEMO_DATA

app = typer.Typer(add_completion=False, no_args_is_help=True, help=__doc__.splitlines()[0])
_state = {"debug": False}


class UserError(Exception):
    """An expected failure with a one-line message."""


def _fail(exc: BaseException) -> None:
    if _state["debug"]:
        raise exc
    typer.echo(f"error: {exc}", err=True)
    raise typer.Exit(2)


def _expected_errors():
    from taggraph.datasets import DatasetError
    from taggraph.store import StoreError
    return (UserError, DatasetError, StoreError, KeyError, ValueError, OSError)


@app.callback()
def main(debug: bool = typer.Option(False, "--debug", help="Show tracebacks instead of one-line errors.")) -> None:
    _state["debug"] = debug


def _methods(spec: Optional[str]) -> list[str]:
    from taggraph.retrieval import ALL_METHODS, PAPER_METHODS
    if not spec:
        return list(PAPER_METHODS)
    names = [m.strip() for m in spec.split(",") if m.strip()]
    unknown = [m for m in names if m not in ALL_METHODS]
    if unknown:
        raise UserError(f"unknown method(s) {unknown}; known: {', '.join(ALL_METHODS)}")
    return names


def _cases(data: Path, fmt: str | None, limit: int | None, per_type: int | None) -> list:
    """The dataset's cases: the first `limit`, then the first `per_type` of each question type."""
    from taggraph.datasets import first_per_type, load_dataset
    cases = load_dataset(data, limit=limit, fmt=fmt)
    return first_per_type(cases, per_type) if per_type else cases


@app.command()
def bench(
    data: Path = typer.Option(DEMO_DATA, help="LongMemEval or LoCoMo JSON(.gz) file, or a folder of ATANT "
                                              "stories; default: the bundled demo."),
    fmt: Optional[str] = typer.Option(None, "--format", help="longmemeval | locomo | atant (default: detect)."),
    out: Optional[Path] = typer.Option(None, help="Run folder; default runs/<time>-<data name>."),
    methods: Optional[str] = typer.Option(None, help="Comma-separated method names; default: the paper's seven."),
    limit: Optional[int] = typer.Option(None, help="Only the first N questions."),
    per_type: Optional[int] = typer.Option(None, help="Only the first N questions of each question type."),
    extractor: str = typer.Option("offline", help="offline | offline-v2 | none | ollama:MODEL | gguf:PATH"),
    depth: int = typer.Option(40, help="Retrieval depth."),
    workers: int = typer.Option(1, help="Parallel processes over cases (joblib)."),
    dask_scheduler: Optional[str] = typer.Option(None, help="Run the cases on this Dask cluster (tcp://HOST:PORT)."),
    param: list[str] = typer.Option([], help="Method parameter METHOD.KEY=VALUE, e.g. AdaptiveGraph.iterations=0."),
    embedder: Optional[str] = typer.Option(None, help="Embedder of OpenClaw and OC-notes: minilm (default) | "
                                                      "minilm-static (fast) | ollama:MODEL."),
) -> None:
    """Run retrieval methods over a dataset; print MRR and recall, write a run folder."""
    try:
        from taggraph.datasets import file_checksum, folder_checksum
        from taggraph.experiments.bench import add_benchmark_metrics, run_bench
        from taggraph.experiments.runs import save_bench

        names = _methods(methods)
        cases = _cases(data, fmt, limit, per_type)
        from taggraph.experiments.commands import scale_out
        scale, workers, backend = scale_out(workers, dask_scheduler)
        with scale:
            result = run_bench(cases, names, extractor=extractor, depth=depth, workers=workers,
                               method_params=_method_params(param, embedder), backend=backend)
        add_benchmark_metrics(result, cases)
        stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
        folder = save_bench(result, out or Path("runs") / f"{stamp}-{data.name.split('.')[0]}", data,
                            file_checksum(data) if data.is_file() else folder_checksum(data))
    except _expected_errors() as exc:
        _fail(exc)
        return
    typer.echo(result.summary.round(3).to_string(index=False))
    typer.echo(f"\nrun folder: {folder}")


@app.command()
def embed(
    data: Path = typer.Option(DEMO_DATA, help="LongMemEval or LoCoMo JSON(.gz) file, or a folder of ATANT stories."),
    fmt: Optional[str] = typer.Option(None, "--format", help="longmemeval | locomo | atant (default: detect)."),
    methods: Optional[str] = typer.Option(None, help="Comma-separated dense methods; default: OpenClaw,OC-notes."),
    limit: Optional[int] = typer.Option(None, help="Only the first N questions."),
    per_type: Optional[int] = typer.Option(None, help="Only the first N questions of each question type."),
    extractor: str = typer.Option("offline", help="offline | offline-v2 | none | ollama:MODEL | gguf:PATH (OC-notes embeds notes)."),
    embedder: str = typer.Option("minilm", help="minilm | minilm-static | ollama:MODEL."),
    param: list[str] = typer.Option([], help="Method parameter METHOD.KEY=VALUE (chunk_chars, overlap_chars)."),
) -> None:
    """Fill the embedding cache for the dense methods, so that `bench` with the same settings runs warm."""
    try:
        from taggraph.experiments.embed_cache import fill_embedding_cache

        table = fill_embedding_cache(_cases(data, fmt, limit, per_type), _methods(methods) if methods else None, embedder=embedder,
                                     extractor=extractor, method_params=_method_params(param))
    except _expected_errors() as exc:
        _fail(exc)
        return
    typer.echo(table.to_string(index=False))


def _value(text: str):
    """A command-line value as bool/None (true, false, none), int, float or string."""
    literal = {"true": True, "false": False, "none": None}
    if text.lower() in literal:
        return literal[text.lower()]
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    return text


def _options(pairs: list[str]) -> dict:
    """`--option num_ctx=8192` pairs as a dict."""
    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep:
            raise UserError(f"--option expects KEY=VALUE, got {pair!r}")
        out[key] = _value(value)
    return out


def _method_params(pairs: list[str], embedder: str | None = None) -> dict[str, dict]:
    """`--param AdaptiveGraph.iterations=0` pairs as {method: {key: value}}; `embedder`
    goes to every dense method unless a --param names that method's embedder."""
    from taggraph.retrieval import DENSE_METHODS
    from taggraph.retrieval.embeddings import get_embedder
    out: dict[str, dict] = {}
    if embedder:
        get_embedder(embedder)  # an unknown name fails here, before any case runs
        out = {m: {"embedder": embedder} for m in DENSE_METHODS}
    for pair in pairs:
        target, _, value = pair.partition("=")
        method, dot, key = target.partition(".")
        if not dot or not key:
            raise UserError(f"--param expects METHOD.KEY=VALUE, got {pair!r}")
        out.setdefault(method, {})[key] = _value(value)
    return out


@app.command()
def extract(
    data: Path = typer.Option(DEMO_DATA, help="LongMemEval JSON(.gz) file."),
    out: Path = typer.Option(..., help="Folder for the stores (one sub-folder per case); resumed if present."),
    extractor: str = typer.Option("offline", help="offline | offline-v2 | none | ollama:MODEL | gguf:PATH"),
    limit: Optional[int] = typer.Option(None, help="Only the first N questions."),
    concurrency: int = typer.Option(4, help="Concurrent LLM requests (one case per worker)."),
    prompt: Optional[Path] = typer.Option(None, help="Your own prompt file ({tags}, {user}, {assistant})."),
    option: list[str] = typer.Option([], help="Model option KEY=VALUE for Ollama (e.g. num_ctx=8192)."),
) -> None:
    """Extract 5W+Extra tags for every case into stores on disk (resumable)."""
    try:
        from taggraph.datasets import load_dataset
        from taggraph.experiments.vocabulary import vocabulary_table
        from taggraph.extraction import get_extractor
        from taggraph.extraction.job import extract_to_stores

        cases = load_dataset(data, limit=limit)
        kwargs: dict = {}
        if extractor.startswith(("ollama:", "gguf:")):
            kwargs = {"prompt_path": prompt}
            if extractor.startswith("ollama:"):
                kwargs["options"] = {"temperature": 0, **_options(option)}
        ex = get_extractor(extractor, **kwargs)
        if hasattr(ex, "check"):
            ex.check()
        table = extract_to_stores(cases, ex, out, concurrency)
    except _expected_errors() + (RuntimeError,) as exc:
        _fail(exc)
        return
    typer.echo(vocabulary_table({extractor: table.to_dict("records")}).round(3).to_string(index=False))
    reused, minted = int(table["reused"].sum()), int(table["minted"].sum())
    typer.echo(f"tags reused {reused}, minted {minted} ({reused / max(reused + minted, 1):.1%} reused); "
               f"extraction errors: {int(table['extraction_errors'].sum())}")
    if hasattr(ex, "stats"):
        typer.echo(f"LLM calls: {ex.stats}")
    typer.echo(f"stores: {out}")


@app.command("methods")
def list_methods() -> None:
    """List the registered retrieval methods."""
    from taggraph.retrieval import ABLATIONS, METHODS
    for name in METHODS:
        typer.echo(name)
    for name in ABLATIONS:
        typer.echo(f"{name}  (ablation)")


def _register_subcommands() -> None:
    from taggraph.experiments.commands import register as register_experiments
    from taggraph.viz.commands import register as register_viz
    register_experiments(app)
    register_viz(app)


_register_subcommands()

if __name__ == "__main__":
    sys.exit(app())
