"""Every `taggraph explain` command compare.html prints runs as printed, a user's own method included."""

import json
import os
import shlex
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest
from typer.testing import CliRunner

from taggraph.cli import app
from taggraph._infra.config import DEMO_DATA
from taggraph.datasets import load_dataset
from taggraph.runs.bench import run_bench
from taggraph.runs.folders import data_record, save_bench

runner = CliRunner()
REPO = Path(__file__).resolve().parents[2]
USER_METHOD = '''
from taggraph.methods.bm25 import BM25


class RecencyTfidf(BM25):
    """A user's own method: BM25 under another name, enough to be a class taggraph does not know by name."""
'''


class Commands(HTMLParser):
    """The <pre> texts (commands) of the page, and the text of the explain cells that hold no command."""

    def __init__(self):
        super().__init__()
        self.commands, self.in_pre = [], False

    def handle_starttag(self, tag, attrs):
        if tag == "pre":
            self.commands.append("")
            self.in_pre = True

    def handle_endtag(self, tag):
        self.in_pre = self.in_pre and tag != "pre"

    def handle_data(self, data):
        if self.in_pre:
            self.commands[-1] += data


COMPARE = ["compare", "--explain-pages=0"]  # every changed question shows its command, none gets a page


def page_commands(out: Path) -> list[str]:
    parser = Commands()
    parser.feed((out / "compare.html").read_text())
    return list(dict.fromkeys(parser.commands))


def run_as_printed(command: str, cwd: Path) -> subprocess.CompletedProcess:
    """`command` in a shell-like way: split as a shell does, `taggraph` being this checkout's CLI."""
    args = shlex.split(command)
    assert args[0] == "taggraph", command
    env = {**os.environ, "PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1", "TQDM_DISABLE": "1"}
    return subprocess.run([sys.executable, "-c", "from taggraph.cli import app; app()", *args[1:]], cwd=cwd,
                          env=env, capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def user_runs(tmp_path_factory):
    """A folder holding the user's module and two demo runs of BM25 and the user's RecencyTfidf
    (`recency_methods:RecencyTfidf`), the second with k1 = 5 for both."""
    from taggraph.methods import registry

    home = tmp_path_factory.mktemp("user")
    (home / "recency_methods.py").write_text(USER_METHOD)
    sys.path.insert(0, str(home))
    registered = registry.METHODS.registered_here()
    try:
        cases = load_dataset(DEMO_DATA)
        methods = ["BM25", "recency_methods:RecencyTfidf"]
        base = save_bench(run_bench(cases, methods, extractor="none", backend=None), home / "base",
                          data_record(DEMO_DATA))
        tuned = save_bench(run_bench(cases, methods, extractor="none", backend=None,
                                     method_params={"BM25": {"k1": 5.0}, "RecencyTfidf": {"k1": 5.0}}),
                           home / "tuned", data_record(DEMO_DATA))
    finally:
        sys.path.remove(str(home))
        # the method came from a folder only this fixture knows: no later test (Dask workers) may be told of it
        registry.METHODS._registered.clear()
        registry.METHODS.restore(registered)
    return home, base, tuned


def with_origin(run: Path, method: str, origin: str) -> None:
    """Record `origin` as `method`'s module:Class in `run`'s run.json, as a run of a user's method does."""
    record = json.loads((run / "run.json").read_text())
    record["config"]["methods"][method]["origin"] = origin
    (run / "run.json").write_text(json.dumps(record))


@pytest.mark.slow
def test_every_printed_command_runs_as_printed(user_runs, tmp_path):
    home, base, tuned = user_runs
    for run in (base, tuned):
        with_origin(run, "RecencyTfidf", "recency_methods:RecencyTfidf")
    out = tmp_path / "cmp"
    res = runner.invoke(app, [*COMPARE, str(base), str(tuned), "--out", str(out)])
    assert res.exit_code == 0, res.output
    commands = page_commands(out)
    assert any("--methods recency_methods:RecencyTfidf " in c for c in commands)
    assert any("--methods BM25 " in c for c in commands)
    for command in commands:
        done = run_as_printed(command, home)
        assert done.returncode == 0, f"{command}\n{done.stderr}"
        page = home / shlex.split(command)[-1]
        assert page.is_file() and "<html" in page.read_text()[:200].lower(), command


def test_a_method_known_only_by_its_class_name_gets_no_command_that_fails(user_runs, tmp_path):
    home, base, tuned = user_runs
    for run in (base, tuned):
        record = json.loads((run / "run.json").read_text())
        record["config"]["methods"]["RecencyTfidf"].pop("origin", None)
        (run / "run.json").write_text(json.dumps(record))
    out = tmp_path / "cmp"
    res = runner.invoke(app, [*COMPARE, str(base), str(tuned), "--pair", "RecencyTfidf=RecencyTfidf",
                              "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert page_commands(out) == []  # no `--methods RecencyTfidf`, which fails with "unknown method"
    page = (out / "compare.html").read_text()
    assert "RecencyTfidf was registered in Python" in page and "package.module:Class" in page


def test_a_changed_question_with_a_page_in_one_run_gets_the_command_for_the_other(user_runs, tmp_path):
    """The base run has the question's explain page, the tuned one (k1 = 5) none: the cell links the page and prints
    the command that writes the tuned run's, named by run, and that command runs as printed."""
    import pandas as pd

    home, base, tuned = user_runs
    first = tmp_path / "first"
    assert runner.invoke(app, [*COMPARE, str(base), str(tuned), "--pair", "BM25=BM25", "--out", str(first)]).exit_code == 0
    questions = pd.read_csv(first / "questions.csv")
    changed = questions[questions["RR_a"] != questions["RR_b"]]["question_id"].iloc[0]
    page = base / "misses" / f"{changed}.explain.html"
    page.parent.mkdir(exist_ok=True)
    page.write_text("<html><body>base's page</body></html>")
    try:
        out = tmp_path / "cmp"
        res = runner.invoke(app, [*COMPARE, str(base), str(tuned), "--pair", "BM25=BM25", "--out", str(out)])
        assert res.exit_code == 0, res.output
        html_page = (out / "compare.html").read_text()
        row = next(r for r in html_page.split("<tr>") if f"<code>{changed}</code>" in r)
        assert "explain (" in row and "no page for " in row and "--param" in row
        [command] = [c for c in page_commands(out) if changed in c]
        done = run_as_printed(command, home)
        assert done.returncode == 0, f"{command}\n{done.stderr}"
    finally:
        page.unlink()


def test_a_generic_past_run_gets_commands_that_explain_the_history_it_ran_over(tmp_path):
    """A run over --format generic-past (a format chosen by name only: detection reads the folder as generic,
    keeping the session dated after the questions) prints explain commands that name the format, and each, run
    as printed, explains the run's history (2 notes, not 3) with each method's gold session at the run's rank."""
    import re

    import pandas as pd

    data = tmp_path / "past"
    data.mkdir()
    turns = [("s1", "2024-01-05", "I adopted a beagle puppy called Pixel."),
             ("s2", "2024-02-01", "I signed up for the Lisbon half marathon."),
             ("s3", "2024-09-01", "My beagle puppy now chews the marathon shoes I bought for Lisbon.")]
    (data / "turns.jsonl").write_text("".join(json.dumps({"history": "h", "session": s, "date": d, "role": "user",
                                                          "text": t}) + "\n" for s, d, t in turns))
    questions = [("q1", "Which race in Lisbon did I sign up for?", "s2"), ("q2", "What breed is my puppy?", "s1")]
    (data / "questions.jsonl").write_text("".join(json.dumps({"id": q, "history": "h", "question": text,
                                                              "date": "2024-05-01", "gold_sessions": [gold]}) + "\n"
                                                  for q, text, gold in questions))
    run, out = tmp_path / "run", tmp_path / "cmp"
    res = runner.invoke(app, ["bench", "--data", str(data), "--format", "generic-past", "--methods",
                              "BM25,AdaptiveGraph", "--extractor", "none", "--miss-pages", "0", "--out", str(run)])
    assert res.exit_code == 0, res.output
    res = runner.invoke(app, [*COMPARE, str(run), "--pair", "BM25=AdaptiveGraph", "--out", str(out)])
    assert res.exit_code == 0, res.output
    rankings = pd.read_csv(run / "rankings.csv").set_index(["question_id", "method"])["RR"]
    commands = page_commands(out)
    assert len(commands) == 2 and all(" --format generic-past " in c for c in commands), commands
    for command in commands:
        done = run_as_printed(command, tmp_path)
        assert done.returncode == 0, f"{command}\n{done.stderr}"
        args = shlex.split(command)
        question = args[args.index("--question") + 1]
        assert "store: 2 notes" in done.stdout, done.stdout
        for method in ("BM25", "AdaptiveGraph"):
            rank = round(1 / rankings[(question, method)])
            assert re.search(rf"^{method}: session rank {rank} ", done.stdout, re.M), (command, done.stdout)
