"""Generic JSONL: a note whose first turn has no date takes its session's date (its first dated turn)."""

import json

import taggraph as tg


def load_turns(tmp_path, turns: list[dict]):
    for t in turns:
        t.setdefault("history", "h")
        t.setdefault("session", "s1")
    (tmp_path / "turns.jsonl").write_text("".join(json.dumps(t) + "\n" for t in turns))
    question = {"id": "q1", "history": "h", "question": "What did I buy?", "gold_sessions": ["s1"]}
    (tmp_path / "questions.jsonl").write_text(json.dumps(question) + "\n")
    return tg.load(tmp_path)[0]


def timestamps(case) -> list[str]:
    return [i.timestamp for i in case.interactions]


def test_every_note_of_a_session_dated_once_gets_its_date(tmp_path):
    case = load_turns(tmp_path, [
        {"role": "user", "text": "Hi.", "date": "2024-01-10"}, {"role": "assistant", "text": "Hello."},
        {"role": "user", "text": "I bought a kettle."}, {"role": "assistant", "text": "Nice."},
        {"role": "user", "text": "Bye."}])
    assert timestamps(case) == ["2024-01-10"] * 3


def test_notes_before_the_first_dated_turn_get_it_and_an_own_date_wins(tmp_path):
    case = load_turns(tmp_path, [
        {"role": "user", "text": "Hi."}, {"role": "assistant", "text": "Hello.", "date": "2024-01-10"},
        {"role": "user", "text": "Later that week.", "date": "2024-01-12"}, {"role": "assistant", "text": "Ok."},
        {"role": "user", "text": "Another one."},
        {"role": "user", "text": "Other session.", "session": "s2"}])
    assert timestamps(case) == ["2024-01-10", "2024-01-12", "2024-01-10", ""]
