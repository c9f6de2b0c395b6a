"""The graph page's side panel in headless Chromium for a note drawn without a label (dense drawing);
reuses tests/test_browser.py's Chromium helpers and is skipped like it without Chromium."""

import json
import re

from taggraph.config import DEMO_DATA
from taggraph.datasets import load_dataset
from taggraph.experiments.runner import build_store
from taggraph.retrieval import make_retriever
from taggraph.viz.graphview import save_graph_html

from test_browser import dump_dom, pytestmark  # noqa: F401  (slow, needs chromium)


def test_side_panel_names_a_note_whose_label_is_hidden(tmp_path):
    store = build_store(load_dataset(DEMO_DATA, limit=1)[0], "offline")
    retrievers = {"BM25": make_retriever("BM25", store)}
    question = "what breed is my dog"
    page = save_graph_html(tmp_path / "g.html", store, question=question, retrievers=retrievers,
                           results_by_method={"BM25": retrievers["BM25"].query(question)})
    nodes = json.loads(re.search(r"var DATA = (.*);", page.read_text()).group(1))["nodes"]
    quiet = next(n["id"][len("file:"):] for n in nodes if n["kind"] == "file" and not n["label"].strip())
    dom = dump_dom(tmp_path, page, "#note=" + quiet.replace("#", "%23"))
    title = re.search(r'<b id="why-title">(.*?)</b>', dom).group(1)
    assert title == f"{quiet} · BM25"
