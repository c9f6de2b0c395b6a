import gzip
import json

import pytest

from taggraph.datasets import DatasetError, load_dataset
from taggraph._infra.config import DEMO_DATA
from taggraph.datasets.longmemeval import QUESTION_TYPES, load_longmemeval

from tests.helpers.stores import shared_file


def record(**over):
    rec = {"question_id": "q1", "question_type": "single-session-user", "question": "What?", "answer": "x",
           "question_date": "2023/05/30 (Tue) 23:40", "haystack_session_ids": ["a", "b"],
           "haystack_dates": ["2023/05/01 (Mon) 10:00", "2023/05/02 (Tue) 10:00"],
           "haystack_sessions": [[{"role": "user", "content": "u1"}, {"role": "assistant", "content": "a1"},
                                  {"role": "user", "content": "u2"}],
                                 [{"role": "assistant", "content": "opening"}, {"role": "user", "content": "u3"},
                                  {"role": "user", "content": "u4"}, {"role": "assistant", "content": "a4"}]],
           "answer_session_ids": ["b"]}
    rec.update(over)
    return rec


def write(tmp_path, data, name="d.json"):
    p = tmp_path / name
    p.write_text(json.dumps(data))
    return p


def test_turn_pairing_keeps_every_turn(tmp_path):
    case = load_dataset(write(tmp_path, [record()]))[0]
    pairs = [(i.session_id, i.user, i.assistant) for i in case.interactions]
    assert pairs == [("a", "u1", "a1"), ("a", "u2", ""), ("b", "", "opening"), ("b", "u3", ""), ("b", "u4", "a4")]
    assert case.gold_session_ids == ["b"] and case.interactions[2].timestamp.startswith("2023/05/02")


def test_identical_duplicate_sessions_are_kept(tmp_path):
    rec = record(haystack_session_ids=["a", "a"])
    rec["haystack_sessions"][1] = rec["haystack_sessions"][0]
    case = load_dataset(write(tmp_path, [rec]))[0]
    assert [i.session_id for i in case.interactions] == ["a"] * 4


def test_gzip_and_limit(tmp_path):
    p = tmp_path / "d.json.gz"
    p.write_bytes(gzip.compress(json.dumps([record(), record(question_id="q2")]).encode()))
    assert [c.case_id for c in load_dataset(p, limit=1)] == ["q1"]


@pytest.mark.parametrize("mutate,message", [
    (lambda r: r.pop("question"), r"record 0 \(question_id 'q1'\): missing field 'question'"),
    (lambda r: r.update(haystack_sessions="oops"), "field 'haystack_sessions' must be list"),
    (lambda r: r.update(haystack_dates=["x"]), "differ in length"),
    (lambda r: r.update(haystack_session_ids=[], haystack_dates=[], haystack_sessions=[]), "is empty"),
    (lambda r: r["haystack_sessions"][1].__setitem__(0, {"role": "bot", "content": "x"}),
     r"haystack_sessions\[1\]\[0\]: field 'role'"),
    (lambda r: r["haystack_sessions"][0][0].pop("content"), r"haystack_sessions\[0\]\[0\]: missing field 'content'"),
    (lambda r: r.update(answer_session_ids=[1]), "answer_session_ids"),
    (lambda r: r["haystack_sessions"].__setitem__(0, []), r"haystack_sessions\[0\]: empty session 'a'"),
    (lambda r: r.update(haystack_session_ids=["a", "a"]), r"haystack_session_ids\[1\]: duplicate session id 'a'"),
    (lambda r: r.update(haystack_session_ids=["a", "b c"], answer_session_ids=["b c"]),
     r"question 'q1': session id 'b c' is empty or holds whitespace; ids must be single tokens"),
    (lambda r: r.update(haystack_session_ids=["a", "a#0"], answer_session_ids=["a#0"]),
     r"question 'q1': 'a#0' is both a session id and a note id"),
])
def test_malformed_records_name_file_record_field(tmp_path, mutate, message):
    rec = record()
    mutate(rec)
    path = write(tmp_path, [rec])
    with pytest.raises(DatasetError, match=message) as err:
        load_dataset(path)
    assert str(path) in str(err.value)


@pytest.mark.parametrize("payload,message", [
    (b"[{\"question_id\": ", "invalid JSON at line 1"),
    (b"\xff\xfe\x00garbage", "not UTF-8"),
    (gzip.compress(b"[1, 2, 3]", mtime=0)[:12], "truncated or corrupt gzip"),
    (b"{\"a\": 1}", "expected a JSON list"),
])
def test_broken_files(tmp_path, payload, message):
    p = tmp_path / "bad.json"
    p.write_bytes(payload)
    with pytest.raises(DatasetError, match=message):
        load_dataset(p)


def test_demo_covers_all_types():
    cases = load_dataset(DEMO_DATA)
    assert {c.question_type for c in cases} == set(QUESTION_TYPES)
    assert any(c.is_abstention and not c.gold_session_ids for c in cases)
    for c in cases:
        assert set(c.gold_session_ids) <= {i.session_id for i in c.interactions}


def test_real_dev_split_loads():
    cases = load_dataset(shared_file("longmemeval_s_dev.json.gz"))
    assert len(cases) == 250 and sum(c.is_abstention for c in cases) == 15
    assert 200 < sum(len(c.interactions) for c in cases) / 250 < 300


def test_duplicate_question_ids_are_refused_naming_both_records(tmp_path):
    records = json.loads(DEMO_DATA.read_text())[:3]
    records[2]["question_id"] = records[0]["question_id"]
    path = tmp_path / "d.json"
    path.write_text(json.dumps(records))
    with pytest.raises(DatasetError, match=rf"record 2 \(question_id '{records[0]['question_id']}'\): "
                                           r"duplicate question_id, also record 0"):
        load_longmemeval(path)


def test_unscorable_questions_warn_once_per_file_and_reach_run_json(tmp_path):
    from taggraph.runs.bench import run_bench
    records = json.loads(DEMO_DATA.read_text())[:4]
    records[0]["answer_session_ids"] = ["not_in_haystack"]
    records[1]["answer_session_ids"] = []
    path = tmp_path / "d.json"
    path.write_text(json.dumps(records))
    with pytest.warns(UserWarning) as caught:
        cases = load_dataset(path)
    messages = [str(w.message) for w in caught]
    assert messages == [
        f"{path}: 1 questions have answer sessions that are not in their haystack (scored as misses); "
        f"first: {records[0]['question_id']}",
        f"{path}: 1 questions are not abstention questions but have no answer sessions (scored as misses); "
        f"first: {records[1]['question_id']}"]
    config = run_bench(cases, ["BM25"], extractor="none").config
    assert config["input_warnings"] == {"gold_not_in_haystack": {"count": 1, "first": [records[0]["question_id"]]},
                                        "no_gold": {"count": 1, "first": [records[1]["question_id"]]}}
