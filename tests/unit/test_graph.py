from hypothesis import given, settings
from hypothesis import strategies as st

from taggraph.extractors.base import Extraction
from taggraph.core.graph import SIMILARITY_MIN, BaseGraph
from taggraph.core.notes import Note
from taggraph.core.store import Interaction

from tests.helpers.stores import HAND_ROWS, make_store


def kinds(g, kind):
    return {n for n, k in g.nodes(data="kind") if k == kind}


def test_node_kinds_and_edges(hand_store):
    g = hand_store.graph.g
    assert "concept:activity" in kinds(g, "ontology")
    assert {"concept:activity/yoga", "concept:user", "concept:city/san_diego"} <= kinds(g, "tag")
    assert len(kinds(g, "file")) == 5 and len(kinds(g, "topic")) == 5
    assert g.edges["concept:activity", "concept:activity/yoga"]["kind"] == "ontology"
    assert g.edges["concept:activity/yoga", "concept:activity"]["kind"] == "ontology"
    assert hand_store.graph.files_of_concept("pet/dog") == ["file:s2#0"]
    assert hand_store.graph.files_of_concept("pet") == []


def _note(i, pairs):
    tags = {}
    for c, p in pairs:
        tags.setdefault(c, []).append(p)
    return Note(f"n{i}", "s", "u", "a", tags=tags, index=i)


def test_similarity_needs_three_shared_attributes():
    g = BaseGraph()
    base = [("who", "user"), ("what", "activity/yoga"), ("when", "time/morning")]
    g.add_note(_note(0, base))
    g.add_note(_note(1, base[:2] + [("where", "city/paris")]))  # shares 2
    g.add_note(_note(2, base + [("why", "goal/sleep")]))  # shares 3 with topic 0
    sims = {(a, b) for a, b, k in g.g.edges(data="kind") if k == "similar"}
    assert sims == {("topic:0", "topic:2"), ("topic:2", "topic:0")}
    assert SIMILARITY_MIN == 3


def test_identical_frames_share_a_topic_and_untagged_notes_have_none():
    g = BaseGraph()
    frame = [("what", "pet/dog")]
    g.add_note(_note(0, frame))
    g.add_note(_note(1, frame))
    g.add_note(_note(2, []))
    assert len(g.topic_of_frame) == 1
    assert sorted(g.g.successors("topic:0")) == ["concept:pet/dog", "file:n0", "file:n1"]
    assert list(g.g.successors("file:n2")) == []


def test_chronological_edges_only_on_request(hand_store):
    assert not any(k == "chronological" for *_, k in hand_store.graph.g.edges(data="kind"))
    g = hand_store.graph.to_networkx(chronological=True)
    assert g.edges["file:s1#0", "file:s2#0"]["kind"] == "chronological"
    assert g.edges["file:s2#0", "file:s1#0"]["kind"] == "chronological"
    assert not g.has_edge("file:s1#0", "file:s3#0")


def test_incremental_graph_equals_batch():
    batch = make_store(HAND_ROWS)
    grown = make_store(HAND_ROWS[:2])
    for sid, user, assistant, tags in HAND_ROWS[2:]:
        grown.remember(Interaction(sid, user, assistant), Extraction(**tags))
    assert sorted(batch.graph.g.edges(data="kind")) == sorted(grown.graph.g.edges(data="kind"))


PAIR = st.tuples(st.sampled_from(["who", "what", "when"]), st.sampled_from(["user", "a", "b", "c", "d/e"]))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.frozensets(PAIR, max_size=6), min_size=1, max_size=25))
def test_similar_links_are_exactly_the_topics_sharing_enough_tags(frames):
    """The pruned search (skipping each frame's most common tags) links the same topics, in the same order, as
    counting the shared tags with every earlier topic."""
    graph = BaseGraph()
    for i, frame in enumerate(frames):
        graph.add_note(_note(i, sorted(frame)))
    topics, expected = {}, []  # frame -> topic, in order made
    for frame in frames:
        if not frame or frame in topics:
            continue
        topic = f"topic:{len(topics)}"
        expected += [(topic, other) for earlier, other in topics.items() if len(frame & earlier) >= SIMILARITY_MIN]
        topics[frame] = topic
    expected.sort(key=lambda e: (int(e[0].split(":")[1]), e[1]))  # each new topic's links by id string, as made
    assert [(a, b) for a, b, kind in graph.edge_log if kind == "similar"] == expected
