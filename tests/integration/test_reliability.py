"""Nothing lost, nothing silently wrong (signals, concurrent writers, full disks, odd text)."""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from taggraph import Memory
from taggraph._infra.cache import open_cache
from taggraph._infra.config import DEMO_DATA, cache_dir
from taggraph.datasets import Case, DatasetError, load_cases
from taggraph.errors import ConfigError, ServerError, TaggraphError, WriteError
from taggraph.runs import folders as run_folders
from taggraph.runs.extract_job import case_folder, extract_to_stores
from taggraph.core.fivew import Extraction
from taggraph.core.store import JOURNAL, Interaction, MemoryStore, StoreError

FIXTURES = Path(__file__).parents[1] / "fixtures"
LONE = "\udc80"


def demo_record() -> dict:
    return json.loads(DEMO_DATA.read_text())[0]


@pytest.mark.parametrize("field", ["session id", "text", "question id"])
def test_longmemeval_lone_surrogate_is_one_error_naming_record_and_field(tmp_path, field):
    """A lone surrogate escape (legal JSON) crashed the metric library (exit 139) or spaCy; now refused at load."""
    r = demo_record()
    if field == "session id":
        r["haystack_session_ids"][1] += LONE
        expected = "record 0: field 'haystack_session_ids[1]'"
    elif field == "text":
        r["haystack_sessions"][2][0]["content"] += LONE
        expected = "record 0: field 'haystack_sessions[2][0].content'"
    else:
        r["question_id"] += LONE
        expected = "record 0: field 'question_id'"
    path = tmp_path / "data.json"
    path.write_text(json.dumps([r]))  # ensure_ascii: written as the escape \udc80
    with pytest.raises(DatasetError, match="lone surrogate") as err:
        load_cases(path)
    assert f"{path}: {expected}" in str(err.value) and "\n" not in str(err.value)
    str(err.value).encode("utf-8")  # the message itself prints


def test_escaped_surrogate_pairs_load(tmp_path):
    """An emoji written as a surrogate-pair escape is ordinary text."""
    r = demo_record()
    r["question"] += " 🐶"
    path = tmp_path / "data.json"
    path.write_text(json.dumps([r]))
    assert "\\ud83d\\udc36" in path.read_text()
    assert load_cases(path)[0].question.endswith("🐶")


def test_generic_locomo_atant_lone_surrogate_named(tmp_path):
    folder = tmp_path / "mine"
    shutil.copytree(FIXTURES / "generic", folder)
    turns = folder / "turns.jsonl"
    lines = turns.read_text().splitlines()
    first = json.loads(lines[0])
    first["session"] += LONE
    turns.write_text("\n".join([json.dumps(first)] + lines[1:]) + "\n")
    with pytest.raises(DatasetError, match=f"{turns} line 1: field 'session' holds a lone surrogate"):
        load_cases(folder)

    locomo = json.loads((FIXTURES / "locomo" / "locomo_tiny.json").read_text())
    locomo[0]["qa"][1]["question"] += LONE
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps(locomo))
    with pytest.raises(DatasetError, match=r"sample 0: field 'qa\[1\]\.question' holds a lone surrogate"):
        load_cases(path)

    atant = tmp_path / "atant"
    shutil.copytree(FIXTURES / "atant", atant)
    story = sorted(atant.rglob("*.yaml"))[0]
    story.write_text(story.read_text().replace("story_id:", 'odd: "x\\udc80"\nstory_id:', 1))
    with pytest.raises(DatasetError, match=f"{story}: field 'odd' holds a lone surrogate"):
        load_cases(story.parent)


class WordTagger:
    """A deterministic extractor: tags each note with its first word (no model, no cache)."""

    name = cache_key = "word-tagger"

    def extract(self, user, assistant, existing):
        return Extraction(what=[f"word/{user.split()[0].lower()}"])


class Interrupt:
    """Raises KeyboardInterrupt at the `at`-th checkpoint: before or after each wrapped call."""

    def __init__(self, at: int) -> None:
        self.at, self.seen = at, 0

    def checkpoint(self) -> None:
        self.seen += 1
        if self.seen == self.at:
            raise KeyboardInterrupt

    def wrap(self, fn):
        def run(*args, **kwargs):
            self.checkpoint()
            out = fn(*args, **kwargs)
            self.checkpoint()
            return out
        return run


def small_case(n: int = 4) -> Case:
    turns = [Interaction(f"s{i // 2}", f"{w} turn {i}", "ok") for i, w in enumerate(["yoga", "dog", "pasta", "run",
                                                                                         "cat", "tea"][:n])]
    return Case("c1", "what?", "t", turns)


def test_extract_interrupted_at_every_write_resumes_to_the_uninterrupted_store(tmp_path, monkeypatch):
    """Ctrl-C at any checkpoint (each file write, journal line, ontology and graph update, before and after)
    leaves a store that loads and resumes to exactly the uninterrupted result (it used to list a note
    whose file was never written: `cannot read notes/...md` on every rerun)."""
    import taggraph.core.store as store_module

    case = small_case()
    extract_to_stores([case], WordTagger(), tmp_path / "whole")
    want = [(n.note_id, n.tags) for n in MemoryStore.load(case_folder(tmp_path / "whole", case))]
    real = (store_module.atomic_write, store_module.Ontology.add, store_module.BaseGraph.add_note)
    at = 1
    while True:
        hook = Interrupt(at)
        out = tmp_path / f"cut{at}"
        with monkeypatch.context() as patch:
            patch.setattr(store_module, "atomic_write", hook.wrap(real[0]))
            patch.setattr(store_module.Ontology, "add", hook.wrap(real[1]))
            patch.setattr(store_module.BaseGraph, "add_note", hook.wrap(real[2]))
            try:
                extract_to_stores([case], WordTagger(), out)
            except KeyboardInterrupt:
                pass
            else:
                break  # `at` is past the last checkpoint: every moment was tried
        extract_to_stores([case], WordTagger(), out)  # resume
        got = [(n.note_id, n.tags) for n in MemoryStore.load(case_folder(out, case))]
        assert got == want, f"interrupt at checkpoint {at}"
        at += 1
    assert at > 20  # the hook did reach the writes


def test_interrupt_between_manifest_and_journal_reset_loads(tmp_path, monkeypatch):
    """`flush` wrote manifest.json, then died before emptying the journal: its lines repeat the manifest's."""
    store = MemoryStore("c")
    store.save(tmp_path / "s")
    store.remember(Interaction("s", "hello", "ok"))
    journal = (tmp_path / "s" / JOURNAL).read_text()
    store.close()
    (tmp_path / "s" / JOURNAL).write_text(journal)
    assert [n.note_id for n in MemoryStore.load(tmp_path / "s")] == ["s#0"]


def test_save_refuses_another_memorys_folder(tmp_path):
    """Memory.save onto another memory's folder replaced its manifest and notes without a word."""
    first = Memory(extractor="none")
    first.remember("I adopted a dog.", session="a")
    first.save(tmp_path / "m")
    before = {p: p.read_bytes() for p in (tmp_path / "m").rglob("*") if p.is_file()}
    other = Memory(extractor="none")
    other.remember("I like tea.", session="a")
    with pytest.raises(StoreError, match="holds another store"):
        other.save(tmp_path / "m")
    assert {p: p.read_bytes() for p in (tmp_path / "m").rglob("*") if p.is_file()} == before
    again = Memory.load(tmp_path / "m")
    again.remember("Its name is Miso.", session="b")
    again.save(tmp_path / "m")  # its own folder: fine
    assert len(Memory.load(tmp_path / "m")) == 2


def test_save_removes_only_its_own_leftovers(tmp_path):
    """A user's hidden *.tmp files anywhere in the folder survive; a killed save's own temporaries do not."""
    (tmp_path / "sub").mkdir()
    (tmp_path / "notes").mkdir()
    mine = [tmp_path / ".manifest.json.ab12cd34.tmp", tmp_path / "notes" / ".s_0-abc.md.x9y8z7w6.tmp"]
    theirs = [tmp_path / ".draft.tmp", tmp_path / "sub" / ".manifest.json.ab12cd34.tmp",
              tmp_path / ".editor.swp.tmp", tmp_path / "notes" / ".todo.txt.ab12cd34.tmp"]
    for f in mine + theirs:
        f.write_text("x")
    memory = Memory(extractor="none")
    memory.remember("hello")
    memory.save(tmp_path)
    assert [f.exists() for f in mine] == [False, False] and all(f.exists() for f in theirs)


def test_save_and_load_of_wrong_paths_are_one_line_errors(tmp_path):
    (tmp_path / "file").write_text("x")
    memory = Memory(extractor="none")
    memory.remember("hello")
    with pytest.raises(WriteError, match="is a file"):
        memory.save(tmp_path / "file")
    with pytest.raises(StoreError, match="not a folder"):
        Memory.load(tmp_path / "file")
    memory.save(tmp_path / "m")
    manifest = tmp_path / "m" / "manifest.json"
    manifest.write_text(manifest.read_text().replace('"extractor": "none"', '"extractor": "gguf:/etc/passwd"'))
    with pytest.raises(TaggraphError, match="gguf:/etc/passwd"):
        Memory.load(tmp_path / "m")
    assert len(Memory.load(tmp_path / "m", extractor="none")) == 1


def save_tiny_run(out: Path, label: str, force: bool = False) -> Path:
    return run_folders.save_run(out, {"summary": pd.DataFrame({"run": [label]})}, run_folders.run_record({"label": label}, {}),
                         force=force)


def test_a_run_finished_meanwhile_at_out_is_never_deleted(tmp_path, monkeypatch):
    """Two runs into one new --out both reported success and one was thrown away: the second now fails in one
    line, and its own finished run is kept where the error says."""
    out = tmp_path / "X"
    real = run_folders.atomic_write
    state = {"raced": False}

    def race(path, text):  # another run finishes at `out` while this one writes its files
        if not state["raced"]:
            state["raced"] = True
            save_tiny_run(out, "first", force=out.exists())
        real(path, text)

    monkeypatch.setattr(run_folders, "atomic_write", race)
    with pytest.raises(WriteError, match="another run finished there meanwhile; this run is kept in") as err:
        save_tiny_run(out, "second")
    monkeypatch.setattr(run_folders, "atomic_write", real)
    assert pd.read_csv(out / "summary.csv")["run"].tolist() == ["first"]
    kept = Path(str(err.value).split("kept in ")[1].split(" (")[0])
    assert pd.read_csv(kept / "summary.csv")["run"].tolist() == ["second"] and (kept / "run.json").exists()
    state["raced"] = False
    monkeypatch.setattr(run_folders, "atomic_write", race)
    save_tiny_run(out, "third", force=True)  # --force: replaces the run folder that appeared meanwhile
    assert pd.read_csv(out / "summary.csv")["run"].tolist() == ["third"]
    assert not list(tmp_path.glob(".X.*.old"))


def test_force_replaces_only_a_run_folder(tmp_path):
    """--force deleted any folder, the one holding the --data file included."""
    data = tmp_path / "data"
    data.mkdir()
    (data / "set.json").write_text("[]")
    with pytest.raises(ConfigError, match="replaces only a run folder"):
        run_folders.check_run_folder(data, force=True)
    run = save_tiny_run(tmp_path / "run", "old")
    (run / "set.json").write_text("[]")  # the data lives inside a run folder
    with pytest.raises(ConfigError, match="an input of this run"):
        run_folders.check_run_folder(run, force=True, keep=[run / "set.json"])
    assert (data / "set.json").exists() and (run / "set.json").exists()
    save_tiny_run(run, "new", force=True)
    assert pd.read_csv(run / "summary.csv")["run"].tolist() == ["new"]


def test_out_names_and_links_are_checked_before_the_run(tmp_path):
    """A legal 250-byte name failed after the whole run (its hidden sibling's name passed 255 bytes); a symlink
    to an empty folder failed in rmtree."""
    long = tmp_path / ("r" * 250)
    run_folders.check_run_folder(long)
    assert (save_tiny_run(long, "x") / "run.json").exists()
    with pytest.raises(ConfigError, match="of 256 bytes"):
        run_folders.check_run_folder(tmp_path / ("r" * 256))
    (tmp_path / "empty").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "empty")
    with pytest.raises(ConfigError, match="symbolic link"):
        run_folders.check_run_folder(tmp_path / "link")


WORKERS_SCRIPT = """
import os, sys, time
from pathlib import Path
from taggraph.runs.runner import parallel_map

def slow(i, folder):
    Path(folder, f"{os.getpid()}.pid").write_text(str(i))
    time.sleep(600)

parallel_map(slow, [0, 1, 2, 3], sys.argv[1], workers=2)
"""


def default_signals() -> None:
    """In the child, before it execs: SIGINT and SIGTERM unblocked and at their defaults, whatever this test
    process inherited from the tests before it (a blocked or ignored SIGINT would reach Python ignored)."""
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM})
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}").exists() and "Z" not in Path(f"/proc/{pid}/stat").read_text().split()[2]


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs /proc to see worker processes")
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_to_the_main_process_ends_its_workers(tmp_path, signum):
    """SIGTERM to `bench --workers 2` left both loky workers running for 5 minutes with their memory."""
    script = tmp_path / "run.py"
    script.write_text(WORKERS_SCRIPT)
    main = subprocess.Popen([sys.executable, str(script), str(tmp_path)], stderr=subprocess.PIPE,
                            preexec_fn=default_signals)
    deadline = time.monotonic() + 120
    while len(list(tmp_path.glob("*.pid"))) < 2 and main.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)  # waits for the workers to start; the outcome below does not depend on timing
    workers = [int(p.stem) for p in tmp_path.glob("*.pid")]
    assert len(workers) == 2, main.stderr.read().decode()[-2000:] if main.poll() is not None else "no workers"
    main.send_signal(signum)
    try:
        assert main.wait(60) == -signum  # ends by the signal, as an uncaught KeyboardInterrupt ends Python by SIGINT
    except subprocess.TimeoutExpired:
        state = re.findall(r"(?:State|Sig\w+):\s*\S+", Path(f"/proc/{main.pid}/status").read_text())
        main.kill()
        pytest.fail(f"no end 60 s after signal {signum}: {state}")
    try:
        deadline = time.monotonic() + 60  # before the fix they idled for 300 s
        while any(alive(w) for w in workers) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not any(alive(w) for w in workers)
    finally:
        for w in workers:
            if alive(w):
                os.kill(w, signal.SIGKILL)


@pytest.mark.parametrize("in_transaction", [False, True])
def test_a_full_disk_under_the_cache_is_one_write_error(tmp_path, in_transaction):
    """sqlite's "database or disk is full" mid-run was a traceback (sqlite3.OperationalError)."""
    cache = open_cache(tmp_path / "c")
    pages = cache._sql("PRAGMA page_count").fetchone()[0]
    cache._sql(f"PRAGMA max_page_count = {pages + 2}")  # sqlite's own full-disk error, for real
    with pytest.raises(WriteError, match=r"c: cache cannot be written \(database or disk is full\)") as err:
        with cache.transact() if in_transaction else contextlib.nullcontext():
            for i in range(100):
                cache.set(str(i), "x" * 20_000)
    assert str(err.value).count("cannot be written") == 1


@pytest.mark.parametrize("env", [{"TAGGRAPH_CACHE": "FILE"}, {"HOME": "/proc/no-home", "TAGGRAPH_CACHE": None}])
def test_an_unusable_cache_folder_is_one_write_error(tmp_path, monkeypatch, env):
    """A read-only HOME with no cache setting, or TAGGRAPH_CACHE naming a file, was a raw OSError."""
    (tmp_path / "FILE").write_text("x")
    for key, value in env.items():
        if value is None:
            monkeypatch.delenv(key, raising=False)
        else:
            monkeypatch.setenv(key, str(tmp_path / value) if value == "FILE" else value)
    with pytest.raises(WriteError, match="offline_extractions: cache cannot be written .*TAGGRAPH_CACHE"):
        open_cache(cache_dir() / "offline_extractions")


@pytest.mark.parametrize("name,error,message", [("afile", ConfigError, "is a file"),
                                                ("x" * 300, ConfigError, "of 300 bytes"),
                                                ("afile/sub", WriteError, "cannot write in")])
def test_extract_out_that_cannot_hold_stores_is_one_line(tmp_path, name, error, message):
    """`extract --out` a file, a 300-byte name or a path under a file: raw OS errors before."""
    (tmp_path / "afile").write_text("x")
    with pytest.raises(error, match=message):
        extract_to_stores([small_case()], WordTagger(), tmp_path / name)


def test_dask_scheduler_malformed_or_closed_is_one_line(monkeypatch):
    """--dask-scheduler at a closed port or a malformed address was a traceback (OSError, ValueError)."""
    pytest.importorskip("dask.distributed")
    from taggraph.runs import dask_backend as module
    monkeypatch.setattr(module, "CONNECT_TIMEOUT", "1s")
    with pytest.raises(ConfigError, match="invalid address"):
        with module.dask_backend("not an address::"):
            pass
    with pytest.raises(ServerError, match="tcp://127.0.0.1:1: cannot connect"):
        with module.dask_backend("tcp://127.0.0.1:1"):
            pass


def test_dask_client_whose_io_loop_never_starts_is_one_line(monkeypatch):
    """distributed asserts when its client thread has not started within 10 s (seen on a starved CPU)."""
    distributed = pytest.importorskip("dask.distributed")
    from taggraph.runs import dask_backend as module

    def starved(*args, **kwargs):
        raise AssertionError
    monkeypatch.setattr(distributed, "Client", starved)
    with pytest.raises(ServerError, match="tcp://127.0.0.1:8786: cannot connect .*IO loop did not start"):
        with module.dask_backend("tcp://127.0.0.1:8786"):
            pass


def test_data_that_is_no_regular_file_or_too_large_is_refused(tmp_path, monkeypatch):
    """`--data /dev/zero` read until memory ran out; a pipe would hang; a gzip may unpack without bound."""
    from taggraph.datasets import base
    with pytest.raises(DatasetError, match="/dev/zero: not a regular file"):
        load_cases("/dev/zero")
    os.mkfifo(tmp_path / "pipe.json")
    with pytest.raises(DatasetError, match="not a regular file"):
        load_cases(tmp_path / "pipe.json", fmt="longmemeval")
    text = json.dumps([demo_record()]).encode()
    (tmp_path / "d.json.gz").write_bytes(gzip.compress(text))
    (tmp_path / "d.json").write_bytes(text)
    monkeypatch.setattr(base, "MAX_DATA_BYTES", len(text) - 1)
    with pytest.raises(DatasetError, match="gzipped content passes"):
        load_cases(tmp_path / "d.json.gz", fmt="longmemeval")
    with pytest.raises(DatasetError, match="data files are limited to"):
        load_cases(tmp_path / "d.json")
    monkeypatch.setattr(base, "MAX_DATA_BYTES", len(text))
    assert len(load_cases(tmp_path / "d.json.gz")) == 1


@pytest.mark.parametrize("command, out", [
    (["explain", "--question", "ana-q1", "--methods", "BM25"], "questions.jsonl"),  # the data file itself
    (["graph", "--question", "ana-q1", "--methods", "BM25"], "page.html"),  # a new file inside the data folder
    (["bench", "--methods", "BM25"], "run"),
    (["vocab"], "vocab"),
    (["extract"], "stores"),
])
def test_no_command_writes_where_it_reads_its_data(tmp_path, command, out):
    """`explain --out data.json` overwrote the data with its page (exit 0); `graph`, `bench`, `vocab` and
    `extract` wrote into the data's folder, whose checksum then no longer matched the runs made before."""
    from typer.testing import CliRunner

    from taggraph.cli import app

    data = tmp_path / "g"
    shutil.copytree(Path(__file__).parents[1] / "fixtures" / "generic", data)
    before = {p.name: p.read_bytes() for p in data.iterdir()}
    res = CliRunner().invoke(app, [command[0], "--data", str(data), "--extractor", "none", *command[1:],
                                   "--out", str(data / out)])
    assert res.exit_code == 2, res.output
    assert f"{data / out}: is inside {data}, an input of" in res.output and "inputs are never outputs" in res.output
    assert {p.name: p.read_bytes() for p in data.iterdir()} == before


def test_the_data_a_run_folder_records_is_an_input_too(tmp_path):
    """score, fuse and compare read the data a run folder's run.json records: with --force they replaced a run
    folder holding that data (deleted), and wrote into the data's folder without it."""
    import shutil

    from typer.testing import CliRunner

    from taggraph.cli import app

    holder = tmp_path / "holder"
    shutil.copytree(Path(__file__).parents[1] / "fixtures" / "generic", holder / "d")
    run = tmp_path / "run"
    runner = CliRunner()
    assert runner.invoke(app, ["bench", "--data", str(holder / "d"), "--methods", "BM25", "--extractor", "none",
                               "--miss-pages", "0", "--out", str(run)]).exit_code == 0
    (holder / "run.json").write_text((run / "run.json").read_text())  # holder looks like a run folder
    for command in (["score", str(run)], ["fuse", f"{run}:BM25", f"{run}:BM25", "--method", "combsum"],
                    ["compare", str(run), str(run)]):
        for out in (holder, holder / "d" / "out"):
            res = runner.invoke(app, [*command, "--out", str(out), "--force"])
            assert res.exit_code == 2 and "inputs are never outputs" in res.output, (command, out, res.output)
    assert (holder / "d" / "turns.jsonl").is_file() and not (holder / "d" / "out").exists()


def test_explain_and_graph_never_overwrite_the_file_beside_the_one_given(tmp_path):
    """`--data g/turns.jsonl --out g/questions.jsonl`: the generic format reads both files."""
    import shutil

    from typer.testing import CliRunner

    from taggraph.cli import app

    data = tmp_path / "g"
    shutil.copytree(Path(__file__).parents[1] / "fixtures" / "generic", data)
    before = (data / "questions.jsonl").read_bytes()
    for command in ("explain", "graph"):
        res = CliRunner().invoke(app, [command, "--data", str(data / "turns.jsonl"), "--question", "ana-q1",
                                       "--extractor", "none", "--out", str(data / "questions.jsonl")])
        assert res.exit_code == 2 and "an input of" in res.output, res.output
    assert (data / "questions.jsonl").read_bytes() == before


def test_score_says_when_a_run_folder_ran_on_other_data(tmp_path):
    """`score RUN --data OTHER` judged the run against other gold without a word (MRR 0.867 for 1.0)."""
    import shutil

    from typer.testing import CliRunner

    from taggraph.cli import app

    for name in ("a", "b"):
        shutil.copytree(Path(__file__).parents[1] / "fixtures" / "generic", tmp_path / name)
    questions = tmp_path / "b" / "questions.jsonl"
    questions.write_text(questions.read_text().replace('"gold_sessions": ["a3"]', '"gold_sessions": ["a2"]'))
    runner = CliRunner()
    assert runner.invoke(app, ["bench", "--data", str(tmp_path / "a"), "--methods", "BM25", "--extractor", "none",
                               "--miss-pages", "0", "--out", str(tmp_path / "run")]).exit_code == 0
    res = runner.invoke(app, ["score", str(tmp_path / "run"), "--data", str(tmp_path / "b"),
                              "--out", str(tmp_path / "scored")])
    assert res.exit_code == 0 and "ran on other data" in res.output and "judged against this data's gold" in res.output
