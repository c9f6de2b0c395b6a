"""Trails through a top-level node are named sibling expansion; bound_top_level stops them."""

from taggraph.methods import make_retriever
from taggraph.methods.taggraph_traversal import expansion


def test_evidence_names_sibling_expansion(hand_store):
    running = next(n for n in hand_store.notes if n.note_id == "s3#0")
    paths = make_retriever("TagGraph-Basic", hand_store).explain("yoga", running.note_id).details["paths"]
    assert [p["expansion"] for p in paths] == ["sibling expansion via top-level node 'activity'"]
    assert expansion(["activity/yoga"]) == "direct match"
    assert expansion(["pet", "pet/dog"]) == "ontology parent/child"


def test_bound_top_level_drops_sibling_candidates_only(hand_store):
    assert make_retriever("TagGraph-TFIDF-boundTopLevel", hand_store).config()["bound_top_level"] is True
    bounded = make_retriever("TagGraph-Basic", hand_store, bound_top_level=True, rank_all_files=False)  # 5 notes: Stopwords drops "yoga"
    assert [r.note_id for r in bounded.query("yoga")] == ["s1#0"]
    # a query naming the top-level node itself still reaches its children
    assert {r.note_id for r in bounded.query("pet")} == {"s2#0", "s5#0"}
    assert [r.note_id for r in make_retriever("TagGraph-Basic", hand_store, rank_all_files=False).query("yoga")] \
        == ["s1#0", "s3#0"]


def test_the_reason_names_the_matched_concept_and_how_it_reached_the_tag(hand_store):
    from taggraph.viz.explain import explain_html

    reason = make_retriever("TagGraph-Basic", hand_store).explain("yoga", "s3#0").reason
    assert ("'yoga' matches activity/yoga, which reaches activity/running by sibling expansion via top-level "
            "node 'activity' (2 hops)") in reason
    page = explain_html(hand_store, "yoga", "s3#0", ["TagGraph-Basic"])
    assert "matches <b>what:activity/yoga</b>, reaching <b>what:activity/running</b> at 2 ontology hop(s)" in page
