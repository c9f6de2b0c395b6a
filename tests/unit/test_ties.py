"""Tie-aware metrics: expected RR and Success@k under random tie order, computed exactly."""

from itertools import permutations

import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

from taggraph._infra.config import DEMO_DATA
from taggraph.datasets import load_dataset
from taggraph.evaluation.metrics import (first_gold_tied, score_rankings, summarize, tie_averaged, tie_metrics)
from taggraph.runs.bench import run_bench


def test_a_tie_group_holding_the_gold_is_averaged_by_hand():
    # one item above; the gold is one of 3 tied at ranks 2-4: E[RR] = (1/2 + 1/3 + 1/4) / 3
    m = tie_averaged([3, 2, 2, 2, 1], [False, False, True, False, False])
    assert m["RR_tieavg"] == pytest.approx((1 / 2 + 1 / 3 + 1 / 4) / 3)
    assert m["Success@1_tieavg"] == 0
    assert m["Success@3_tieavg"] == pytest.approx(2 / 3)  # the gold takes one of the group's first 2 places
    assert m["Success@5_tieavg"] == 1


def test_two_golds_among_four_tied_zeros_by_hand():
    # first gold at place i with probability C(4-i, 1) / C(4, 2): 3/6, 2/6, 1/6
    m = tie_averaged([0, 0, 0, 0], [True, False, False, True])
    assert m["RR_tieavg"] == pytest.approx(3 / 6 + 2 / 6 / 2 + 1 / 6 / 3)
    assert m["Success@1_tieavg"] == pytest.approx(1 / 2) and m["Success@3_tieavg"] == 1


def test_without_ties_the_expectation_is_the_papers_metric():
    m = tie_averaged([5, 4, 3, 2, 1, 0.5], [False, False, False, False, False, True])
    assert m == {"RR_tieavg": pytest.approx(1 / 6), "Success@1_tieavg": 0, "Success@3_tieavg": 0,
                 "Success@5_tieavg": 0, "Success@10_tieavg": 1}  # rank 6: within 10
    assert tie_averaged([1, 1], [False, False])["RR_tieavg"] == 0
    with pytest.raises(ValueError, match="descending"):
        tie_averaged([1, 2], [True, False])


def test_demo_q07_all_zero_by_hand():
    # 13 sessions scored 0, 2 gold: E[RR] = sum_i (13 - i) / (78 i); Success@5 = 1 - C(11,5)/C(13,5)
    m = tie_averaged([0.0] * 13, [False, False, True] + [False] * 9 + [True])
    assert m["RR_tieavg"] == pytest.approx(sum((13 - i) / (78 * i) for i in range(1, 13)))
    assert m["Success@5_tieavg"] == pytest.approx(1 - 462 / 1287)


def test_first_gold_tied_means_a_non_gold_shares_its_score():
    assert first_gold_tied([2, 1, 1], [False, True, False])  # tied with one below it
    assert first_gold_tied([1, 1, 0], [False, True, False])  # tied with one above it
    assert not first_gold_tied([2, 1, 1], [True, True, False])  # alone at its score
    assert not first_gold_tied([1, 1], [True, True])  # tied only with gold: the rank of the first gold holds
    assert not first_gold_tied([1, 0, 0], [False, False, False])
    assert not first_gold_tied([1, 0, 0], [False, False, True], placed=2)  # the gold is not among the placed


def test_sessions_tied_beyond_the_cut_join_the_last_group():
    # retrieved a (1), b and c (0, the cut score); beyond the cut the gold g and d also score 0
    m = tie_metrics(["a", "b", "c"], [1, 0, 0], ["g"], tied_beyond=["g", "b", "d"], cut=0)
    assert m["RR_tieavg"] == pytest.approx((1 / 2 + 1 / 3 + 1 / 4 + 1 / 5) / 4)  # b counted once
    assert m["first_gold_tied"] is False  # the paper's ranking never placed g
    cut_off = tie_metrics(["a", "b", "c"], [1, 0, 0], ["g"], tied_beyond=["g", "d"], cut=None)
    assert cut_off["RR_tieavg"] == 0  # without a cut score, nothing beyond the depth counts


def _brute_force(scores, relevant, k):
    """Mean RR and Success@k over every order of the items that keeps the scores non-increasing."""
    rrs, hits = [], []
    for order in permutations(range(len(scores))):
        if any(scores[a] < scores[b] for a, b in zip(order, order[1:])):
            continue
        first = next((p for p, i in enumerate(order, 1) if relevant[i]), None)
        rrs.append(1 / first if first else 0.0)
        hits.append(first is not None and first <= k)
    return sum(rrs) / len(rrs), sum(hits) / len(hits)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([0.0, 0.5, 1.0, 2.0]), st.booleans()), min_size=1, max_size=7))
def test_tie_average_is_the_mean_over_every_order_of_the_ties(items):
    items = sorted(items, key=lambda x: -x[0])
    scores, relevant = [s for s, _ in items], [r for _, r in items]
    m = tie_averaged(scores, relevant)
    for k in (1, 3, 5):
        rr, success = _brute_force(scores, relevant, k)
        assert m["RR_tieavg"] == pytest.approx(rr) and m[f"Success@{k}_tieavg"] == pytest.approx(success)


def test_score_rankings_adds_tie_columns_and_the_summary_the_tie_share():
    rows = pd.DataFrame([
        {"question_id": "q1", "question_type": "t", "method": "M", "ranked_session_ids": ["a", "g", "b"],
         "gold_session_ids": ["g"], "abstention": False, "ranked_scores": [0.0, 0.0, 0.0],
         "ranked_session_scores": [0.0, 0.0, 0.0], "tied_beyond_depth": []},
        {"question_id": "q2", "question_type": "t", "method": "M", "ranked_session_ids": ["g", "a"],
         "gold_session_ids": ["g"], "abstention": False, "ranked_scores": [2.0, 1.0],
         "ranked_session_scores": [2.0, 1.0], "tied_beyond_depth": []},
        {"question_id": "q3", "question_type": "t", "method": "M", "ranked_session_ids": ["a"],
         "gold_session_ids": [], "abstention": True, "ranked_scores": [1.0], "ranked_session_scores": [1.0],
         "tied_beyond_depth": []}])
    scored = score_rankings(rows)
    assert scored["RR_tieavg"].iloc[0] == pytest.approx((1 + 1 / 2 + 1 / 3) / 3) and scored["RR"].iloc[0] == 0.5
    assert scored["first_gold_tied"].tolist()[:2] == [True, False] and pd.isna(scored["RR_tieavg"].iloc[2])
    summary = summarize(scored).iloc[0]
    assert summary["MRR"] == pytest.approx(0.75)
    assert summary["MRR_from_tie_order"] == pytest.approx(0.75 - (11 / 18 + 1) / 2)
    assert "RR_tieavg" not in score_rankings(rows.drop(columns="ranked_session_scores"))  # another system's


def test_a_tie_group_cut_by_the_depth_is_counted_whole():
    """demo_q07: TagGraph-Stopwords scores every note 0, so depth 3 cuts the group; the sessions left
    out are recorded and the tie-averaged metrics equal those at the full depth."""
    case = [c for c in load_dataset(DEMO_DATA) if c.case_id == "demo_q07"]
    deep = run_bench(case, ["TagGraph-Stopwords"], extractor="offline-v2", backend=None).rankings.iloc[0]
    shallow = run_bench(case, ["TagGraph-Stopwords"], extractor="offline-v2", depth=3, backend=None).rankings.iloc[0]
    assert set(deep["ranked_scores"]) == {0.0} and deep["tied_beyond_depth"] == []
    assert len(shallow["ranked_note_ids"]) == 3 and shallow["tied_beyond_depth"]
    assert set(shallow["ranked_session_ids"]) | set(shallow["tied_beyond_depth"]) == set(deep["ranked_session_ids"])
    for col in ("RR_tieavg", "Success@1_tieavg", "Success@3_tieavg", "Success@5_tieavg"):
        assert shallow[col] == pytest.approx(deep[col])
    assert deep["Success@5"] == 1 and deep["Success@5_tieavg"] == pytest.approx(1 - 462 / 1287)


def test_tie_order_placements_read_as_misses_in_the_report_the_explain_page_and_the_graph_panel():
    """demo_q08: TagGraph-Basic scores every note 0 and the gold lands at rank 3 by note order."""
    import json
    import re

    from taggraph.evaluation.placement import misses_table
    from taggraph.viz.miss_pages import MissPages
    from taggraph.viz.report import report_pages

    cases = [c for c in load_dataset(DEMO_DATA) if c.case_id in ("demo_q01", "demo_q08")]
    result = run_bench(cases, ["BM25", "TagGraph-Basic"], extractor="offline-v2", backend=None, pages=MissPages(1))
    misses = misses_table(result.rankings)
    assert list(misses["question_id"]) == ["demo_q08"] and misses["TagGraph-Basic"].iloc[0] == 3
    assert misses.attrs["tie_only"] == {("demo_q08", "TagGraph-Basic"): pytest.approx(1 - 252 / 792)}  # C(10,5)/C(12,5)
    pages = report_pages(result, "demo", "demo", None, cases, n_miss_pages=1)
    assert "<td class='tie num'>3 (tie, 68%)</td>" in pages["report.html"]
    assert "href='misses/demo_q08.explain.html'" in pages["report.html"] and "MRR_from_tie_order" in pages["report.md"]
    explain = pages["misses/demo_q08.explain.html"]
    assert re.search(r"<tr class='tie'><td>TagGraph-Basic</td><td class='verdict'>session rank 3 \(note rank \d\) only by "
                     r"tie order \(score 0\); not found by the method</td>", explain)
    graph = json.loads(re.search(r"var DATA = (.*);", pages["misses/demo_q08.graph.html"]).group(1))
    panel = [n["why"]["TagGraph-Basic"] for n in graph["nodes"] if n["kind"] == "file" and "TagGraph-Basic" in n["why"]]
    assert {p["cls"] for p in panel} >= {"tie"} and "hit" not in {p["cls"] for p in panel}  # every note scores 0


def test_scores_equal_but_for_float_rounding_are_one_tie():
    """1 + 1/3 + 1/3 + 1/3 sums to 1.9999999999999998 (demo_q06, TagGraph-Basic's gold note), tied with a 2.0 above it."""
    assert 1 + 1 / 3 + 1 / 3 + 1 / 3 != 2.0
    scores, relevant = [4.0, 2.0, 1 + 1 / 3 + 1 / 3 + 1 / 3, 1.0], [False, False, True, False]
    averaged = tie_averaged(scores, relevant)
    assert averaged["RR_tieavg"] == pytest.approx((1 / 2 + 1 / 3) / 2) and first_gold_tied(scores, relevant)
    assert tie_averaged([2.0, 1.999, 1.0], [False, True, False])["RR_tieavg"] == pytest.approx(1 / 2)  # a real gap


def test_a_gold_outside_the_top_k_only_by_tie_order_reads_as_tie_order_in_the_pages():
    """Every session scores 0 and the gold lands at session rank 9 of 13 by note order: outside the top 5 only by tie
    order (in a random order it is in them with 5/13), said so on the explain page and in the report's table."""
    from taggraph.evaluation.placement import misses_table, session_place
    from taggraph.viz.explain import verdict

    sessions = [f"s{i}" for i in range(13)]
    place = session_place(sessions, [0.0] * 13, {"s8"}, k=5)
    assert place.rank == 9 and not place.tie and place.tie_outside
    words, cls = verdict(type("E", (), {"rank": 9})(), place, 5, 40, 13)
    assert cls == "tie" and words == ("session rank 9 (note rank 9), outside the top 5 only by tie order (score 0); "
                                      "not found by the method")
    assert not session_place(sessions, [float(13 - i) for i in range(13)], {"s8"}, k=5).tie_outside  # no tie at all
    rankings = score_rankings(pd.DataFrame({
        "question_id": ["q"], "question_type": ["t"], "method": ["M"], "abstention": [False],
        "ranked_session_ids": [sessions], "gold_session_ids": [["s8"]], "ranked_scores": [[0.0] * 13],
        "ranked_session_scores": [[0.0] * 13], "tied_beyond_depth": [[]]}))
    assert misses_table(rankings).attrs["tie_only"] == {("q", "M"): pytest.approx(1 - 792 / 1287)}  # 1 - C(12,5)/C(13,5)
