"""`tg.views` helpers the notebooks call: parameter checks, one store per history, the no-distractor note,
a method's misses counted with and without tie order."""

from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest

from taggraph import views
from taggraph._infra.config import DEMO_DATA
from taggraph.datasets import load_dataset
from taggraph.errors import ConfigError

GENERIC = Path(__file__).parents[1] / "fixtures" / "generic"


@pytest.fixture(scope="module")
def cases():
    return load_dataset(GENERIC)


@pytest.mark.parametrize("params, message", [
    ({"K": 0}, r"^K must be a whole number >= 1, got 0$"),
    ({"K": 2.5}, r"^K must be a whole number >= 1, got 2.5$"),
    ({"QUESTION": "nope"}, r"^QUESTION 'nope' is no question of generic; first ids: ana-q1, "),
    ({"METHOD": "Nope"}, r"^METHOD 'Nope' is no method here; known: BM25, "),
    ({"TURN": 999}, r"^TURN must be a whole number from 0 to \d+ \(the first case, ana-q1, has \d+ turns\), got 999$"),
    ({"TURN": -1}, r"got -1$"),
])
def test_bad_parameters_are_named_in_one_line(cases, params, message):
    with pytest.raises(ConfigError, match=message):
        views.check_parameters(GENERIC, cases, **params)


def test_good_parameters_pass(cases):
    views.check_parameters(GENERIC, cases, K=50, QUESTION="ana-q4", METHOD="BM25", TURN=0)
    views.check_parameters(GENERIC, cases, K=None, QUESTION=None, METHOD=None, TURN=None)
    with pytest.raises(ConfigError, match=r"^K must be one of 1, 3, 5 here \(the metrics' cut-offs\), got 7$"):
        views.check_parameters(GENERIC, cases, k_values=(1, 3, 5), K=7)
    with pytest.raises(ConfigError, match="METHOD 'BM25-stem' is no method here; known: BM25, AdaptiveGraph$"):
        views.check_parameters(GENERIC, cases, methods=["BM25", "AdaptiveGraph"], METHOD="BM25-stem")


def test_one_case_per_history(cases):
    """Probe G #2: 02 built one store per question, so a history asked 4 times counted 4 times."""
    firsts = views.histories(cases)
    assert len(firsts) < len(cases)
    assert len({tuple((i.session_id, i.user) for i in c.interactions) for c in cases}) == len(firsts)
    assert firsts[0] is cases[0]


def test_the_no_distractor_note_speaks_only_for_an_oracle_file():
    demo = load_dataset(DEMO_DATA)
    assert views.distractor_note(demo) == ""
    oracle = [replace(c, interactions=[i for i in c.interactions if i.session_id in c.gold_session_ids])
              for c in demo]
    assert views.distractor_note(oracle).startswith("**No distractors:** none of these 12 judged questions")


def test_misses_count_tie_order_apart():
    """Probe G #1 (08): a method that scores every note 0 still ranked LoCoMo's early gold sessions first, and the
    notebook said it missed nothing. The count now says what it counts and names the tie-order ones."""
    rankings = pd.DataFrame({"method": ["M"] * 4, "question_id": ["a", "b", "c", "d"], "abstention": [False] * 3 + [True],
                             "RR": [1.0, 0.1, 1.0, 1.0], "RR_tieavg": [0.2, 0.1, 1.0, 0.2],
                             "Success@5_tieavg": [0.3, 0.0, 1.0, 0.5]})
    table, text = views.method_misses(rankings, "M", 5)
    assert table["question_id"].tolist() == ["b", "a"]
    assert table["miss"].tolist() == ["outside the top 5", "in the top 5 only by tie order"]
    assert text.startswith("1 of 3 judged questions have no gold session in M's top 5 by the paper's rank")
    assert "1 more have one there only by tie order" in text and "1.7 are expected to miss" in text
    _, text = views.method_misses(rankings, "M", 4)
    assert "a tie-aware count needs k in 1, 3, 5, got 4" in text


def test_history_stores_share_one_store_per_history(cases):
    stores = views.history_stores(cases, "none")
    assert set(stores) == {c.case_id for c in cases}
    assert len({id(s) for s in stores.values()}) == len(views.histories(cases))


def test_the_no_misses_line_suggests_more_questions_only_when_there_are_more(cases):
    """Probe G #8: 07 told the user to raise the limit on a 6-question file that had all run."""
    assert views.no_misses_text(cases, 10, 5, GENERIC).endswith(
        "These are all the data's questions (TAGGRAPH_NOTEBOOK_LIMIT is 10).")
    assert "Raise `TAGGRAPH_NOTEBOOK_LIMIT`" in views.no_misses_text(cases, len(cases), 5, GENERIC)
    assert "demo_q11" in views.no_misses_text(load_dataset(DEMO_DATA)[:3], 3, 5, DEMO_DATA)
    oracle = [replace(c, interactions=[i for i in c.interactions if i.session_id in c.gold_session_ids])
              for c in load_dataset(DEMO_DATA)]
    assert "a session-level miss cannot happen here" in views.no_misses_text(oracle, 20, 5)


def test_answer_caveat_on_locomo_only():
    assert "LoCoMo" in views.answer_caveat("locomo") and views.answer_caveat("longmemeval") == ""


def test_a_notebooks_method_joins_the_views_methods():
    cases = load_dataset(DEMO_DATA, limit=2)
    questions = views.OpenQuestions(cases, "offline", also="TagGraph-Fusion-e5")
    assert questions.methods[-1] == "TagGraph-Fusion-e5" and "TagGraph-Fusion" in questions.methods
    views.check_parameters(DEMO_DATA, cases, questions.methods, METHOD="TagGraph-Fusion-e5")
    unknown = views.OpenQuestions(cases, "offline", also="NoSuchMethod")
    assert "NoSuchMethod" not in unknown.methods
    with pytest.raises(ConfigError, match="METHOD 'NoSuchMethod' is no method here"):
        views.check_parameters(DEMO_DATA, cases, unknown.methods, METHOD="NoSuchMethod")
    assert views.OpenQuestions(cases, "offline", ["BM25"], also="TagGraph-Fusion-e5").methods == ["BM25"]
