"""TagGraph-Fusion explained in its own signals: the contrast with the notes above a note on the CLI, the explain
page and the graph page (one computation), its graph part's walk, the demo's default methods and the report's
provenance."""

from __future__ import annotations

import json
import re
import sys

import pytest
from typer.testing import CliRunner

from taggraph.cli import app
from taggraph._infra.config import DEMO_DATA
from taggraph.datasets import load_dataset
from taggraph.runs.question import open_question
from taggraph.runs.folders import git_commit
from taggraph.methods import DEFAULT_METHODS, PAPER_METHODS
from taggraph.runs.retrieval import retrieve_all
from taggraph.viz.explain import explain_html
from taggraph.viz.graph.page import save_graph_html

QUESTION = "demo_q01"  # "What breed is my dog?": BM25 ranks the gold note first, TagGraph-Fusion second


@pytest.fixture(scope="module")
def opened():
    case = next(c for c in load_dataset(DEMO_DATA) if c.case_id == QUESTION)
    return open_question(case, methods=["TagGraph-Fusion"])


def test_explain_names_the_note_at_rank_1_signal_by_signal_and_the_signal_that_decided():
    out = CliRunner().invoke(app, ["explain", "--question", QUESTION, "--methods", "TagGraph-Fusion"]).output
    line = next(x for x in out.splitlines() if "(rank 1) scores" in x)
    rival = re.search(r"note (\S+) \(rank 1\) scores ([\d.]+) \(\+([\d.]+)\): decided by (\w+) \(\+[\d.]+[^)]*\); (.*)", line)
    assert rival, line
    compared = re.findall(r"(\w+) [\d.]+ vs [\d.]+", rival.group(5))
    assert len(compared) >= 3 and compared[0] == rival.group(4)  # the deciding signal leads the list
    assert f"{rival.group(4)} read: rank 1: " in out  # what the deciding signal read for both notes


def test_the_contrast_explains_the_whole_margin(opened):
    fusion, gold = opened.retrievers["TagGraph-Fusion"], opened.gold[0]
    contrast = fusion.explain(opened.case.question, gold, asked_on=opened.case.asked_on).contrast
    assert contrast.rank > 1 and contrast.rivals[0].rank == 1
    for rival in contrast.rivals:
        assert sum(g.lead for g in rival.gaps) == pytest.approx(rival.margin, rel=1e-9, abs=1e-9)
        assert rival.decided_by == max(rival.gaps, key=lambda g: g.lead).name


def test_the_explain_and_graph_pages_show_the_same_contrast(opened, tmp_path):
    fusion, gold, case = opened.retrievers["TagGraph-Fusion"], opened.gold[0], opened.case
    decided = fusion.explain(case.question, gold, asked_on=case.asked_on).contrast.lines()[0]
    page = explain_html(opened.store, case.question, gold, opened.retrievers, gold=opened.gold, asked_on=case.asked_on)
    rival = fusion.explain(case.question, gold, asked_on=case.asked_on).contrast.rivals[0]
    assert "Signal by signal, beside the notes above it" in page
    assert f"decided by <b>{rival.decided_by}</b>" in page and f"rank 1: <code>{rival.note_id}</code>" in page
    ranked = retrieve_all(opened.store, case.question, opened.retrievers, asked_on=case.asked_on)
    graph = save_graph_html(tmp_path / "g.html", opened.store, question=case.question, results_by_method=ranked,
                            retrievers=opened.retrievers, gold_note_ids=opened.gold,
                            asked_on=case.asked_on).read_text(encoding="utf-8")
    assert json.dumps(decided)[1:-1] in graph  # the header's and the side panel's text, as data of the page


def test_fusions_graph_signal_names_its_route_and_the_page_draws_it(opened):
    fusion, case = opened.retrievers["TagGraph-Fusion"], opened.case
    e = fusion.explain(case.question, opened.gold[0], asked_on=case.asked_on)
    graph = next(s for s in e.evidence.signals if s.name == "graph")
    assert graph.contribution > 0 and e.details["walk"], "PPR mass reached the gold note over some edge"
    nodes = set(opened.store.graph.to_networkx(chronological=True).nodes)
    assert all(a in nodes and b in nodes for a, b in e.details["walk"])
    assert e.details["walk"][-1][1] == f"file:{opened.gold[0]}" and "most of it over" in graph.reads


def test_every_command_runs_the_flagship_beside_the_papers_methods_by_default():
    assert DEFAULT_METHODS == [*PAPER_METHODS, "TagGraph-Fusion"]
    from taggraph.runs.question import VIEW_METHODS
    assert VIEW_METHODS == DEFAULT_METHODS


def test_the_report_says_where_it_came_from(tmp_path, monkeypatch):
    out = tmp_path / "run"
    args = ["bench", "--methods", "BM25", "--limit", "2", "--extractor", "none", "--out", str(out)]
    monkeypatch.setattr(sys, "argv", ["/usr/bin/taggraph", *args])  # as the shell gives it
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    record = json.loads((out / "run.json").read_text())
    assert record["config"]["command"] == f"taggraph bench --methods BM25 --limit 2 --extractor none --out {out}"
    assert record["config"]["machine"]["isa"] and record["config"]["machine"]["cores"] >= 1
    assert record["config"]["resources"]["cpu_seconds"] > 0 and record["config"]["resources"]["peak_memory_mb"] > 0
    assert set(record["config"]["resources"]["caches"]) == {"embeddings", "offline_extractions"}
    assert "onnxruntime" in record["versions"] or "sentence-transformers" in record["versions"]
    report = (out / "report.html").read_text()
    first_screen = report[:report.index("<h2>Per method</h2>")]
    assert git_commit() in first_screen and record["data"]["sha256"] in first_screen
    assert "bench --methods BM25 --limit 2" in first_screen
    assert "query_p50_ms" in report and "query_p95_ms" in report and "index_s" in report
    assert record["data"]["sha256"] in (out / "report.md").read_text()


def test_python_bench_writes_the_run_folder_the_command_writes_and_score_reads_it(tmp_path):
    import taggraph as tg
    from taggraph.errors import ConfigError

    data = tg.load(DEMO_DATA, limit=3)
    result = tg.bench(data, ["BM25", "TagGraph-Basic"], extractor="none", out=tmp_path / "a")
    assert isinstance(result, tg.BenchResult)
    written = {p.name for p in (tmp_path / "a").iterdir()}
    assert {"summary.csv", "rankings.csv", "run.json", "report.html", "report.md", "trec"} <= written
    assert json.loads((tmp_path / "a" / "run.json").read_text())["data"]["sha256"] == data.checksum
    scored = tg.score([tmp_path / "a"], data, out=tmp_path / "b")
    assert scored.summary["MRR"].tolist() == pytest.approx(result.summary["MRR"].tolist())
    assert (tmp_path / "b" / "report.html").is_file()
    with pytest.raises(ConfigError, match="not empty|exists|--force|force"):
        tg.bench(data, ["BM25"], extractor="none", out=tmp_path / "a")  # refused before any run
    with pytest.raises(ConfigError, match="pass the dataset tg.load returned"):
        tg.bench(list(data), ["BM25"], extractor="none", out=tmp_path / "c")
