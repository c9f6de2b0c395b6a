"""TagGraph's rank_all_files switch (on by default, the paper's reading): zero-score notes ranked last, in
note order."""

from taggraph.methods import make_retriever

from tests.helpers.stores import HAND_ROWS, make_store


def test_switched_off_ranks_only_traversal_candidates(hand_store):
    ranked = make_retriever("TagGraph-Basic", hand_store, rank_all_files=False).query("yoga")
    assert [r.note_id for r in ranked] == ["s1#0", "s3#0"]


def test_on_by_default(hand_store):
    assert make_retriever("TagGraph-TFIDF", hand_store).config()["rank_all_files"] is True


def test_ranks_every_note_with_unreached_ones_last_in_note_order(hand_store):
    for method in ("TagGraph-Basic", "TagGraph-Stopwords", "TagGraph-TFIDF"):
        results = make_retriever(method, hand_store, rank_all_files=True).query("yoga")
        ids = [r.note_id for r in results]
        assert ids[0] == "s1#0" and sorted(ids) == sorted(f"{r[0]}#0" for r in HAND_ROWS)
        zero = [r.note_id for r in results if r.score == 0]
        assert zero == [i for i in ["s1#0", "s2#0", "s3#0", "s4#0", "s5#0"] if i in zero] and zero == ids[-len(zero):]


def test_depth_still_caps_the_ranking():
    store = make_store(HAND_ROWS * 3)
    assert len(make_retriever("TagGraph-Basic", store, rank_all_files=True).query("nothing matches", k=4)) == 4
