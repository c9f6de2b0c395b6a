"""Two or more runs fused into a new run, scored beside its inputs as `taggraph score` scores runs.

An input is a run folder and one of its methods (``"FOLDER:METHOD"``, or ``"FOLDER"`` when it ran one
method), read from its session-level TREC run ``trec/<method>.run`` (at ``level="notes"``: its ranked notes,
``trec/<method>.notes.run``; the fused notes then stand for their sessions, as `taggraph score` reads a note
id, and also give the note-level metrics), or a TREC run file (``"FILE"``, or ``"FILE:NAME"`` for one run
of several in it). Inputs from run folders must share their data (run.json's
sha256) and their qrels (``trec/qrels.sessions.txt``); otherwise fused numbers mean nothing, and
`fuse_runs` refuses them (InputError). The data is the file run.json records, or `data` (checked against
that sha256); TREC files outside a run folder need `data`. A folder's run whose rankings carry no scores (scored
from a file without them, or written by an older taggraph) holds ranks counted down in its TREC file: only
``rrf`` fuses it; a score-based method is refused (InputError).

`fuse_runs` fuses the runs (`taggraph.evaluation.rank_fusion`, ranx's formulas), then scores the fused run and each input
with `score_external`: the rankings, summary and per-type tables `taggraph score` gives, each input's
metrics as its own report's, and every method's MRR compared with the first input's (paired
randomization test). Fused scores tie often, and trec_eval orders tied docids by their spelling: every run
also gets the tie-aware columns `bench` gives (`run_ties`: RR_tieavg and first_gold_tied per question,
MRR_tieavg and MRR_from_tie_order in the summary), and a warning (`TiedGoldWarning`) counts the questions
whose first gold session ties with another session; run.json's ``fusion`` records those counts. With `out`
(never one of the inputs, nor inside or around one) it writes them as a run folder that `taggraph score` and
`compare` read: run.json's ``fusion`` records the method, the normalization, weights, k and the inputs.
"""

from __future__ import annotations

import re
import shlex
import tempfile
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import pandas as pd

from taggraph.datasets import Dataset
from taggraph.errors import ConfigError, InputError
from taggraph.evaluation.rank_fusion import RRF_K, check_fusion, fuse_rankings, run_ties, run_trec
from taggraph.evaluation.metrics import TIE_METRICS, per_type, summarize
from taggraph.evaluation.score import (TREC_LEVELS, NoteIdsWarning, read_rankings_csv, run_lines, scores_of, trec_name,
                                       trec_scores_of)
from taggraph.runs.bench import (BenchResult, add_benchmark_metrics, add_significance, history_ids,
                                        score_external)
from taggraph._infra.atomic import refuse_input_as_output
from taggraph.runs.finished_runs import data_options, read_record, recorded_data, recorded_dataset
from taggraph.runs.folders import check_run_folder, save_bench
from taggraph.methods import DEFAULT_DEPTH

QRELS = Path("trec") / "qrels.sessions.txt"
NOTE_QRELS = Path("trec") / "qrels.notes.txt"
SUFFIX = {"sessions": ".run", "notes": ".notes.run"}  # a method's TREC run in a run folder, per level


class TiedGoldWarning(UserWarning):
    """A run whose first gold session ties with another session in some questions: trec_eval's order, and so
    MRR, rests there on how the session ids are spelled."""


@dataclass
class FuseInput:
    """One run to fuse: the TREC file it is read from, its run name there (None: the file's only run),
    its run folder (None for a file outside one) and its label in the tables."""

    spec: str
    file: Path
    name: str | None
    folder: Path | None
    label: str = ""


def _runs(folder: Path, level: str = "sessions") -> list[str]:
    """The methods whose TREC run at `level` `folder` holds."""
    return sorted(p.name[:-len(SUFFIX[level])] for p in (folder / "trec").glob("*" + SUFFIX[level])
                  if level == "notes" or not p.name.endswith(SUFFIX["notes"]))


def rescore_command(folder: Path, data: Any, out: str) -> str:
    """The `taggraph score` command that writes `folder`'s rankings, over its `data` (run.json's), with TREC
    runs into the sibling folder `out`."""
    recorded = isinstance(data, dict) and data.get("path")
    return shlex.join(["taggraph", "score", str(folder), *(data_options(data) if recorded else []),
                       "--out", str(folder.parent / out)])


def parse_input(spec: str | Path, level: str = "sessions") -> FuseInput:
    """``FOLDER``, ``FOLDER:METHOD``, ``FILE`` or ``FILE:NAME`` as a `FuseInput` (a folder's run at `level`);
    InputError naming what is missing."""
    path, method = Path(spec), None
    if not path.exists():
        head, sep, tail = str(spec).rpartition(":")
        if not sep or not head or not tail or not Path(head).exists():
            raise InputError(f"{spec}: no such run folder or TREC run file (give FOLDER, FOLDER:METHOD, FILE or "
                             f"FILE:NAME)")
        path, method = Path(head), tail
    if not path.is_dir():
        in_run = path.parent.name == "trec" and (path.parent.parent / "run.json").is_file()
        return FuseInput(str(spec), path, method, path.parent.parent if in_run else None)
    if not (path / "run.json").is_file():
        raise InputError(f"{path}: not a finished run folder (no run.json)")
    runs = _runs(path, level)
    if not runs:
        data = read_record(path).get("data")
        again = f"{path.name}-trec"
        raise InputError(f"{path}: no TREC runs under trec/ (written by an older taggraph); score it again with "
                         f"`{rescore_command(path, data, again)}` and fuse {path.parent / again}")
    if method is None and len(runs) > 1:
        raise InputError(f"{path}: holds {len(runs)} methods ({', '.join(runs)}); name one as {path}:METHOD")
    stem = trec_name(method) if method else runs[0]
    if stem not in runs:
        raise InputError(f"{path}: no method {method!r}; its trec/ holds {', '.join(runs)}")
    return FuseInput(str(spec), path / "trec" / f"{stem}{SUFFIX[level]}", None, path)


def _read(item: FuseInput) -> dict[str, dict[str, float]]:
    runs = trec_scores_of(item.file, run_lines(item.file))
    if item.name is not None:
        if item.name not in runs:
            raise InputError(f"{item.file}: no run named {item.name!r}; it holds {', '.join(runs)}")
        return runs[item.name]
    if len(runs) != 1:
        raise InputError(f"{item.file}: holds {len(runs)} runs ({', '.join(runs)}); name one as "
                         f"{item.file}:NAME")
    item.name = next(iter(runs))
    return runs[item.name]


def _refuse_rank_only(items: Sequence[FuseInput], rankings: dict[Path, pd.DataFrame], method: str, level: str) -> None:
    """InputError when `method` fuses scores and a folder's input ranks ids its rankings give no scores."""
    if method == "rrf":
        return
    ranked = TREC_LEVELS[level][0]
    for item in (i for i in items if i.folder is not None):
        rows = rankings[item.folder]
        rows = rows[rows["method"].map(trec_name) + SUFFIX[level] == item.file.name]
        if any(row.get(ranked) and scores_of(row, level) is None for row in rows.to_dict("records")):
            raise InputError(f"{item.spec}: {item.file} holds ranks, not scores (its rankings were read from a file "
                             f"without scores, or written by an older taggraph); {method} would fuse the ranks as "
                             f"scores: fuse it with --method rrf, or fuse the run it was scored from")


def _label(items: Sequence[FuseInput]) -> None:
    """Each input's run name, or ``"FOLDER:NAME"`` when two share it (``"N:NAME"`` when those are shared
    too); whitespace becomes '_' (a TREC run name has none)."""
    def where(item: FuseInput) -> str:
        return (item.folder or item.file.parent).resolve().name
    for item in items:
        item.label = str(item.name)
    for candidate in (lambda i, item: f"{where(item)}:{item.name}", lambda i, item: f"{i}:{item.name}"):
        labels = [item.label for item in items]
        for i, item in enumerate(items, 1):
            if labels.count(item.label) > 1:
                item.label = candidate(i, item)
    for item in items:
        item.label = re.sub(r"\s+", "_", item.label)


def _said_of_inputs(message: str, scratch: dict[Path, str]) -> str:
    """`message` said of the inputs, not of the `scratch` files (path -> input) they were scored from."""
    for path, source in scratch.items():
        message = message.replace(str(path), source)
    return message


def _checksums(record: dict[str, Any]) -> list[str]:
    data = record.get("data")
    return [d.get("sha256", "") for d in (data if isinstance(data, list) else [data or {}])]


def _same_judgements(folders: Sequence[Path], level: str) -> dict[str, Any]:
    """run.json of the first folder; InputError when another ran on other data or holds other qrels (the
    sessions', and at the notes `level` the notes' too: a folder scored from session runs has none)."""
    records = [read_record(f) for f in folders]
    for folder, record in zip(folders[1:], records[1:]):
        a, b = _checksums(records[0]), _checksums(record)
        if a != b:
            raise InputError(f"{folders[0]} and {folder} ran on different data (sha256 {','.join(c[:12] for c in a)} "
                             f"vs {','.join(c[:12] for c in b)}); only runs over the same data can be fused")
        for judged in (QRELS, NOTE_QRELS) if level == "notes" else (QRELS,):
            qrels = [(f / judged).read_bytes() if (f / judged).is_file() else None for f in (folders[0], folder)]
            if qrels[0] != qrels[1]:
                raise InputError(f"{folders[0]} and {folder} judge different questions, sessions or notes ({judged} "
                                 f"differ: --limit, --per-type or the data's gold); only runs over the same qrels "
                                 f"can be fused")
    return records[0]


def _add_ties(result: BenchResult, runs: dict[str, dict[str, dict[str, float]]], cases: Sequence[Any],
              depth: int) -> dict[str, int]:
    """Add the tie-aware columns of each run in `runs` (label -> its scores) to `result`'s tables (`run_ties`);
    warn of the runs whose first gold session ties with another (`TiedGoldWarning`); their counts."""
    sessions = {c.case_id: history_ids(c) for c in cases}
    rows = {i: run_ties(runs[row["method"]].get(row["question_id"], {}), sessions[row["question_id"]],
                        row["gold_session_ids"], depth)
            for i, row in zip(result.rankings.index, result.rankings.to_dict("records")) if not pd.isna(row["RR"])}
    columns = [*TIE_METRICS, "first_gold_tied"]
    result.rankings = result.rankings.join(pd.DataFrame.from_dict(rows, orient="index", columns=columns))
    means = summarize(result.rankings, order=list(result.summary["method"]))
    added = [c for c in means.columns if c not in result.summary.columns]
    result.summary = result.summary.merge(means[["method", *added]], on="method", how="left")
    result.per_type = per_type(result.rankings)
    tied = result.rankings["first_gold_tied"].eq(True).groupby(result.rankings["method"], sort=False).sum()
    for method, count in tied[tied > 0].items():
        row = result.summary.set_index("method").loc[method]
        warnings.warn(f"{method}: in {count} of {int(row['n'])} questions the first gold session ties with another "
                      f"session, and trec_eval orders tied ids by their spelling: MRR {row['MRR']:.3f} rests on that "
                      f"order; the tie-aware MRR_tieavg, over all orders, is {row['MRR_tieavg']:.3f}",
                      TiedGoldWarning, stacklevel=3)
    return {method: int(count) for method, count in tied.items()}


def fuse_runs(inputs: Sequence[str | Path], out: str | Path | None = None, method: str = "rrf",
              norm: str = "min-max", weights: Sequence[float] | None = None, k: float = RRF_K,
              name: str | None = None, data: str | Path | None = None, baseline: str | None = None,
              force: bool = False, pages: Callable[[BenchResult, Dataset], dict[str, str]] | None = None,
              level: Literal["sessions", "notes"] = "sessions") -> BenchResult:
    """Fuse the runs `inputs` (module docstring) with `method` (rrf | combsum | combmnz | wsum, with one of
    `weights` per input), `norm` (min-max | zscore | max | sum | none; not used by rrf) and RRF's `k`, their
    ranked sessions or, with `level="notes"`, their ranked notes (a run folder's ``.notes.run``); score
    the fused run, named `name` (default ``fused-<method>[-<norm>]``), beside the inputs, compared with
    `baseline` (default: the first input). With `out`, write the run folder (`force` replaces a run
    folder there), with the pages `pages(result, dataset)` renders."""
    check_fusion(method, norm, weights, len(inputs), k)
    if level not in SUFFIX:
        raise ConfigError(f"fusion level {level!r} unknown; choose sessions or notes")
    items = [parse_input(spec, level) for spec in inputs]
    folders = list(dict.fromkeys(i.folder for i in items if i.folder is not None))
    rankings = {folder: read_rankings_csv(folder) for folder in folders}
    _refuse_rank_only(items, rankings, method, level)
    if out is not None:
        read = [*folders, *(i.file for i in items), *([data] if data else []), *recorded_data(folders)]
        refuse_input_as_output(Path(out), read, "fuse")
        check_run_folder(Path(out), force, keep=read)
    runs = [_read(item) for item in items]
    _label(items)
    record = _same_judgements(folders, level) if folders else None
    dataset = recorded_dataset(record, Path(data) if data else None, folders[0] if folders else None)
    fused = fuse_rankings(runs, method, norm, weights, k)
    name = name or f"fused-{method}" + ("" if method == "rrf" else f"-{norm}")
    if name in [i.label for i in items] or re.search(r"\s", name):
        raise InputError(f"fused run name {name!r} holds whitespace or names an input; give another")
    # the questions asked: a run folder's (a bench over --limit N asked N), else the dataset's, as `score` counts them
    asked = {q for rows in rankings.values() for q in rows["question_id"]} | {q for run in runs for q in run}
    cases = dataset.select([c for c in dataset.cases if c.case_id in asked]) if folders else dataset
    depth = (record or {}).get("config", {}).get("depth", DEFAULT_DEPTH)
    scored = [*((item.label, run, str(item.file)) for item, run in zip(items, runs)), (name, fused, "the fused run")]
    with tempfile.TemporaryDirectory() as tmp, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        paths = {Path(tmp) / f"{n}.run": source for n, (_, _, source) in enumerate(scored)}
        for path, (label, run, _) in zip(paths, scored):
            path.write_text(run_trec(run, label), encoding="utf-8")
        try:
            result = score_external(list(paths), cases, depth)
        except InputError as exc:
            raise InputError(_said_of_inputs(str(exc), paths)) from None
    for w in caught:
        if not (level == "notes" and w.category is NoteIdsWarning):  # notes fused at their level, as asked
            warnings.warn(_said_of_inputs(str(w.message), paths), w.category, stacklevel=2)
    tied = _add_ties(result, {label: run for label, run, _ in scored}, cases, depth)
    for item in items:
        result.config["external_runs"][item.label].update(path=str(item.file), name=item.name)
    del result.config["external_runs"][name]
    result.config["fusion"] = {
        "method": method, "level": level, "norm": None if method == "rrf" else norm, "weights": list(weights) if weights else None,
        "k": k if method == "rrf" else None, "name": name, "first_gold_tied": tied,
        "inputs": [{"spec": i.spec, "label": i.label, "file": str(i.file), "run": i.name} for i in items]}
    add_benchmark_metrics(result, cases)
    add_significance(result, baseline or items[0].label)
    if out is not None:
        save_bench(result, Path(out), dataset.record(), pages(result, cases) if pages else None, force)
    return result
