"""Time in your own data: dates no accepted form reads and sessions
dated after their question are warned with counts, format generic-past leaves those sessions out, and a gold
note outside the question's gold sessions is refused."""

from __future__ import annotations

import json

import pytest

from taggraph.datasets import load_cases
from taggraph.datasets.base import DatasetError
from taggraph.datasets.generic import DATE_FORMATS, detect


def write(folder, turns, questions):
    folder.mkdir(exist_ok=True)
    for name, records in (("turns.jsonl", turns), ("questions.jsonl", questions)):
        (folder / name).write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return folder


def turn(session, date, text="I adopted a beagle."):
    return {"history": "h", "session": session, "date": date, "role": "user", "text": text}


QUESTION = {"id": "q1", "history": "h", "question": "What breed is my dog?", "date": "2024-02-01",
            "gold_sessions": ["s1"]}


def warnings_of(dataset) -> dict[str, list]:
    return {w.kind: [x for x in dataset.warnings if x.kind == w.kind] for w in dataset.warnings}


def test_dates_in_no_accepted_form_are_counted(tmp_path):
    data = write(tmp_path / "d", [turn("s1", "15/08/2023"), turn("s2", "2023/08/16 (Wed) 10:00"),
                                  turn("s3", "August 17, 2023"), turn("s4", "2023-08-18T09:00+02:00")],
                 [{**QUESTION, "date": "01.02.2024"}])
    unread = warnings_of(load_cases(data))["unread_date"]
    assert [(w.count, w.first) for w in unread] == [
        (2, ("line 1 ('15/08/2023')", "line 3 ('August 17, 2023')")), (1, ("q1 ('01.02.2024')",))]
    assert DATE_FORMATS in unread[0].message and "undated" in unread[0].message


def test_sessions_dated_after_their_question_are_warned_and_kept_by_default(tmp_path):
    data = write(tmp_path / "d", [turn("s1", "2024-01-10"), turn("s2", "2024-06-01"), turn("s3", "2024-02-01 23:00")],
                 [QUESTION, {**QUESTION, "id": "q2", "date": "2024-07-01"}])
    dataset = load_cases(data)
    (later,) = warnings_of(dataset)["session_after_question"]
    assert later.count == 1 and later.first == ("q1 (s2)",) and "(1 session dated on a later day)" in later.message
    assert "generic-past" in later.message
    assert [i.session_id for i in dataset.cases[0].interactions] == ["s1", "s2", "s3"]
    past = load_cases(data, fmt="generic-past")
    assert [[i.session_id for i in c.interactions] for c in past.cases] == [["s1", "s3"], ["s1", "s2", "s3"]]
    assert "left out of their history" in warnings_of(past)["session_after_question"][0].message


def test_a_session_after_two_questions_of_its_history_is_counted_once(tmp_path):
    data = write(tmp_path / "d", [turn("s1", "2024-01-10"), turn("s2", "2024-06-01")],
                 [QUESTION, {**QUESTION, "id": "q2", "date": "2024-03-01"}])
    (later,) = warnings_of(load_cases(data))["session_after_question"]
    assert later.count == 2 and "(1 session dated on a later day)" in later.message  # it said "2 sessions"


def test_leaving_out_a_gold_session_dated_after_its_question_is_refused(tmp_path):
    data = write(tmp_path / "d", [turn("s1", "2024-03-01")], [QUESTION])
    with pytest.raises(DatasetError, match=r"questions.jsonl line 1: gold session 's1' is dated after the question"):
        load_cases(data, fmt="generic-past")


def test_a_gold_note_outside_the_gold_sessions_is_refused(tmp_path):
    data = write(tmp_path / "d", [turn("s1", "2024-01-10"), turn("s2", "2024-01-11")],
                 [{**QUESTION, "gold_notes": ["s2#0"]}])
    with pytest.raises(DatasetError, match=r"line 1: field 'gold_notes': 's2#0' is in session 's2', which is not in "
                                           r"'gold_sessions' \['s1'\]"):
        load_cases(data)


def test_a_line_nested_thousands_deep_is_one_line_not_a_traceback(tmp_path):
    data = write(tmp_path / "d", [turn("s1", "2024-01-10")], [QUESTION])
    (data / "turns.jsonl").write_text('{"history": ' + "[" * 100_000 + "]" * 100_000 + "}\n", encoding="utf-8")
    with pytest.raises(DatasetError, match=r"turns.jsonl line 1: JSON nested too deeply"):
        load_cases(data)
    assert not detect(data / "turns.jsonl")  # detection by content reads the same line


@pytest.mark.parametrize("fmt", [None, "longmemeval", "locomo"])
def test_a_json_file_nested_thousands_deep_is_one_line_not_a_traceback(tmp_path, fmt):
    data = tmp_path / "deep.json"
    data.write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    with pytest.raises(DatasetError, match="nested too deep|unknown format"):
        load_cases(data, fmt=fmt)
