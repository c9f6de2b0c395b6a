"""The charts' text in headless Chromium, network off: no facet title, x label, title or subtitle drawn over
another (the per-type facets of the report, the score and gold-rank charts of notebook 04). Reuses
tests/browser/test_browser_report.py's probe."""

import pandas as pd

from taggraph._infra.atomic import atomic_write
from taggraph._infra.config import DEMO_DATA
from taggraph.datasets import load_dataset
from taggraph.datasets.base import gold_note_ids
from taggraph.methods import build_retrievers
from taggraph.runs.retrieval import retrieve_all
from taggraph.runs.runner import build_store
from taggraph.viz.charts import gold_rank_chart, score_chart
from taggraph.viz.report_charts import recall_chart

from test_browser import pytestmark  # noqa: F401  (slow, needs chromium)
from test_browser_report import probe_report

METHODS = ["BM25", "TagGraph-Basic", "TagGraph-Stopwords", "TagGraph-TFIDF", "AdaptiveGraph", "OpenClaw", "OC-notes"]
# Each drawn text's box: chart and subtitle titles, axis titles, facet titles and x tick labels.
TEXTS = """
return Array.from(document.querySelectorAll(".gtitle, .g-xtitle text, .g-ytitle text, .annotation-text, .xtick text"))
  .filter(function (t) { return t.textContent && t.getBoundingClientRect().width; })
  .map(function (t) { var r = t.getBoundingClientRect(); return [t.textContent, r.left, r.top, r.right, r.bottom]; });
"""


def overlaps(boxes: list) -> list[tuple[str, str]]:
    """Pairs of texts whose boxes overlap by more than a pixel each way."""
    return [(a[0], b[0]) for i, a in enumerate(boxes) for b in boxes[i + 1:]
            if min(a[3], b[3]) - max(a[1], b[1]) > 1 and min(a[4], b[4]) - max(a[2], b[2]) > 1]


def test_no_chart_text_is_drawn_over_another(tmp_path):
    case = next(c for c in load_dataset(DEMO_DATA) if c.case_id == "demo_q12")
    store = build_store(case, "offline-v2")
    results = retrieve_all(store, case.question, build_retrievers(store, METHODS), asked_on=case.question_date)
    gold = gold_note_ids(case, store)
    types = ["knowledge-update", "multi-session", "single-session-user", "temporal-reasoning"]
    per_type = pd.DataFrame([{"question_type": t, "method": m, "Success@1": .5, "Success@3": .7, "Success@5": .9}
                             for t in types for m in [*METHODS, "TagGraph-Fusion"]])
    charts = {"gold": gold_rank_chart(results, gold), "score": score_chart(results, gold),
              "per-type": recall_chart(per_type, [*METHODS, "TagGraph-Fusion"])}
    for name, chart in charts.items():
        page = tmp_path / f"{name}.html"
        atomic_write(page, chart.to_html(include_plotlyjs=True))
        for size in ("900,700", "1280,800"):
            boxes = probe_report(tmp_path, page, size=size, state=TEXTS)
            assert len(boxes) > 3 and not overlaps(boxes), (name, size, overlaps(boxes))
