"""A memory's cost as it grows: remember, build, query, explain, save, load and resident memory per size.

    python -m benchmarks.scale --data ../shared/data/longmemeval/longmemeval_s_dev.json.gz \
        --sizes 1000,5000,20000,100000 --out /tmp/scale [--methods BM25,BM25-stem,...] [--queries 30] \
        [--skip-fusion] [--warm-embeddings] [--threads 1] [--param TagGraph-Fusion.embed_on_add=true ...]

The history is the file's own: every question's haystack sessions, each session id once (its first listing and date),
in date order, one note per user turn and the reply after it, as the loader makes them (55,620 notes on S dev). A
size beyond that takes the sessions again under fresh ids ("<id>~r1", "~r2", ...) and dates shifted past the last
one; the questions (`--queries`, spread evenly over the non-abstention questions) are then asked that much later
too. The offline extractions of every note are cached first (not timed), so a note's extraction costs a lookup.

Each size runs in a fresh process on `--threads` threads (OMP_NUM_THREADS), its method modules and embedder loaded
before its base resident memory is read. Measured, CPU seconds of the process and wall seconds:

- ``build_per_1k``: `Memory.remember_many` of the first N - `--remember-calls` notes, per 1,000 notes; ``remember``:
  each of the last `--remember-calls` notes by `Memory.remember` (no method attached yet), so the memory holds N notes
  when the methods come;
- per method: ``index`` (its first query, which builds its index), ``first_request`` (a request for suggestions:
  TagGraph-Fusion's route embeds every note's turns then), ``query_first`` (each question asked the first time),
  ``query_warm`` (each asked again, after the others, so no one-query memo answers it), ``explain`` (of the note
  ranked k-th for a question), ``query_after_remember`` (one new note, then a question asked before) and
  ``rss_per_note`` (KB of resident memory above the base per note, every method so far loaded);
- ``bm25s`` and ``FTS5`` (SQLite, standard library) on the same texts and tokens as our BM25 (each note's Markdown),
  in the same process: ``index``, ``query_first`` and ``query_warm``, each query timed from its text as a user calls
  it (its tokenizing, `query_tokens`, and for FTS5 building the MATCH string, inside the time, as our BM25's own
  tokenizing is inside ``Memory.query``), and the rows ``BM25 / bm25s`` and
  ``BM25 / FTS5``: our BM25's cost divided by theirs (CPU);
- ``save_full`` (`Memory.save` to a new folder) and ``save_100`` (100 notes more, saved to it again), then
  ``load`` and ``load+first_query`` for BM25 and TagGraph-Fusion, each in a fresh process that has loaded its
  embedder model (``model_load``) first.

The embedding cache each size process and each load process starts from is empty (every other cache of
`taggraph`'s cache folder is shared): a first-time query embeds what it needs, as for a new user; with
`--warm-embeddings` they read the cache folder as it is. `--out` gets scale.csv (one row per size, method,
measure and clock: calls, p50, p95), scale.md (the tables), scale.json (command, configuration, data checksum,
commit, CPU and instruction set, versions, each size's cache state) and the plot of CPU cost against notes on log
axes (scale.png where kaleido is installed, else scale.html); a size whose part under ``--out/parts`` was measured
with the same configuration, data and commit is read back, not run again. Timings depend on the load: run it on
an idle machine and read medians. `--param METHOD.KEY=VALUE` (as `taggraph bench`'s) sets a method's parameter in
every memory of the run (`Memory(method_params=...)`), the loaded ones included; the tables name the parameters.
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import hashlib
import importlib.util
import itertools
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from taggraph import Memory
from taggraph._infra.atomic import atomic_write
from taggraph._infra.config import DEFAULT_EXTRACTOR, cache_dir
from taggraph.core.store import Interaction, MemoryStore
from taggraph.core.text import parse_datetime, query_tokens, tokenize
from taggraph.datasets.base import data_checksum, session_notes
from taggraph.datasets.longmemeval import read_json
from taggraph.cli.app import method_params
from taggraph.extractors import get_extractor
from taggraph.methods import check_methods, make_retriever
from taggraph.runs.folders import run_record, write_csv
from taggraph.runs.provenance import cache_entries, cache_state, command_line, machine

REPO = Path(__file__).resolve().parents[1]
METHODS = ("BM25", "BM25-stem", "AdaptiveGraph", "TagGraph-TFIDF", "TagGraph-Fusion")
FUSION = "TagGraph-Fusion"
LOADED = ("BM25", FUSION)  # the methods whose first query after `load` is timed
BASELINES = ("bm25s", "FTS5")
INDEX_TEXT = "Where did I go on my last trip?"  # a method's first query: it builds the index
REQUEST_TEXT = "Can you recommend something to try this weekend?"  # Fusion's request route (`is_request`)
NEW_NOTES = 100  # notes remembered between the full save and the second one
AFTER_REMEMBER = 10  # (remember one, ask one) pairs per method, at most --queries
EXPLAINED = 10  # questions whose k-th note is explained, at most --queries
COLUMNS = ["size", "notes", "method", "measure", "clock", "unit", "calls", "p50", "p95"]
DATE_FORMAT = "%Y/%m/%d (%a) %H:%M"  # LongMemEval's, "2023/05/20 (Sat) 02:21"


# -- the history -----------------------------------------------------------------------------------------------


def read_history(path: Path) -> tuple[list[tuple[str, str, list]], list[dict]]:
    """The file's distinct sessions as (session id, date, turns), each id at its first listing, in date order (ties
    in listing order), and its records (the questions)."""
    records = read_json(path)
    first: dict[str, tuple[str, list]] = {}
    for record in records:
        for sid, date, turns in zip(record["haystack_session_ids"], record["haystack_dates"],
                                    record["haystack_sessions"]):
            first.setdefault(sid, (date, turns))
    listed = list(first.items())
    order = sorted(range(len(listed)), key=lambda i: (parse_datetime(listed[i][1][0]) or datetime.max, i))
    return [(listed[i][0], *listed[i][1]) for i in order], records


def shifted(date: str, days: int) -> str:
    """`date` (LongMemEval's form) `days` later, its weekday named again."""
    if not days:
        return date
    moment = parse_datetime(date)
    if moment is None:
        raise ValueError(f"date {date!r}: not a LongMemEval date, cannot be shifted")
    return (moment + timedelta(days=days)).strftime(DATE_FORMAT)


def span_days(sessions: Sequence[tuple[str, str, list]]) -> int:
    """Days from the first session's date to one day past the last's: the shift of each repetition."""
    dates = [d for d in (parse_datetime(date) for _, date, _ in sessions) if d is not None]
    return (max(dates).date() - min(dates).date()).days + 1


def one_round(sessions: Sequence[tuple[str, str, list]], rounds: int, days: int) -> Iterator[Interaction]:
    """The sessions' notes in order; from the second round on (`rounds` > 0) under fresh ids, `days` later."""
    for sid, date, turns in sessions:
        fresh, day = (sid, date) if rounds == 0 else (f"{sid}~r{rounds}", shifted(date, days))
        yield from session_notes(fresh, [(t["role"], t["content"], day) for t in turns])[0]


def stream(sessions: Sequence[tuple[str, str, list]], n: int) -> list[Interaction]:
    """The first `n` notes of the sessions in order, then of the sessions again under fresh ids, `span_days` later
    each time round."""
    out: list[Interaction] = []
    shift = span_days(sessions)
    for rounds in itertools.count():
        out += itertools.islice(one_round(sessions, rounds, rounds * shift), n - len(out))
        if len(out) >= n:
            return out


def questions(records: Sequence[dict], count: int, days: int) -> list[tuple[str, str]]:
    """(question, date `days` later) of `count` non-abstention questions spread evenly over the file."""
    judged = [r for r in records if not str(r["question_id"]).endswith("_abs")]
    picks = np.linspace(0, len(judged) - 1, min(count, len(judged))).round().astype(int)
    return [(judged[i]["question"], shifted(judged[i]["question_date"], days)) for i in dict.fromkeys(picks)]


# -- measuring -------------------------------------------------------------------------------------------------


def timed(call: Callable[[], Any]) -> tuple[Any, float, float]:
    """(what `call` returns, CPU seconds of the process, wall seconds)."""
    cpu, wall = time.process_time(), time.perf_counter()
    value = call()
    return value, time.process_time() - cpu, time.perf_counter() - wall


def rss_kb() -> int:
    """This process's resident memory in kB (/proc/self/status)."""
    with open("/proc/self/status", encoding="ascii") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))


class Rows:
    """The measured rows of one size: p50 and p95 over the calls, per clock."""

    def __init__(self, size: int) -> None:
        self.size, self.rows = size, []

    def add(self, notes: int, method: str, measure: str, clock: str, unit: str, values: Sequence[float]) -> None:
        p50, p95 = np.percentile(values, [50, 95]) if len(values) else (np.nan, np.nan)
        self.rows.append(dict(zip(COLUMNS, [self.size, notes, method, measure, clock, unit, len(values),
                                            round(float(p50), 4), round(float(p95), 4)])))

    def times(self, notes: int, method: str, measure: str, timings: Sequence[tuple[float, float]],
              unit: str = "ms") -> None:
        """Rows of (cpu s, wall s) `timings`, in ms (per call) or s (one operation)."""
        scale = 1000 if unit == "ms" else 1
        for clock, column in (("cpu", 0), ("wall", 1)):
            self.add(notes, method, measure, clock, unit, [t[column] * scale for t in timings])


def progress(size: int, text: str) -> None:
    print(f"[{size}] {text}", file=sys.stderr, flush=True)


def remember(memory: Memory, interaction: Interaction) -> None:
    memory.remember(interaction.user, interaction.assistant, session=interaction.session_id,
                    timestamp=interaction.timestamp)


def load_process(methods: Sequence[str], extractor: str, params: dict, note: Interaction) -> None:
    """Each method's modules and models, and the extractor's, loaded (a query of a one-note memory, `note`'s
    extraction cached): the process base, not the memory."""
    memory = Memory(extractor, method_params=params)
    remember(memory, note)
    for method in methods:
        memory.query(INDEX_TEXT, method=method, k=1)


def method_section(memory: Memory, method: str, asked: list[tuple[str, str]], new: Iterator[Interaction],
                   k: int, rows: Rows, base_kb: int) -> None:
    """Index, first request, first-time, warm, explain and after-one-remember queries of `method`, then the
    resident memory per note with it loaded."""
    query = lambda text, date: memory.query(text, method=method, k=k, asked_on=date)  # noqa: E731
    n, date = len(memory), asked[0][1]
    _, cpu, wall = timed(lambda: query(INDEX_TEXT, date))
    rows.times(n, method, "index", [(cpu, wall)], "s")
    rows.times(n, method, "first_request", [timed(lambda: query(REQUEST_TEXT, date))[1:]])
    rows.times(n, method, "query_first", [timed(lambda: query(q, d))[1:] for q, d in asked])
    warm = [timed(lambda: query(q, d)) for q, d in asked]
    rows.times(n, method, "query_warm", [t[1:] for t in warm])
    targets = [(q, d, hits[-1].note_id) for (q, d), (hits, _, _) in zip(asked, warm) if hits][:EXPLAINED]
    rows.times(n, method, "explain", [timed(lambda: memory.explain(q, note, method=method, k=k, asked_on=d))[1:]
                                      for q, d, note in targets])
    after = []
    for q, d in asked[:AFTER_REMEMBER]:
        remember(memory, next(new))
        after.append(timed(lambda: query(q, d))[1:])
    rows.times(len(memory), method, "query_after_remember", after)
    gc.collect()
    rows.add(len(memory), method, "rss_per_note", "rss", "KB", [(rss_kb() - base_kb) / len(memory)])
    progress(rows.size, f"{method}: index {cpu:.1f} s CPU, warm p50 "
                        f"{np.median([t[1] for t in warm]) * 1000:.1f} ms CPU")


def fts_match(tokens: Sequence[str]) -> str:
    """An FTS5 query for any of `tokens` (each a quoted string: FTS5 reads no operator in it)."""
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in dict.fromkeys(tokens))


def baselines(texts: list[str], asked: list[tuple[str, str]], k: int, rows: Rows) -> None:
    """bm25s and SQLite FTS5 over `texts`: index, first-time and warm queries."""
    import bm25s

    n, texts_asked = len(texts), [q for q, _ in asked]
    bm25 = bm25s.BM25(method="robertson")  # Okapi's idf, as our BM25 (rank-bm25's BM25Okapi)
    _, cpu, wall = timed(lambda: bm25.index([tokenize(t) for t in texts], show_progress=False))
    rows.times(n, "bm25s", "index", [(cpu, wall)], "s")
    search = lambda q: bm25.retrieve([query_tokens(q)], k=min(k, n), show_progress=False, n_threads=0)  # noqa: E731
    for measure in ("query_first", "query_warm"):
        rows.times(n, "bm25s", measure, [timed(lambda: search(q))[1:] for q in texts_asked])
    db = sqlite3.connect(":memory:")

    def index_fts() -> None:
        db.execute("CREATE VIRTUAL TABLE notes USING fts5(text)")
        db.executemany("INSERT INTO notes(rowid, text) VALUES (?, ?)", enumerate(texts))
        db.commit()

    _, cpu, wall = timed(index_fts)
    rows.times(n, "FTS5", "index", [(cpu, wall)], "s")
    sql = "SELECT rowid FROM notes WHERE notes MATCH ? ORDER BY rank LIMIT ?"
    def search(question: str) -> list:
        tokens = query_tokens(question)
        return db.execute(sql, (fts_match(tokens), k)).fetchall() if tokens else []

    for measure in ("query_first", "query_warm"):
        rows.times(n, "FTS5", measure, [timed(lambda: search(q))[1:] for q in texts_asked])
    db.close()


def measure_size(spec: dict[str, Any]) -> tuple[list[dict], dict[str, Any]]:
    """Every measure of one size (module docstring), in this process, and the state of its caches."""
    size, k, methods, rows = spec["size"], spec["k"], spec["methods"], Rows(spec["size"])
    caches = cache_entries()
    load_process(methods, spec["extractor"], spec["method_params"], Interaction(*spec["first_note"]))
    gc.collect()
    base_kb = rss_kb()
    history = [Interaction(*fields) for fields in json.loads(Path(spec["stream"]).read_text(encoding="utf-8"))]
    asked = [tuple(q) for q in spec["questions"]]
    calls = min(spec["remember_calls"], size // 2)
    memory = Memory(spec["extractor"], method_params=spec["method_params"])
    _, cpu, wall = timed(lambda: memory.remember_many(history[:size - calls]))
    rows.times(size - calls, "memory", "build_per_1k", [(cpu * 1000 / (size - calls), wall * 1000 / (size - calls))],
               "s")
    progress(size, f"built {size - calls} notes: {cpu:.1f} s CPU")
    rows.times(size, "memory", "remember", [timed(lambda: remember(memory, i))[1:] for i in history[size - calls:size]])
    gc.collect()
    rows.add(size, "memory", "rss_per_note", "rss", "KB", [(rss_kb() - base_kb) / size])
    new = iter(history[size:])
    for method in methods:
        method_section(memory, method, asked, new, k, rows, base_kb)
    baselines([note.to_markdown() for note in memory.notes[:size]], asked, k, rows)  # as many notes as BM25 had
    progress(size, "bm25s and FTS5 done")
    folder = Path(spec["folder"])
    rows.times(len(memory), "memory", "save_full", [timed(lambda: memory.save(folder))[1:]], "s")
    for interaction in [next(new) for _ in range(NEW_NOTES)]:
        remember(memory, interaction)
    rows.times(len(memory), "memory", "save_100", [timed(lambda: memory.save(folder))[1:]], "s")
    progress(size, f"saved {len(memory)} notes")
    for method in (m for m in LOADED if m in methods):
        probe = json.loads(subprocess.run(
            [sys.executable, "-m", "benchmarks.scale", "--probe", json.dumps(
                {"folder": str(folder), "method": method, "question": asked[0], "k": k,
                 "method_params": spec["method_params"]})],
            cwd=REPO, env={**os.environ, "TAGGRAPH_CACHE": spec["probe_cache"]}, check=True, stdout=subprocess.PIPE,
            text=True).stdout.splitlines()[-1])
        for measure in ("model_load", "load", "load+first_query"):
            if measure in probe:
                rows.times(len(memory), method, measure, [probe[measure]], "s")
        progress(size, f"load + first {method} query {probe['load+first_query'][1]:.1f} s wall")
    return rows.rows, {"base_rss_mb": round(base_kb / 1024, 1), "caches": cache_state(caches, cache_entries())}


def probe_load(spec: dict[str, Any]) -> dict[str, tuple[float, float]]:
    """(CPU s, wall s) of loading the folder and of load plus the method's first query, in this fresh process; its
    embedder model (if any) loaded first."""
    out = {}
    params = spec["method_params"]
    embedder = getattr(make_retriever(spec["method"], MemoryStore("probe"), **params.get(spec["method"], {})),
                       "embedder", None)
    if embedder is not None:
        out["model_load"] = timed(lambda: embedder.embed([f"model load {time.time_ns()}"]))[1:]
    memory, load_cpu, load_wall = timed(lambda: Memory.load(spec["folder"], method_params=params))
    (question, date), k = spec["question"], spec["k"]
    _, cpu, wall = timed(lambda: memory.query(question, method=spec["method"], k=k, asked_on=date))
    out["load"] = (load_cpu, load_wall)
    out["load+first_query"] = (load_cpu + cpu, load_wall + wall)
    return out


# -- the run ---------------------------------------------------------------------------------------------------


def added_notes(methods: Sequence[str]) -> int:
    """Notes a size's memory takes after it holds its size: at most one per after-remember query, then `NEW_NOTES`."""
    return AFTER_REMEMBER * len(methods) + NEW_NOTES


def empty_embeddings_cache(folder: Path) -> Path:
    """A cache folder holding every cache of `cache_dir()` (linked) but the embeddings, which start empty."""
    folder.mkdir(parents=True)
    for entry in cache_dir().iterdir():
        if entry.name != "embeddings":
            (folder / entry.name).symlink_to(entry.resolve(), target_is_directory=entry.is_dir())
    return folder


def warm_extractions(extractor: str, history: Sequence[Interaction]) -> None:
    """Every note's offline extraction in the disk cache (the sizes then read it)."""
    pairs = list(dict.fromkeys((i.user, i.assistant) for i in history))
    batch = getattr(get_extractor(extractor), "extract_many", None)
    if batch is None:
        return
    step = 1000
    for start in range(0, len(pairs), step):
        _, cpu, _ = timed(lambda: batch(pairs[start:start + step], []))
        print(f"extractions cached: {min(start + step, len(pairs))} of {len(pairs)} ({cpu:.1f} s CPU)",
              file=sys.stderr, flush=True)


def run_size(size: int, config: dict, history: list[Interaction], asked: list[tuple[str, str]], parts: Path,
             key: str, work: Path) -> pd.DataFrame:
    """One size's rows: read back from its part when measured with the same `key`, else measured in a fresh
    process and kept as its part."""
    part, record = parts / f"size-{size}.csv", parts / f"size-{size}.json"
    if part.exists() and record.exists() and json.loads(record.read_text(encoding="utf-8")).get("key") == key:
        print(f"[{size}] measured before with this configuration, data and commit: {part}", file=sys.stderr)
        return pd.read_csv(part)
    extra = added_notes(config["methods"])
    folder = work / f"size-{size}"
    folder.mkdir()
    atomic_write(folder / "history.json", json.dumps([dataclasses.astuple(i) for i in history[:size + extra]]))
    caches = {"TAGGRAPH_CACHE": str(empty_embeddings_cache(folder / "cache"))} if not config["warm_embeddings"] \
        else {}
    spec = {"size": size, "k": config["k"], "methods": config["methods"], "extractor": config["extractor"],
            "method_params": config["method_params"],
            "remember_calls": config["remember_calls"], "questions": asked, "stream": str(folder / "history.json"),
            "folder": str(folder / "memory"), "first_note": dataclasses.astuple(history[0]),
            "probe_cache": str(empty_embeddings_cache(folder / "probe-cache")) if caches else str(cache_dir())}
    threads = str(config["threads"])
    env = {**os.environ, **caches, "OMP_NUM_THREADS": threads, "MKL_NUM_THREADS": threads,
           "OPENBLAS_NUM_THREADS": threads, "TQDM_DISABLE": "1", "HF_HUB_OFFLINE": "1"}
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "benchmarks.scale", "--measure", json.dumps(spec)], cwd=REPO, env=env,
                   check=True)
    wall = time.perf_counter() - start
    rows = pd.read_csv(folder / "rows.csv")
    write_csv(rows, part)
    measured = json.loads((folder / "process.json").read_text(encoding="utf-8"))
    atomic_write(record, json.dumps({"key": key, "size": size, "wall_s": round(wall, 1), **measured}, indent=1))
    return rows


def ratios(rows: pd.DataFrame) -> pd.DataFrame:
    """Our BM25's CPU cost over bm25s's and FTS5's, per size and measure (index, first-time and warm queries)."""
    cpu = rows[(rows["clock"] == "cpu") & rows["measure"].isin(["index", "query_first", "query_warm"])]
    wide = cpu.set_index(["size", "measure", "method"])[["p50", "p95", "notes"]]
    out = []
    for (size, measure), group in wide.groupby(level=["size", "measure"]):
        group = group.droplevel(["size", "measure"])
        for base in BASELINES:
            if "BM25" in group.index and base in group.index:
                ours, theirs = group.loc["BM25"], group.loc[base]
                out.append(dict(zip(COLUMNS, [size, int(ours["notes"]), f"BM25 / {base}", measure, "cpu", "ratio",
                                              1, *(round(float(ours[c] / theirs[c]), 3) for c in ("p50", "p95"))])))
    return pd.DataFrame(out, columns=COLUMNS)


def cell(rows: pd.DataFrame, method: str, measure: str, clock: str = "cpu", p95: bool = False) -> str:
    """One table cell: p50 (and p95) of the row, '-' when not measured."""
    found = rows[(rows["method"] == method) & (rows["measure"] == measure) & (rows["clock"] == clock)]
    if found.empty:
        return "-"
    row = found.iloc[0]
    fmt = lambda v: f"{v:.3g}" if abs(v) < 100 else f"{v:.0f}"  # noqa: E731
    return f"{fmt(row['p50'])} / {fmt(row['p95'])}" if p95 else fmt(row["p50"])


def tables(rows: pd.DataFrame, record: dict) -> str:
    """scale.md: the provenance, a table per memory and a table per method (CPU unless named)."""
    config, m = record["config"], record["machine"]
    lines = [f"# Scale benchmark\n\n`{record['command']}`\n",
             f"commit {record['git_commit']}, data sha256 {record['data']['sha256'][:16]} ({config['distinct']} "
             f"distinct notes), {m['cpu']} ({m['isa']}, {m['cores']} cores), {config['threads']} thread(s), k = "
             f"{config['k']}, {len(config['questions'])} questions, extractor {config['extractor']}, embeddings "
             f"{'warm' if config['warm_embeddings'] else 'cold'}, method parameters "
             f"{json.dumps(config['method_params']) if config['method_params'] else 'the defaults'}.\n",
             "| notes | remember p50 ms | build s / 1k | save full s (wall) | save +100 s (wall) | load + first BM25 s "
             "(wall) | load + first Fusion s (wall) | RSS KB/note, notes alone | BM25 / bm25s warm p50 | "
             "BM25 / FTS5 warm p50 |", "|" + "---|" * 10]
    for size, at in rows.groupby("size"):
        lines.append(f"| {size} | {cell(at, 'memory', 'remember')} | {cell(at, 'memory', 'build_per_1k')} | "
                     f"{cell(at, 'memory', 'save_full', 'wall')} | {cell(at, 'memory', 'save_100', 'wall')} | "
                     f"{cell(at, 'BM25', 'load+first_query', 'wall')} | {cell(at, FUSION, 'load+first_query', 'wall')}"
                     f" | {cell(at, 'memory', 'rss_per_note', 'rss')} | {cell(at, 'BM25 / bm25s', 'query_warm')} | "
                     f"{cell(at, 'BM25 / FTS5', 'query_warm')} |")
    lines += ["", "CPU ms p50 / p95 per query; index s; RSS KB per note above the process base with this and every "
              "method above it loaded.\n",
              "| notes | method | index s | first request ms | first-time ms | warm ms | after one remember ms | "
              "explain ms | RSS KB/note |", "|" + "---|" * 9]
    for size, at in rows.groupby("size"):
        for method in [*config["methods"], *BASELINES]:
            if (at["method"] == method).any():
                lines.append(f"| {size} | {method} | {cell(at, method, 'index')} | "
                             f"{cell(at, method, 'first_request')} | {cell(at, method, 'query_first', p95=True)} | "
                             f"{cell(at, method, 'query_warm', p95=True)} | "
                             f"{cell(at, method, 'query_after_remember', p95=True)} | "
                             f"{cell(at, method, 'explain', p95=True)} | {cell(at, method, 'rss_per_note', 'rss')} |")
    return "\n".join(lines) + "\n"


PLOTTED = [("query_warm", "warm query, CPU ms p50"), ("query_first", "first-time query, CPU ms p50"),
           ("explain", "explain, CPU ms p50"), ("index", "index (first query), CPU s")]


def plot(rows: pd.DataFrame, methods: Sequence[str], out: Path) -> Path:
    """CPU cost against notes on log axes, one line per method, a panel per measure: scale.png with kaleido, else
    scale.html (plotly.js inline, as the run reports)."""
    import plotly.graph_objects as go
    from plotly.colors import qualitative
    from plotly.subplots import make_subplots

    fig = make_subplots(rows=2, cols=2, subplot_titles=[title for _, title in PLOTTED])
    colors = dict(zip([*methods, *BASELINES], qualitative.Plotly))
    for p, (measure, _) in enumerate(PLOTTED):
        for method, color in colors.items():
            line = rows[(rows["method"] == method) & (rows["measure"] == measure) & (rows["clock"] == "cpu")]
            if not line.empty:
                fig.add_trace(go.Scatter(x=line["notes"], y=line["p50"], name=method, mode="lines+markers",
                                         line={"color": color}, legendgroup=method, showlegend=p == 0),
                              row=p // 2 + 1, col=p % 2 + 1)
    fig.update_xaxes(type="log", title_text="notes")
    fig.update_yaxes(type="log")
    fig.update_layout(width=1100, height=800, title="taggraph: cost against memory size")
    if importlib.util.find_spec("kaleido") is not None:
        path = out / "scale.png"
        tmp = path.with_name(f".{path.name}.tmp")  # atomic_write writes text only: a sibling renamed into place
        tmp.write_bytes(fig.to_image(format="png"))
        os.replace(tmp, path)
        return path
    path = out / "scale.html"
    atomic_write(path, fig.to_html(include_plotlyjs=True, config={"displaylogo": False}))
    return path


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, help="a LongMemEval file (plain or .gz)")
    parser.add_argument("--sizes", default="1000,5000,20000,100000", help="notes per memory, comma-separated")
    parser.add_argument("--out", type=Path, help="folder of scale.csv, scale.md, scale.json, the plot and parts/")
    parser.add_argument("--methods", default=",".join(METHODS))
    parser.add_argument("--skip-fusion", action="store_true", help=f"leave {FUSION} out (a quick run)")
    parser.add_argument("--queries", type=int, default=30, help="questions asked per method (at least 2)")
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--remember-calls", type=int, default=200, help="remember calls timed (at most size / 2)")
    parser.add_argument("--extractor", default=DEFAULT_EXTRACTOR)
    parser.add_argument("--threads", type=int, default=1, help="OMP_NUM_THREADS of each size's process")
    parser.add_argument("--warm-embeddings", action="store_true", help="read the embedding cache as it is")
    parser.add_argument("--param", action="append", default=[], metavar="METHOD.KEY=VALUE",
                        help="a method's parameter in every memory, e.g. TagGraph-Fusion.embed_on_add=true")
    parser.add_argument("--work", type=Path, help="where memories are built and saved (default: a temporary folder)")
    parser.add_argument("--measure", help=argparse.SUPPRESS)  # a size's process: its spec as JSON
    parser.add_argument("--probe", help=argparse.SUPPRESS)  # a load process: its spec as JSON
    args = parser.parse_args(argv)
    if args.measure:
        spec = json.loads(args.measure)
        rows, measured = measure_size(spec)
        write_csv(pd.DataFrame(rows, columns=COLUMNS), Path(spec["stream"]).parent / "rows.csv")
        atomic_write(Path(spec["stream"]).parent / "process.json", json.dumps(measured))
        return
    if args.probe:
        print(json.dumps(probe_load(json.loads(args.probe))))
        return
    if args.data is None or args.out is None:
        parser.error("--data and --out are required")
    if args.queries < 2:
        parser.error("--queries must be at least 2 (a warm query follows the others, so no memo answers it)")
    methods = [m for m in check_methods(args.methods.split(",")) if not (args.skip_fusion and m == FUSION)]
    sizes = sorted({int(s) for s in args.sizes.split(",")})
    sessions, records = read_history(args.data)
    distinct = sum(1 for _ in one_round(sessions, 0, 0))
    extra = added_notes(methods)
    longest = max(sizes) + extra
    history = stream(sessions, longest)
    config = {"methods": methods, "k": args.k, "queries": args.queries, "remember_calls": args.remember_calls,
              "extractor": args.extractor, "threads": args.threads, "warm_embeddings": args.warm_embeddings,
              "distinct": distinct, "questions": questions(records, args.queries, 0),
              "method_params": method_params(args.param, running=methods)}
    print(f"{len(sessions)} distinct sessions, {distinct} notes; sizes {sizes}; methods {methods}", file=sys.stderr)
    warm_extractions(args.extractor, history[:min(longest, distinct)])
    data = {"path": str(args.data.absolute()), "format": "longmemeval", "sha256": data_checksum(args.data)}
    record = {**run_record(config, data), "command": command_line(), "machine": machine()}
    parts = args.out / "parts"
    parts.mkdir(parents=True, exist_ok=True)
    found = []
    with tempfile.TemporaryDirectory(dir=args.work, prefix="scale-") as work:
        for size in sizes:
            rounds = (size + extra - 1) // distinct  # the repetitions of the sessions the memory reaches
            asked = questions(records, args.queries, rounds * span_days(sessions))
            key = hashlib.sha256(json.dumps([config, asked, data["sha256"], record["git_commit"]]).encode())
            found.append(run_size(size, config, history, asked, parts, key.hexdigest(), Path(work)))
            record.setdefault("sizes", {})[size] = json.loads((parts / f"size-{size}.json").read_text("utf-8"))
    rows = pd.concat(found, ignore_index=True)
    rows = pd.concat([rows, ratios(rows)], ignore_index=True)
    write_csv(rows, args.out / "scale.csv")
    atomic_write(args.out / "scale.md", tables(rows, record))
    record["plot"] = plot(rows, methods, args.out).name
    atomic_write(args.out / "scale.json", json.dumps(record, indent=1, default=str))
    print(tables(rows, record))


if __name__ == "__main__":
    main()
