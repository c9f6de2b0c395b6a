"""The JupyterLab panels of notebooks 03 and 04: changing a control renders the view again."""

import pytest

pytest.importorskip("ipywidgets")

from taggraph.config import DEMO_DATA  # noqa: E402
from taggraph.datasets import load_dataset  # noqa: E402
from taggraph.viz.widgets import graph_panel, retrieval_panel  # noqa: E402


@pytest.fixture(scope="module")
def cases():
    return {c.case_id: c for c in load_dataset(DEMO_DATA, limit=4)}


def shown(box) -> str:
    """Everything the panel's Output holds, as one string (text and HTML)."""
    return "\n".join(str(v) for o in box.children[1].outputs for v in o["data"].values())


def controls(box) -> dict:
    return {c.description: c for c in box.children[0].children}


def test_retrieval_panel_renders_again_on_each_change(cases):
    box = retrieval_panel(cases, "offline", "demo_q01", method="BM25", k=3)
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
    box = graph_panel(cases, "offline", "demo_q01", method="BM25")
    assert "demo_q01" in shown(box) and "the top 5 of BM25" in shown(box) and "<iframe srcdoc=" in shown(box)
    c = controls(box)
    c["question"].value = "demo_q02"
    c["method"].value = "OpenClaw"
    assert "demo_q02" in shown(box) and "the top 5 of OpenClaw" in shown(box) and "demo_q01" not in shown(box)
