import subprocess
import sys

import pytest

from taggraph.methods import make_retriever
from taggraph.core.graph import concept_node

from tests.helpers.stores import HAND_ROWS, make_store

FILLERS = [
    ("f1", "How do I use a hammer?", "Hold it by the handle.", {"what": ["tool/hammer", "howto/use"]}),
    ("f2", "How do I use a drill?", "Pick the right bit.", {"what": ["tool/drill", "howto/use"]}),
    ("f3", "Is it going to rain?", "Maybe later.", {"what": ["weather/rain"]}),
    ("f4", "Nice sunny day.", "Enjoy it.", {"what": ["weather/sun"]}),
]


def ranked(method, store, query):
    return [(r.note_id, round(r.score, 4)) for r in make_retriever(method, store, rank_all_files=False).query(query)]


def test_direct_match_outranks_ontology_neighbours(hand_store):
    # yoga -> activity/yoga (hops 0, score 1); activity (1 hop, no files); activity/running (2 hops, 1/3)
    assert ranked("TagGraph-Basic", hand_store, "yoga") == [("s1#0", 1.0), ("s3#0", 0.3333)]
    assert ranked("TagGraph-Basic", hand_store, "dog") == [("s2#0", 1.0), ("s5#0", 0.3333)]


def test_parent_token_expands_to_children(hand_store):
    # "pet" matches concepts pet and pet_name: pet/dog, pet/cat, pet_name/luna are one hop away
    assert ranked("TagGraph-Basic", hand_store, "my pet") == [("s5#0", 1.0), ("s2#0", 0.5)]


def test_plural_query_tokens_match_singular_tags(hand_store):
    assert ranked("TagGraph-Basic", hand_store, "dogs")[0] == ("s2#0", 1.0)


def test_ties_break_by_earlier_note():
    store = make_store([("a", "x", "y", {"what": ["pet/dog"]}), ("b", "x", "y", {"what": ["pet/dog"]})])
    assert [r.note_id for r in make_retriever("TagGraph-Basic", store, rank_all_files=False).query("dog")] == ["a#0", "b#0"]


def test_stopwords_drop_generic_tokens():
    store = make_store(HAND_ROWS + FILLERS)  # 9 files: a token in 2 of them (22%) is generic
    basic = ranked("TagGraph-Basic", store, "how do I use my dog")
    assert {"f1#0", "f2#0"} <= {n for n, _ in basic}
    stop = make_retriever("TagGraph-Stopwords", store, rank_all_files=False)
    assert [r.note_id for r in stop.query("how do I use my dog")] == ["s2#0", "s5#0"]
    kept, dropped = stop.tokens("how do I use my dog")
    assert "use" in dropped and kept == ["my", "dog"]  # "my" is in one file of nine
    exp = stop.explain("how do I use it", "f1#0")
    assert not exp.retrieved and "dropped as stopwords" in exp.reason


def test_tfidf_reorders_within_graph_candidates():
    store = make_store(HAND_ROWS + FILLERS)
    # "weather" reaches f3 and f4 (1 hop each, equal graph score); "rain" is rare content in f3 only
    tf = make_retriever("TagGraph-TFIDF", store, rank_all_files=False)
    assert [r.note_id for r in tf.query("weather sun")][:1] == ["f4#0"]
    scores = dict(ranked("TagGraph-TFIDF", store, "sun weather"))
    assert scores["f4#0"] > scores.get("f3#0", 0)
    # content overlap never adds candidates the traversal did not reach
    assert "s4#0" not in scores


def test_explain_paths_and_missing(hand_store):
    tg = make_retriever("TagGraph-Basic", hand_store, rank_all_files=False)
    exp = tg.explain("yoga", "s3#0")
    assert exp.retrieved and exp.rank == 2
    best = exp.details["paths"][0]
    assert best["hops"] == 2 and best["path"][0] == "concept:activity/yoga" and best["path"][-1] == "file:s3#0"
    assert [(o["note_id"], o["rank"]) for o in exp.outranked_by] == [("s1#0", 1)]
    miss = tg.explain("yoga", "s4#0")
    assert not miss.retrieved and "no helpful tag" in miss.reason


@pytest.mark.parametrize("method", ["TagGraph-Basic", "TagGraph-Stopwords", "TagGraph-TFIDF"])
@pytest.mark.parametrize("query", ["", "   ", "the the the", "🙂", "東京", "q" * 10_000])
def test_hostile_queries(hand_store, method, query):
    assert isinstance(make_retriever(method, hand_store, rank_all_files=False).query(query), list)


def test_stopword_fallback_switch_keeps_an_all_generic_query():
    store = make_store(HAND_ROWS)  # 5 files: every token in a file is above 15%
    assert make_retriever("TagGraph-Stopwords", store, rank_all_files=False).query("dog") == []
    rescued = make_retriever("TagGraph-Stopwords", store, stopword_fallback=True, rank_all_files=False)
    assert [r.note_id for r in rescued.query("dog")][:1] == ["s2#0"]


def test_the_face_lists_bench_compare_explain_and_views_and_imports_them_when_first_used():
    """`import taggraph` brings no runs, studies or viz room; `tg.bench`, `tg.compare`, `tg.explain` and
    `tg.views` (listed in `__all__` and `dir(tg)`) bring them on first use."""
    code = ("import sys, taggraph as tg\n"
            "rooms = lambda: sorted({m.split('.')[1] for m in sys.modules "
            "if m.startswith(('taggraph.runs', 'taggraph.studies', 'taggraph.viz'))})\n"
            "before = rooms()\n"
            "names = [tg.bench.__name__, tg.compare.__name__, tg.explain.__name__, tg.views.__name__]\n"
            "listed = all(n in tg.__all__ and n in dir(tg) for n in ('bench', 'compare', 'explain', 'views', 'load'))\n"
            "print(before, rooms(), names, listed)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == ("[] ['runs', 'studies', 'viz'] ['bench', 'compare_runs', 'explain', 'taggraph.views']"
                           " True")


def test_a_tag_a_kept_token_walks_from_is_no_break_though_a_dropped_token_matches_it_too():
    """'marathon' (6 of 11 notes) is dropped as a stopword, 'chicago' kept: both match event/chicago_marathon, and the
    walk from it reaches the note, so the page must not say the walk stops there."""
    rows = [("m", "I ran the Chicago marathon.", "Well done.", {"what": ["event/chicago_marathon"]}),
            *[(f"t{i}", f"Marathon training, week {i}.", "Keep going.", {}) for i in range(5)]]
    method = make_retriever("TagGraph-Stopwords", make_store(HAND_ROWS + rows), stopword_df=0.5)
    detail = method.explain("chicago marathon", "m#0").details
    assert detail["walk"] and "event/chicago_marathon" in str(detail["walk"])
    assert concept_node("event/chicago_marathon") not in [b["node"] for b in detail["walk_breaks"]]
