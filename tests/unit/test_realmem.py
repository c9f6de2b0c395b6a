"""RealMem format: detection, the protocol (history = the sessions before the query's own), gold, growth, and bad
input (dates, folders, speakers and flags, personas without a query)."""

import gzip
import json
from datetime import date

import pytest
from typer.testing import CliRunner

import taggraph as tg
from taggraph.cli import app
from taggraph.datasets import DatasetError, load_dataset
from taggraph.datasets.registry import detect_format
from taggraph.runs.bench import run_bench
from taggraph.runs.runner import group_by_growth

from tests.helpers.stores import SHARED_DATA

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


def test_a_query_without_gold_is_warned_of_once_as_such_not_as_gold_after_it(tmp_path):
    path = persona(tmp_path)
    data = json.loads(path.read_text())
    data["dialogues"][2]["dialogue_turns"][1]["memory_session_uuids"] = "[]"
    path.write_text(json.dumps(data))
    with pytest.warns(UserWarning) as caught:
        load_dataset(path)
    said = [str(w.message) for w in caught]
    assert any("have no answer sessions" in m and "Ada_Lovelace:Q-1" in m for m in said), said
    assert not any("not before their own session" in m for m in said), said


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


def spoilt(tmp_path, spoil, name="Ada_Lovelace"):
    """The persona file of `persona`, its data passed through `spoil` (data -> data)."""
    path = persona(tmp_path, name)
    path.write_text(json.dumps(spoil(json.loads(path.read_text()))))
    return path


def warned(path):
    """(the dataset at `path`, which warns, {kind: its DataWarning})."""
    with pytest.warns(UserWarning):
        data = tg.load(path)
    return data, {w.kind: w for w in data.warnings}


def dated(when):
    def spoil(data):
        data["dialogues"][2]["current_time"] = when  # the session of
        return data
    return spoil


@pytest.mark.parametrize("when", ["yesterday", "", None, "2025-02-30 (Sunday)", "2025-12-05 (Monday)", "01/05/2025"])
def test_a_query_without_a_date_read_is_warned_of_with_its_session(tmp_path, when):
    """A current_time in no form read (or none) switched the time rules off for its queries without a word."""
    data, found = warned(spoilt(tmp_path, dated(when)))
    assert found["undated_question"].first == ("Ada_Lovelace:Q-1", "Ada_Lovelace:Q-2")
    if when:
        assert found["unread_date"].first == (f"Ada_Lovelace:c3 ({when!r})",)
        assert "1 sessions have a current_time in no form read" in found["unread_date"].message
    else:
        assert "unread_date" not in found
    notes = {i.timestamp for c in data for i in c.interactions if i.session_id == "Ada_Lovelace:c3"}
    assert notes <= {when or ""}  # a null date is no "None"


def test_a_current_time_that_is_no_string_is_refused_naming_it(tmp_path):
    with pytest.raises(DatasetError, match=r"dialogues\[2\]: field 'current_time' must be a date"):
        load_dataset(spoilt(tmp_path, dated(20251205)))


def test_history_sessions_dated_after_their_query_are_warned_of(tmp_path):
    """Sessions listed before a query but dated after it passed without a word (61 of one real persona's 121)."""
    def spoil(data):
        data["dialogues"][1]["current_time"] = "2025-12-20 (Saturday)"
        return data
    data, found = warned(spoilt(tmp_path, spoil))
    later = found["session_after_question"]
    assert later.count == 3 and later.first[0] == "Ada_Lovelace:Q-1 (Ada_Lovelace:b2)"
    assert "(1 session dated on a later day): kept" in later.message
    assert [len(c.interactions) for c in data] == [3, 3, 5]  # kept in the history


def test_a_folder_reads_gzipped_personas_and_warns_of_other_json_files(tmp_path):
    """Files not named *_dialogues*.json (a .json.gz too) were left out without a word: 4 of 8 questions scored."""
    gz = persona(tmp_path, "Bo_Bell")
    (tmp_path / "Bo_Bell_dialogues_256k.json.gz").write_bytes(gzip.compress(gz.read_bytes()))
    gz.unlink()
    persona(tmp_path).rename(tmp_path / "ada.json")
    (tmp_path / "README.md").write_text("not data")
    data, found = warned(tmp_path)
    assert {c.persona for c in data} == {"Bo_Bell"}
    assert found["file_not_read"].first == ("ada.json",)
    assert "1 JSON files in the folder are not read" in found["file_not_read"].message


def test_a_folder_of_personas_and_generic_files_is_refused_naming_both(tmp_path):
    """The generic turns.jsonl/questions.jsonl beside a persona were ignored: the folder was read as RealMem."""
    persona(tmp_path)
    (tmp_path / "turns.jsonl").write_text("{}\n")
    (tmp_path / "questions.jsonl.gz").write_bytes(gzip.compress(b"{}\n"))
    with pytest.raises(DatasetError) as err:
        load_dataset(tmp_path)
    assert "persona files (Ada_Lovelace_dialogues_256k.json) and the generic format's turns.jsonl and " \
           "questions.jsonl.gz" in str(err.value) and "\n" not in str(err.value)


def test_speakers_are_read_in_any_case_and_others_refused(tmp_path):
    """'user'/'assistant' in lower case were all stored as assistant replies: 14 notes instead of 7."""
    def lower(data):
        for session in data["dialogues"]:
            for turn in session["dialogue_turns"]:
                turn["speaker"] = turn["speaker"].lower()
        return data
    written = [i.__dict__ for i in load_dataset(persona(tmp_path))[2].interactions]
    assert [i.__dict__ for i in load_dataset(spoilt(tmp_path, lower))[2].interactions] == written
    assert len(written) == 5

    def bot(data):
        data["dialogues"][1]["dialogue_turns"][1]["speaker"] = "Bot"
        return data
    with pytest.raises(DatasetError, match=r"dialogues\[1\]: dialogue_turns\[1\]: field 'speaker' must be 'User' or "
                                           r"'Assistant', got 'Bot'"):
        load_dataset(spoilt(tmp_path, bot))


@pytest.mark.parametrize("flag", [1, "true", None])
def test_an_is_query_in_another_form_is_refused_naming_the_turn(tmp_path, flag):
    """`is_query` written 1 or "true" was silently no query."""
    def spoil(data):
        data["dialogues"][2]["dialogue_turns"][2]["is_query"] = flag
        return data
    with pytest.raises(DatasetError) as err:
        load_dataset(spoilt(tmp_path, spoil))
    assert f"Ada_Lovelace_dialogues_256k.json: dialogues[2]: dialogue_turns[2]: field 'is_query' must be true/false " \
           f"or \"True\"/\"False\", got {flag!r}" in str(err.value)


def test_a_json_boolean_is_query_is_read_as_realmem_s_strings(tmp_path):
    def spoil(data):
        for session in data["dialogues"]:
            for turn in session["dialogue_turns"]:
                turn["is_query"] = turn["is_query"] == "True"
        return data
    assert len(load_dataset(spoilt(tmp_path, spoil))) == 3


@pytest.mark.parametrize("command", ["bench", "extract"])
def test_a_persona_without_a_query_is_one_line_and_warned_of_beside_others(tmp_path, command):
    """No query (`dialogues: []`) ended in KeyError 'ranked_session_ids' (bench) or 'reused' (extract)."""
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "Nobody_dialogues.json").write_text(json.dumps({"_metadata": {}, "dialogues": []}))
    args = [command, "--data", str(empty), "--out", str(tmp_path / "out")]
    res = CliRunner().invoke(app, [*args, *(["--methods", "BM25"] if command == "bench" else ["--extractor", "none"])])
    assert res.exit_code != 0 and not isinstance(res.exception, KeyError)
    assert f"{empty}: no query: no turn of its sessions has field 'is_query' true" in res.output
    persona(empty)
    assert warned(empty)[1]["no_query"].first == ("Nobody_dialogues.json",)


@pytest.mark.parametrize("uuid", [["a1"], {"id": "a1"}, 7])
def test_a_session_uuid_that_is_no_string_is_refused_naming_it(tmp_path, uuid):
    """A list or object session_uuid ended in TypeError: unhashable type."""
    def spoil(data):
        data["dialogues"][1]["session_uuid"] = uuid
        return data
    with pytest.raises(DatasetError, match=r"dialogues\[1\]: field 'session_uuid' must be str"):
        load_dataset(spoilt(tmp_path, spoil))


def test_detected_whatever_the_order_of_its_keys(tmp_path):
    """`dialogues` before `_metadata` was refused as an unknown format."""
    path = spoilt(tmp_path, lambda data: {"dialogues": data["dialogues"] * 40, "_metadata": data["_metadata"]})
    zipped = tmp_path / "zipped" / path.name.replace(".json", ".json.gz")
    zipped.parent.mkdir()
    zipped.write_bytes(gzip.compress(path.read_bytes()))
    assert path.stat().st_size > 1 << 16  # _metadata past the head detection reads
    assert [detect_format(p).name for p in (path, zipped, zipped.parent)] == ["realmem"] * 3


REALMEM = SHARED_DATA.parent / "realmem"


@pytest.mark.skipif(not REALMEM.is_dir(), reason=f"real RealMem data not found at {REALMEM} (set TAGGRAPH_DATA to "
                                                  f"the longmemeval folder beside it)")
def test_the_real_personas_sessions_dated_after_their_query_are_counted():
    later = warned(REALMEM)[1]["session_after_question"]
    counts = {name: sum(item.startswith(f"{name}:") for item in later.items)
              for name in ("Liam_O_Connor", "Sarah_Miller", "Kenta_Tanaka")}
    assert counts == {"Liam_O_Connor": 61, "Sarah_Miller": 8, "Kenta_Tanaka": 0}


def test_bench_reports_realmem_s_own_cut_off_20_as_its_evaluation_computes_it(tmp_path):
    import pandas as pd

    from taggraph.evaluation.benchmark_metrics import realmem_metrics

    cases = list(load_dataset(persona(tmp_path)))
    summary = tg.bench(cases, ["BM25"], extractor="none").summary
    assert {"recall_any@20", "recall_all@20", "ndcg_any@20"} <= set(summary.columns)
    # RealMemBench's recall_any@k, recall_all@k and ndcg_any@k, worked by hand: a gold session at rank 15
    filler = [f"Ada_Lovelace:x{i}" for i in range(14)]
    rankings = pd.DataFrame([{"question_id": "Ada_Lovelace:Q-1", "method": "m",
                              "ranked_session_ids": [*filler, "Ada_Lovelace:a1"]}])
    [row] = realmem_metrics(rankings, cases).query("category == 'all'").to_dict("records")
    assert (row["recall_any@10"], row["recall_any@20"], row["recall_all@20"]) == (0.0, 1.0, 1.0)
    assert row["ndcg_any@20"] == pytest.approx(1 / __import__("math").log2(15))
