"""The JupyterLab panels of notebooks 03 and 04: changing a control renders the view again."""

import pytest

pytest.importorskip("ipywidgets")

from taggraph._infra.config import DEMO_DATA  # noqa: E402
from taggraph.datasets import load_dataset  # noqa: E402
from taggraph.runs.question import OpenQuestions  # noqa: E402
from taggraph.viz.widgets import graph_panel, retrieval_panel  # noqa: E402


@pytest.fixture(scope="module")
def cases():
    return {c.case_id: c for c in load_dataset(DEMO_DATA, limit=4)}


def test_questions_are_opened_on_first_use_and_kept(cases):
    questions = OpenQuestions(cases, "offline", ["BM25", "TagGraph-Basic"])
    assert list(questions) == list(cases) and questions.methods == ["BM25", "TagGraph-Basic"]
    first = questions["demo_q02"]
    assert questions["demo_q02"] is first and len(first.store) == len(cases["demo_q02"].interactions)
    assert list(first.retrievers) == ["BM25", "TagGraph-Basic"] and first.gold
    assert all(r.store is first.store for r in first.retrievers.values())


def shown(box) -> str:
    """Everything the panel's Output holds, as one string (text and HTML)."""
    return "\n".join(str(v) for o in box.children[1].outputs for v in o["data"].values())


def controls(box) -> dict:
    return {c.description: c for c in box.children[0].children}


def test_retrieval_panel_renders_again_on_each_change(cases):
    box = retrieval_panel(OpenQuestions(cases, "offline"), "demo_q01", method="BM25", k=3)
    first = shown(box)
    assert "demo_q01" in first and "Top 3 of BM25" in first and "TagGraph-Basic" not in first
    c = controls(box)
    c["question"].value = "demo_q03"
    assert "demo_q03" in shown(box) and "demo_q01" not in shown(box)
    c["method"].value = "TagGraph-Basic"
    assert "Top 3 of TagGraph-Basic" in shown(box) and "BM25" not in shown(box)
    c["k"].value = 2
    assert "Top 2 of TagGraph-Basic" in shown(box)
    c["or ask"].value = "which restaurant in Alfama?"
    assert "asked: which restaurant in Alfama?" in shown(box) and "your own question: no gold notes" in shown(box)


def test_graph_panel_renders_again_on_each_change(cases):
    box = graph_panel(OpenQuestions(cases, "offline"), "demo_q01", method="BM25")
    assert "demo_q01" in shown(box) and "the top 5 of BM25" in shown(box) and "<iframe srcdoc=" in shown(box)
    c = controls(box)
    c["question"].value = "demo_q02"
    c["method"].value = "OpenClaw"
    assert "demo_q02" in shown(box) and "the top 5 of OpenClaw" in shown(box) and "demo_q01" not in shown(box)


def test_table_view_shows_every_cell_whole():
    import html

    import pandas as pd

    from taggraph.viz.widgets import table_view

    reason = "ranked 6 of 20 notes: BM25 over the query terms 'run' 1.85, 'km' 1.46, 'marathon' 1.07"
    table = pd.DataFrame({"rank": pd.array([1, None], dtype="Int64"), "reason": [reason, "short"]},
                         index=pd.Index(["a#0", "b#0"], name="note_id"))
    page = table_view(table).data
    assert f">{html.escape(reason)}</td>" in page and ">–</td>" in page and "<th" in page and page.index("note_id") < page.index("rank")
    assert "overflow:auto" in page and "white-space:normal" in page


def test_note_panel_explains_the_chosen_note(cases):
    from taggraph.runs.runner import build_store
    from taggraph.methods import build_retrievers
    from taggraph.viz.widgets import note_panel

    case = cases["demo_q01"]
    store = build_store(case, "offline")
    box = note_panel(store, case.question, build_retrievers(store, ["BM25"]), store.notes[0].note_id)
    assert len(controls(box)["note"].options) == len(store) and "onload=" in shown(box)
    controls(box)["note"].value = store.notes[2].note_id
    assert f"Why (not) note &lt;code&gt;{store.notes[2].note_id}" in shown(box)


def test_an_abstention_question_is_the_datasets_own_and_k_above_20_is_taken():
    """Probe G #5, #6: ana-q4 (abstention, answer "") was labelled "your own question"; a k of 50 was refused by
    the slider's max of 20; its gold-rank chart was an empty plot that said nothing."""
    from pathlib import Path

    from taggraph.viz.charts import gold_rank_chart

    generic = Path(__file__).parents[1] / "fixtures" / "generic"
    questions = OpenQuestions({c.case_id: c for c in load_dataset(generic)}, "offline", ["BM25"])
    box = retrieval_panel(questions, "ana-q4", method="BM25", k=50)
    assert controls(box)["k"].value == 50 and controls(box)["k"].max == 50
    text = shown(box)
    assert "your own question" not in text and "gold notes: (none: abstention question)" in text
    assert "Top 50 of BM25" in text
    box = graph_panel(questions, "ana-q4", method="BM25")
    assert "gold notes: (none: abstention question)" in shown(box)
    fig = gold_rank_chart({"BM25": []}, [], k=5)
    assert [a.text for a in fig.layout.annotations] == ["No gold notes for this question: no rank to show"]
