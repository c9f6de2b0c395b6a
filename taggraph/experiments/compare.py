"""Two or more run folders side by side: which method got better or worse, on which questions.

`compare_runs` reads each run's run.json and rankings.csv (the per-question RR the run
reported; abstention questions are not judged). Runs over different data (the sha256 in
run.json) are refused unless ``force``. Each method of the first run is paired with the
method of the same name in every later run, or explicit pairs name both sides
(``"A:BM25=B:BM25-tuned"``, `parse_pair`). Per pair, over the judged questions both runs
rank: the mean RR difference (later minus earlier) with its bootstrap CI and paired
randomization p-value (`taggraph.evaluation.significance.paired_test`), and per-question
wins, losses and ties. A question only one side ranks is left out of the pair and
counted (``only_a``, ``only_b``), with a `RunMismatchWarning`.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from taggraph.errors import ConfigError, InputError
from taggraph.evaluation.score import FIRST_IDS, read_rankings_csv
from taggraph.evaluation.significance import paired_test
from taggraph.experiments.runs import run_record, save_run

ALPHA = 0.05  # a pair's sig column: "*" when p < ALPHA
PAIR_COLUMNS = ["run_a", "method_a", "run_b", "method_b"]


class RunMismatchWarning(UserWarning):
    """Runs compared that do not rank the same questions, or (with force) ran on different data."""


@dataclass
class Run:
    """A finished run folder: its label in tables, run.json and scored rankings."""

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


@dataclass
class Comparison:
    runs: list[Run]
    pairs: pd.DataFrame  # one row per compared pair
    questions: pd.DataFrame  # one row per pair and question both sides judged
    config: dict[str, Any]


def load_run(folder: Path, label: str | None = None) -> Run:
    """The run in `folder`; InputError when it has no run.json (unfinished) or no RR column (unscored)."""
    folder = Path(folder)
    try:
        record = json.loads((folder / "run.json").read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(f"{folder}: not a finished run folder (no run.json)") from None
    except (OSError, ValueError) as exc:
        raise InputError(f"{folder}/run.json: cannot read: {exc}") from None
    rankings = read_rankings_csv(folder)
    if "RR" not in rankings:
        raise InputError(f"{folder}/rankings.csv: no RR column (not a scored run)")
    return Run(folder, label or folder.resolve().name, record, rankings)


def load_runs(folders: Sequence[Path], force: bool = False) -> list[Run]:
    """Each folder as a `Run`, labelled by its name (by its path when two share a name); ConfigError when
    a run's data checksum differs from the first run's, unless `force` (then a RunMismatchWarning)."""
    if len(folders) < 2:
        raise ConfigError(f"compare needs at least two run folders, got {len(folders)}")
    names = [Path(f).resolve().name for f in folders]
    runs = [load_run(f, n if names.count(n) == 1 else str(f)) for f, n in zip(folders, names)]
    first = runs[0]
    for run in runs[1:]:
        if run.checksums != first.checksums:
            message = (f"{first.path} and {run.path} ran on different data: sha256 "
                       f"{','.join(c[:12] for c in first.checksums)} ({_data_paths(first)}) vs "
                       f"{','.join(c[:12] for c in run.checksums)} ({_data_paths(run)})")
            if not force:
                raise ConfigError(f"{message}; pass --force to compare them anyway")
            warnings.warn(f"{message}; compared anyway (--force), questions paired by id", RunMismatchWarning,
                          stacklevel=2)
    return runs


def _data_paths(run: Run) -> str:
    data = run.record.get("data")
    return ", ".join(str(d.get("path", "?")) for d in (data if isinstance(data, list) else [data or {}]))


def _find_run(label: str, runs: Sequence[Run]) -> Run | None:
    """The run `label` names: its 1-based position, its label, or its folder as given."""
    for i, run in enumerate(runs, 1):
        if label in (str(i), run.label, str(run.path)):
            return run
    return None


def parse_pair(spec: str, runs: Sequence[Run]) -> tuple[Run, str, Run, str]:
    """``"RUN:METHOD=RUN:METHOD"`` as (run, method, run, method). RUN is a run's position (1, 2, ...),
    label or path; a side without a known RUN prefix is a method of the first run (left) or the
    second (right). ConfigError for a malformed spec, an unknown run or a method the run lacks."""
    left, sep, right = spec.partition("=")
    if not sep or not left or not right or "=" in right:
        raise ConfigError(f"--pair expects RUN:METHOD=RUN:METHOD (e.g. 1:BM25=2:BM25), got {spec!r}")
    sides = []
    for text, default in ((left, runs[0]), (right, runs[1])):
        prefix, colon, method = text.partition(":")
        run = _find_run(prefix, runs) if colon else None
        run, method = (run, method) if run is not None else (default, text)
        if method not in run.methods:
            raise ConfigError(f"--pair {spec!r}: run {run.label} has no method {method!r}; "
                              f"its methods: {', '.join(run.methods)}")
        sides += [run, method]
    if sides[0] is sides[2] and sides[1] == sides[3]:
        raise ConfigError(f"--pair {spec!r} compares a method with itself")
    return sides[0], sides[1], sides[2], sides[3]


def same_name_pairs(runs: Sequence[Run]) -> list[tuple[Run, str, Run, str]]:
    """Each method of the first run with the method of the same name in each later run."""
    pairs = [(runs[0], m, run, m) for run in runs[1:] for m in runs[0].methods if m in run.methods]
    if not pairs:
        raise ConfigError(f"no method name in {runs[0].label} recurs in a later run ({runs[0].label}: "
                          f"{', '.join(runs[0].methods)}); name the pairs with --pair RUN:METHOD=RUN:METHOD")
    return pairs


def _judged(run: Run, method: str) -> pd.DataFrame:
    """question_id -> (question_type, RR) of the judged questions `method` ranks in `run`."""
    rows = run.rankings[(run.rankings["method"] == method) & run.rankings["RR"].notna()]
    if "abstention" in rows:
        rows = rows[~rows["abstention"].astype(str).str.lower().eq("true")]
    return rows.set_index("question_id").reindex(columns=["question_type", "RR"])


def compare_pair(run_a: Run, method_a: str, run_b: Run, method_b: str,
                 alpha: float = ALPHA) -> tuple[dict[str, Any], pd.DataFrame]:
    """One pair: its summary row (n, MRRs, ΔMRR b - a, CI, p, wins/losses/ties of b) and its per-question rows."""
    a, b = _judged(run_a, method_a), _judged(run_b, method_b)
    both = a.join(b["RR"].rename("RR_b"), how="inner").rename(columns={"RR": "RR_a"})
    only_a, only_b = a.index.difference(b.index), b.index.difference(a.index)
    key = dict(zip(PAIR_COLUMNS, (run_a.label, method_a, run_b.label, method_b)))
    if len(only_a) or len(only_b):
        first = ", ".join([*only_a, *only_b][:FIRST_IDS])
        warnings.warn(f"{run_a.label}:{method_a} vs {run_b.label}:{method_b}: {len(only_a)} judged question(s) only "
                      f"in the first, {len(only_b)} only in the second (first: {first}); compared on the "
                      f"{len(both)} both rank", RunMismatchWarning, stacklevel=3)
    delta = both["RR_b"] - both["RR_a"]
    tie = np.isclose(both["RR_b"], both["RR_a"])
    change = np.where(tie, "same", np.where(delta > 0, "better", "worse"))
    questions = both.reset_index().assign(**key, delta=delta.to_numpy(), change=change)
    test = paired_test(both["RR_b"], both["RR_a"]) if len(both) >= 2 else None
    row = {**key, "n": len(both), "only_a": len(only_a), "only_b": len(only_b),
           "MRR_a": both["RR_a"].mean(), "MRR_b": both["RR_b"].mean(),
           "diff": test.mean_diff if test else delta.mean(), "ci_low": test.ci_low if test else np.nan,
           "ci_high": test.ci_high if test else np.nan, "p_value": test.p_value if test else np.nan,
           "sig": "*" if test and test.p_value < alpha else "",
           "wins": int((change == "better").sum()), "losses": int((change == "worse").sum()),
           "ties": int((change == "same").sum())}
    return row, questions[[*PAIR_COLUMNS, "question_id", "question_type", "RR_a", "RR_b", "delta", "change"]]


def compare_runs(folders: Sequence[Path], pairs: Sequence[str] = (), force: bool = False,
                 alpha: float = ALPHA) -> Comparison:
    """Compare the runs in `folders` (module docstring): `pairs` as `parse_pair` specs, else
    `same_name_pairs`. ``diff`` is MRR_b - MRR_a; a "win" is a question whose RR is higher in b."""
    runs = load_runs(folders, force)
    chosen = [parse_pair(p, runs) for p in pairs] if pairs else same_name_pairs(runs)
    results = [compare_pair(*pair, alpha=alpha) for pair in chosen]
    config = {"experiment": "compare", "forced": force, "alpha": alpha, "pairs": list(pairs) or "same names",
              "runs": [{"label": r.label, "path": str(r.path), "created": r.record.get("created"),
                        "git_commit": r.record.get("git_commit"), "data": r.record.get("data")} for r in runs]}
    return Comparison(runs, pd.DataFrame([row for row, _ in results]),
                      pd.concat([q for _, q in results], ignore_index=True), config)


def save_comparison(comparison: Comparison, out: Path, pages: dict[str, str] | None = None,
                    force: bool = False) -> Path:
    """Write pairs.csv, questions.csv, the `pages` and run.json into `out`, atomically (`runs.save_run`)."""
    return save_run(out, {"pairs": comparison.pairs, "questions": comparison.questions},
                    run_record(comparison.config, comparison.runs[0].record.get("data")), pages, force)
