"""A finished run read back: its run.json checked (`read_record`), the data it records (`recorded_dataset`,
`data_options`), its rankings scored anew (`rescored`), all as a `Run` (`load_run`; `result_of` a BenchResult)."""

from __future__ import annotations

import json
import math
import numbers
import os
import warnings
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from taggraph.datasets import Dataset
from taggraph.datasets.registry import detect_format, load_cases
from taggraph.errors import ConfigError, InputError
from taggraph.evaluation.metrics import dedupe_sessions, score_rankings, session_scores
from taggraph.evaluation.score import read_rankings_csv
from taggraph.methods import method_names, registered_methods

DEFAULT_DEPTH = 40  # a run.json without a depth: bench's default
# What a rankings.csv contributes; every metric beside these is recomputed, never read.
RANKING_INPUTS = ["question_id", "question_type", "method", "ranked_session_ids", "gold_session_ids", "abstention",
                  "ranked_scores", "ranked_session_scores", "tied_beyond_depth"]


class RecordedRRWarning(UserWarning):
    """A rankings.csv whose RR column differs from the RR its rankings give (edited or stale); not used."""


@dataclass
class Run:
    """A finished run folder: its label in tables, run.json and its rankings, scored anew (`rescored`)."""

    path: Path
    label: str
    record: dict[str, Any]
    rankings: pd.DataFrame

    @property
    def checksums(self) -> list[str]:
        """The data sha256(s) run.json records (an ablation records one per dataset)."""
        data = self.record.get("data")
        return [d.get("sha256", "") for d in (data if isinstance(data, list) else [data or {}])]

    @property
    def methods(self) -> list[str]:
        return list(dict.fromkeys(self.rankings["method"]))


def read_record(folder: Path) -> dict[str, Any]:
    """run.json of `folder`, checked to be a run record (an object with a config object and data objects)."""
    try:
        record = json.loads((folder / "run.json").read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(f"{folder}: not a finished run folder (no run.json)") from None
    except (OSError, ValueError, RecursionError) as exc:
        raise InputError(f"{folder}/run.json: cannot read: {getattr(exc, 'strerror', None) or exc}") from None
    if not isinstance(record, dict):
        raise InputError(f"{folder}/run.json: not a run record (a JSON {type(record).__name__}; taggraph writes "
                         f"an object with created, config and data)")
    data, config = record.get("data"), record.get("config", {})
    methods = config.get("methods", {}) if isinstance(config, dict) else None
    if not isinstance(methods, dict) or not all(isinstance(m, dict) for m in methods.values()) or not all(
            isinstance(d, dict) for d in (data if isinstance(data, list) else [data or {}])):
        raise InputError(f"{folder}/run.json: 'config' and each of its 'methods' must be objects, 'data' an object "
                         f"or a list of them")
    depth = record.get("config", {}).get("depth", DEFAULT_DEPTH)
    if isinstance(depth, bool) or not isinstance(depth, int) or depth < 1:
        raise InputError(f"{folder}/run.json: config.depth must be a whole number >= 1, got {depth!r}")
    return record


def data_options(data: dict[str, Any]) -> list[str]:
    """The command-line options that read a run's data as it ran, from run.json's `data` record: ``--data PATH``,
    and ``--format NAME`` whenever the recorded format is not the one detection picks there (a format chosen by
    name only, such as generic-past; or a path no format detects now)."""
    path, fmt = str(data["path"]), data.get("format")
    try:
        detected = detect_format(path).name
    except (InputError, ConfigError):  # a DatasetError: gone, or no format detects it
        detected = None
    return ["--data", path, *(["--format", str(fmt)] if fmt and fmt != detected else [])]


def recorded_data(folders: Iterable[Path]) -> list[Path]:
    """The data paths the run.json of each of `folders` records (none for a folder without one): inputs of
    whatever reads the folders, which no output may overwrite or hold."""
    paths = []
    for folder in map(Path, folders):
        if (folder / "run.json").is_file():
            data = read_record(folder).get("data")
            paths += [Path(d["path"]) for d in (data if isinstance(data, list) else [data or {}]) if d.get("path")]
    return paths


def recorded_dataset(record: dict[str, Any] | None, data: Path | None, first: Path | None) -> Dataset:
    """The data run.json `record` (of the run folder `first`) names, or `data`, checked against its sha256;
    `data` alone when there is no record."""
    recorded = (record or {}).get("data")
    if record is not None and not isinstance(recorded, dict):
        raise InputError(f"{first}/run.json: records no single data file (an ablation over several "
                         f"datasets): give the one to read (--data)")
    fmt = None
    if data is None:
        if record is None:
            raise InputError("TREC run files outside a run folder carry no data: give the data they rank (--data)")
        data, fmt = Path(recorded.get("path", "")), recorded.get("format")
        if not data.exists():
            raise InputError(f"{data}: the data {first}/run.json records is not there; give its place (--data)")
    dataset = load_cases(data, fmt=fmt)
    if record is not None and recorded.get("sha256") and dataset.checksum != recorded["sha256"]:
        raise InputError(f"{data}: sha256 {dataset.checksum[:12]} is not the {recorded['sha256'][:12]} the runs "
                         f"ran on ({first}/run.json)")
    return dataset


def _flag(value: Any, where: str) -> bool:
    """An abstention cell as a bool: True/False (any case) or empty (False)."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, float) and math.isnan(value):
        return False
    text = str(value).strip().lower()
    if text not in ("true", "false"):
        raise InputError(f"{where}: abstention must be True or False, got {value!r}")
    return text == "true"


def _ranked(row: dict[str, Any], depth: int, where: str) -> tuple[list[str], list[float] | None]:
    """The row's sessions de-duplicated through `depth` ranks (as `score` does), with their scores when it has them."""
    sessions, scores = row["ranked_session_ids"], row.get("ranked_session_scores")
    if scores is None:
        return dedupe_sessions(sessions, depth), None
    if len(scores) != len(sessions):
        raise InputError(f"{where}: {len(scores)} ranked_session_scores for {len(sessions)} ranked_session_ids")
    if any(x < y for x, y in zip(scores, scores[1:])):
        raise InputError(f"{where}: ranked_session_scores are not in descending order (best session first)")
    pairs = session_scores(sessions, scores, depth)
    return [s for s, _ in pairs], [x for _, x in pairs]


def rescored(path: Path, rankings: pd.DataFrame, depth: int = DEFAULT_DEPTH) -> pd.DataFrame:
    """`rankings` (a run's rankings.csv, `read_rankings_csv`) with RR, the other per-question metrics and
    the tie-aware columns recomputed from its sessions, gold and scores (`score_rankings`); InputError
    naming the row for a cell that cannot be read. A recorded RR that differs is a `RecordedRRWarning`."""
    if "gold_session_ids" not in rankings:
        raise InputError(f"{path}: no gold_session_ids column: compare scores rankings against their gold")
    rows = rankings[[c for c in RANKING_INPUTS if c in rankings]].copy()
    _one_gold_per_question(path, rows)
    records = rows.to_dict("records")
    scored_methods = set(rows.loc[rows["ranked_session_scores"].notna(), "method"]) \
        if "ranked_session_scores" in rows else set()
    for row in records:
        where = f"{path}: question {row['question_id']!r} of {row['method']!r}"
        if row["method"] in scored_methods and not row["ranked_session_ids"]:
            row["ranked_session_scores"] = []  # an empty ranking of a scored method: tie-aware RR 0, as in bench
        row["ranked_session_ids"], row["ranked_session_scores"] = _ranked(row, depth, where)
        if "abstention" in row:
            row["abstention"] = _flag(row["abstention"], where)
        beyond = row.get("tied_beyond_depth")
        row["tied_beyond_depth"] = beyond.split() if isinstance(beyond, str) else []
    scored = score_rankings(pd.DataFrame(records, index=rows.index))
    if "RR" in rankings:
        _check_recorded_rr(path, rankings, scored)
    return scored


def _one_gold_per_question(path: Path, rows: pd.DataFrame) -> None:
    """InputError when the rows of one question disagree on its gold sessions: every method of a run is judged
    against the same gold, so a row that differs was edited (a gold emptied turned a hit into a loss)."""
    golds = rows.groupby("question_id", sort=False)["gold_session_ids"].agg(lambda g: len({tuple(x) for x in g}))
    if (golds > 1).any():
        q = golds.index[golds > 1][0]
        seen = {m: " ".join(g) or "none" for m, g in rows.loc[rows["question_id"] == q,
                                                               ["method", "gold_session_ids"]].itertuples(index=False)}
        raise InputError(f"{path}: question {q!r}: its rows hold different gold_session_ids ("
                         + "; ".join(f"{m}: {g}" for m, g in list(seen.items())[:4])
                         + "): a run's methods share one gold, so a row was edited; run bench again")


def _check_recorded_rr(path: Path, rankings: pd.DataFrame, scored: pd.DataFrame) -> None:
    recorded = pd.to_numeric(rankings["RR"], errors="coerce")
    # a row no metric judges (an abstention: NaN from its rankings) counts nowhere, whatever RR it records (runs
    # written before abstention rows had NaN metrics record one)
    same = np.isclose(recorded, scored["RR"]) | scored["RR"].isna()
    if same.all():
        return
    first = rankings[~same].iloc[0]
    written = f"{float(first['RR']):.4g}" if isinstance(first["RR"], numbers.Real) else repr(str(first["RR"]))
    warnings.warn(f"{path}: {int((~same).sum())} row(s) record an RR their rankings do not give (first: question "
                  f"{first['question_id']!r} of {first['method']!r}, RR {written} recorded, "
                  f"{scored.loc[first.name, 'RR']:.4g} from its rankings); compare uses the RR of the rankings",
                  RecordedRRWarning, stacklevel=3)


def load_run(folder: Path, label: str | None = None) -> Run:
    """The run in `folder`, its rankings scored anew (`rescored`); InputError when it has no readable run.json
    (unfinished) or rankings.csv."""
    folder = Path(folder)
    record = read_record(folder)
    rankings = rescored(folder / "rankings.csv", read_rankings_csv(folder),
                        record.get("config", {}).get("depth", DEFAULT_DEPTH))
    return Run(folder, label or Path(os.path.realpath(folder)).name, record, rankings)


def result_of(result: Any, position: int) -> Run:
    """A `BenchResult` in memory as a `Run` labelled ``result<position>``: its rankings as the bench scored
    them, its data as recorded (a bench over `tg.load`'s Dataset; over plain cases, none)."""
    label = f"result{position}"
    return Run(Path(label), label, {"config": result.config, "data": result.data}, result.rankings)


def method_spec(run: Run, method: str) -> str | None:
    """How `taggraph explain --methods` names `method` of `run`: its name when taggraph knows it by name
    (built in or an installed entry point), else the ``module:Class`` run.json records as its
    ``origin``, else None (a method registered in Python under a name, origin not recorded)."""
    if method in method_names() and method not in registered_methods():
        return method
    origin = run.record.get("config", {}).get("methods", {}).get(method, {}).get("origin")
    return origin if isinstance(origin, str) and ":" in origin else None
