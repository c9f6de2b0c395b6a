"""CLI subcommands for the paper's experiments; `register(app)` adds them to the taggraph app.

Every command takes --data (LongMemEval JSON(.gz), LoCoMo JSON or an ATANT story
folder; format detected from content), --limit, --extractor (comma-separated names:
one run each, tables get an ``extractor`` column) and --out, prints its main table
and saves every table as CSV with run.json (configuration, data checksum, commit).
"""

from __future__ import annotations

import hashlib
from contextlib import contextmanager, nullcontext
from datetime import datetime
from pathlib import Path
from typing import Any, Optional

import pandas as pd
import typer

from taggraph.config import DEMO_DATA

DATA = typer.Option(DEMO_DATA, "--data", help="LongMemEval JSON(.gz), LoCoMo JSON or ATANT story folder.")
DATAS = typer.Option([DEMO_DATA], "--data", help="Dataset path; repeat for several datasets.")
LIMIT = typer.Option(None, "--limit", help="Only the first N questions of each dataset.")
EXTRACTORS = typer.Option("offline", "--extractor", help="Extractor name(s), comma-separated: offline, offline-v2, none, ollama:MODEL.")
OUT = typer.Option(None, "--out", help="Output folder; default runs/<time>-<command>.")
WORKERS = typer.Option(1, "--workers", help="Parallel processes over cases (joblib).")
SCHEDULER = typer.Option(None, "--dask-scheduler", "--scheduler", help="Dask scheduler address: run the cases on that cluster.")


@contextmanager
def _errors():
    from taggraph.cli import _expected_errors, _fail
    try:
        yield
    except _expected_errors() as exc:
        _fail(exc)


def _names(spec: str) -> list[str]:
    return [s.strip() for s in spec.split(",") if s.strip()]


def data_record(path: Path) -> dict[str, Any]:
    """Path, format and sha256 (of a file; of its sorted file names and hashes for a folder)."""
    from taggraph.datasets import file_checksum
    from taggraph.datasets.detect import detect_format

    if path.is_dir():
        lines = "".join(f"{p.name}\0{file_checksum(p)}\n" for p in sorted(path.iterdir()) if p.is_file())
        digest = hashlib.sha256(lines.encode()).hexdigest()
    else:
        digest = file_checksum(path)
    return {"path": str(path), "format": detect_format(path), "sha256": digest}


def dataset_name(path: Path, fmt: str) -> str:
    from taggraph.experiments.runs import benchmark_name
    if fmt == "atant":
        return f"ATANT ({path.name})"
    if fmt == "locomo":
        return "LoCoMo"
    return benchmark_name(path) or path.name.split(".")[0]


def _load(path: Path, limit: Optional[int]):
    from taggraph.datasets.detect import load_any
    record = data_record(path)
    return dataset_name(path, record["format"]), load_any(path, limit=limit), record


def scale_out(workers: int, scheduler: Optional[str]):
    """(context, workers, backend): a Dask cluster when `scheduler` is given, else local loky."""
    if scheduler:
        from taggraph.experiments.dask_backend import dask_backend
        return dask_backend(scheduler), -1, None
    return nullcontext(), workers, "loky"


def _save(command: str, out: Optional[Path], tables: dict[str, pd.DataFrame], config: dict, data: Any,
          show: str) -> None:
    from taggraph.experiments.runs import run_record, save_tables
    out = out or Path("runs") / f"{datetime.now():%Y%m%d-%H%M%S}-{command}"
    save_tables(out, tables, run_record(config, data))
    typer.echo(tables[show].round(3).to_string(index=False))
    typer.echo(f"\nrun folder: {out}")


def ablation(data: list[Path] = DATAS, limit: Optional[int] = LIMIT, extractor: str = EXTRACTORS,
             out: Optional[Path] = OUT, workers: int = WORKERS, scheduler: Optional[str] = SCHEDULER) -> None:
    """AdaptiveGraph component ablation: MRR change from removing each component (paper Table 3)."""
    from taggraph.experiments.ablation import component_ablation
    with _errors():
        loaded = [_load(p, limit) for p in data]
        ctx, workers, backend = scale_out(workers, scheduler)
        tables, summaries, rankings, configs = [], [], [], {}
        with ctx:
            for e in _names(extractor):
                res = component_ablation({name: cases for name, cases, _ in loaded}, e, workers=workers,
                                         backend=backend)
                tables.append(res.table.assign(extractor=e))
                summaries.append(res.summary.assign(extractor=e))
                rankings += [r.rankings.assign(dataset=d, extractor=e) for d, r in res.runs.items()]
                configs[e] = res.config
        _save("ablation", out, {"ablation": pd.concat(tables), "summary": pd.concat(summaries),
                                "rankings": pd.concat(rankings)}, configs, [r for *_, r in loaded], "ablation")


def sweep_distractors(data: Path = DATA, limit: Optional[int] = LIMIT, extractor: str = EXTRACTORS,
                      out: Optional[Path] = OUT, counts: str = typer.Option("0,3,8,18,36", help="Distractor counts."),
                      seed: int = typer.Option(0, help="Sampling seed."), workers: int = WORKERS,
                      scheduler: Optional[str] = SCHEDULER) -> None:
    """Gold sessions plus n sampled distractor sessions: MRR and diffusion's contribution (paper 6.1)."""
    from taggraph.experiments.sweeps import distractor_sweep
    with _errors():
        _, cases, record = _load(data, limit)
        ctx, workers, backend = scale_out(workers, scheduler)
        results = {}
        with ctx:
            for e in _names(extractor):
                results[e] = distractor_sweep(cases, [int(c) for c in _names(counts)], seed, e, workers=workers,
                                              backend=backend)
        tables = {name: pd.concat([getattr(r, name).assign(extractor=e) for e, r in results.items()])
                  for name in ("summary", "contribution", "rankings")}
        _save("sweep-distractors", out, tables, {e: r.config for e, r in results.items()}, record, "summary")
        typer.echo(tables["contribution"].round(3).to_string(index=False))


def sweep_depth(data: Path = DATA, limit: Optional[int] = LIMIT, extractor: str = EXTRACTORS,
                out: Optional[Path] = OUT, method: str = typer.Option("TagGraph-TFIDF", help="Method(s), comma-separated."),
                depths: str = typer.Option("20,40,80", help="Retrieval depths."), workers: int = WORKERS,
                scheduler: Optional[str] = SCHEDULER) -> None:
    """MRR and R@5 of a method at several retrieval depths (paper appendix E)."""
    from taggraph.experiments.sweeps import depth_sweep
    with _errors():
        _, cases, record = _load(data, limit)
        ctx, workers, backend = scale_out(workers, scheduler)
        with ctx:
            results = {e: depth_sweep(cases, _names(method), [int(d) for d in _names(depths)], e, workers=workers,
                                      backend=backend) for e in _names(extractor)}
        tables = {name: pd.concat([getattr(r, name).assign(extractor=e) for e, r in results.items()])
                  for name in ("summary", "rankings")}
        _save("sweep-depth", out, tables, {e: r.config for e, r in results.items()}, record, "summary")


def unique_histories(cases: list) -> list:
    """One case per distinct interaction history (ATANT and LoCoMo ask many questions of one story)."""
    first: dict[tuple, Any] = {}
    for case in cases:
        first.setdefault(tuple(case.interactions), case)
    return list(first.values())


def vocab(data: Path = DATA, limit: Optional[int] = LIMIT, extractor: str = EXTRACTORS, out: Optional[Path] = OUT,
          workers: int = WORKERS) -> None:
    """Tag vocabulary per extractor: distinct tags, tags per note, reuse (paper Table 2)."""
    from taggraph.experiments.sweeps import parallel_map
    from taggraph.experiments.vocabulary import case_vocabulary, vocabulary_table
    with _errors():
        _, cases, record = _load(data, limit)
        histories = unique_histories(cases)
        counts = {e: parallel_map(case_vocabulary, histories, e, workers=workers) for e in _names(extractor)}
        per_case = pd.concat([pd.DataFrame(c).assign(extractor=e) for e, c in counts.items()])
        _save("vocab", out, {"vocabulary": vocabulary_table(counts), "per_case": per_case},
              {"experiment": "vocabulary", "extractors": list(counts), "histories": len(histories)}, record,
              "vocabulary")


def light_store(case, extractor: str):
    """The case's store without its extractor object (cheap to send back from a worker process)."""
    from taggraph.experiments.bench import build_store
    store = build_store(case, extractor)
    store.extractor = None
    return store


def diagnose(data: list[Path] = DATAS, limit: Optional[int] = LIMIT, extractor: str = EXTRACTORS,
             out: Optional[Path] = OUT, workers: int = WORKERS) -> None:
    """Failure diagnostics over top-5 misses of the graph configurations (paper Table 10)."""
    from taggraph.experiments.bench import run_bench
    from taggraph.experiments.diagnostics import (GRAPH_METHODS, diagnostics_examples, diagnostics_table,
                                                  failure_diagnostics, longmemeval_evidence_notes, pool_case_ids)
    from taggraph.experiments.sweeps import parallel_map
    with _errors():
        extractors = _names(extractor)
        units, records = [], []
        for path in data:
            name, cases, record = _load(path, limit)
            records.append(record)
            rankings = {e: run_bench(cases, list(GRAPH_METHODS), e, workers=workers).rankings for e in extractors}
            pooled = pool_case_ids(rankings)
            pool = [c for c in cases if c.case_id in pooled]
            stores = {e: parallel_map(light_store, pool, e, workers=workers) for e in extractors}
            evidence = longmemeval_evidence_notes(path) if record["format"] == "longmemeval" else None
            units.append(failure_diagnostics(cases, rankings, stores, name, evidence).units)
        all_units = pd.concat(units, ignore_index=True)
        _save("diagnose", out, {"diagnostics": diagnostics_table(all_units, extractors), "units": all_units,
                                "examples": diagnostics_examples(all_units)},
              {"experiment": "failure_diagnostics", "extractors": extractors, "methods": list(GRAPH_METHODS),
               "k": 5}, records, "diagnostics")


def answers(data: Path = DATA, limit: Optional[int] = LIMIT, extractor: str = EXTRACTORS, out: Optional[Path] = OUT,
            methods: str = typer.Option("TagGraph-Stopwords,TagGraph-TFIDF,AdaptiveGraph", help="Methods."),
            generator: str = typer.Option("extractive", help="extractive (offline baseline, not an LLM) or ollama:MODEL."),
            k: int = typer.Option(5, help="Notes passed to the generator."), workers: int = WORKERS) -> None:
    """Answer accuracy (token F1, containment) from each method's top-k notes (paper F.2)."""
    from taggraph.experiments.answers import ExtractiveBaseline, OllamaGenerator, answer_accuracy
    from taggraph.experiments.bench import run_bench
    with _errors():
        _, cases, record = _load(data, limit)
        if generator == "extractive":
            gen = ExtractiveBaseline()
        elif generator.startswith("ollama:"):
            gen = OllamaGenerator(generator.split(":", 1)[1])
        else:
            raise ValueError(f"unknown generator {generator!r}: use extractive or ollama:MODEL")
        rows, summaries, configs = [], [], {}
        for e in _names(extractor):
            bench = run_bench(cases, _names(methods), e, workers=workers)
            res = answer_accuracy(cases, bench.rankings, gen, k=k)
            rows.append(res.rows.assign(extractor=e))
            summaries.append(res.summary.assign(extractor=e))
            configs[e] = {**res.config, "retrieval": bench.config}
        _save("answers", out, {"answers": pd.concat(summaries), "per_question": pd.concat(rows)}, configs, record,
              "answers")


def register(app: typer.Typer) -> None:
    """Add ablation, sweep-distractors, sweep-depth, vocab, diagnose and answers to `app`."""
    app.command("ablation")(ablation)
    app.command("sweep-distractors")(sweep_distractors)
    app.command("sweep-depth")(sweep_depth)
    app.command("vocab")(vocab)
    app.command("diagnose")(diagnose)
    app.command("answers")(answers)
