"""CLI commands for the paper's experiments: ablation, sweeps, vocab, diagnose, answers.

Every command takes --data (any registered dataset format, detected from the content), --limit,
--extractor (comma-separated names: one run each, tables get an ``extractor`` column) and --out, prints its main table
and saves every table as CSV with run.json (configuration, data checksum, commit).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Optional

import pandas as pd
import typer

from taggraph.cli.app import (DATA_HELP, DEFAULT_DATA, EXTRACTOR_HELP, command, extractor_names, load_data,
                              methods_option, positive, whole_numbers)
from taggraph.cli.bench import default_out
from taggraph._infra.config import DEFAULT_EXTRACTOR
from taggraph.errors import ConfigError
from taggraph._infra.model_clients import GENERATION_TIMEOUT
from taggraph.runs.dask_backend import scale_out

DATA = typer.Option(DEFAULT_DATA, "--data", help=DATA_HELP)
DATAS = typer.Option([DEFAULT_DATA], "--data", help=f"{DATA_HELP} Repeat for several datasets; datasets of one name "
                                                       "are labelled '<name> (<file name>)'.")
LIMIT = typer.Option(None, "--limit", help="Only the first N questions of each dataset.")
EXTRACTORS = typer.Option(DEFAULT_EXTRACTOR, "--extractor",
                          help="Extractor name(s), comma-separated: " + EXTRACTOR_HELP.replace(" |", ","))
OUT = typer.Option(None, "--out", help="Output folder; default runs/<time>-<command>.")
FORCE = typer.Option(False, "--force", help="Replace an existing, non-empty output folder.")
WORKERS = typer.Option(1, "--workers", help="Parallel processes over memories (joblib).")
SCHEDULER = typer.Option(None, "--dask-scheduler", help="Dask scheduler address: run the cases on that cluster.")


def _load(path: Path, limit: Optional[int]):
    """(dataset name, dataset, data record) of one --data path, parsed once."""
    dataset = load_data(path, limit=limit)
    return dataset.name, dataset, dataset.record()


def _load_all(paths: list[Path], limit: Optional[int]) -> list[tuple[str, object, dict]]:
    """(label, dataset, data record with its label) per --data path, every path counted: the dataset's name,
    or ``"<name> (<file name>)"`` when several share it (the path as given when their file names agree too)."""
    given = Counter(p.resolve() for p in paths)
    twice = next((p for p in paths if given[p.resolve()] > 1), None)
    if twice is not None:
        raise ConfigError(f"--data {twice} is given twice; give each dataset once")
    datasets = [load_data(p, limit=limit) for p in paths]
    shared = {n for n, count in Counter(d.name for d in datasets).items() if count > 1}
    file_names = Counter(p.name for p, d in zip(paths, datasets) if d.name in shared)
    labels = [d.name if d.name not in shared else f"{d.name} ({p.name if file_names[p.name] == 1 else p})"
              for p, d in zip(paths, datasets)]
    return [(label, d, {**d.record(), "dataset": label}) for label, d in zip(labels, datasets)]


def _folder(command_name: str, out: Optional[Path], force: bool, data: Path | list[Path]) -> Path:
    """The output folder, checked before the experiment runs (a bad --out must not cost the run); never the
    --data path, inside it or holding it."""
    from taggraph.runs.folders import check_run_folder
    from taggraph.datasets.registry import input_paths
    return check_run_folder(out or default_out(Path(command_name), command_name), force,
                            keep=[p for d in (data if isinstance(data, list) else [data]) for p in input_paths(d)])


def _save(folder: Path, force: bool, tables: dict[str, pd.DataFrame], config: dict, data, show: str) -> None:
    from taggraph.runs.folders import run_record, save_run
    save_run(folder, tables, run_record(config, data), force=force)
    typer.echo(tables[show].round(3).to_string(index=False, na_rep="–"))
    typer.echo(f"\nrun folder: {folder}")


@command("ablation")
def ablation(data: list[Path] = DATAS, limit: Optional[int] = LIMIT, extractor: str = EXTRACTORS,
             out: Optional[Path] = OUT, force: bool = FORCE, workers: int = WORKERS,
             scheduler: Optional[str] = SCHEDULER,
             method: str = typer.Option("AdaptiveGraph", help="The method whose registered ablations "
                                                              "(<method>-no<Part>) to run.")) -> None:
    """Component ablation: MRR change from removing each component, with its p-value and Holm's and BH's
    adjustments over the ablations (paper Table 3)."""
    from taggraph.studies.ablation import component_ablation, declared_ablations
    declared_ablations(methods_option(method)[0])  # before the data is read
    folder = _folder("ablation", out, force, data)
    loaded = _load_all(data, limit)
    ctx, workers, backend = scale_out(workers, scheduler)
    tables, summaries, rankings, configs = [], [], [], {}
    with ctx:
        for e in extractor_names(extractor):
            res = component_ablation({name: cases for name, cases, _ in loaded}, e, workers=workers,
                                     backend=backend, method=method)
            tables.append(res.table.assign(extractor=e))
            summaries.append(res.summary.assign(extractor=e))
            rankings += [r.rankings.assign(dataset=d, extractor=e) for d, r in res.runs.items()]
            configs[e] = res.config
            for d, r in res.runs.items():
                for line in r.verdicts.get(method, []):
                    typer.echo(f"{d}, {e}: {line}")
    _save(folder, force, {"ablation": pd.concat(tables), "summary": pd.concat(summaries),
                            "rankings": pd.concat(rankings)}, configs, [r for *_, r in loaded], "ablation")


@command("sweep-distractors")
def sweep_distractors(data: Path = DATA, limit: Optional[int] = LIMIT, extractor: str = EXTRACTORS,
                      out: Optional[Path] = OUT, force: bool = FORCE, counts: str = typer.Option("0,3,8,18,36", help="Distractor counts."),
                      seed: int = typer.Option(0, help="Sampling seed."), workers: int = WORKERS,
                      scheduler: Optional[str] = SCHEDULER,
                      methods: Optional[str] = typer.Option(None, help="Method(s), comma-separated; default: "
                                                                       "AdaptiveGraph and its three ablations."),
                      pool: str = typer.Option("own", help="Where distractors come from: own (the case's haystack, "
                                                           "the paper's sweep) or dataset (past the haystack, other "
                                                           "questions' sessions of --data: counts up to "
                                                           "LongMemEval-M's ~500)."),
                      per_type: Optional[int] = typer.Option(None, help="Ask only the first N questions of each "
                                                                        "question type; the dataset pool still "
                                                                        "draws from every question.")) -> None:
    """Gold sessions plus n sampled distractor sessions: MRR, cost and diffusion's contribution (paper 6.1)."""
    from taggraph.datasets import first_per_type
    from taggraph.studies.sweeps import SWEEP_METHODS, distractor_sweep
    chosen = methods_option(methods) if methods is not None else list(SWEEP_METHODS)
    folder = _folder("sweep-distractors", out, force, data)
    _, dataset, record = _load(data, limit)
    cases = first_per_type(list(dataset), positive(per_type, "--per-type")) if per_type else list(dataset)
    ctx, workers, backend = scale_out(workers, scheduler)
    results = {}
    with ctx:
        for e in extractor_names(extractor):
            results[e] = distractor_sweep(cases, whole_numbers(counts, "--counts"), seed, e, chosen, workers=workers,
                                          backend=backend, pool=pool, pool_cases=list(dataset))
    tables = {name: pd.concat([getattr(r, name).assign(extractor=e) for e, r in results.items()])
              for name in ("summary", "contribution", "rankings")}
    _save(folder, force, tables, {e: {**r.config, "per_type": per_type, "warnings": r.warnings}
                                  for e, r in results.items()}, record, "summary")
    typer.echo(tables["contribution"].round(3).to_string(index=False, na_rep="–"))
    for line in dict.fromkeys(line for r in results.values() for line in r.warnings):
        typer.echo(f"warning: {line}")


@command("sweep-depth")
def sweep_depth(data: Path = DATA, limit: Optional[int] = LIMIT, extractor: str = EXTRACTORS,
                out: Optional[Path] = OUT, force: bool = FORCE, method: str = typer.Option("TagGraph-TFIDF", help="Method(s), comma-separated."),
                depths: str = typer.Option("20,40,80", help="Retrieval depths."), workers: int = WORKERS,
                scheduler: Optional[str] = SCHEDULER) -> None:
    """MRR and Success@5 of a method at several retrieval depths (paper appendix E)."""
    from taggraph.studies.sweeps import depth_sweep
    folder = _folder("sweep-depth", out, force, data)
    _, cases, record = _load(data, limit)
    ctx, workers, backend = scale_out(workers, scheduler)
    with ctx:
        results = {e: depth_sweep(cases, methods_option(method), whole_numbers(depths, "--depths"), e,
                                  workers=workers, backend=backend) for e in extractor_names(extractor)}
    tables = {name: pd.concat([getattr(r, name).assign(extractor=e) for e, r in results.items()])
              for name in ("summary", "rankings")}
    _save(folder, force, tables, {e: r.config for e, r in results.items()}, record, "summary")


@command("vocab")
def vocab(data: Path = DATA, limit: Optional[int] = LIMIT, extractor: str = EXTRACTORS, out: Optional[Path] = OUT, force: bool = FORCE,
          workers: int = WORKERS) -> None:
    """Tag vocabulary per extractor: distinct tags, tags per note, reuse (paper Table 2)."""
    from taggraph.runs.runner import group_by_history, parallel_map
    from taggraph.studies.vocabulary import case_vocabulary, vocabulary_table
    folder = _folder("vocab", out, force, data)
    _, cases, record = _load(data, limit)
    groups = group_by_history(cases)
    histories = [group[0] for group in groups]
    counts = {e: parallel_map(case_vocabulary, histories, e, workers=workers) for e in extractor_names(extractor)}
    per_case = pd.concat([pd.DataFrame(c).assign(extractor=e) for e, c in counts.items()])
    questions = {group[0].case_id: len(group) for group in groups}
    per_case["questions"] = per_case["case_id"].map(questions)
    _save(folder, force, {"vocabulary": vocabulary_table(counts, questions), "per_case": per_case},
          {"experiment": "vocabulary", "extractors": list(counts), "histories": len(histories),
           "questions": len(cases)}, record, "vocabulary")


@command("diagnose")
def diagnose(data: list[Path] = DATAS, limit: Optional[int] = LIMIT, extractor: str = EXTRACTORS,
             out: Optional[Path] = OUT, force: bool = FORCE, workers: int = WORKERS) -> None:
    """Failure diagnostics over top-5 misses of the graph configurations (paper Table 10)."""
    from taggraph.runs.bench import run_bench
    from taggraph.studies.diagnostics import (GRAPH_METHODS, HELPFUL_MAX_DF, diagnostics_examples,
                                                  diagnostics_table, failure_diagnostics, pool_case_ids,
                                                  pooled_stores)
    folder = _folder("diagnose", out, force, data)
    extractors = extractor_names(extractor)
    units, records = [], []
    for name, cases, record in _load_all(data, limit):
        records.append(record)
        rankings = {e: run_bench(cases, list(GRAPH_METHODS), e, workers=workers).rankings for e in extractors}
        pooled = pool_case_ids(rankings)
        pool = [c for c in cases if c.case_id in pooled]
        stores = {e: pooled_stores(pool, e, workers) for e in extractors}
        units.append(failure_diagnostics(cases, rankings, stores, name).units)
    all_units = pd.concat(units, ignore_index=True)
    _save(folder, force, {"diagnostics": diagnostics_table(all_units, extractors), "units": all_units,
                            "examples": diagnostics_examples(all_units)},
          {"experiment": "failure_diagnostics", "extractors": extractors, "methods": list(GRAPH_METHODS),
           "k": 5, "helpful_max_df": HELPFUL_MAX_DF}, records, "diagnostics")


@command("answers")
def answers(data: Path = DATA, limit: Optional[int] = LIMIT, extractor: str = EXTRACTORS, out: Optional[Path] = OUT, force: bool = FORCE,
            methods: str = typer.Option("TagGraph-Stopwords,TagGraph-TFIDF,AdaptiveGraph", help="Methods."),
            generator: str = typer.Option("extractive", help="extractive (offline baseline, not an LLM) or ollama:MODEL."),
            k: int = typer.Option(5, help="Notes passed to the generator: each method's first k; above the "
                                          "default depth (40) the ranking is k deep."),
            workers: int = WORKERS,
            timeout: float = typer.Option(GENERATION_TIMEOUT, help="Seconds per answer of an ollama: generator "
                                                                   "(a total deadline, the reply read included).")
            ) -> None:
    """Answer accuracy (token F1, containment) from each method's top-k notes (paper F.2)."""
    import warnings

    from taggraph.studies.answers import (AnswersLeftOutWarning, ExtractiveBaseline, OllamaGenerator,
                                              answer_accuracy)
    from taggraph.runs.bench import run_bench
    from taggraph.methods import DEFAULT_DEPTH
    positive(k, "--k")
    folder = _folder("answers", out, force, data)
    _, cases, record = _load(data, limit)
    if generator == "extractive":
        gen = ExtractiveBaseline()
    elif generator.startswith("ollama:"):
        gen = OllamaGenerator(generator.split(":", 1)[1], timeout=timeout)
    else:
        raise ConfigError(f"unknown generator {generator!r}: use extractive or ollama:MODEL")
    rows, summaries, configs, notes = [], [], {}, []
    for e in extractor_names(extractor):
        bench = run_bench(cases, methods_option(methods), e, depth=max(DEFAULT_DEPTH, k), workers=workers)
        with warnings.catch_warnings():  # printed once below, on stdout, and kept in run.json
            warnings.simplefilter("ignore", AnswersLeftOutWarning)
            res = answer_accuracy(cases, bench.rankings, gen, k=k)
        rows.append(res.rows.assign(extractor=e))
        summaries.append(res.summary.assign(extractor=e))
        configs[e] = {**res.config, "retrieval": bench.config, "warnings": res.warnings}
        notes += [w for w in res.warnings if w not in notes]
    _save(folder, force, {"answers": pd.concat(summaries), "per_question": pd.concat(rows)}, configs, record,
          "answers")
    for note in notes:
        typer.echo(f"warning: {note}")
