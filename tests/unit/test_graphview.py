import html
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from taggraph.extractors.base import Extraction
from taggraph.methods import make_retriever
from taggraph.core.store import Interaction
from taggraph.viz.graph.page import KIND_STYLE, WRAP_CHARS, graph_html, save_graph_html, wrap_label

from tests.helpers.stores import HAND_ROWS, make_store

HOSTILE = [
    "<script>alert(1)</script>",
    '"><img src=x onerror=alert(1)>',
    "</script><script>document.title='pwned'</script>",
]
EXTERNAL = re.compile(
    r"""(?:\b(?:src|href|action|poster|data)\s*=\s*["']?\s*(?:https?:)?//)"""  # attributes
    r"""|(?:<link\b[^>]*https?://)|(?:<script\b[^>]*\bsrc\s*=)"""               # link tags, script src
    r"""|(?:url\(\s*["']?\s*(?:https?:)?//)|(?:@import\s+["']?(?:url\()?\s*["']?(?:https?:)?//)""",  # CSS
    re.IGNORECASE)


@pytest.fixture
def hostile_store():
    store = make_store(HAND_ROWS)
    for i, text in enumerate(HOSTILE):
        store.remember(Interaction(f"h{i}{text}", f"My dog {text} likes yoga", f"reply {text}"),
                       Extraction(what=["pet/dog", "activity/yoga"], extra=[text]))
    return store


def page_data(page: str) -> dict:
    return json.loads(re.search(r"^var DATA = (.*);$", page, re.MULTILINE).group(1))


def test_page_is_offline(hostile_store, tmp_path):
    path = save_graph_html(tmp_path / "g.html", hostile_store, question="my dog")
    page = path.read_text(encoding="utf-8")
    assert "vis.Network" in page and "<canvas" not in page  # vis-network inlined, drawn at runtime
    assert EXTERNAL.findall(page) == []
    assert EXTERNAL.search('<script src="https://cdn.jsdelivr.net/npm/bootstrap.js">')  # the check bites


def test_hostile_text_appears_only_escaped(hostile_store):
    results = {"BM25<b>": make_retriever("BM25", hostile_store).query("dog yoga")}
    page = graph_html(hostile_store, question="dog <script>alert(1)</script> __DATA__ __VIS_JS__",
                      results_by_method=results, gold_note_ids=[hostile_store.notes[-1].note_id])
    for text in HOSTILE:
        assert text not in page
        assert html.escape(text) in page  # in a tooltip, escaped
    assert "<b>M" not in page and "BM25&lt;b&gt;" in page
    assert "__DATA__ __VIS_JS__" in page  # placeholders in data are left as text
    assert page.count("</script>") == 2  # vis-network and ours: no data closed one early
    # the JSON payload cannot close the script element
    assert "</" not in re.search(r"^var DATA = (.*);$", page, re.MULTILINE).group(1)


def test_node_kinds_have_distinct_colours_and_shapes(hand_store):
    nodes = page_data(graph_html(hand_store))["nodes"]
    styles = {n["kind"]: (n["bg"], n["shape"]) for n in nodes}
    assert set(styles) == set(KIND_STYLE)
    assert len({c for c, _ in styles.values()}) == 4 and len({s for _, s in styles.values()}) == 4


def test_gold_and_retrieved_are_marked(hand_store):
    results = {"BM25": make_retriever("BM25", hand_store).query("dog beagle")}
    data = page_data(graph_html(hand_store, question="dog", results_by_method=results, gold_note_ids=["s2#0"]))
    node = {n["id"]: n for n in data["nodes"]}
    assert node["file:s2#0"]["shape"] == "star" and node["file:s2#0"]["ranks"] == {"BM25": 1}
    assert node["concept:pet/dog"]["borderWidth"] > 1  # matched by the question
    assert data["methods"] == ["BM25"]


def test_neighbourhood_filter_and_cap(hand_store):
    ids = lambda **kw: {n["id"] for n in page_data(graph_html(hand_store, **kw))["nodes"]}
    near = ids(neighbourhood_of="yoga", hops=2)
    assert {"concept:activity/yoga", "file:s1#0"} <= near
    assert "concept:food/pasta" not in near and "file:s4#0" not in near
    assert len(ids(max_nodes=7)) == 7
    assert ids(neighbourhood_of="zzz") == set()


def test_page_is_identical_across_hash_seeds():
    """Same store, same page, even though the base graph's node order depends on PYTHONHASHSEED."""
    script = ("import hashlib; from tests.helpers.stores import HAND_ROWS, make_store; "
              "from taggraph.viz.graph.page import graph_html; "
              "print(hashlib.sha256(graph_html(make_store(HAND_ROWS), question='dog').encode()).hexdigest())")
    repo = Path(__file__).parents[2]
    digests = {subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, cwd=repo,
                              env={**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(repo)}).stdout
               for seed in ("1", "2", "3")}
    assert len(digests) == 1


def test_topics_are_named_by_their_rarest_tags(hand_store):
    from taggraph.viz.names import topic_name

    topic = next(t for t, frame in hand_store.graph.frame_of_topic.items() if ("extra", "breed/beagle") in frame)
    assert topic_name(hand_store, topic) == "beagle · dog"  # 'user' is on four notes: not telling
    labels = {n["id"]: n["label"] for n in page_data(graph_html(hand_store))["nodes"]}
    assert labels[topic] == "beagle · dog" and not any(v.startswith("topic ") for v in labels.values())


def test_trimming_keeps_the_paths_from_the_question_to_gold_notes(hand_store):
    page = graph_html(hand_store, question="my beagle", gold_note_ids=["s2#0"], max_nodes=4)
    ids = {n["id"] for n in page_data(page)["nodes"]}
    assert "file:s2#0" in ids and "concept:breed/beagle" in ids
    assert any(i.startswith("topic:") for i in ids)  # the gold note hangs on its topic, not alone
    assert page_data(page)["edges"]


def test_gold_keeps_its_colour_on_hover_and_file_nodes_carry_their_explanation(hand_store):
    retrievers = {m: make_retriever(m, hand_store) for m in ("BM25", "TagGraph-Basic")}
    page = graph_html(hand_store, question="my beagle", gold_note_ids=["s2#0"], retrievers=retrievers,
                      results_by_method={m: r.query("my beagle") for m, r in retrievers.items()})
    gold = next(n for n in page_data(page)["nodes"] if n["id"] == "file:s2#0")
    assert gold["color"]["hover"] == gold["color"]["highlight"] == {"background": "#f2b701", "border": "#f2b701"}
    assert gold["why"]["BM25"]["verdict"] == "session rank 1 (note rank 1): in the top 5 by sessions" and "beagle" in gold["why"]["BM25"]["text"]
    assert "Edges:" in page and "topic–file" in page


def test_dense_graphs_label_only_matched_concepts_and_the_notes_and_topics_that_matter(monkeypatch):
    """A whole drawing laid out in columns labels every node; a larger one, laid out by the spring layout, only the
    telling ones."""
    from taggraph._infra.config import DEMO_DATA
    from taggraph.datasets import load_dataset
    from taggraph.runs.runner import build_store
    from taggraph.viz.graph import page as graphview
    from taggraph.viz.graph.page import DENSE_LABELS

    store = build_store(load_dataset(DEMO_DATA, limit=1)[0], "offline")
    question = "what breed is my dog"
    ranked = make_retriever("BM25", store).query(question)
    page = dict(question=question, results_by_method={"BM25": ranked}, gold_note_ids=["demo_s23#0"])
    in_columns = page_data(graph_html(store, **page))["nodes"]
    assert DENSE_LABELS < len(in_columns) <= graphview.COLUMNS_DRAWN and all(n["label"].strip() for n in in_columns)
    monkeypatch.setattr(graphview, "COLUMNS_DRAWN", DENSE_LABELS)
    nodes = page_data(graph_html(store, **page))["nodes"]
    assert len(nodes) > DENSE_LABELS
    labelled = {n["id"] for n in nodes if n["label"].strip()}
    concepts = [n for n in nodes if n["kind"] in ("tag", "ontology")]
    assert "concept:pet/dog" in labelled and len(labelled & {n["id"] for n in concepts}) < len(concepts) / 4
    told = {"file:demo_s23#0"} | {f"file:{r.note_id}" for r in ranked[:5]}
    assert told <= labelled  # gold and top 5 keep their label, and so do the topics on their paths
    files_topics = [n for n in nodes if n["kind"] in ("file", "topic")]
    assert any(n["kind"] == "topic" and n["id"] in labelled for n in files_topics)
    assert len(labelled & {n["id"] for n in files_topics}) < len(files_topics) * 3 / 4
    small = page_data(graph_html(store, question="dog", max_nodes=DENSE_LABELS))["nodes"]
    assert all(n["label"].strip() for n in small)  # a sparse drawing labels everything


def test_topic_names_leave_out_tags_most_notes_carry_and_prefer_telling_ties():
    from taggraph.viz.names import topic_name

    store = make_store([
        ("a", "I run.", "ok", {"who": ["user"], "what": ["activity/running"]}),
        ("b", "Fee due Oct 8.", "ok", {"who": ["user"], "what": ["topic/registration_fee"],
                                        "when": ["date/october_8", "month/october"]}),
        ("c", "Hi.", "ok", {"who": ["user"]}),
    ])
    names = {topic_name(store, t) for t in store.graph.frame_of_topic}
    assert names == {"running", "registration_fee · october_8", "user"}  # 'user' only where nothing else is left


MOVED = [  # the gold note (s3: where the user lives now) and what outranks it
    ("s1", "I moved to Berkeley last spring.", "Enjoy the Bay.", {"who": ["user"], "where": ["city/berkeley"]}),
    ("s2", "Can you give me a pasta recipe?", "Boil the pasta.", {"what": ["food/pasta", "cooking/recipe"]}),
    ("s3", "We now live in Oakland, by the lake.", "Lovely.",
     {"who": ["user"], "where": ["city/oakland"], "what": ["place/lake"]}),
    ("s4", "I do yoga every morning.", "Yoga helps.", {"who": ["user"], "what": ["activity/yoga"]}),
]
WHERE = "which city do I live in now"


def moved_page(k: int = 1, **kwargs) -> dict:
    """The graph page's data for WHERE over MOVED (gold s3#0) with TagGraph-Basic, -Stopwords and BM25."""
    store = make_store(MOVED)
    retrievers = {m: make_retriever(m, store) for m in ("TagGraph-Basic", "TagGraph-Stopwords", "BM25")}
    return page_data(graph_html(store, question=WHERE, gold_note_ids=["s3#0"], retrievers=retrievers, top_k=k,
                                results_by_method={m: r.query(WHERE) for m, r in retrievers.items()}, **kwargs))


def test_node_names_are_unique_and_a_tag_reads_as_on_the_tag_line():
    from taggraph.viz.names import node_names

    store = make_store([*MOVED, ("s5", "Paris is a city of light.", "Yes.", {"what": ["area/city"]}),
                        ("s6", "City life.", "Busy.", {"who": ["user"], "where": ["city"]})])
    names = node_names(store)
    assert len(set(names.values())) == len(names)
    assert names["concept:city/berkeley"] == "where:city/berkeley" and names["concept:area/city"] == "what:area/city"
    assert names["concept:city"] == "where:city"  # three nodes end in 'city', each reads otherwise
    assert names["file:s3#0"] == "s3#0" and names["concept:cooking"] == "cooking"
    assert [n for n in names.values() if n.split(":")[-1] == "city"] == ["where:city"]


def test_the_explanation_subgraph_holds_the_question_the_gold_the_notes_above_and_the_walks():
    from taggraph.evaluation.placement import missed_by
    from taggraph.runs.retrieval import file_explanations
    from taggraph.viz.graph.page import explained_subgraph
    from taggraph.viz.graph.ranks import indexed

    store = make_store(MOVED)
    retrievers = {m: make_retriever(m, store) for m in ("TagGraph-Basic", "TagGraph-Stopwords", "BM25")}
    rankings = {m: [(r.note_id, r.score) for r in retriever.query(WHERE, 10)] for m, retriever in retrievers.items()}
    by_index = {m: indexed(store, r) for m, r in rankings.items()}
    assert missed_by(by_index, store, ["s3#0"], 1) == ["TagGraph-Basic", "TagGraph-Stopwords"]  # BM25 hits
    ug = store.graph.to_networkx().to_undirected()
    explained = explained_subgraph(store, ug, ["concept:city"], ["s3#0"], rankings,
                                   file_explanations(store, WHERE, retrievers), 1)
    assert explained.methods == ["TagGraph-Basic", "TagGraph-Stopwords"]
    assert explained.targets == {"TagGraph-Basic": ["s1#0"], "TagGraph-Stopwords": ["s1#0"]}
    assert {"concept:city", "concept:city/oakland", "file:s3#0", "concept:city/berkeley", "file:s1#0"} <= set(
        explained.nodes)
    assert not {"file:s2#0", "file:s4#0", "concept:food/pasta"} & set(explained.nodes)  # outranks nothing at k = 1
    # TagGraph-Basic walked to s1#0 and to the gold note; the question's possible links reach both too. Its walk to
    # the gold note, the one its header tells of, is its `paths` (thick); its walk to s1#0 is in `walked` only
    assert explained.walked[("concept:city", "concept:city/berkeley")] == ["TagGraph-Basic"]
    assert explained.walked[("concept:city", "concept:city/oakland")] == ["TagGraph-Basic"]
    assert ("concept:city", "concept:city/oakland") in explained.paths
    assert ("concept:city", "concept:city/berkeley") not in explained.paths
    topic = next(t for t in ug["file:s3#0"] if t.startswith("topic:"))
    assert ("file:s3#0", topic) in explained.possible  # the question's link reaches the gold note
    assert not any("BM25" in ms for ms in explained.paths.values())  # BM25 walks no graph


def test_gold_rank_counts_notes_and_sessions_and_names_tie_order():
    from taggraph.viz.graph.page import gold_rank

    store = make_store([*MOVED, ("s1", "And Berkeley has good coffee.", "It does.", {"what": ["drink/coffee"]})])
    ranking = [("s1#0", 0.5), ("s1#1", 0.4), ("s2#0", 0.0), ("s3#0", 0.0), ("s4#0", 0.0)]
    # sessions s1 (0.5), then s2, s3, s4 tied at 0: s3 is 3rd, in the top 3 only by tie order
    assert gold_rank(store, ranking, "s3#0", 3) == {
        "note": 4, "session": 3, "tie": True, "text": "s3#0: note rank 4, session rank 3 only by tie order (score 0)"}
    in_top_4 = gold_rank(store, ranking, "s3#0", 4)  # every order of the three keeps it in the top 4, not its RR
    assert not in_top_4["tie"] and in_top_4["text"].endswith(
        "session rank 3 (it rests on tie order: tied with 2 other session(s), tie-averaged RR 0.361, not 0.333)")
    outside = gold_rank(store, ranking, "s3#0", 2)  # outside the top 2: a miss, not a tie, as the side panel says
    assert not outside["tie"] and outside["text"].endswith("session rank 3, outside the top 2 only by tie order (score 0)")
    assert gold_rank(store, ranking, "s1#1", 5)["text"] == "s1#1: note rank 2, session rank 1"
    assert gold_rank(store, ranking[:2], "s3#0", 5)["note"] is None
    # the run's depth, as the explain page and the metrics count: beyond it the session has no rank (the graph
    # page said 'session rank 3' where the explain page said '–' and the run's RR was 0)
    beyond = gold_rank(store, ranking, "s3#0", 3, depth=3)
    assert beyond["note"] == 4 and beyond["session"] is None and "session not ranked" in beyond["text"]
    assert gold_rank(store, ranking, "s3#0", 3, depth=4)["session"] == 3


def test_a_top_k_place_owed_to_tie_order_is_flagged_and_missed_at_any_score():
    from taggraph.evaluation.placement import missed_by
    from taggraph.viz.graph.ranks import indexed

    notes = {n["id"]: n for n in moved_page(k=1)["nodes"] if n["kind"] == "file"}
    # top 1: TagGraph-Basic's s1#0 (0.5) ties with s3#0 (0.5), -Stopwords' with every note (0); BM25 earns it
    assert notes["file:s1#0"]["ties"] == {"TagGraph-Basic": True, "TagGraph-Stopwords": True}
    assert notes["file:s3#0"]["ties"] == {} and notes["file:s3#0"]["ranks"]["BM25"] == 1
    store = make_store(MOVED)
    basic = indexed(store, [("s1#0", 0.5), ("s3#0", 0.5), ("s2#0", 0.0), ("s4#0", 0.0)])
    assert missed_by({"TagGraph-Basic": basic}, store, ["s1#0"], 1) == ["TagGraph-Basic"]
    assert missed_by({"TagGraph-Basic": basic}, store, ["s1#0"], 2) == []


def test_tooltip_snippets_end_at_a_word():
    from taggraph.viz.graph.labels import note_snippet

    assert note_snippet("I moved to  Berkeley\nlast spring", 16) == "I moved to…"  # was 'I moved to Berk…'
    assert note_snippet("a <b> tag", 6) == "a &lt;b&gt;…"


def test_a_miss_page_opens_on_the_subgraph_every_node_named_and_the_paths_marked():
    data = moved_page()
    sub = [n for n in data["nodes"] if n["sub"]]
    assert data["sub"] and 0 < len(sub) < len(data["nodes"])
    assert all(n["full"].strip() for n in sub) and len({n["full"] for n in sub}) == len(sub)
    gold = next(n for n in sub if n["id"] == "file:s3#0")
    assert gold["goldRank"]["TagGraph-Stopwords"] == "note 3 · session 3"  # outside the top 1: a plain miss
    assert "s3#0: note rank 3, session rank 3" in data["goldText"]["TagGraph-Stopwords"]
    marked = {e["id"]: (e["walked"], e["possible"]) for e in data["edges"] if e["sub"] and (e["walked"] or e["possible"])}
    assert marked["concept:city|concept:city/berkeley"] == (["TagGraph-Basic"], True)
    whole = [n for n in data["nodes"] if n["whole"]]
    assert len(whole) > len(sub)  # the switch shows more
    assert all(isinstance(n["sx"], float) for n in sub)
    page = graph_html(make_store(MOVED), question=WHERE, gold_note_ids=["s3#0"])
    assert 'id="whole">' in page and "<label>· <input" in page  # the switch, shown and off
    assert 'id="whole" checked>' in graph_html(make_store(MOVED), question=WHERE, gold_note_ids=["s3#0"],
                                               whole_graph=True)  # taggraph graph --whole


def boxes_apart(pos: dict, labels: dict, sizes: dict) -> bool:
    """Whether no two nodes' boxes (the node, its label under it, `label_width` wide) overlap."""
    from taggraph.viz.graph.layout import label_width

    def box(n):
        (x, y), half = pos[n], max(label_width(labels[n]), 2 * sizes[n]) / 2
        return x - half, y - sizes[n], x + half, y + sizes[n] + 18 * (1 + labels[n].count("\n"))

    items = [box(n) for n in pos]
    return not any(a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]
                   for i, a in enumerate(items) for b in items[i + 1:])


def test_the_subgraph_layout_leaves_room_for_every_label():
    data = moved_page()
    sub = {n["id"]: n for n in data["nodes"] if n["sub"]}
    assert boxes_apart({i: (n["sx"], n["sy"]) for i, n in sub.items()}, {i: n["full"] for i, n in sub.items()},
                       {i: n["size"] for i, n in sub.items()})
    columns = sorted({n["sx"] for n in sub.values()})  # question concepts, tags, topics, notes: left to right
    assert [sub[i]["sx"] for i in ("concept:city", "concept:city/oakland", "file:s3#0")] == [
        columns[0], columns[1], columns[-1]]


def test_a_tall_column_zigzags_so_the_drawing_fits_larger():
    import networkx as nx

    from taggraph.viz.graph.layout import columns_layout

    g = nx.Graph([("concept:c", f"topic:{i}") for i in range(30)] + [(f"topic:{i}", f"file:n{i}") for i in range(30)])
    kinds = {n: n.split(":")[0].replace("concept", "tag") for n in g}
    labels = {n: n.split(":")[1] + ("\n★ note 9 · session 9" if n == "file:n3" else "") for n in g}
    sizes = {n: 24 if n == "file:n3" else 12 for n in g}
    pos = columns_layout(g, kinds, {"concept:c"}, labels, sizes)
    assert len({pos[f"file:n{i}"][0] for i in range(30)}) > 1  # the notes over sub-columns
    assert boxes_apart(pos, labels, sizes)
    height = max(y for _, y in pos.values()) - min(y for _, y in pos.values())
    assert height < 30 * 50  # a single column of 30 rows would be over 1,500 px tall


def test_the_notebooks_tables_and_the_explain_page_name_nodes_as_the_graph_page():
    import re as regex

    from taggraph.runs.retrieval import retrieve_all
    from taggraph.viz.explain import explain_html, top_table

    store = make_store(MOVED)
    names = {n["id"]: n["full"] for n in moved_page(k=5, whole_graph=True)["nodes"]}
    top = top_table(retrieve_all(store, WHERE, ["TagGraph-Basic"], explain=True), ["s3#0"], k=1, store=store)
    chain = top["evidence"].iloc[0].split("; ")[0].split(" -> ")[1:]  # "'city' -> city -> ... -> s1#0"
    assert chain == [names[n] for n in ("concept:city", "concept:city/berkeley", "topic:0", "file:s1#0")]
    page = explain_html(store, WHERE, "s3#0", ["TagGraph-Basic"])
    boxes = [html.unescape(b) for b in regex.findall(r"<span class='node'[^>]*>([^<]*)</span>", page)]
    assert {"where:city/oakland", names["topic:2"], "s3#0"} <= set(boxes) and not any(
        b.startswith(("topic ", "note ")) for b in boxes)


def test_the_subgraph_holds_the_best_note_of_each_top_k_session_above_the_gold():
    """A method ranks two notes of session a first, then b, c, then the gold: with k = 3 the view draws a's best note,
    b's and c's (the three sessions its rings mark), not a's second note in place of c's."""
    from taggraph.viz.graph.subgraph import sessions_above

    store = make_store([("a", "x", "ok", {}), ("a", "y", "ok", {}), ("b", "z", "ok", {}), ("c", "w", "ok", {}),
                        ("g", "v", "ok", {})])
    ranking = ["a#0", "a#1", "b#0", "c#0", "g#0"]
    assert sessions_above(store, ranking, {"g"}, 3) == ["a#0", "b#0", "c#0"]
    assert sessions_above(store, ranking, {"b"}, 3) == ["a#0"]


def test_a_long_name_is_drawn_on_two_lines_broken_where_it_reads_best():
    assert wrap_label("what:pet/dog") == "what:pet/dog"  # short: as it is
    assert wrap_label("rockridge_music_school · marguerite_olsen") == "rockridge_music_school ·\nmarguerite_olsen"
    assert wrap_label("who:organization/rockridge_music_school") == "who:organization/\nrockridge_music_school"
    assert wrap_label("cedar_street · home_office") == "cedar_street ·\nhome_office"  # ' · ' before '_'
    assert wrap_label("northwind_analytics · sf") == "northwind_analytics ·\nsf"  # between names, never in one
    assert wrap_label("redwood_regional_park · stream_trail") == "redwood_regional_park ·\nstream_trail"
    assert wrap_label("redwood_regional_park") == "redwood_\nregional_park"  # one name: inside it, the last resort
    assert wrap_label("what:relationship") == "what:relationship"
    assert wrap_label("x" * 40) == "x" * 40  # nowhere to break


@given(st.text(alphabet="ab_/: ·", max_size=60))
def test_wrapping_loses_no_character_and_makes_at_most_two_lines(name):
    label = wrap_label(name)
    assert label.count("\n") <= 1 and label.replace("\n", "").replace(" ", "") == name.replace(" ", "")
    assert label == name or len(name) > WRAP_CHARS


def test_the_header_lists_gold_notes_by_the_session_rank_that_counts():
    """LoCoMo conv-26_q7 under BM25 named D2:13 (note 124, session 10) before D3:13 (note 202, session 7)."""
    from taggraph.viz.graph.labels import gold_text

    places = [{"note": 124, "session": 10, "text": "D2:13"}, {"note": 202, "session": 7, "text": "D3:13"},
              {"note": 3, "session": None, "text": "beyond"}, {"note": None, "session": None, "text": "unranked"}]
    assert gold_text(places, shown=4) == "D3:13; D2:13; beyond; unranked"


def test_the_note_that_dated_a_time_window_is_marked_and_told_in_the_legend(monkeypatch):
    """An explanation that names the note dating its time window (TagGraph-Fusion's ``details['time_anchors']``,
    'before I moved' dated by s1#0) gets that note drawn in both views, ringed green, its label and tooltip saying
    so, and a legend entry saying what the mark means; without one, no mark and no entry."""
    import taggraph.viz.graph.page as graph_page_module

    explain = graph_page_module.file_explanations

    def dated(*args, **kwargs):
        out = explain(*args, **kwargs)
        for by_note in out.values():
            for e in by_note.values():
                e.details["time_anchors"] = [{"clause": "i moved", "direction": "before", "note_id": "s1#0",
                                              "date": "2023-03-01", "matched": ["moved"]}]
        return out

    assert "dated the time window" not in json.dumps(moved_page())
    monkeypatch.setattr(graph_page_module, "file_explanations", dated)
    data = moved_page()
    node = next(n for n in data["nodes"] if n["id"] == "file:s1#0")
    assert node["sub"] and node["whole"] and node["border0"] == graph_page_module.ANCHOR_BORDER
    assert "⏱ dated the time window" in node["wrapped"] and "is read as before 2023-03-01" in node["title"]
    page = graph_html(make_store(MOVED), question=WHERE, gold_note_ids=["s3#0"],
                      retrievers={"BM25": make_retriever("BM25", make_store(MOVED))})
    assert "dated a clause of the question" in page
