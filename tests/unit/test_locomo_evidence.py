"""LoCoMo evidence ids written out of form: the 'D:<n>:<i>' typo is read and warned of, an unreadable one warned of."""

import json

import taggraph as tg


def tiny_locomo(tmp_path, evidence: list[str]):
    """One conversation of two sessions, one question with `evidence`."""
    turns = lambda n: [{"speaker": "Ann", "dia_id": f"D{n}:1", "text": f"Session {n} news."},
                       {"speaker": "Bob", "dia_id": f"D{n}:2", "text": "Nice."}]
    sample = {"sample_id": "conv-x", "qa": [{"question": "What news?", "answer": "news", "evidence": evidence,
                                             "category": 4}],
              "conversation": {"speaker_a": "Ann", "speaker_b": "Bob", "session_1": turns(1), "session_2": turns(2),
                               "session_1_date_time": "1:00 pm on 3 March, 2023",
                               "session_2_date_time": "1:00 pm on 4 March, 2023"}}
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps([sample]))
    return tg.load(path)


def test_the_colon_typo_is_read_as_the_turn_and_warned_of(tmp_path):
    data = tiny_locomo(tmp_path, ["D1:1", "D:2:2"])
    case = data[0]
    assert case.gold_note_ids == ["D1:1", "D2:1"]
    assert case.gold_session_ids == ["conv-x:session_1", "conv-x:session_2"]
    typo = [w for w in data.warnings if w.kind == "evidence_typo"]
    assert len(typo) == 1 and typo[0].count == 1 and typo[0].first == ("conv-x:q0 ('D:2:2')",)


def test_evidence_with_no_readable_id_is_counted(tmp_path):
    data = tiny_locomo(tmp_path, ["D1:1", "D"])
    assert data[0].gold_note_ids == ["D1:1"]
    unreadable = [w for w in data.warnings if w.kind == "evidence_unreadable"]
    assert len(unreadable) == 1 and unreadable[0].count == 1 and unreadable[0].first == ("conv-x:q0 ('D')",)


def test_well_formed_evidence_gives_no_evidence_warning(tmp_path):
    data = tiny_locomo(tmp_path, ["D1:1; D2:2", "D02:01"])
    assert data[0].gold_note_ids == ["D1:1", "D2:1"]
    assert not [w for w in data.warnings if w.kind.startswith("evidence")]
