"""Two or more run folders side by side: which method got better or worse, on which questions.

`compare_runs` reads each run's run.json and rankings.csv and recomputes every number from the
rankings (`finished_runs.rescored`: ranked sessions, gold sessions and the scores the run ranked them by); the
RR a run recorded is never read back, only checked (a tampered or stale one is warned about).
Runs over different data (the sha256 in run.json) are refused unless ``other_data``. Each method of the
first run is paired with the method of the same name in every later run, or explicit pairs name
both sides (``"A:BM25=B:BM25-tuned"``, `parse_pair`; with explicit pairs one run folder is enough).
In Python (`tg.compare`) a run may also be a `BenchResult` not saved yet (`result_of`).
Per pair, over the judged questions both runs rank: the mean RR difference (later minus earlier)
with its bootstrap CI and paired randomization p-value (`taggraph.evaluation.significance.paired_test`),
the same for the tie-aware RR (`taggraph.evaluation.metrics.tie_averaged`: the expected RR when
tied sessions are put in random order), and per-question wins, losses and ties. Holm- and
Benjamini-Hochberg-adjusted p-values count every pair tested (`with_adjusted`); `per_type`
repeats the paired test per question type. Per question, ``verdict`` says when a side's place rests
on tie order ("TagGraph-TFIDF rank 3 only by tie order (score 0, ...)"), and when a side scored every session
it ranks alike ("no evidence: all scores 0 for TagGraph-TFIDF"): its place is tie order alone, so such a
question (``no_evidence``) is left out of the wins, losses and ties (the pair's ``no_evidence`` counts
them), though not out of the MRRs and tests, whose tie-aware twins average over the tie orders. A question
only one side ranks is left out of the pair and counted (``only_a``, ``only_b``), with a
`RunMismatchWarning`; runs that share no judged question at all are an InputError.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from taggraph._infra.atomic import refuse_input_as_output
from taggraph.errors import ConfigError, InputError
from taggraph.evaluation.metrics import judged_rows
from taggraph.evaluation.score import FIRST_IDS
from taggraph.evaluation.significance import ALPHA, paired_test, with_adjusted
from taggraph.runs.finished_runs import Run, load_run, recorded_data, result_of
from taggraph.runs.folders import run_record, save_run
from taggraph.methods.base import same_score

PAIR_COLUMNS = ["run_a", "method_a", "run_b", "method_b"]
# What `taggraph compare` prints of pairs.csv (the file has every column)
PRINTED = [*PAIR_COLUMNS, "n", "MRR_a", "MRR_b", "diff", "ci_low", "ci_high", "p_value", "p_holm", "sig",
           "MRR_tieavg_a", "MRR_tieavg_b", "diff_tieavg", "p_holm_tieavg", "sig_tieavg", "wins", "losses", "ties",
           "no_evidence", "tie_order"]


class RunMismatchWarning(UserWarning):
    """Runs compared that do not rank the same questions, or (with other_data) ran on different data."""


class NoTieScoresWarning(UserWarning):
    """A compared method whose rankings carry no scores to tie (read from ranking files), so no tie-aware RR."""


@dataclass
class Comparison:
    runs: list[Run]
    pairs: pd.DataFrame  # one row per compared pair
    questions: pd.DataFrame  # one row per pair and question both sides judged
    per_type: pd.DataFrame  # one row per pair and question type
    config: dict[str, Any]


def _same_gold(ra: Run, rb: Run) -> None:
    """InputError when two runs give a question they both rank different gold sessions (compare judges each
    side by its own rows' gold; `--other-data` takes runs over other data, where that is meant)."""
    gold = [dict(zip(r.rankings["question_id"], map(tuple, r.rankings["gold_session_ids"]))) for r in (ra, rb)]
    differ = [q for q in gold[0] if q in gold[1] and gold[0][q] != gold[1][q]]
    if differ:
        q = differ[0]
        raise InputError(f"{ra.label} and {rb.label} give question {q!r} different gold sessions "
                         f"({' '.join(gold[0][q]) or 'none'} / {' '.join(gold[1][q]) or 'none'}; {len(differ)} "
                         f"question(s) in all): runs over other data or edited rankings (--other-data compares them "
                         f"anyway, each by its own gold)")


def load_runs(folders: Sequence[Any], other_data: bool = False, pairs: bool = False) -> list[Run]:
    """Each folder as a `Run`, labelled by its name (by its path when two share a name), each `BenchResult`
    by its position (`result_of`); ConfigError when a run's data checksum differs from the first run's,
    unless `other_data` (then a RunMismatchWarning). One folder is enough when the caller names `pairs` (methods
    of one run)."""
    if len(folders) < (1 if pairs else 2):
        raise ConfigError(f"compare needs at least two run folders, or one with --pair naming two of its methods; "
                          f"got {len(folders)}")
    names = [Path(os.path.realpath(f)).name if isinstance(f, (str, os.PathLike)) else None for f in folders]
    runs = [result_of(f, i) if n is None else load_run(f, n if names.count(n) == 1 else str(f))
            for i, (f, n) in enumerate(zip(folders, names), 1)]
    unknown = [run.label for run in runs if not all(run.checksums)]
    if unknown:
        warnings.warn(f"{', '.join(unknown)}: no data recorded (a bench over plain cases, not over tg.load's "
                      f"Dataset), so whether the runs share their data is not checked", RunMismatchWarning,
                      stacklevel=2)
    first = runs[0]
    for run in runs[1:]:
        if all(first.checksums) and all(run.checksums) and run.checksums != first.checksums:
            message = (f"{first.path} and {run.path} ran on different data: sha256 "
                       f"{','.join(c[:12] for c in first.checksums)} ({_data_paths(first)}) vs "
                       f"{','.join(c[:12] for c in run.checksums)} ({_data_paths(run)})")
            if not other_data:
                raise ConfigError(f"{message}; pass --other-data (in Python other_data=True) to compare them anyway")
            warnings.warn(f"{message}; compared anyway (--other-data), questions paired by id", RunMismatchWarning,
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
    second (right; the first when there is one run). ConfigError for a malformed spec, an unknown run
    or a method the run lacks."""
    left, sep, right = spec.partition("=")
    if not sep or not left or not right or "=" in right:
        raise ConfigError(f"--pair expects RUN:METHOD=RUN:METHOD (e.g. 1:BM25=2:BM25), got {spec!r}")
    sides = []
    for text, default in ((left, runs[0]), (right, runs[1 if len(runs) > 1 else 0])):
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
    """Each method of the first run with the method of the same name in each later run; a RunMismatchWarning
    names the methods of either side that find no partner (left out, not silently)."""
    pairs = [(runs[0], m, run, m) for run in runs[1:] for m in runs[0].methods if m in run.methods]
    if not pairs:
        raise ConfigError(f"no method name in {runs[0].label} recurs in a later run ({runs[0].label}: "
                          f"{', '.join(runs[0].methods)}); name the pairs with --pair RUN:METHOD=RUN:METHOD")
    for run in runs[1:]:
        for side, methods in ((runs[0], [m for m in runs[0].methods if m not in run.methods]),
                              (run, [m for m in run.methods if m not in runs[0].methods])):
            if methods:
                warnings.warn(f"{side.label}: {', '.join(methods)} not in "
                              f"{(run if side is runs[0] else runs[0]).label}, so not compared (name pairs with "
                              f"--pair RUN:METHOD=RUN:METHOD; pairs= in Python)", RunMismatchWarning, stacklevel=2)
    return pairs


def _tie_place(row: dict[str, Any]) -> str | None:
    """Where the first gold session's place rests on tie order: 'rank 3 only by tie order (score 0, tied
    with 12 other session(s))' (``first_gold_tied``), or 'not retrieved only by tie order (...)' when a gold
    session tied with the last retrieved one was cut by the depth (RR 0, RR_tieavg > 0); else None."""
    sessions, scores, gold = row["ranked_session_ids"], row["ranked_session_scores"], set(row["gold_session_ids"])
    notes, tied_first, tie_rr = row.get("ranked_scores") or [], row.get("first_gold_tied"), row.get("RR_tieavg")
    if pd.notna(tied_first) and tied_first:
        first = next(i for i, s in enumerate(sessions) if s in gold)
        place, score = f"rank {first + 1}", scores[first]
    elif row["RR"] == 0 and pd.notna(tie_rr) and tie_rr > 0:
        place, score = "not retrieved", notes[-1]
    else:
        return None
    beyond = [s for s in row["tied_beyond_depth"] if s not in sessions] if notes and same_score(notes[-1], score) else []
    tied = sum(same_score(x, score) for x in scores) + len(beyond) - 1
    return f"{place} only by tie order (score {score:.4g}, tied with {tied} other session(s))"


def _uniform_score(row: dict[str, Any]) -> float | None:
    """The one score every session of the row's ranking shares (two or more sessions, none told apart by its
    score: their order is tie order alone), or None."""
    scores = row.get("ranked_session_scores")
    if not isinstance(scores, (list, tuple)) or len(scores) < 2 or not all(same_score(s, scores[0]) for s in scores):
        return None
    return scores[0]


def _judged_rows(run: Run, method: str) -> pd.DataFrame:
    """The rankings of the judged questions (an RR, no abstention) `method` ranks in `run`."""
    return judged_rows(run.rankings[run.rankings["method"] == method])


def _judged(run: Run, method: str) -> pd.DataFrame:
    """question_id -> question_type, RR, RR_tieavg, the tie-order place (`_tie_place`) and the score all its
    sessions share (`_uniform_score`) of the judged questions `method` ranks in `run`."""
    rows = _judged_rows(run, method)
    records = rows.to_dict("records")
    return rows.assign(tie_place=[_tie_place(r) for r in records],
                       uniform_score=[_uniform_score(r) for r in records]).set_index("question_id").reindex(
        columns=["question_type", "RR", "RR_tieavg", "tie_place", "uniform_score"])


def _change(delta: pd.Series) -> np.ndarray:
    return np.where(np.isclose(delta, 0), "same", np.where(delta > 0, "better", "worse"))


def _verdict(row: dict[str, Any], name_a: str, name_b: str) -> str:
    """The change by RR, and where a side's place rests on tie order, the tie-aware change and that place;
    first, where a side scored all its sessions alike, that it has no evidence."""
    places = [f"{name} {place}" for name, place in ((name_a, row["tie_place_a"]), (name_b, row["tie_place_b"]))
              if isinstance(place, str)]
    blind = [f"all scores {score:.4g} for {name}"
             for name, score in ((name_a, row["uniform_score_a"]), (name_b, row["uniform_score_b"])) if pd.notna(score)]
    said = f"no evidence: {'; '.join(blind)} (no win, loss or tie); " if blind else ""
    if not places:
        return said + row["change"]
    tie_aware = (f", {row['change_tieavg']} tie-aware (RR_tieavg {row['RR_tieavg_a']:.3f} -> {row['RR_tieavg_b']:.3f})"
                 if row["change_tieavg"] else "")
    return f"{said}{row['change']} by RR{tie_aware}: {'; '.join(places)}"


def _paired(b: pd.Series, a: pd.Series, suffix: str = "") -> dict[str, float]:
    """MRR of each side, the mean difference b - a, its CI and p (`paired_test`); NaN with fewer than 2
    questions, or where a side lacks the values (rankings of another system have no tie-aware RR)."""
    test = paired_test(b, a) if len(a) >= 2 and a.notna().all() and b.notna().all() else None
    values = {"MRR_a": a.mean(skipna=False), "MRR_b": b.mean(skipna=False),
              "diff": test.mean_diff if test else (b - a).mean(skipna=False),
              "ci_low": test.ci_low if test else np.nan, "ci_high": test.ci_high if test else np.nan,
              "p_value": test.p_value if test else np.nan}
    return {(f"{key[:-2]}{suffix}{key[-2:]}" if key.endswith(("_a", "_b")) else f"{key}{suffix}"): value
            for key, value in values.items()}


def compare_pair(run_a: Run, method_a: str, run_b: Run, method_b: str) -> tuple[dict[str, Any], pd.DataFrame]:
    """One pair: its summary row (n, MRRs, ΔMRR b - a, CI, p, the same tie-aware, wins/losses/ties of b over
    the questions where both sides have evidence, the questions where one has none, and those whose place on
    either side rests on tie order) and its per-question rows."""
    a, b = _judged(run_a, method_a), _judged(run_b, method_b)
    both = a.add_suffix("_a").join(b.drop(columns="question_type").add_suffix("_b"), how="inner").rename(
        columns={"question_type_a": "question_type"})
    only_a, only_b = a.index.difference(b.index), b.index.difference(a.index)
    key = dict(zip(PAIR_COLUMNS, (run_a.label, method_a, run_b.label, method_b)))
    if len(only_a) or len(only_b):
        first = ", ".join([*only_a, *only_b][:FIRST_IDS])
        warnings.warn(f"{run_a.label}:{method_a} vs {run_b.label}:{method_b}: {len(only_a)} judged question(s) only "
                      f"in the first, {len(only_b)} only in the second (first: {first}); compared on the "
                      f"{len(both)} both rank", RunMismatchWarning, stacklevel=3)
    both["delta"], both["delta_tieavg"] = both["RR_b"] - both["RR_a"], both["RR_tieavg_b"] - both["RR_tieavg_a"]
    both["change"] = _change(both["delta"])
    both["change_tieavg"] = np.where(both["delta_tieavg"].isna(), "", _change(both["delta_tieavg"].fillna(0)))
    both["tie_order_a"], both["tie_order_b"] = both["tie_place_a"].notna(), both["tie_place_b"].notna()
    both["no_evidence"] = both["uniform_score_a"].notna() | both["uniform_score_b"].notna()
    counted = both.loc[~both["no_evidence"], "change"]
    names = (method_a, method_b) if method_a != method_b else (f"{run_a.label}:{method_a}", f"{run_b.label}:{method_b}")
    both["verdict"] = [_verdict(r, *names) for r in both.to_dict("records")]
    questions = both.reset_index().assign(**key)
    row = {**key, "n": len(both), "only_a": len(only_a), "only_b": len(only_b),
           **_paired(both["RR_b"], both["RR_a"]), **_paired(both["RR_tieavg_b"], both["RR_tieavg_a"], "_tieavg"),
           "wins": int((counted == "better").sum()), "losses": int((counted == "worse").sum()),
           "ties": int((counted == "same").sum()), "no_evidence": int(both["no_evidence"].sum()),
           "tie_order": int((both["tie_order_a"] | both["tie_order_b"]).sum())}
    return row, questions[[*PAIR_COLUMNS, "question_id", "question_type", "RR_a", "RR_b", "delta", "change",
                           "RR_tieavg_a", "RR_tieavg_b", "delta_tieavg", "change_tieavg", "tie_order_a",
                           "tie_order_b", "no_evidence", "verdict"]]


def per_type(questions: pd.DataFrame, alpha: float = ALPHA) -> pd.DataFrame:
    """Per pair and question type: n, each side's MRR and tie-aware MRR, the paired test of RR (`_paired`)
    and the tie-aware difference, with Holm and BH over every pair and type tested."""
    rows = [{**dict(zip([*PAIR_COLUMNS, "question_type"], group)), "n": len(part),
             **_paired(part["RR_b"], part["RR_a"]), "MRR_tieavg_a": part["RR_tieavg_a"].mean(skipna=False),
             "MRR_tieavg_b": part["RR_tieavg_b"].mean(skipna=False),
             "diff_tieavg": part["delta_tieavg"].mean(skipna=False)}
            for group, part in questions.groupby([*PAIR_COLUMNS, "question_type"], sort=False, dropna=False)]
    return with_adjusted(pd.DataFrame(rows), alpha) if rows else pd.DataFrame()


def compare_runs(folders: Sequence[Path | Any], pairs: Sequence[str] = (), other_data: bool = False,
                 alpha: float = ALPHA) -> Comparison:
    """Compare the runs in `folders` (run folders or `BenchResult`s; module docstring), what `taggraph compare`
    and `tg.compare` do: `pairs` as `parse_pair` specs, else
    `same_name_pairs`. ``diff`` is MRR_b - MRR_a; a "win" is a question whose RR is higher in b."""
    runs = load_runs(folders, other_data, pairs=bool(pairs))
    chosen = [parse_pair(p, runs) for p in pairs] if pairs else same_name_pairs(runs)
    unique: dict[tuple, tuple[Run, str, Run, str]] = {}
    for ra, ma, rb, mb in chosen:  # a pair named twice is tested once, and counted once by Holm/BH
        unique.setdefault((id(ra), ma, id(rb), mb), (ra, ma, rb, mb))
        if not other_data:
            _same_gold(ra, rb)
    if not any(set(_judged_rows(ra, ma)["question_id"]) & set(_judged_rows(rb, mb)["question_id"])
               for ra, ma, rb, mb in unique.values()):
        raise InputError(f"{' and '.join(r.label for r in runs)} share no judged question (each question one "
                         f"ranks is an abstention or not ranked by the other): nothing to compare")
    results = [compare_pair(*pair) for pair in unique.values()]
    questions = pd.concat([q for _, q in results], ignore_index=True)
    sides = {(id(r), m): (r, m) for ra, ma, rb, mb in unique.values() for r, m in ((ra, ma), (rb, mb))}
    for run, method in sides.values():
        ties = run.rankings.loc[run.rankings["method"] == method].get("RR_tieavg")
        if ties is None or ties.isna().all():
            warnings.warn(f"{run.path}: {method!r} has no scores to tie (a run read from ranking files by score or "
                          f"fuse; taggraph's own TREC files break ties in their scores so that trec_eval gives the "
                          f"report's order): its tie-aware columns are empty (–)", NoTieScoresWarning, stacklevel=2)
    config = {"experiment": "compare", "other_data": other_data, "alpha": alpha, "pairs": list(pairs) or "same names",
              "runs": [{"label": r.label, "path": str(r.path), "created": r.record.get("created"),
                        "git_commit": r.record.get("git_commit"), "data": r.record.get("data")} for r in runs]}
    pairs = with_adjusted(pd.DataFrame([row for row, _ in results]), alpha, ("", "_tieavg"))
    return Comparison(runs, pairs, questions, per_type(questions, alpha), config)


def save_comparison(comparison: Comparison, out: Path, pages: dict[str, str] | None = None,
                    force: bool = False) -> Path:
    """Write pairs.csv, per_type.csv, questions.csv, the `pages` and run.json into `out`, atomically
    (`runs.save_run`); never into a run it compares."""
    folders = [run.path for run in comparison.runs if (run.path / "run.json").is_file()]  # not results in memory
    refuse_input_as_output(out, [*folders, *recorded_data(folders)], "compare")
    tables = {"pairs": comparison.pairs, "per_type": comparison.per_type, "questions": comparison.questions}
    return save_run(out, tables, run_record(comparison.config, comparison.runs[0].record.get("data")), pages, force)
