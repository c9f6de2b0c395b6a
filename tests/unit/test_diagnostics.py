import dataclasses
import json

import pandas as pd
import pytest

from taggraph._infra.config import DEMO_DATA
from taggraph.datasets import Case, load_dataset
from taggraph.runs.bench import run_bench
from taggraph.runs.runner import build_store
from taggraph.studies.diagnostics import (GRAPH_METHODS, failure_diagnostics, gold_note_ids, helpful_tags,
                                              longmemeval_evidence_notes, pool_case_ids)
from taggraph.core.store import Interaction, MemoryStore

from tests.helpers.stores import HAND_ROWS, make_store

QUESTION = "What breed is my dog?"
CASE = Case("c1", QUESTION, "single-session-user", [Interaction(r[0], r[1], r[2]) for r in HAND_ROWS], ["s2"])
UNTAGGED_S2 = [r if r[0] != "s2" else (*r[:3], {}) for r in HAND_ROWS]


def rankings(recovered_by=(), missed_by=GRAPH_METHODS):
    """Rankings of CASE: methods in `recovered_by` rank s2#0 first, the others put it sixth (Success@5 miss)."""
    rows = []
    for m in GRAPH_METHODS:
        hit = m in recovered_by
        notes = ["s2#0", "s1#0"] if hit else ["s1#0", "s3#0", "s4#0", "s5#0", "s1#0", "s2#0"]
        rows.append({"question_id": "c1", "method": m, "ranked_note_ids": notes,
                     "RR": 1.0 if hit else 0.2, "Success@5": 1.0 if hit or m not in missed_by else 0.0})
    return pd.DataFrame(rows)


def test_helpful_tags_use_the_taggraph_matcher(hand_store):
    helpful = helpful_tags(hand_store, QUESTION, ["s2#0", "s1#0"])
    assert helpful == {"s2#0": ["pet/dog", "breed/beagle"], "s1#0": []}
    assert helpful_tags(hand_store, "Which dogs do I own?", ["s2#0"])["s2#0"] == ["pet/dog"]  # singularized
    # via the ancestor "pet", and "pet" is a word of the segment "pet_name" (the paper's reading: any concept)
    assert helpful_tags(hand_store, "Any pet news?", ["s5#0"], max_df=None)["s5#0"] == ["pet/cat", "pet_name/luna"]
    # by default "pet" (on 2 of the 5 notes, above 15%) tells no note apart; "pet_name" is on one note
    assert helpful_tags(hand_store, "Any pet news?", ["s5#0"])["s5#0"] == ["pet_name/luna"]


NAMED_ROWS = [(f"s{i}", f"Caroline: day {i}.", "Melanie: ok.", {"who": ["person/caroline"], "what": [f"topic/t{i}"]})
              for i in range(9)] + [("s9", "Caroline: I moved to Sweden.", "Melanie: wow.",
                                     {"who": ["person/caroline"], "where": ["country/sweden"]})]
NAMED_CASE = Case("n1", "Where did Caroline move to?", "single-hop",
                  [Interaction(r[0], r[1], r[2]) for r in NAMED_ROWS], ["s9"], gold_note_ids=["s9#0"])


def test_a_name_on_every_note_is_no_helpful_tag():
    """LoCoMo's speaker names: person/caroline sits on all 10 notes, so matching 'Caroline' tells the gold note
    apart from none; the paper's reading counted it, which made this unit 'tagged' (C3, not C1)."""
    store = make_store(NAMED_ROWS, "n1")
    assert helpful_tags(store, NAMED_CASE.question, ["s9#0"], max_df=None) == {"s9#0": ["person/caroline"]}
    assert helpful_tags(store, NAMED_CASE.question, ["s9#0"]) == {"s9#0": []}
    assert helpful_tags(store, "Which country is Sweden in?", ["s9#0"]) == {"s9#0": ["country/sweden"]}
    ranks = pd.DataFrame([{"question_id": "n1", "method": m, "ranked_note_ids": [f"s{i}#0" for i in range(10)],
                           "RR": 0.1, "Success@5": 0.0} for m in GRAPH_METHODS])
    unit = failure_diagnostics([NAMED_CASE], {"A": ranks}, {"A": [store]}).units.iloc[0]
    assert unit["category"] == "C1" and not unit["tagged"]
    assert unit["helpful_tags"] == [] and unit["common_tags"] == ["person/caroline"]
    paper = failure_diagnostics([NAMED_CASE], {"A": ranks}, {"A": [store]}, max_df=None).units.iloc[0]
    assert paper["category"] == "C3" and paper["helpful_tags"] == ["person/caroline"]


def test_one_extractor_tags_the_gold_note_the_other_not_is_c2():
    stores = {"A": [make_store(HAND_ROWS, "c1")], "B": [make_store(UNTAGGED_S2, "c1")]}
    ranks = {"A": rankings(recovered_by={"AdaptiveGraph"}), "B": rankings()}
    diag = failure_diagnostics([CASE], ranks, stores, dataset="hand")
    assert set(diag.units["category"]) == {"C2"} and len(diag.units) == 2  # one unit, two extractors
    a = diag.units.set_index("extractor").loc["A"]
    assert a["tagged"] and a["recovered_by"] == ["AdaptiveGraph"]
    row = diag.table.set_index("category").loc["C2"]
    assert row["n hand"] == 1 and row["A Tagged %"] == 100 and row["B Tagged %"] == 0
    assert row["A Succeeded %"] == 100 and pd.isna(row["B Succeeded %"])
    assert list(diag.table["category"]) == ["C1", "C2", "C3", "C4"]
    assert diag.examples["category"].tolist() == ["C2", "C2"]


@pytest.mark.parametrize("rows,recovered,expected", [
    (HAND_ROWS, {"TagGraph-Basic"}, "C4"),
    (HAND_ROWS, set(), "C3"),
    (UNTAGGED_S2, {"AdaptiveGraph"}, "C1"),
])
def test_single_extractor_categories(rows, recovered, expected):
    diag = failure_diagnostics([CASE], {"A": rankings(recovered)}, {"A": [make_store(rows, "c1")]})
    assert diag.units["category"].tolist() == [expected]
    assert list(diag.table["category"]) == ["C1", "C3", "C4"]  # C2 needs two extractors
    assert diag.table.set_index("category").loc[expected, "n data"] == 1


def test_cases_no_configuration_misses_are_not_pooled():
    ranks = {"A": rankings(recovered_by=set(GRAPH_METHODS), missed_by=())}
    assert pool_case_ids(ranks) == set()
    diag = failure_diagnostics([CASE], ranks, {"A": []})  # no store needed outside the pool
    assert diag.units.empty and diag.table.filter(like="n ").sum().sum() == 0


def test_evidence_notes_follow_the_loaders_pairing(tmp_path):
    turns = [{"role": "assistant", "content": "hi"}, {"role": "user", "content": "u1"},
             {"role": "user", "content": "u2", "has_answer": True}, {"role": "assistant", "content": "a2"}]
    record = {"question_id": "q1", "question_type": "single-session-user", "question": "?", "answer": "x",
              "haystack_session_ids": ["g", "o", "g"], "haystack_dates": ["d1", "d2", "d3"],
              "haystack_sessions": [turns, [{"role": "user", "content": "x"}], turns],
              "answer_session_ids": ["g"]}
    path = tmp_path / "lme.json"
    path.write_text(json.dumps([record]))
    evidence = longmemeval_evidence_notes(path)
    case = load_dataset(path)[0]
    store = MemoryStore("q1")
    store.remember_many(case.interactions)
    by_id = {n.note_id: n for n in store.notes}
    # ("hi"), ("u1"), ("u2", "a2"): g#2; "g" listed twice keeps counting, so its copy is g#5
    assert evidence == {"q1": {"g#2", "g#5"}}
    assert (by_id["g#2"].user, by_id["g#2"].assistant) == ("u2", "a2") and by_id["g#5"].user == "u2"
    assert gold_note_ids(case, store, evidence) == ["g#2", "g#5"]
    assert case.gold_note_ids == gold_note_ids(case, store) == ["g#2", "g#5"]  # the loader keeps the marks
    unmarked = dataclasses.replace(case, gold_note_ids=[])
    assert gold_note_ids(unmarked, store) == [f"g#{i}" for i in range(6)]  # without marks: every gold-session note


def test_untagged_extraction_puts_every_unit_in_c1():
    cases = load_dataset(DEMO_DATA, limit=4)
    bench = run_bench(cases, list(GRAPH_METHODS), extractor="none")
    pool = pool_case_ids({"none": bench.rankings})
    assert pool  # without tags the localized configurations reach nothing
    stores = [build_store(c, "none") for c in cases if c.case_id in pool]
    diag = failure_diagnostics(cases, {"none": bench.rankings}, {"none": stores}, dataset="demo")
    assert set(diag.units["category"]) == {"C1"} and not diag.units["tagged"].any()
    assert diag.table.set_index("category").loc["C1", "n demo"] == diag.units["note_id"].nunique()


def test_the_cli_prints_a_share_of_no_units_as_a_dash(tmp_path):
    """Untagged notes put every miss in C1, where no unit is tagged: Succeeded % has no value ('–'), not 'NaN'."""
    from typer.testing import CliRunner

    from taggraph.cli import app

    res = CliRunner().invoke(app, ["diagnose", "--extractor", "none", "--limit", "4", "--out", str(tmp_path / "d")])
    assert res.exit_code == 0, res.output
    c1 = next(line.split() for line in res.output.splitlines() if line.lstrip().startswith("C1"))
    assert c1[-2:] == ["0.0", "–"] and "NaN" not in res.output


def test_pooled_questions_that_share_a_history_share_one_store_and_the_same_units(monkeypatch):
    """LoCoMo's pooled questions share their conversation: its store is built once for all of them, and the
    diagnostics read from it are those read from one store per question (misses at k = 1: the fixture's conversations are short)."""
    from pathlib import Path

    from taggraph.studies import diagnostics

    cases = load_dataset(Path(__file__).parents[1] / "fixtures" / "locomo" / "locomo_tiny.json")
    rankings = {"none": run_bench(cases, list(GRAPH_METHODS), "none").rankings}
    pool = [c for c in cases if c.case_id in pool_case_ids(rankings, k=1)]
    assert len({c.case_id.split(":")[0] for c in pool}) < len(pool)  # two pooled questions share a conversation
    built = []
    monkeypatch.setattr(diagnostics, "build_store", lambda case, e: built.append(case.case_id) or build_store(case, e))
    shared = diagnostics.pooled_stores(pool, "none")
    assert len(built) == len({c.case_id.split(":")[0] for c in pool}) and set(shared) == {c.case_id for c in pool}
    own = [build_store(c, "none") for c in pool]
    by_history = failure_diagnostics(cases, rankings, {"none": shared}, dataset="t", k=1).units
    by_question = failure_diagnostics(cases, rankings, {"none": own}, dataset="t", k=1).units
    pd.testing.assert_frame_equal(by_history, by_question)
