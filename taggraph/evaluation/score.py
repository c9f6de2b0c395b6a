"""Rankings written by another system (or an earlier run), scored with exactly the metrics and protocol of `bench`.

Four sources, detected per path:

- a run folder (bench's or score's): its ``rankings.csv``;
- our own ``rankings.csv`` (one row per question and method; session and note ids joined by
  spaces; the ``method`` column names the method). Its sessions are already de-duplicated, so
  `depth` only cuts the list;
- TREC run format, one line per retrieved item: ``question_id Q0 docid rank score run_name``
  (whitespace-separated), read as trec_eval reads it: items ordered by score descending (in single
  precision, as trec_eval holds scores), ties by docid descending (trec_eval's rule, which ir-measures
  and pytrec_eval share); the rank column is not used. A docid ranked twice for one question is an
  InputError, as trec_eval refuses it. A score beyond single precision (|score| > 3.4e38) reads as
  +-inf there, as in trec_eval, and is warned about in one line per file (`SingleOverflowWarning`).
  The run name (6th column) names the method;
- JSONL, one object per question: ``{"question_id": ..., "ranked_session_ids": [...]}``,
  optionally ``"ranked_note_ids"`` and ``"method"``; without "method" the file name
  (without suffix) names the method. A question repeated within one method is an InputError, and so
  is an id list that is not a list of non-empty strings without whitespace (what the other formats hold).

A file may start with a UTF-8 byte-order mark.

A ranked id is a session of the question's history, or one of its notes (a note id such as
``demo_s15#1``, or the note id the data gives), which stands for the note's session (and, from a TREC
run, also ranks that note for the note-level metrics); how many a run ranks is said in one line per run
(`NoteIdsWarning`: trec_eval, judging sessions, would count each as a non-relevant item). An id that is
neither is counted and warned about in one line per run (`UnknownIdsWarning`) and ranks as a non-relevant
item, as trec_eval counts it. Each question's sessions are then de-duplicated through `depth` ranks, as for
taggraph's own methods. A question the run ranks, even with an empty list, is scored (an empty list scores 0).
A question of the dataset the run does not rank at all is left out of that method's n, as
trec_eval does without ``-c``; `external_rankings` warns (`MissingQuestionsWarning`, one line:
how many and the first ids) and records them in ``.attrs["missing"]``. A question id the dataset
does not have is an InputError naming it, and so is a source with no rankings at all.

The scores a source gives (a TREC run's; a rankings.csv's) go with the rows as ``source_session_scores``
and ``source_scores``, so that the run's TREC files under ``trec/`` hold them again; no tie-aware metric reads
them (taggraph's own TREC files break ties in their scores). A source without scores (JSONL) is written
with scores counting down from its length: ranks only.

Out: `trec_files` writes a bench's rankings as TREC runs and qrels (what every run folder holds
under ``trec/``), which trec_eval (with ``-c``), ir-measures, ranx and pyterrier score to the report's
numbers.

A method name that two sources share (a file and taggraph's own `reserved` methods, or two
files) is kept apart: each file's method becomes ``"NAME [file name]"``.
"""

from __future__ import annotations

import json
import math
import re
import warnings
from collections.abc import Collection, Mapping, Sequence
from itertools import repeat
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from taggraph.errors import InputError
from taggraph.evaluation.metrics import session_scores, without_abstention
from taggraph.core.store import safe_filename
from taggraph.core.text import is_token

FIRST_IDS = 5  # question ids a warning quotes
RANKINGS_CSV = "rankings.csv"
# per level: the ranked ids, the columns their scores may be in (taggraph's own, a source's), the gold ids
TREC_LEVELS = {
    "sessions": ("ranked_session_ids", ("ranked_session_scores", "source_session_scores"), "gold_session_ids"),
    "notes": ("ranked_note_ids", ("ranked_scores", "source_scores"), "gold_note_ids")}
LIST_COLUMNS = ("ranked_session_ids", "gold_session_ids", "ranked_note_ids")
SCORE_COLUMNS = tuple(c for _, scored, _ in TREC_LEVELS.values() for c in scored)
SINGLE_MAX = float(np.finfo(np.float32).max)  # trec_eval's scores are C floats


class MissingQuestionsWarning(UserWarning):
    """A run that ranks only some of the dataset's questions; the rest are left out of its n."""


class UnknownIdsWarning(UserWarning):
    """A run that ranks ids that are neither a session nor a note of their question's history."""


class NoteIdsWarning(UserWarning):
    """A run that ranks note ids, each of which stands for its session."""


class SingleOverflowWarning(UserWarning):
    """A TREC run with scores beyond single precision, which read as +-inf (as in trec_eval) and tie."""


def rankings_path(path: Path) -> Path:
    """`path` itself, or the rankings.csv of the run folder `path`; InputError for a folder without one."""
    path = Path(path)
    if path.is_dir():
        if not (path / RANKINGS_CSV).is_file():
            raise InputError(f"{path}: a folder but not a run folder (no {RANKINGS_CSV} in it)")
        return path / RANKINGS_CSV
    return path


def read_rankings_csv(path: Path) -> pd.DataFrame:
    """Our own rankings.csv (or the run folder holding it), with the id-list columns as lists and the score
    columns as lists of floats (None for an empty cell).

    One row per question and method is required: a repeated pair (a sweep's or an ablation's
    rankings, which repeat them per setting), a file with no rows, a row without its question id or
    method, or a score that is not a finite number is an InputError naming it. A UTF-8 byte-order mark
    is skipped; only an empty cell is empty ("nan" is no score, "NA" an id)."""
    path = rankings_path(path)
    try:
        df = pd.read_csv(path, dtype={"question_id": str, "method": str,
                                      **dict.fromkeys((*LIST_COLUMNS, *SCORE_COLUMNS), str)},
                         encoding="utf-8-sig", keep_default_na=False, na_values=[""])
    except (OSError, UnicodeDecodeError, pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise InputError(f"{path}: cannot read rankings: {exc}") from None
    missing = [c for c in ("question_id", "method", "ranked_session_ids") if c not in df]
    if missing:
        raise InputError(f"{path}: not a rankings.csv: no column(s) {', '.join(missing)}")
    if df.empty:
        raise InputError(f"{path}: no rankings in it (only a header row)")
    for column in ("question_id", "method"):
        blank = df.index[df[column].fillna("").str.strip() == ""]
        if len(blank):
            raise InputError(f"{path}: row {blank[0] + 1} (line {blank[0] + 2}): {column} is empty; every row "
                             f"names the question and method it ranks")
    repeated = df[df.duplicated(["question_id", "method"])]
    if len(repeated):
        q, m = repeated.iloc[0][["question_id", "method"]]
        raise InputError(f"{path}: {len(repeated)} repeated (question, method) rows, first {q!r} of {m!r}; "
                         f"a run ranks each question once per method (sweep and ablation folders repeat them)")
    for col in LIST_COLUMNS:
        if col in df:
            df[col] = df[col].fillna("").str.split()
    for col in (c for c in SCORE_COLUMNS if c in df):
        df[col] = pd.Series([_scores(cell, col, f"{path}: question {q!r} of {m!r}")
                             for cell, q, m in zip(df[col], df["question_id"], df["method"])], df.index, object)
    for ids, scores in ((ranked, column) for ranked, scored, _ in TREC_LEVELS.values() for column in scored):
        if ids in df and scores in df:  # score and compare read the same file the same way
            bad = [(q, m, len(s), len(i)) for q, m, i, s in zip(df["question_id"], df["method"], df[ids], df[scores])
                   if s is not None and len(s) != len(i)]
            if bad:
                q, m, n_scores, n_ids = bad[0]
                raise InputError(f"{path}: question {q!r} of {m!r}: {n_scores} {scores} for {n_ids} {ids} "
                                 f"({len(bad)} row(s) in all)")
    return df


def _scores(cell: Any, column: str, where: str) -> list[float] | None:
    """A cell of space-separated scores as finite floats; None for an empty cell (a run without scores)."""
    if isinstance(cell, float) and math.isnan(cell):
        return None
    try:
        numbers = [float(v) for v in str(cell).split()]
    except ValueError:
        numbers = [math.nan]
    if not all(math.isfinite(n) for n in numbers):
        raise InputError(f"{where}: {column} must be finite numbers separated by spaces, got {str(cell)[:60]!r}")
    return numbers


def scores_of(row: Mapping[str, Any], level: str) -> list[float] | None:
    """The scores of a rankings.csv row's ranked ids at `level` (taggraph's own, else a source's), or None."""
    ranked, columns, _ = TREC_LEVELS[level]
    return next((list(row[c]) for c in columns
                 if isinstance(row.get(c), (list, tuple)) and len(row[c]) == len(row[ranked])), None)


def _read_csv_runs(path: Path) -> dict[str, dict[str, dict[str, Any]]]:
    df = read_rankings_csv(path)
    if "ranked_note_ids" not in df:
        df["ranked_note_ids"] = [[] for _ in range(len(df))]
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for row in df.to_dict("records"):
        out.setdefault(row["method"], {})[row["question_id"]] = {
            "sessions": row["ranked_session_ids"], "session_scores": scores_of(row, "sessions"),
            "notes": row["ranked_note_ids"], "note_scores": scores_of(row, "notes")}
    return out


def single(score: float) -> np.float32:
    """`score` in single precision, as trec_eval holds it: +-inf beyond its range (`SINGLE_MAX`), without
    numpy's warning (`trec_scores_of` says it once per file)."""
    with np.errstate(over="ignore"):
        return np.float32(score)


def trec_order(scored: dict[str, float]) -> list[str]:
    """Docids in trec_eval's order: score descending, compared in single precision (trec_eval's scores are C
    floats), ties by docid descending (ir-measures and pytrec_eval order them so too)."""
    return sorted(scored, key=lambda doc: (single(scored[doc]), doc), reverse=True)


def trec_scores_of(path: Path, lines: list[str]) -> dict[str, dict[str, dict[str, float]]]:
    """run name -> question id -> docid -> score of TREC run `lines` (read from `path`), checked as
    `read_runs` checks them (six fields, a number, no docid ranked twice)."""
    items: dict[str, dict[str, dict[str, float]]] = {}
    seen: dict[tuple[str, str, str], int] = {}
    beyond: list[str] = []  # "line N, SCORE" of each score single precision cannot hold
    for lineno, line in enumerate(lines, 1):
        if not line.strip():
            continue
        parts = line.split()
        if len(parts) != 6:
            raise InputError(f"{path}:{lineno}: a TREC run line has 6 fields (qid Q0 docid rank score run), "
                             f"got {len(parts)}")
        qid, _, doc, rank, score, name = parts
        try:
            int(rank)
            value = float(score)
        except ValueError:
            raise InputError(f"{path}:{lineno}: rank must be an integer and score a number, got {rank!r} {score!r}") \
                from None
        if not math.isfinite(value):
            raise InputError(f"{path}:{lineno}: score {score!r} is not a finite number")
        if (name, qid, doc) in seen:
            raise InputError(f"{path}:{lineno}: run {name!r} ranks {doc!r} for question {qid!r} again (line "
                             f"{seen[name, qid, doc]}); trec_eval refuses a docid ranked twice")
        seen[name, qid, doc] = lineno
        items.setdefault(name, {}).setdefault(qid, {})[doc] = value
        if np.isinf(single(value)):
            beyond.append(f"line {lineno}, {score}")
    if beyond:
        warnings.warn(f"{path}: {len(beyond)} score(s) beyond single precision (|score| > {SINGLE_MAX:.1e}; first: "
                      f"{beyond[0]}) read as +-inf, as trec_eval reads them, so they tie and rank by docid: scale "
                      f"the run's scores to keep their order", SingleOverflowWarning, stacklevel=2)
    return items


def _read_trec(path: Path, lines: list[str]) -> dict[str, dict[str, dict[str, list]]]:
    """run name -> question id -> {"docids": in trec_eval's order, "scores": theirs}."""
    runs = {}
    for name, by_q in trec_scores_of(path, lines).items():
        runs[name] = {}
        for q, scored in by_q.items():
            docids = trec_order(scored)
            runs[name][q] = {"docids": docids, "scores": [scored[d] for d in docids]}
    return runs


def _read_jsonl(path: Path, lines: list[str]) -> dict[str, dict[str, dict[str, list[str]]]]:
    out: dict[str, dict[str, dict[str, list[str]]]] = {}
    seen: dict[tuple[str, str], int] = {}
    for lineno, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"{path}:{lineno}: invalid JSON: {exc.msg}") from None
        if not isinstance(record, dict) or not isinstance(record.get("question_id"), str) \
                or record.get("ranked_session_ids") is None:
            raise InputError(f"{path}:{lineno}: expected {{\"question_id\": str, \"ranked_session_ids\": [str, ...]}}")
        where = f"{path}:{lineno}"
        ranked, notes = _ids(record, "ranked_session_ids", where), _ids(record, "ranked_note_ids", where)
        name, qid = str(record.get("method") or path.name.split(".")[0]), record["question_id"]
        if (name, qid) in seen:
            raise InputError(f"{path}:{lineno}: question {qid!r} of run {name!r} repeats line {seen[name, qid]}; "
                             f"a run ranks each question once")
        seen[name, qid] = lineno
        out.setdefault(name, {})[qid] = {"sessions": ranked, "notes": notes, "session_scores": None, "note_scores": None}
    return out


def _ids(record: dict[str, Any], field: str, where: str) -> list[str]:
    """`record[field]` (empty when absent or null), checked to be a list of ids (`is_token`)."""
    ids = record.get(field)
    if ids is None:
        return []
    wrong = [i for i in ids if not is_token(i)] if isinstance(ids, list) else [ids]
    if wrong:
        raise InputError(f"{where}: {field} must be a list of ids (non-empty strings without whitespace), "
                         f"got {json.dumps(wrong[0])[:60]}")
    return ids


def run_lines(path: Path) -> list[str]:
    """The lines of the run file `path` (a UTF-8 byte-order mark skipped); InputError when it cannot be read."""
    try:
        return Path(path).read_text(encoding="utf-8-sig").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: cannot read run file: {exc}") from None


def read_runs(path: Path) -> dict[str, dict[str, dict[str, Any]]]:
    """method -> question_id -> {"sessions": ranked session ids, "notes": ranked note ids, "session_scores",
    "note_scores": theirs or None}, or from a TREC run {"docids": ranked docids (sessions or notes), "scores"},
    from any source of the module docstring; InputError when it holds no rankings."""
    path = Path(path)
    if path.is_dir():
        runs = _read_csv_runs(path)
    else:
        lines = run_lines(path)
        first = next((line for line in lines if line.strip()), "").lstrip()
        if first.startswith("{"):
            runs = _read_jsonl(path, lines)
        elif first.split(",")[0] == "question_id":
            runs = _read_csv_runs(path)
        else:
            runs = _read_trec(path, lines)
    if not runs:
        raise InputError(f"{path}: no rankings in it (empty run file)")
    return runs


def _source_label(path: Path, paths: Sequence[Path]) -> str:
    """The file or folder name (a rankings.csv: its run folder's), or the whole path when two sources share it."""
    def name(p: Path) -> str:
        return p.parent.name if p.name == RANKINGS_CSV else p.name
    return name(path) if [name(p) for p in paths].count(name(path)) == 1 else str(path)


def external_rankings(paths: Sequence[Path], cases: Sequence[Any], history_ids: Mapping[str, Mapping[str, str]],
                      depth: int = 40, reserved: Collection[str] = ()) -> pd.DataFrame:
    """Ranking rows (the shape of `run_bench(...).rankings`, unscored) of every run in `paths`, only for
    the questions each run ranks (module docstring). `history_ids` maps each question id to the ids of
    its history: each session id and note id to its session id. A method name in `reserved` (taggraph's
    own methods beside these) or in two sources becomes ``"NAME [source]"``. ``.attrs["missing"]`` maps
    each method to the dataset's judged question ids (abstention ones are never judged) it does not rank;
    ``.attrs["unknown"]`` to the number of ids it ranks that its questions' histories lack;
    ``.attrs["note_ids"]`` to the number of note ids it ranks (each standing for its session);
    ``.attrs["sources"]`` to its path and name there."""
    paths = [Path(p) for p in paths]
    by_id = {c.case_id: c for c in cases}
    read = [(path, read_runs(path)) for path in paths]
    counts = pd.Series([m for _, runs in read for m in runs] + list(dict.fromkeys(reserved))).value_counts()
    rows, missing, sources, unknown_ids, note_ids = [], {}, {}, {}, {}
    for path, runs in read:
        for name, ranked_by_q in runs.items():
            method = name if counts[name] == 1 else f"{name} [{_source_label(path, paths)}]"
            unknown = [q for q in ranked_by_q if q not in by_id]
            if unknown:
                raise InputError(f"{path}: run {name!r} ranks question(s) not in the dataset: {unknown[:FIRST_IDS]}")
            missing[method] = [c.case_id for c in cases if c.case_id not in ranked_by_q and not c.is_abstention]
            sources[method] = {"path": str(path), "name": name}
            if missing[method]:
                warnings.warn(f"{path}: run {method!r} ranks {len(ranked_by_q)} of the dataset's {len(cases)} "
                              f"questions; the {len(missing[method])} judged ones it lacks (first: "
                              f"{', '.join(missing[method][:FIRST_IDS])}) are left out of its n, not scored as misses",
                              MissingQuestionsWarning, stacklevel=2)
            unknown, noted = [], []
            for case in cases:
                if case.case_id not in ranked_by_q:
                    continue
                ranked, known = ranked_by_q[case.case_id], history_ids[case.case_id]
                ids = ranked.get("docids", ranked.get("sessions"))
                scores = ranked.get("scores", ranked.get("session_scores"))
                unknown += [f"{case.case_id} {i}" for i in ids if i not in known]
                noted += [f"{case.case_id} {i}" for i in ids if known.get(i, i) != i]
                if "docids" in ranked:  # the notes among the docids, with their scores
                    pairs = [(i, s) for i, s in zip(ids, scores) if known.get(i, i) != i]
                    notes, note_scores = [i for i, _ in pairs], [s for _, s in pairs]
                else:
                    notes, note_scores = ranked["notes"], ranked["note_scores"]
                mapped = [known.get(i, i) for i in ids]
                sessions = session_scores(mapped, repeat(0.0) if scores is None else scores, depth)
                rows.append({"question_id": case.case_id, "question_type": case.question_type, "method": method,
                             "ranked_session_ids": [sid for sid, _ in sessions],
                             "gold_session_ids": list(case.gold_session_ids),
                             "ranked_note_ids": notes[:depth], "abstention": case.is_abstention,
                             "source_session_scores": None if scores is None else [x for _, x in sessions],
                             "source_scores": None if note_scores is None else note_scores[:depth]})
            unknown_ids[method], note_ids[method] = len(unknown), len(noted)
            if noted:
                warnings.warn(f"{path}: run {method!r} ranks {len(noted)} note ids (first: "
                              f"{', '.join(noted[:FIRST_IDS])}); each stands for its session, ranked at its first "
                              f"note (trec_eval, judging sessions, counts a note id as a non-relevant item)",
                              NoteIdsWarning, stacklevel=2)
            if unknown:
                warnings.warn(f"{path}: run {method!r} ranks {len(unknown)} ids that are neither a session nor a note "
                              f"of their question's history (first: {', '.join(unknown[:FIRST_IDS])}); each ranks "
                              f"as a non-relevant item, as trec_eval counts it", UnknownIdsWarning, stacklevel=2)
    out = pd.DataFrame(rows)
    out.attrs.update(missing=missing, sources=sources, unknown=unknown_ids, note_ids=note_ids)
    return out


def trec_scores(scores: Sequence[float]) -> list[np.float32]:
    """`scores` (descending) as trec_eval holds them, in single precision (its scores are C floats; ir-measures
    reads them through it), made strictly descending there: a score tied with the one above it at that
    precision is lowered by as few float32 steps as it takes, so that trec_eval's order (score, then docid
    descending) is the ranking's order."""
    out: list[np.float32] = []
    for score in scores:
        value = np.float32(min(max(float(score), -SINGLE_MAX), SINGLE_MAX))
        out.append(value if not out or value < out[-1] else np.nextafter(out[-1], np.float32(-np.inf)))
    return out


def _trec_run(rankings: pd.DataFrame, level: str, name: str) -> str:
    """One TREC run line per ranked item at `level` of each row but abstention questions' (judged by no metric,
    they are in no qrels, and ranx refuses a run holding questions its qrels lack), with the row's scores
    (`scores_of`); without (a source that gave none) the scores count down from the ranking's length."""
    lines = []
    ranked = TREC_LEVELS[level][0]
    for row in without_abstention(rankings).to_dict("records"):
        ids = row[ranked] = list(row[ranked]) if isinstance(row[ranked], (list, tuple)) else []
        lines += trec_lines(row["question_id"], ids, scores_of(row, level) or range(len(ids), 0, -1), name)
    return "".join(line + "\n" for line in lines)


def trec_lines(qid: str, ids: Sequence[str], scores: Sequence[float], name: str) -> list[str]:
    """TREC run lines of one question's ranked `ids` and their descending `scores` (`trec_scores`)."""
    return [f"{qid} Q0 {doc} {rank} {float(score)!r} {name}"  # the float32 exactly, whoever parses it
            for rank, (doc, score) in enumerate(zip(ids, trec_scores(scores)), 1)]


def _trec_qrels(rankings: pd.DataFrame, ranked: str, gold: str, judge_misses: bool) -> str:
    """Each judged question's gold items, relevance 1; abstention questions are left out, as of every metric.
    With `judge_misses` (session level, where a question without gold that is no abstention scores 0 as a
    miss), such a question has the items the methods rank for it judged 0, so that it counts 0 there too;
    without (note level, as LoCoMo's note metrics), it is left out."""
    lines = []
    for qid, group in without_abstention(rankings).groupby("question_id", sort=False):
        golds = next((g for g in group[gold] if isinstance(g, (list, tuple))), [])
        if len(golds):
            lines += [f"{qid} 0 {doc} 1" for doc in dict.fromkeys(golds)]
        elif judge_misses:
            lines += [f"{qid} 0 {doc} 0" for doc in dict.fromkeys(d for ids in group[ranked] for d in ids)]
    return "".join(line + "\n" for line in lines)


def trec_name(method: str) -> str:
    """A method name as a TREC run name (no whitespace) and file name stem (a readable slug and a hash when
    the name holds other than letters, digits, '.', '_' and '-')."""
    return method if re.fullmatch(r"[A-Za-z0-9_.-]+", method) else safe_filename(method, "")


def trec_files(rankings: pd.DataFrame) -> dict[str, str]:
    """``trec/<method>.run`` (session level: each row's de-duplicated sessions scored by their best note, the
    items the report's metrics judge), ``trec/<method>.notes.run`` (the ranked notes) and
    ``trec/qrels.sessions.txt`` / ``trec/qrels.notes.txt`` (file name -> text): ir-measures over a run and its
    qrels gives the report's RR per question; trec_eval gives it with ``-c`` (a question a method ranks
    nothing for is absent from its run and counts 0). ValueError when an id holds whitespace."""
    columns = ["question_id", *(c for ranked, _, gold in TREC_LEVELS.values() for c in (ranked, gold))]
    spaced = next((i for col in columns if col in rankings for cell in rankings[col]
                   for i in (cell if isinstance(cell, (list, tuple)) else [cell]) if re.search(r"\s", str(i))), None)
    if spaced is not None:
        raise ValueError(f"the id {spaced!r} holds whitespace, which a TREC file cannot")
    files = {}
    for level, (ranked, _, gold) in TREC_LEVELS.items():
        if ranked not in rankings or gold not in rankings:
            continue
        files[f"trec/qrels.{level}.txt"] = _trec_qrels(rankings, ranked, gold, judge_misses=level == "sessions")
        for method, rows in rankings.groupby("method", sort=False):
            suffix = ".run" if level == "sessions" else ".notes.run"
            files[f"trec/{trec_name(method)}{suffix}"] = _trec_run(rows, level, trec_name(method))
    return files
