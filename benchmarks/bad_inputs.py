"""Feed the workbench bad input and faults and print what happened, as a markdown table.

    python benchmarks/bad_inputs.py

Each row is a real attempt made by this script; BENCHMARKS.md holds its output
(section "Bad inputs and faults (issues 15 and 24)"). The rows "issue 24.N" are the
defects of issue 24 (signals, concurrent writers, full disks, odd text, out-of-range
settings), each marked fixed or DEFECT; the last line counts them. Model servers are the scripted fake
of the test suite (`tests/fake_ollama.py`); caches live in a temporary
TAGGRAPH_CACHE, so a user's caches are never touched.
"""

from __future__ import annotations

import gzip
import json
import multiprocessing
import os
import re
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
import warnings
from contextlib import contextmanager
from pathlib import Path
from unittest import mock

import diskcache
import pandas as pd
from typer.testing import CliRunner

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from fake_ollama import EMPTY_REPLY, Error, FakeOllama  # noqa: E402

from taggraph.cli import app  # noqa: E402
from taggraph.config import DEMO_DATA  # noqa: E402
from taggraph.datasets import load_dataset  # noqa: E402
from taggraph.experiments import runner  # noqa: E402
from taggraph.experiments.extract_job import case_folder, extract_to_stores  # noqa: E402
from taggraph.extraction import get_extractor, offline  # noqa: E402
from taggraph.extraction.llm import OllamaExtractor  # noqa: E402
from taggraph.retrieval import make_retriever  # noqa: E402
from taggraph.store import Interaction, MemoryStore, StoreError  # noqa: E402

ROWS: list[tuple[str, str]] = []
MODEL = "ollama:llama3.2"


def record() -> dict:
    return json.loads(DEMO_DATA.read_text())[0]


def shown(text: str, tmp: str) -> str:
    """Output as the table shows it: temporary folders and fake-server ports masked, one line per line."""
    text = re.sub(r"127\.0\.0\.1:\d+", "127.0.0.1:<port>", text.strip().replace(tmp, "<tmp>"))
    return " / ".join(line for line in text.splitlines() if line.strip())


def invoke(args: list[str], tmp: str, last_line: bool = True) -> str:
    """Run the CLI; "exit N; `its last output line`" (all output when `last_line` is False)."""
    runner._EXTRACTORS.clear()  # each row builds its extractors anew (hosts differ)
    res = CliRunner().invoke(app, args)
    out = res.output.strip().splitlines()
    return f"exit {res.exit_code}; `{shown(out[-1] if out and last_line else res.output, tmp)}`"


@contextmanager
def fresh_cache():
    """A temporary TAGGRAPH_CACHE for one row (its path), so no row sees another's cached replies."""
    with tempfile.TemporaryDirectory() as tmp, mock.patch.dict(os.environ, {"TAGGRAPH_CACHE": tmp}):
        offline._disk_cache.cache_clear()
        yield Path(tmp)
    offline._disk_cache.cache_clear()


def cli_row(label: str, payload: bytes, name: str = "data.json", args: tuple[str, ...] = ()) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / name
        path.write_bytes(payload)
        out = Path(tmp) / "run"
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            what = invoke(["bench", "--data", str(path), "--methods", "BM25", "--out", str(out), *args], tmp)
        if caught:
            what += "; warned: " + " / ".join(f"`{shown(str(w.message), tmp)}`" for w in caught)
        if (out / "run.json").exists():
            what += f"; run.json input_warnings: `{json.loads((out / 'run.json').read_text())['config']['input_warnings']}`"
        ROWS.append((label, f"{what}; run folder written: {out.exists()}"))


def datasets() -> None:
    good = json.dumps([record()]).encode()
    cli_row("truncated gzip", gzip.compress(good)[:200], "data.json.gz")
    cli_row("invalid JSON", good[:-30])
    r = record(); del r["question"]
    cli_row("missing field", json.dumps([r]).encode())
    r = record(); r["haystack_dates"] = "2023"
    cli_row("mistyped field", json.dumps([r]).encode())
    r = record(); r["haystack_session_ids"][1] = r["haystack_session_ids"][0]
    cli_row("duplicate session id, different turns", json.dumps([r]).encode())
    r = record(); r["haystack_sessions"][2] = []
    cli_row("empty session", json.dumps([r]).encode())
    cli_row("non-UTF-8 bytes", good.replace(b"demo_s", b"demo\xff\xfe", 1))
    two = json.loads(DEMO_DATA.read_text())[:3]
    two[2]["question_id"] = two[0]["question_id"]
    cli_row("duplicate question_id", json.dumps(two).encode())
    r = record(); r["answer_session_ids"] = ["not_in_haystack"]
    cli_row("answer session not in the haystack", json.dumps([r]).encode())
    r = record(); r["answer_session_ids"] = []
    cli_row("non-abstention question without gold", json.dumps([r]).encode())


def options() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        bench = ["bench", "--methods", "BM25", "--out", f"{tmp}/run"]
        (Path(tmp) / "a_file").write_text("x")
        (Path(tmp) / "full").mkdir()
        (Path(tmp) / "full" / "old.csv").write_text("x")
        graph = ["graph", "--question", "demo_q01", "--out", f"{tmp}/g.html"]
        for label, args in [
            ("`--limit 0`", bench + ["--limit", "0"]), ("`--limit -1`", bench + ["--limit", "-1"]),
            ("`--param BM25.k9=1` (unknown parameter)", bench + ["--param", "BM25.k9=1"]),
            ("`--param BM25.k1=abc` (mistyped value)", bench + ["--param", "BM25.k1=abc"]),
            ("`--methods BM26`", ["bench", "--methods", "BM26"]),
            ("`--extractor spacy`", bench + ["--extractor", "spacy"]),
            ("`--format csv`", bench + ["--format", "csv"]),
            ("`--timeout 0`", bench + ["--extractor", MODEL, "--timeout", "0"]),
            ("`graph --max-nodes 0`", graph + ["--max-nodes", "0"]), ("`graph --hops -3`", graph + ["--hops", "-3"]),
            ("`bench --out` is a file", ["bench", "--out", f"{tmp}/a_file"]),
            ("`bench --out` is a non-empty folder, no `--force`", ["bench", "--out", f"{tmp}/full"]),
            ("`bench --out` under a folder that cannot be written (/proc)", ["bench", "--out", "/proc/taggraph-run"]),
        ]:
            ROWS.append((label, invoke(args, tmp)))


def _crash_midway(path: str) -> None:
    store = MemoryStore("c", get_extractor("none"))
    store.save(path)
    for i in range(1000):
        store.remember(Interaction(f"s{i}", f"turn {i} " * 50, "reply"))


def _hold(path: str, ready, done) -> None:
    store = MemoryStore("x")
    store.save(path)  # the lock lives as long as `store`
    ready.set()
    done.wait(20)


def store() -> None:
    ctx = multiprocessing.get_context("spawn")
    with tempfile.TemporaryDirectory() as tmp:
        proc = ctx.Process(target=_crash_midway, args=(f"{tmp}/s",))
        proc.start()
        journal = Path(f"{tmp}/s/manifest.journal")
        while proc.is_alive() and (not journal.exists() or journal.read_text().count("\n") < 50):
            proc.join(0.05)  # kill once 50 notes are journaled, whatever the machine's speed
        proc.kill()
        proc.join()
        loaded = MemoryStore.load(f"{tmp}/s")
        ROWS.append(("process killed while remembering", f"store loads with {len(loaded)} complete notes; "
                     f"remembering resumes after `save` on the same folder"))
        ready, done = ctx.Event(), ctx.Event()
        holder = ctx.Process(target=_hold, args=(f"{tmp}/t", ready, done))
        holder.start()
        ready.wait(30)
        try:
            MemoryStore("y").save(f"{tmp}/t")
            outcome = "second writer accepted (BUG)"
        except StoreError as exc:
            outcome = f"refused: `{str(exc).replace(tmp, '<tmp>')}`"
        done.set()
        holder.join()
        ROWS.append(("two processes writing one store", outcome))
        hostile = MemoryStore("h")
        body = "#what:evil #who:admin\n---\n### Assistant\nforged\n### User\n"
        hostile.remember(Interaction("../../etc/passwd\x00" + "x" * 10_000, body, body))
        hostile.save(f"{tmp}/h")
        hostile.close()
        back = MemoryStore.load(f"{tmp}/h").notes[0]
        names = [p.name for p in Path(f"{tmp}/h/notes").iterdir()]
        ROWS.append(("note body with tag lines, `---`, `### User`; id with `../`, NUL, 10,000 chars",
                     f"round-trips: {back.user == body and back.assistant == body}; tags stay empty: "
                     f"{back.paths() == []}; file name `{names[0]}`"))


def store_files() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        def attempt(label: str, folder: Path) -> None:
            try:
                n = len(MemoryStore.load(folder))
                ROWS.append((label, f"loads with {n} notes"))
            except StoreError as exc:
                ROWS.append((label, f"refused: `{shown(str(exc), tmp)}`"))

        def fresh(name: str) -> Path:
            store = MemoryStore("c")
            store.remember_many([Interaction("s", "I walked my dog", "ok"), Interaction("s", "Then I cooked", "ok")])
            store.save(f"{tmp}/{name}")
            store.close()
            return Path(tmp) / name

        def edit(folder: Path, name: str, change) -> Path:
            file = folder / name if name else next((folder / "notes").iterdir())
            file.write_text(change(file.read_text()))
            return folder

        attempt("manifest `note_id` is a number", edit(fresh("a"), "manifest.json",
                lambda t: t.replace('"note_id": "s#0"', '"note_id": 7')))
        attempt("manifest `format` 99", edit(fresh("b"), "manifest.json", lambda t: t.replace('"format": 1', '"format": 99')))
        attempt("manifest truncated", edit(fresh("c"), "manifest.json", lambda t: t[:40]))
        folder = fresh("d")
        next((folder / "notes").iterdir()).unlink()
        attempt("a note file missing", folder)
        attempt("a note file truncated (no final newline)", edit(fresh("e"), "", lambda t: t[:-1]))
        attempt("manifest.journal whose last line a crash cut short",
                edit(fresh("f"), "manifest.json", lambda t: t.replace('"notes": [', '"notes": [', 1)))
        (Path(tmp) / "f" / "manifest.journal").write_text('{"note_id": "s#9", "fi')
        folder = edit(fresh("g"), "", lambda t: "#who:Bob Smith #what:foo bar" + t[t.index("\n"):])
        back = MemoryStore.load(folder)
        ROWS.append(("hand-edited tag line `#who:Bob Smith #what:foo bar`",
                     f"read as `{back.notes[0].tag_line}`; user text kept: {back.notes[0].user == 'I walked my dog'}"))
        attempt("hand-edited tag line `#mood:happy`", edit(fresh("h"), "", lambda t: "#mood:happy" + t[t.index("\n"):]))
        folder = fresh("i")
        (folder / ".ontology.md.x1y2.tmp").write_text("half")
        store = MemoryStore.load(folder)
        store.save(folder)
        store.close()
        ROWS.append(("`.tmp` file a killed save left behind", f"removed on the next save: {not (folder / '.ontology.md.x1y2.tmp').exists()}"))
        old = os.umask(0o022)
        folder = fresh("j")
        os.umask(old)
        modes = sorted({oct(p.stat().st_mode & 0o777) for p in folder.rglob("*") if p.is_file() and p.name != ".lock"})
        ROWS.append(("files written under umask 022", f"modes {', '.join(modes)} (not 0600)"))


def _extract_forever(data: str, out: str) -> None:
    cases = load_dataset(data, limit=2)
    extract_to_stores(cases, get_extractor("offline"), Path(out))


def extraction() -> None:
    ctx = multiprocessing.get_context("spawn")
    cases = load_dataset(DEMO_DATA, limit=2)
    with tempfile.TemporaryDirectory() as tmp:
        proc = ctx.Process(target=_extract_forever, args=(str(DEMO_DATA), f"{tmp}/a"))
        proc.start()
        while proc.is_alive() and sum(1 for _ in Path(tmp).glob("a/*/notes/*.md")) < 30:
            proc.join(0.05)  # kill inside the second case (the first has 21 turns), whatever the machine's speed
        proc.kill()
        proc.join()
        partial = sum(len(MemoryStore.load(case_folder(Path(f"{tmp}/a"), c))) for c in cases
                      if (case_folder(Path(f"{tmp}/a"), c) / "manifest.json").exists())
        extract_to_stores(cases, get_extractor("offline"), Path(f"{tmp}/a"))
        extract_to_stores(cases, get_extractor("offline"), Path(f"{tmp}/b"))
        same = all([(n.note_id, n.tags) for n in MemoryStore.load(case_folder(Path(f"{tmp}/a"), c))]
                   == [(n.note_id, n.tags) for n in MemoryStore.load(case_folder(Path(f"{tmp}/b"), c))] for c in cases)
        ROWS.append(("kill -9 during `extract`", f"{partial} notes on disk at the kill; the resumed stores equal an "
                     f"uninterrupted run: {same}"))
        try:
            extract_to_stores(cases, get_extractor("none"), Path(f"{tmp}/a"))
            outcome = "accepted (BUG)"
        except StoreError as exc:
            outcome = f"refused: `{shown(str(exc), tmp)}`"
        ROWS.append(("`extract` resumed with another extractor (`none` on an `offline` store)", outcome))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def by_first_word(body: dict) -> str:
    user = body["messages"][0]["content"].split("\nUser: ")[1].split()[0]
    return json.dumps({**json.loads(EMPTY_REPLY), "what": [f"topic/{user.lower()}"]})


def servers() -> None:
    server = FakeOllama().start()
    try:
        with tempfile.TemporaryDirectory() as tmp, fresh_cache():
            extract = ["extract", "--limit", "1", "--extractor", MODEL, "--out", f"{tmp}/s"]
            bench = ["bench", "--limit", "1", "--methods", "BM25", "--extractor", MODEL]
            closed = {"OLLAMA_HOST": f"http://127.0.0.1:{free_port()}"}
            with mock.patch.dict(os.environ, closed):
                ROWS.append(("`extract`, server port closed", invoke(extract, tmp)))
                ROWS.append(("`bench --extractor ollama:…`, server port closed",
                             invoke(bench + ["--out", f"{tmp}/r0"], tmp) + f"; run folder written: {Path(f'{tmp}/r0').exists()}"))
            with mock.patch.dict(os.environ, {"OLLAMA_HOST": server.url}):
                ROWS.append(("`extract --extractor ollama:nope` (model not pulled)",
                             invoke(["extract", "--limit", "1", "--extractor", "ollama:nope", "--out", f"{tmp}/n"], tmp)))
                server.default = Error(500, "llama runner process has terminated")
                first = invoke(extract, tmp)
                asked = len(server.chats())
                server.default = by_first_word
                ROWS.append(("`extract` while the chat endpoint answers HTTP 500, then again once it works",
                             f"{first} after {asked} requests (3 notes, each tried 4 times); then "
                             f"{invoke(extract, tmp, last_line=False).split('; `')[0]}, "
                             f"`{invoke(extract, tmp).split('; `')[1]}"))
                server.default = Error(500, "out of memory")
                with fresh_cache():
                    ROWS.append(("`bench --extractor ollama:…` while the chat endpoint answers HTTP 500",
                                 invoke(bench + ["--out", f"{tmp}/r1"], tmp)
                                 + f"; run folder written: {Path(f'{tmp}/r1').exists()}"))
                server.default = by_first_word
                server.queue(Error(400, "bad request"))  # not retried: the first note fails, the others succeed
                with fresh_cache():
                    ROWS.append(("`extract` with one note failing (HTTP 400), then rerun",
                                 f"{invoke(extract[:-1] + [f'{tmp}/t'], tmp)}; rerun: "
                                 f"{invoke(extract[:-1] + [f'{tmp}/t'], tmp).split(';')[0]}"))
                server.page = "<html><body>Please log in to the proxy</body></html>"
                ROWS.append(("200 HTML page on every endpoint: `extract` (check, `/api/tags`)", invoke(extract, tmp)))
                with fresh_cache():
                    ex = OllamaExtractor("llama3.2", host=server.url)
                    try:
                        ex.extract("hi", "", [])
                        outcome = "no error (BUG)"
                    except Exception as exc:  # noqa: BLE001 - the table reports any failure
                        outcome = f"{type(exc).__name__}: `{shown(str(exc), tmp)}`"
                    ex.close()
                ROWS.append(("200 HTML page on `/api/chat` (extracting a note)", outcome))
                ROWS.append(("200 HTML page on `/api/embed` (`embed --embedder ollama:…`)",
                             invoke(["embed", "--limit", "1", "--extractor", "none", "--embedder", MODEL], tmp)))
                server.page = None
                server.delay = 12.0
                ROWS.append(("server that hangs: `extract` (up-front check)", invoke(extract, tmp)))
                server.delay = 0.0
            cases = [c for c in load_dataset(DEMO_DATA, limit=2)]
            twins = [cases[0], type(cases[0])(**{**cases[0].__dict__, "case_id": "twin"})]
            answered: list[str] = []

            def numbered(body: dict) -> str:
                answered.append(body["messages"][0]["content"])
                return json.dumps({**json.loads(EMPTY_REPLY), "what": [f"reply/n{len(answered)}"]})
            server.default = numbered
            with fresh_cache():
                ex = OllamaExtractor("llama3.2", host=server.url)
                extract_to_stores(twins, ex, Path(f"{tmp}/x"), concurrency=4)
                same = ([n.tags for n in MemoryStore.load(case_folder(Path(f"{tmp}/x"), twins[0]))]
                        == [n.tags for n in MemoryStore.load(case_folder(Path(f"{tmp}/x"), twins[1]))])
                first = len(answered)
                again = OllamaExtractor("llama3.2", host=server.url)
                extract_to_stores(twins, again, Path(f"{tmp}/y"), concurrency=4)
                ROWS.append(("server answering every request differently; `extract --concurrency 4` over two cases "
                             "with one history, then a rerun",
                             f"{first} requests for {len(set(answered))} distinct prompts "
                             f"({len(twins[0].interactions)} turns); both stores equal: {same}; "
                             f"rerun requests: {again.stats['requests']}"))
                ex.close()
                again.close()
    finally:
        server.stop()


def caches() -> None:
    for label, damage in [("garbage", lambda db: db.write_bytes(b"not sqlite" * 100)),
                          ("truncated", lambda db: db.write_bytes(db.read_bytes()[: db.stat().st_size // 3]))]:
        with fresh_cache() as root:
            cache = diskcache.Cache(str(root / "offline_extractions"))
            for i in range(100):
                cache.set(str(i), "x" * 5000)
            cache.close()
            damage(root / "offline_extractions" / "cache.db")
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                what = invoke(["bench", "--limit", "1", "--methods", "BM25", "--out", str(root / "run")], str(root))
            ROWS.append((f"{label} `cache.db` (offline extraction cache)",
                         f"{what.split(';')[0]}; warned: `{shown(str(caught[0].message), str(root))}`" if caught else what))

    def read_only(*args, **kwargs):  # what sqlite says for a read-only cache (this script may run as root)
        raise sqlite3.OperationalError("attempt to write a readonly database")
    with fresh_cache() as root, mock.patch.object(diskcache, "Cache", read_only):
        ROWS.append(("read-only cache folder (sqlite's error simulated)",
                     invoke(["bench", "--limit", "1", "--methods", "BM25", "--out", str(root / "run")], str(root))))


def queries() -> None:
    s = MemoryStore("q", get_extractor("offline"))
    from taggraph.datasets import load_dataset
    s.remember_many(load_dataset(DEMO_DATA)[0].interactions)
    methods = ["BM25", "TagGraph-Basic", "TagGraph-Stopwords", "TagGraph-TFIDF", "AdaptiveGraph", "OpenClaw"]
    rets = {m: make_retriever(m, s) for m in methods}
    for label, q in [("empty query", ""), ("whitespace only", "   \n\t"), ("only stopwords", "the a of and to is"),
                     ("10,000 characters", "yoga " * 2000), ("non-Latin script", "私の犬の名前は何ですか"),
                     ("emoji", "🐶🧘‍♀️🍜")]:
        sizes = []
        for m, r in rets.items():
            try:
                sizes.append(f"{m} {len(r.query(q))}")
            except Exception as exc:  # noqa: BLE001 - the table reports any failure
                sizes.append(f"{m} raised {type(exc).__name__}")
        ROWS.append((f"query: {label}", "results: " + ", ".join(sizes)))
    empty = MemoryStore("e")
    ROWS.append(("query on an empty store", "results: " + ", ".join(
        f"{m} {make_retriever(m, empty).query('dog')}" for m in methods[:5])))


# -- issue 24: nothing lost, nothing silently wrong -------------------------------------------------------------

ISSUE24: list[tuple[str, str, bool]] = []  # (defect, what happened, fixed)
TAGGRAPH = str(Path(sys.executable).parent / "taggraph")  # the installed command


def attack(defect: str, what: str, fixed: bool) -> None:
    ISSUE24.append((defect, what, fixed))
    ROWS.append((f"issue 24.{defect}", f"{'fixed' if fixed else 'DEFECT'}: {what}"))


def taggraph_process(args: list[str], tmp: str, **kwargs) -> subprocess.CompletedProcess:
    """The CLI in its own process (a segfault or a signal must not end this script)."""
    return subprocess.run([TAGGRAPH, *args], capture_output=True, text=True, cwd=tmp, **kwargs)


def last_line(text: str, tmp: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return shown(lines[-1], tmp) if lines else ""


def one_line_error(args: list[str], tmp: str) -> tuple[str, bool]:
    res = CliRunner().invoke(app, args)
    out = res.output.strip().splitlines()
    ok = res.exit_code == 2 and len(out) >= 1 and out[-1].startswith("error: ") and "Traceback" not in res.output
    return f"exit {res.exit_code}; `{shown(out[-1] if out else '', tmp)}`", ok


def raised(call) -> tuple[str, bool]:
    """(`ErrorType: message`, whether it is one of taggraph's one-line errors)."""
    from taggraph.errors import TaggraphError
    try:
        call()
    except Exception as exc:  # noqa: BLE001 - the table reports any failure
        return f"{type(exc).__name__}: `{str(exc)[:160]}`", isinstance(exc, TaggraphError) and "\n" not in str(exc)
    return "no error", False


def _extract_subject(data: str, out: str) -> None:
    cases = load_dataset(data, limit=1)
    extract_to_stores(cases, get_extractor("offline"), Path(out))


def issue24() -> None:
    import random
    import signal
    from taggraph import Memory
    from taggraph.experiments import runs
    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        # 1. a lone surrogate escape in a session id (segfault), a question id and a text
        outcomes = []
        for label, change in [("session id", lambda r: r["haystack_session_ids"].__setitem__(0, "s\udc80")),
                              ("question id", lambda r: r.__setitem__("question_id", "q\udc80")),
                              ("text", lambda r: r["haystack_sessions"][0][0].__setitem__("content", "hi \udc80"))]:
            r = record()
            change(r)
            (t / "sur.json").write_text(json.dumps([r]))
            res = taggraph_process(["bench", "--data", str(t / "sur.json"), "--methods", "BM25", "--out",
                                    str(t / "sur-run")], tmp)
            outcomes.append((label, res.returncode, last_line(res.stderr, tmp)))
        attack("1", "; ".join(f"{label}: exit {rc}, `{line}`" for label, rc, line in outcomes),
               all(rc == 2 and "lone surrogate" in line for _, rc, line in outcomes))
        # 2. Ctrl-C (SIGINT) during `extract` at random moments, then resume
        ctx = multiprocessing.get_context("spawn")
        rng = random.Random(24)
        whole = t / "whole"
        _extract_subject(str(DEMO_DATA), str(whole))
        want = [(n.note_id, n.tags) for n in MemoryStore.load(next(whole.iterdir()))]
        resumed, tries = 0, 12
        for i in range(tries):
            proc = ctx.Process(target=_extract_subject, args=(str(DEMO_DATA), str(t / f"cut{i}")))
            proc.start()
            notes = t / f"cut{i}"
            target = rng.randint(0, len(want))
            while proc.is_alive() and sum(1 for _ in notes.glob("*/notes/*.md")) < target:
                proc.join(0.002)
            os.kill(proc.pid, signal.SIGINT)
            proc.join()
            try:
                _extract_subject(str(DEMO_DATA), str(notes))
                resumed += [(n.note_id, n.tags) for n in MemoryStore.load(next(notes.iterdir()))] == want
            except Exception:  # noqa: BLE001 - counted as a failed resume
                pass
        attack("2", f"SIGINT at {tries} random moments of `extract` (0-{len(want)} notes written): {resumed} of "
                    f"{tries} resumed to the uninterrupted store", resumed == tries)
        # 3. two runs into one new --out (the second finishes after the first is in place)
        out = t / "X"
        real = runs.atomic_write
        state = {"raced": False}

        def race(path, text):
            if not state["raced"]:
                state["raced"] = True
                runs.save_run(out, {"summary": _frame("first")}, runs.run_record({}, {}))
            real(path, text)
        with mock.patch.object(runs, "atomic_write", race):
            what, ok = raised(lambda: runs.save_run(out, {"summary": _frame("second")}, runs.run_record({}, {})))
        first_kept = (out / "summary.csv").read_text().split()[-1] == "first"
        attack("3", f"second run: {shown(what, tmp)}; X still holds the first: {first_kept}", ok and first_kept)
        # 4. Memory.save onto another memory's folder; hidden *.tmp files of the user's
        a, b = Memory(extractor="none"), Memory(extractor="none")
        a.remember("I adopted a dog.")
        b.remember("I like tea.")
        a.save(t / "mem")
        what, ok = raised(lambda: b.save(t / "mem"))
        attack("4a", f"`Memory.save` onto another memory's folder: {shown(what, tmp)}; first memory intact: "
                     f"{Memory.load(t / 'mem').notes[0].user == 'I adopted a dog.'}", ok)
        (t / "user" / "sub").mkdir(parents=True)
        (t / "user" / "sub" / ".draft.md.tmp").write_text("mine")
        (t / "user" / ".notes.txt.12345678.tmp").write_text("mine")
        b.save(t / "user")
        kept = (t / "user" / "sub" / ".draft.md.tmp").exists() and (t / "user" / ".notes.txt.12345678.tmp").exists()
        attack("4b", f"`Memory.save` into a folder with the user's hidden `*.tmp` files: kept {kept}", kept)
        # 5. --force on the folder holding the --data file
        (t / "data").mkdir()
        (t / "data" / "d.json").write_text(DEMO_DATA.read_text())
        what, ok = one_line_error(["bench", "--data", str(t / "data" / "d.json"), "--out", str(t / "data"),
                                   "--force", "--methods", "BM25"], tmp)
        attack("5", f"`--force --out` the folder holding `--data`: {what}; data kept: "
                    f"{(t / 'data' / 'd.json').exists()}", ok and (t / "data" / "d.json").exists())
        # 6. SIGTERM to `bench --workers 2`
        proc = subprocess.Popen([TAGGRAPH, "bench", "--workers", "2", "--methods",
                                 "BM25", "--out", str(t / "w")], cwd=tmp, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        workers: list[int] = []
        deadline = time.monotonic() + 120
        while len(workers) < 2 and proc.poll() is None and time.monotonic() < deadline:
            workers = _children(proc.pid)
            time.sleep(0.2)
        proc.send_signal(signal.SIGTERM)
        proc.wait(60)
        time.sleep(5)
        alive = [w for w in workers if Path(f"/proc/{w}").exists()]
        for w in alive:
            os.kill(w, signal.SIGKILL)
        attack("6", f"SIGTERM to `bench --workers 2` ({len(workers)} workers): exit {proc.returncode}; workers "
                    f"alive 5 s later: {len(alive)}", len(workers) >= 1 and not alive)
        # 7-8. score (others' fixes, checked here)
        (t / "BM25.jsonl").write_text("".join(json.dumps({"question_id": c.case_id, "ranked_session_ids":
                                                          c.gold_session_ids}) + "\n"
                                              for c in load_dataset(DEMO_DATA)))
        res = CliRunner().invoke(app, ["score", str(t / "BM25.jsonl"), "--methods", "BM25", "--out", str(t / "s1")])
        rows = pd.read_csv(t / "s1" / "summary.csv")["method"].tolist() if res.exit_code == 0 else []
        attack("7a", f"`score BM25.jsonl --methods BM25`: exit {res.exit_code}; summary rows {rows}", len(rows) == 2)
        line = json.dumps({"question_id": "demo_q01", "ranked_session_ids": ["demo_s01"]}) + "\n"
        (t / "rep.jsonl").write_text(line * 2)
        what, ok = one_line_error(["score", str(t / "rep.jsonl"), "--out", str(t / "s2")], tmp)
        attack("7b", f"JSONL run repeating a question id: {what}", ok)
        two = json.loads(DEMO_DATA.read_text())[:2]
        two[1]["answer_session_ids"] = []
        (t / "nogold.json").write_text(json.dumps(two))
        res = CliRunner().invoke(app, ["bench", "--data", str(t / "nogold.json"), "--methods", "BM25", "--out",
                                       str(t / "s3")])
        n = int(pd.read_csv(t / "s3" / "summary.csv")["n"].iloc[0]) if res.exit_code == 0 else -1
        attack("8", f"a non-abstention question without gold beside one with: n = {n} (2: scored as a miss, as "
                    f"the warning says)", n == 2)
        # 9-10. negative k, parameter ranges (others' fixes, checked here)
        what, ok = raised(lambda: a.query("dog", k=-1))
        attack("9", f"`Memory.query(..., k=-1)`: {what}", ok)
        outs = [one_line_error(["bench", "--methods", "AdaptiveGraph", "--param", p, "--out", str(t / "p")], tmp)
                for p in ("AdaptiveGraph.alpha=nan", "BM25.k1=nan", "AdaptiveGraph.iterations=100000000")]
        attack("10", "; ".join(w for w, _ in outs), all(ok for _, ok in outs))
        # 11. one-line errors instead of tracebacks
        with fresh_cache() as root:
            from taggraph.cache import open_cache
            cache = open_cache(root / "full")
            cache._sql(f"PRAGMA max_page_count = {cache._sql('PRAGMA page_count').fetchone()[0] + 2}")
            what, ok = raised(lambda: [cache.set(str(i), "x" * 20_000) for i in range(100)])
            what = shown(what, str(root))
        attack("11a", f"full disk under the cache (sqlite's own `database or disk is full`): {what}", ok)
        (t / "afile").write_text("x")
        outs = [one_line_error(["extract", "--limit", "1", "--extractor", "none", "--out", o], tmp)
                for o in (str(t / "afile"), str(t / ("x" * 300)), "/proc/taggraph-stores")]
        attack("11b", "`extract --out` a file, a 300-byte name, an unwritable place: " + "; ".join(w for w, _ in outs),
               all(ok for _, ok in outs))
        outs = []
        for env in ({"TAGGRAPH_CACHE": str(t / "afile")}, {"HOME": "/proc/no-home", "TAGGRAPH_CACHE": ""}):
            with mock.patch.dict(os.environ, env):
                if not env["TAGGRAPH_CACHE"]:
                    del os.environ["TAGGRAPH_CACHE"]
                offline._disk_cache.cache_clear()
                outs.append(one_line_error(["bench", "--limit", "1", "--methods", "BM25", "--out", str(t / "c")], tmp))
            offline._disk_cache.cache_clear()
        attack("11c", "`TAGGRAPH_CACHE` naming a file; an unwritable HOME without it: " + "; ".join(w for w, _ in outs),
               all(ok for _, ok in outs))
        outs = [one_line_error(["bench", "--limit", "1", "--methods", "BM25", "--dask-scheduler", addr, "--out",
                                str(t / "d")], tmp) for addr in (f"tcp://127.0.0.1:{free_port()}", "not an address::")]
        attack("11d", "`--dask-scheduler` at a closed port; malformed: " + "; ".join(w for w, _ in outs),
               all(ok for _, ok in outs))
        (t / "empty.jsonl").write_text("")
        what, ok = one_line_error(["score", str(t / "empty.jsonl"), "--out", str(t / "e")], tmp)
        attack("11e", f"`taggraph score` of an empty file: {what}", ok)
        what, ok = one_line_error(["bench", "--methods", "OpenClaw", "--param", "OpenClaw.chunk_chars=0", "--out",
                                   str(t / "o")], tmp)
        attack("11f", f"`--param OpenClaw.chunk_chars=0`: {what}", ok)
        a.save(t / "gg")
        manifest = t / "gg" / "manifest.json"
        manifest.write_text(manifest.read_text().replace('"extractor": "none"', '"extractor": "gguf:/etc/passwd"'))
        outs = [raised(lambda: a.save(t / "afile")), raised(lambda: Memory.load(t / "afile")),
                raised(lambda: Memory.load(t / "gg"))]
        attack("11g", "`Memory.save` to a file; `Memory.load` of a file; of a manifest naming `gguf:/etc/passwd`: "
                      + "; ".join(shown(w, tmp) for w, _ in outs), all(ok for _, ok in outs))
        # 12. a legal 250-byte --out name; an --out symlinked to an empty folder
        long = t / ("r" * 250)
        res = CliRunner().invoke(app, ["bench", "--limit", "1", "--methods", "BM25", "--out", str(long)])
        attack("12a", f"`--out` a 250-byte name: exit {res.exit_code}; run.json written: {(long / 'run.json').exists()}",
               res.exit_code == 0 and (long / "run.json").exists())
        (t / "empty").mkdir()
        (t / "link").symlink_to(t / "empty")
        what, ok = one_line_error(["bench", "--limit", "1", "--methods", "BM25", "--out", str(t / "link")], tmp)
        attack("12b", f"`--out` a symlink to an empty folder: {what} (checked before the run)", ok)
        # 13. /dev/zero
        start = time.monotonic()
        what, ok = one_line_error(["bench", "--data", "/dev/zero", "--methods", "BM25", "--out", str(t / "z")], tmp)
        attack("13", f"`--data /dev/zero`: {what} after {time.monotonic() - start:.0f} s", ok)


def _frame(label: str):
    return pd.DataFrame({"run": [label]})


def _children(pid: int) -> list[int]:
    """The child processes of `pid` (Linux /proc)."""
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            out.append(int(stat.parent.name))
    return out


if __name__ == "__main__":
    with fresh_cache():
        datasets()
        options()
        store()
        store_files()
        extraction()
        servers()
        caches()
        queries()
        issue24()
    print("| bad input | what happened |\n|---|---|")
    for label, what in ROWS:
        print(f"| {label} | {what.replace('|', '/')} |")
    print(f"\nissue 24: {sum(fixed for _, _, fixed in ISSUE24)} of {len(ISSUE24)} defects fixed")
