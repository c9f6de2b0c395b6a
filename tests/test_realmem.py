"""RealMem format: detection, the protocol (history = the sessions before the query's own), gold, growth."""

import json
from datetime import date

import pytest

from taggraph.datasets import DatasetError, load_dataset
from taggraph.datasets.registry import detect_format
from taggraph.experiments.bench import run_bench
from taggraph.experiments.runner import group_by_growth

METHODS = ["BM25", "TagGraph-Basic", "AdaptiveGraph", "BM25-stem"]


def session(uuid, day, turns):
    return {"session_identifier": f"S{uuid}", "session_uuid": uuid, "current_time": date(2025, 12, day).strftime("%Y-%m-%d (%A)"),
            "dialogue_turns": turns, "extracted_memory": [{"content": "ORACLE MEMORY never read"}]}


def user(text, query=None, category="Dynamic Incremental"):
    turn = {"speaker": "User", "content": text, "is_query": "True" if query else "False", "query_id": query or "None"}
    return turn | ({"category_name": category} if query else {})


def reply(text, gold=()):
    return {"speaker": "Assistant", "content": text, "is_query": "False", "query_id": "None",
            "memory_used": "[{'content': 'ORACLE'}]", "memory_session_uuids": str(list(gold))}


def persona(tmp_path, name="Ada_Lovelace"):
    data = {"_metadata": {"person_name": name.replace("_", " ")}, "dialogues": [
        session("a1", 1, [user("I adopted a beagle named Pixel"), reply("Lovely dog name."),
                          user("I also started pottery classes"), reply("Fun hobby.")]),
        session("b2", 3, [user("My sister Vera moves to Lisbon in May"), reply("Exciting.")]),
        session("c3", 5, [user("What should I feed my dog?", "Q-1"), reply("For Pixel...", ["a1"]),
                          user("Where is my sister moving?", "Q-2", "Dynamic Updating"), reply("Lisbon", ["b2"])]),
        session("d4", 9, [user("Which hobby did I start?", "Q-3", "Implicit Preference"), reply("Pottery", ["a1"]),
                          user("extra turn"), reply("ok")]),
    ]}
    path = tmp_path / f"{name}_dialogues_256k.json"
    path.write_text(json.dumps(data))
    return path


def test_detected_as_a_file_and_as_a_folder(tmp_path):
    path = persona(tmp_path)
    assert detect_format(path).name == "realmem"
    assert detect_format(tmp_path).name == "realmem"


def test_a_query_asks_the_sessions_before_its_own_and_never_reads_the_oracle(tmp_path):
    cases = {c.case_id: c for c in load_dataset(persona(tmp_path))}
    assert list(cases) == ["Ada_Lovelace:Q-1", "Ada_Lovelace:Q-2", "Ada_Lovelace:Q-3"]
    q1, q3 = cases["Ada_Lovelace:Q-1"], cases["Ada_Lovelace:Q-3"]
    assert [i.session_id for i in q1.interactions] == ["Ada_Lovelace:a1", "Ada_Lovelace:a1", "Ada_Lovelace:b2"]
    assert q1.gold_session_ids == ["Ada_Lovelace:a1"] and q1.question == "What should I feed my dog?"
    assert q1.asked_on.day == 5 and q1.question_type == "Dynamic Incremental"
    assert cases["Ada_Lovelace:Q-2"].question_type == "Dynamic Updating"
    assert len(q3.interactions) == 5  # c3's two notes are history for d4's query; d4's own turns are not
    assert not any("ORACLE" in i.user + i.assistant for c in cases.values() for i in c.interactions)


def test_gold_after_the_query_is_left_out_and_warned(tmp_path):
    path = persona(tmp_path)
    data = json.loads(path.read_text())
    data["dialogues"][2]["dialogue_turns"][1]["memory_session_uuids"] = "['a1', 'd4']"
    path.write_text(json.dumps(data))
    with pytest.warns(UserWarning, match="not before their own session"):
        cases = load_dataset(path)
    assert cases[0].gold_session_ids == ["Ada_Lovelace:a1"]


def test_a_malformed_turn_names_the_file_session_and_field(tmp_path):
    path = persona(tmp_path)
    data = json.loads(path.read_text())
    data["dialogues"][1]["dialogue_turns"][0]["content"] = 5
    path.write_text(json.dumps(data))
    with pytest.raises(DatasetError, match=r"dialogues\[1\]: dialogue_turns\[0\]: field 'content'"):
        load_dataset(path)


def test_one_growing_memory_ranks_as_a_memory_built_per_query(tmp_path):
    cases = list(load_dataset(persona(tmp_path)))
    assert [[c.case_id for c in g] for g in group_by_growth(cases)] == [[c.case_id for c in cases]]
    grown, apart = run_bench(cases, METHODS), run_bench(cases, METHODS, share_memories=False)
    assert grown.config["n_memories"] == 1 and apart.config["n_memories"] == 3
    for column in ("question_id", "method", "ranked_note_ids", "ranked_scores", "notes"):
        assert grown.rankings[column].tolist() == apart.rankings[column].tolist()


def test_histories_that_only_share_a_beginning_stay_apart(tmp_path):
    cases = list(load_dataset(persona(tmp_path)))
    forked = type(cases[2])(**{**cases[2].__dict__, "case_id": "fork",
                               "interactions": cases[1].interactions[:2] + cases[2].interactions[3:]})
    groups = group_by_growth([cases[0], cases[2], forked])
    assert sorted(len(g) for g in groups) == [1, 2]
