"""The notebooks' charts: each draws the table it is given, nothing computed."""

import pandas as pd

from taggraph.methods import Result
from taggraph.viz.charts import answer_chart, gold_rank_chart, interval_chart, misses_chart, score_chart

RESULTS = {"BM25": [Result("a", 2.0, "s1", 1), Result("b", 1.0, "s2", 2)], "X": [Result("b", 0.5, "s2", 1)]}


def test_gold_rank_chart_draws_misses_past_the_depth():
    fig = gold_rank_chart(RESULTS, ["a"], depth=40, k=5)
    assert list(fig.data[0].y) == [1, 41] and list(fig.data[0].text) == ["1", "miss"]


def test_gold_rank_chart_hatches_a_place_owed_to_tie_order():
    tied = {**RESULTS, "T": [Result("a", 0.0, "s1", 1), Result("b", 0.0, "s2", 2)],  # found by nothing: score 0
            "U": [Result("a", 0.7, "s1", 1), Result("b", 0.7, "s2", 2)]}  # tied at 0.7 across the top-1 cut-off
    bars = gold_rank_chart(tied, ["a"], depth=40, k=1).data[0]
    assert list(bars.text) == ["1", "miss", "1 tie order", "1 tie order"]
    assert list(bars.marker.pattern.shape) == ["", "", "/", "/"]
    assert gold_rank_chart(tied, ["a"], depth=40, k=2).data[0].text[2] == "1"  # any order keeps it in the top 2

def test_score_chart_marks_gold_notes():
    fig = score_chart(RESULTS, ["a"])
    assert {t.name for t in fig.data} == {"gold", "other"}


def test_misses_answers_and_intervals():
    units = pd.DataFrame({"question_id": ["q1", "q1", "q2"], "note_id": ["n1", "n1", "n2"], "category": ["C1", "C1", "C3"]})
    assert sum(sum(t.y) for t in misses_chart(units).data) == 2  # one bar unit per gold note
    summary = pd.DataFrame({"method": ["BM25"], "generator": ["g"], "token_f1": [0.5], "containment": [1.0]})
    assert "g" in answer_chart(summary).layout.title.text
    intervals = pd.DataFrame({"dataset": ["d"], "removed": ["-Diffusion"], "n": [9], "MRR change": [0.1],
                              "CI low": [-0.1], "CI high": [0.2]})
    fig = interval_chart(intervals)
    assert list(fig.data[0].error_y.array) == [0.1] and abs(fig.data[0].error_y.arrayminus[0] - 0.2) < 1e-9


def test_top_level_shares_shows_a_catch_all_as_one_tall_bar():
    from types import SimpleNamespace

    from taggraph.core.ontology import Ontology
    from taggraph.viz.ontology_view import top_level_shares

    stores = {"offline": [SimpleNamespace(ontology=Ontology(["topic/a", "topic/b", "topic/c", "user"]))],
              "offline-v2": [SimpleNamespace(ontology=Ontology(["dish/pizza", "pet/dog", "user", "user"]))]}
    bars = {t.name: dict(zip(t.x, t.y)) for t in top_level_shares(stores, n=3).data}
    assert bars == {"offline": {"topic": 0.75, "user": 0.25}, "offline-v2": {"user": 0.5, "dish": 0.25, "pet": 0.25}}
    bars = {t.name: dict(zip(t.x, t.y)) for t in top_level_shares(stores, n=1).data}  # the union of each one's largest
    assert bars == {"offline": {"topic": 0.75, "user": 0.25}, "offline-v2": {"user": 0.5}}
