"""A researcher's own method, written with public names only, runs wherever a built-in one does:
Memory, make_retriever, the bench (workers, Dask), the CLI by package.module:Class or entry point,
the report, the explain and graph pages; contract mistakes fail early with the fix named."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import taggraph as tg
from taggraph._infra.config import DEMO_DATA
from taggraph.datasets import load_dataset
from taggraph.errors import ConfigError
from taggraph.runs.bench import run_bench
from taggraph.methods import check_params, registry
from taggraph.viz.explain import explain_html
from taggraph.viz.graph.page import graph_html

from tests.helpers.methods import USER_METHOD
from tests.helpers.stores import HAND_ROWS, make_store

REPO = Path(__file__).resolve().parents[2]
TAGGRAPH = str(Path(sys.executable).with_name("taggraph"))


@pytest.fixture
def notebook_method(clean_registry):
    """WordOverlap as a notebook defines it: in a namespace no worker can import (pickled by value)."""
    namespace = {"__name__": "a_notebook_cell"}
    exec(compile(USER_METHOD, "cell", "exec", dont_inherit=True), namespace)
    return namespace["WordOverlap"]


def test_user_method_in_memory_explain_and_pages(notebook_method):
    memory = tg.Memory(extractor="none")
    for sid, user, assistant, _ in HAND_ROWS:
        memory.remember(user, assistant, session=sid)
    hits = memory.query("my beagle dog", method="WordOverlap", k=2)
    assert [h.note_id for h in hits] == ["s2#0"]  # only the note sharing a word is reached
    why = memory.explain("my beagle dog", "s2#0", method="WordOverlap")
    assert why.retrieved and why.reason == "ranked 1 of 5 notes: shares beagle, dog"
    assert memory.explain("my beagle dog", "s4#0", method="WordOverlap").reason == "shares no word of the question"
    assert "WordOverlap" in tg.method_names() and memory.retriever("WordOverlap").name == "WordOverlap"
    page = explain_html(memory.store, "my beagle dog", "s2#0", ["BM25", "WordOverlap"])
    assert "shares beagle, dog" in page and "shared words" in page
    retrievers = {"WordOverlap": memory.retriever("WordOverlap")}
    graph = graph_html(memory.store, question="my beagle dog", retrievers=retrievers,
                       results_by_method={"WordOverlap": hits})
    assert "WordOverlap" in graph and "shares beagle, dog" in graph


def test_user_method_runs_in_worker_processes(notebook_method):
    cases = load_dataset(DEMO_DATA)[:4]
    one = run_bench(cases, ["WordOverlap", "BM25"], extractor="none")
    two = run_bench(cases, ["WordOverlap", "BM25"], extractor="none", workers=2)
    cols = ["question_id", "method", "ranked_note_ids", "RR"]
    assert two.rankings[cols].equals(one.rankings[cols])
    assert set(one.rankings["method"]) == {"WordOverlap", "BM25"}
    assert one.config["methods"]["WordOverlap"] == {"method": "WordOverlap", "min_len": 3}


def write_user_module(folder: Path) -> None:
    (folder / "usermethods.py").write_text(USER_METHOD)


def cli(args: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([TAGGRAPH, *args], cwd=cwd, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "TQDM_DISABLE": "1", **env})


def test_cli_takes_module_class_with_workers_and_shows_it_everywhere(tmp_path):
    write_user_module(tmp_path)
    run = cli(["bench", "--methods", "usermethods:WordOverlap,BM25", "--extractor", "none", "--limit", "4",
               "--workers", "2", "--miss-pages", "2", "--out", "run"], tmp_path)
    assert run.returncode == 0, run.stderr
    rankings = pd.read_csv(tmp_path / "run" / "rankings.csv")
    assert set(rankings["method"]) == {"WordOverlap", "BM25"}
    config = json.loads((tmp_path / "run" / "run.json").read_text())["config"]
    assert config["methods"]["WordOverlap"]["min_len"] == 3
    assert "WordOverlap" in (tmp_path / "run" / "report.md").read_text()
    explained = cli(["explain", "--question", "demo_q01", "--methods", "usermethods:WordOverlap", "--extractor",
                     "none", "--param", "WordOverlap.min_len=4"], tmp_path)
    assert explained.returncode == 0, explained.stderr
    assert "WordOverlap:" in explained.stdout
    drawn = cli(["graph", "--question", "demo_q01", "--methods", "usermethods:WordOverlap", "--extractor", "none",
                 "--out", "g.html"], tmp_path)
    assert drawn.returncode == 0 and "WordOverlap" in (tmp_path / "g.html").read_text()


def test_installed_entry_point_is_found_by_name(tmp_path):
    write_user_module(tmp_path)
    dist = tmp_path / "usermethods-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: usermethods\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[taggraph.methods]\nOverlapByEntryPoint = usermethods:WordOverlap\n")
    env = {"PYTHONPATH": str(tmp_path)}
    listed = cli(["methods"], REPO, **env)
    assert "OverlapByEntryPoint" in listed.stdout.split()
    run = cli(["bench", "--methods", "OverlapByEntryPoint", "--extractor", "none", "--limit", "2", "--miss-pages",
               "0", "--out", str(tmp_path / "run")], REPO, **env)
    assert run.returncode == 0, run.stderr
    assert set(pd.read_csv(tmp_path / "run" / "rankings.csv")["method"]) == {"OverlapByEntryPoint"}


def test_cli_refuses_bad_parameters_before_the_run(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from taggraph.cli import app

    monkeypatch.chdir(tmp_path)
    for param, words in [("AdaptiveGraph.alpha=nan", "finite number"), ("AdaptiveGraph.alpha=5", "less than 1"),
                         ("AdaptiveGraph.iterations=100000000", "less than or equal to 1000"),
                         ("BM25.k1=-1", "greater than or equal to 0"), ("BM25.b=1e999", "finite number"),
                         ("TagGraph-Stopwords.stopword_df=-0.1", "greater than 0"),
                         ("OpenClaw.chunk_chars=0", "greater than or equal to 1"),
                         ("AdaptiveGraph.iterations=true", "must be int"), ("BM25.k3=1", "no parameter 'k3'")]:
        run = CliRunner().invoke(app, ["bench", "--methods", "BM25,AdaptiveGraph,TagGraph-Stopwords,OpenClaw",
                                       "--param", param, "--out", "x"])  # in process
        assert run.exit_code == 2 and words in run.stderr, (param, run.stderr)
        assert len(run.stderr.strip().splitlines()) == 1 and not (tmp_path / "x").exists()


def test_parameter_ranges_are_declared_once():
    assert check_params("AdaptiveGraph", {"alpha": 0.5, "iterations": None}) == {"alpha": 0.5, "iterations": None}
    with pytest.raises(ConfigError, match="alpha = nan: Input should be a finite number"):
        check_params("AdaptiveGraph", {"alpha": math.nan})
    with pytest.raises(ConfigError, match="weights.dense = inf"):
        check_params("TagGraph-Fusion", {"weights": {"dense": math.inf}})
    rules = {p["name"]: p["rule"] for p in registry.method("AdaptiveGraph").parameters()}
    assert rules["alpha"] == ">= 0, < 1" and rules["iterations"] == ">= 0, <= 1000" and rules["chronological"] == ""


def test_negative_k_is_an_error(hand_store):
    for method in ["BM25", "TagGraph-Basic", "AdaptiveGraph"]:
        with pytest.raises(ConfigError, match="k must be a positive"):
            tg.make_retriever(method, hand_store).query("dog", k=-1)


class NoDate(tg.Retriever):
    def add(self, note):
        pass

    def score(self, text):
        return {}


class NoScore(tg.Retriever):
    def add(self, note):
        pass


def test_contract_mistakes_fail_at_registration_with_the_fix(clean_registry):
    with pytest.raises(ConfigError, match=r"score must take the keyword asked_on \(def score\(self, text, \*, asked_on=None\)\)"):
        tg.register_method("NoDate", NoDate)
    with pytest.raises(ConfigError, match="must define add\\(note\\) and score"):
        tg.register_method("NoScore", NoScore)
    with pytest.raises(ConfigError, match="not a subclass of taggraph.Retriever"):
        tg.register_method("Plain", dict)
    with pytest.raises(ConfigError, match="no parameter 'k9'"):
        tg.register_method("BadDefault", registry.method("BM25").cls(), k9=1)
    with pytest.raises(ConfigError, match="unknown method 'Nope'; known: BM25, .*package.module:Class"):
        tg.make_retriever("Nope", make_store(HAND_ROWS))
    with pytest.raises(ConfigError, match="cannot import 'nowhere_at_all:Thing'"):
        tg.make_retriever("nowhere_at_all:Thing", make_store(HAND_ROWS))


def test_a_taken_name_needs_replace_but_a_rerun_cell_may_redefine(clean_registry):
    bm25 = registry.method("BM25").cls()
    with pytest.raises(ConfigError, match="'BM25' is taken"):
        tg.register_method("BM25", registry.method("AdaptiveGraph").cls())
    tg.register_method("BM25-k1-2", bm25, k1=2.0)
    assert tg.make_retriever("BM25-k1-2", make_store(HAND_ROWS)).params.k1 == 2.0
    first, second = ({"__name__": "a_notebook_cell"} for _ in range(2))
    exec(compile(USER_METHOD, "cell", "exec", dont_inherit=True), first)
    exec(compile(USER_METHOD, "cell", "exec", dont_inherit=True), second)  # the same cell run again: a new class of the same name and place
    assert registry.method("WordOverlap").cls() is second["WordOverlap"]


def test_the_bring_your_own_blocks_run(clean_registry, monkeypatch, capsys):
    """docs/your-own-work.md, "Bring your own method, data and extractor": every python block, in order, as written."""
    import re
    page = REPO / "docs" / "your-own-work.md"
    section = page.read_text(encoding="utf-8").split("## Bring your own method, data and extractor")[1]
    blocks = re.findall(r"```python\n(.*?)```", section.split("\n## ")[0], re.S)
    assert len(blocks) == 4
    monkeypatch.chdir(REPO)
    scope: dict = {"__name__": "readme"}
    for block in blocks:
        exec(compile(block, str(page), "exec", dont_inherit=True), scope)
    printed = capsys.readouterr().out.splitlines()
    assert printed[0] == "s1#0" and printed[-1] == "['person/priya']"
    assert set(scope["result"].summary["method"]) == {"TagOverlap", "BM25", "AdaptiveGraph"}
    contract = scope["TestTagOverlap"]()  # the method defined in the docs keeps the contract (a worker included)
    for check in (name for name in dir(contract) if name.startswith("test_")):
        getattr(contract, check)()


USER_EXTRACTOR = '''
import taggraph as tg


class Capitals:
    """Tags each capitalized word after the first of the user's turn as who: person/<word>."""

    name = "mystuff:Capitals"  # builds it again by name (a saved store, the report's pages)
    cache_key = "capitals-v1"

    def extract(self, user, assistant, existing_tags):
        words = [w.strip(".,!?").lower() for w in user.split()[1:] if w[:1].isupper()]
        return tg.Extraction(who=[f"person/{w}" for w in words if w.isalpha()])
'''


def test_method_extractor_and_data_from_outside_the_repo_run_through_every_command(tmp_path):
    """A plug-in method end to end: bench --workers 2, compare, explain, graph and the report, public names only."""
    (tmp_path / "mystuff.py").write_text(USER_METHOD + USER_EXTRACTOR)
    data = tmp_path / "mydata"
    data.mkdir()
    for name in ("turns.jsonl", "questions.jsonl"):
        (data / name).write_text((REPO / "tests" / "fixtures" / "generic" / name).read_text())
    common = ["--data", "mydata", "--extractor", "mystuff:Capitals"]
    for out, extra in (("run_a", ["--workers", "2"]), ("run_b", ["--param", "WordOverlap.min_len=5"])):
        run = cli(["bench", *common, "--methods", "mystuff:WordOverlap,BM25", "--out", out, *extra], tmp_path)
        assert run.returncode == 0, run.stderr
    config = json.loads((tmp_path / "run_a" / "run.json").read_text())["config"]
    assert config["extractor"] == "mystuff:Capitals" and "WordOverlap" in config["methods"]
    report = (tmp_path / "run_a" / "report.html").read_text()
    assert "WordOverlap" in report
    compared = cli(["compare", "run_a", "run_b", "--out", "cmp"], tmp_path)
    assert compared.returncode == 0, compared.stderr
    pairs = pd.read_csv(tmp_path / "cmp" / "pairs.csv")
    assert {"WordOverlap", "BM25"} <= set(pairs["method_a"])
    question = pd.read_csv(tmp_path / "run_a" / "rankings.csv")["question_id"].iloc[0]
    explained = cli(["explain", *common, "--question", question, "--methods", "mystuff:WordOverlap,BM25",
                     "--out", "why.html"], tmp_path)
    assert explained.returncode == 0, explained.stderr
    assert "WordOverlap:" in explained.stdout and "WordOverlap" in (tmp_path / "why.html").read_text()
    drawn = cli(["graph", *common, "--question", question, "--methods", "mystuff:WordOverlap", "--out", "g.html"],
                tmp_path)
    assert drawn.returncode == 0, drawn.stderr
    assert "person/" in (tmp_path / "g.html").read_text()  # the graph holds the user's extractor's tags


class NoDateEvidence(NoDate):
    def score(self, text, *, asked_on=None):
        return {}

    def evidence(self, text, note):
        return tg.Evidence()


def test_an_evidence_hook_without_the_date_fails_at_registration(clean_registry, hand_store):
    with pytest.raises(ConfigError, match=r"evidence must take the keyword asked_on"):
        tg.register_method("NoDateEvidence", NoDateEvidence)
    bm25 = registry.method("BM25").cls()
    assert bm25(hand_store, {"k1": 2}).params.k1 == 2.0  # built directly, values as a dict, checked
    with pytest.raises(ConfigError, match="k1 = -1"):
        bm25(hand_store, {"k1": -1})


def test_a_builtin_method_is_one_file_and_one_line_of_the_table(tmp_path):
    """docs/your-own-work.md, "A built-in method in one file and one line": the module and the table line as
    written there, added to a copy of the package, run by `taggraph bench` and kept to the method contract."""
    import re
    import shutil
    section = (REPO / "docs" / "your-own-work.md").read_text(encoding="utf-8").split(
        "## A built-in method in one file and one line")[1].split("\n## ")[0]
    module = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    line = re.search(r"```text\n(.*?)\n```", section, re.S).group(1)
    shutil.copytree(REPO / "taggraph", tmp_path / "taggraph", ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "taggraph" / "methods" / "word_overlap.py").write_text(module, encoding="utf-8")
    table = tmp_path / "taggraph" / "methods" / "registry.py"
    source = table.read_text(encoding="utf-8")
    anchor = '    "BM25-stem": "taggraph.methods.bm25_stem:BM25Stem",'
    assert anchor in source
    table.write_text(source.replace(anchor, anchor.split("  #")[0] + "\n" + line, 1), encoding="utf-8")
    code = ("import taggraph as tg\nfrom taggraph.testing import MethodContract\n"
            "print(tg.method_names(ablations=False))\n"
            "result = tg.bench(tg.load(r'%s', limit=3), ['WordOverlap', 'BM25'])\n"
            "print(sorted(result.summary['method']))\n"
            "class TestWordOverlap(MethodContract):\n    method = 'WordOverlap'\n"
            "kit = TestWordOverlap()\n"
            "for check in (n for n in dir(kit) if n.startswith('test_')):\n    getattr(kit, check)()\n"
            "print('contract kept')\n") % (REPO / "taggraph" / "_data" / "demo" / "longmemeval_demo.json")
    shown = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path,
                           env={**os.environ, "PYTHONPATH": str(tmp_path)})
    assert shown.returncode == 0, shown.stderr[-2000:]
    lines = shown.stdout.splitlines()
    assert "'WordOverlap'" in lines[0] and lines[1] == "['BM25', 'WordOverlap']" and lines[-1] == "contract kept"
