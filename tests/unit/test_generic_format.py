"""Your own data (taggraph.datasets.generic): turns.jsonl + questions.jsonl, the format registry, data warnings."""

import json
import shutil
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from taggraph.cli import app
from taggraph._infra.config import DEMO_DATA
from taggraph.datasets import (Dataset, DatasetError, DatasetFormat, format_names, formats, get_format, load_cases,
                               register_format)
from taggraph.datasets import registry
from taggraph.errors import ConfigError
from taggraph.runs import bench as bench_module
from taggraph.runs.bench import run_bench
from taggraph.runs.folders import save_bench
from taggraph.viz.report import report_pages

FIXTURE = Path(__file__).parents[1] / "fixtures" / "generic"
runner = CliRunner()


def copy_fixture(tmp_path: Path) -> Path:
    folder = tmp_path / "mine"
    shutil.copytree(FIXTURE, folder)
    return folder


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def write_lines(path: Path, records: list) -> None:
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in records) + "\n")


def test_loads_questions_over_shared_histories():
    data = load_cases(FIXTURE)
    assert isinstance(data, Dataset) and data.format.name == "generic" and len(data) == 6
    by_id = {c.case_id: c for c in data}
    ana = [c for c in data if c.case_id.startswith("ana")]
    assert all(c.interactions is ana[0].interactions for c in ana)  # one history, one list of notes
    notes = [(i.session_id, i.user, i.assistant, i.timestamp) for i in ana[0].interactions]
    assert len(notes) == 6 and notes[0][:2] == ("a1", "I just adopted a beagle puppy and named her Pixel.")
    assert notes[4] == ("a3", "My longest run so far is twelve kilometres.", "", "2024-03-20")  # a user turn alone
    q1 = by_id["ana-q1"]
    assert (q1.question_type, q1.question_date, q1.answer, q1.gold_session_ids, q1.gold_note_ids) == (
        "pets", "2024-05-01", "a beagle", ["a1"], ["a1#0"])
    assert by_id["ana-q4"].is_abstention and not by_id["ana-q1"].is_abstention
    assert by_id["ben-q1"].gold_note_ids == [] and data.warnings == []
    assert [c.case_id for c in load_cases(FIXTURE / "questions.jsonl", limit=2)] == ["ana-q1", "ana-q2"]


def test_questions_of_one_history_share_one_memory(monkeypatch):
    built = []
    real = bench_module.build_store

    def counting(case, *args, **kwargs):
        built.append(case.case_id)
        return real(case, *args, **kwargs)

    monkeypatch.setattr(bench_module, "build_store", counting)
    result = run_bench(load_cases(FIXTURE), ["BM25"], extractor="none")
    assert built == ["ana-q1", "ben-q1"] and result.config["n_memories"] == 2
    memory = dict(zip(result.stores["question_id"], result.stores["memory"]))
    assert {memory[q] for q in ("ana-q1", "ana-q2", "ana-q3", "ana-q4")} == {"ana-q1"}
    assert result.config["n_abstention"] == 1 and result.summary.loc[0, "n"] == 5
    assert result.rankings.set_index("question_id").loc["ana-q1", "ranked_session_ids"][0] == "a1"


@pytest.mark.parametrize("file,line,replace,message", [
    ("turns.jsonl", 3, {"history": "ana", "session": "a1", "text": "x"}, "missing field 'role'"),
    ("turns.jsonl", 2, {"history": "ana", "session": "a1", "role": "bot", "text": "x"},
     "field 'role' must be 'user' or 'assistant', got 'bot'"),
    ("turns.jsonl", 5, {"history": "ana", "session": 2, "role": "user", "text": "x"}, "field 'session' must be str"),
    ("turns.jsonl", 1, {"history": "ana", "session": "a1", "role": "user", "text": "x", "speaker": "me"},
     "unknown field 'speaker'"),
    ("turns.jsonl", 4, '{"history": "ana", "session"', "invalid JSON at column"),
    ("turns.jsonl", 4, '["ana", "a1"]', "expected one JSON object a line, got list"),
    ("questions.jsonl", 2, {"id": "x", "history": "ana", "question": "?"}, "missing field 'gold_sessions'"),
    ("questions.jsonl", 3, {"id": "x", "history": "ana", "question": "?", "gold_sessions": "a1"},
     "field 'gold_sessions' must be list"),
    ("questions.jsonl", 3, {"id": "x", "history": "ana", "question": "?", "gold_sessions": [1]},
     "field 'gold_sessions' must be a list of strings"),
    ("questions.jsonl", 6, {"id": "x", "history": "carl", "question": "?", "gold_sessions": []},
     "field 'history': 'carl' has no turns"),
    ("questions.jsonl", 5, {"id": "ana-q1", "history": "ben", "question": "?", "gold_sessions": []},
     "field 'id': duplicate question id 'ana-q1', also line 1"),
    ("questions.jsonl", 2, {"id": "x", "history": "ana", "question": "?", "gold_sessions": ["a1"],
                            "gold_notes": ["a1#7"]}, "field 'gold_notes': 'a1#7' is not a note of history 'ana'"),
    ("questions.jsonl", 2, {"id": "x", "history": "ana", "question": "?", "gold_sessions": [], "abstention": "yes"},
     "field 'abstention' must be bool"),
    ("turns.jsonl", 2, {"history": "ana", "session": "a 1", "role": "user", "text": "x"},
     "field 'session' must be one token (no whitespace, not empty), got 'a 1'"),
    ("turns.jsonl", 2, {"history": "ana", "session": "", "role": "user", "text": "x"},
     "field 'session' must be one token (no whitespace, not empty), got ''"),
    ("questions.jsonl", 2, {"id": "x\ty", "history": "ana", "question": "?", "gold_sessions": []},
     "field 'id' must be one token (no whitespace, not empty), got 'x\\ty'"),
])
def test_bad_records_are_named_by_file_line_and_field(tmp_path, file, line, replace, message):
    folder = copy_fixture(tmp_path)
    records = (folder / file).read_text().splitlines()
    records[line - 1] = replace if isinstance(replace, str) else json.dumps(replace)
    write_lines(folder / file, records)
    with pytest.raises(DatasetError) as err:
        load_cases(folder)
    assert str(err.value).startswith(f"{folder / file} line {line}: ") and message in str(err.value)
    assert "\n" not in str(err.value)


def test_a_session_id_that_is_also_a_note_id_is_refused(tmp_path):
    folder = copy_fixture(tmp_path)
    turns = lines(folder / "turns.jsonl")
    turns.append({"history": "ana", "session": "a1#0", "role": "user", "text": "I like my cat too."})
    write_lines(folder / "turns.jsonl", turns)
    with pytest.raises(DatasetError, match=r": question 'ana-q1': 'a1#0' is both a session id and a note id; a ranked "
                                           r"id must name one thing$"):
        load_cases(folder)


def test_a_missing_file_is_named(tmp_path):
    folder = copy_fixture(tmp_path)
    (folder / "questions.jsonl").unlink()
    with pytest.raises(DatasetError, match=r"questions.jsonl: no such file \(your own data is turns.jsonl and "):
        load_cases(folder)


def test_unknown_format_names_the_known_formats(tmp_path):
    other = tmp_path / "chat.jsonl"
    write_lines(other, [{"speaker": "me", "utterance": "hi"}, {"speaker": "bot", "utterance": "hello"}])
    with pytest.raises(DatasetError) as err:
        load_cases(other)
    text = str(err.value)
    assert text.startswith(f"{other}: unknown format: expected ") and "got JSON Lines with fields ['speaker'," in text
    assert all(f"({name})" in text for name in format_names()) and "\n" not in text
    with pytest.raises(ConfigError, match="unknown format 'csv'; known: longmemeval, locomo, realmem, atant, generic"):
        load_cases(FIXTURE, fmt="csv")
    res = runner.invoke(app, ["bench", "--data", str(other), "--out", str(tmp_path / "run")])
    assert res.exit_code == 2 and "unknown format" in res.output and "(generic)" in res.output


def test_format_help_lists_the_registered_formats():
    res = runner.invoke(app, ["bench", "--help"], terminal_width=200)
    assert res.exit_code == 0
    flat = " ".join(res.output.replace("│", " ").split())
    assert "longmemeval | locomo | realmem | atant | generic" in flat


def test_data_warnings_reach_python_run_json_and_reports(tmp_path):
    folder = copy_fixture(tmp_path)
    turns = lines(folder / "turns.jsonl")
    turns[2]["text"] = "  "  # line 3: an empty turn
    turns.append({"history": "cleo", "session": "c1", "role": "user", "text": "Nobody asks about me."})
    write_lines(folder / "turns.jsonl", turns)
    questions = lines(folder / "questions.jsonl")
    questions[1]["gold_sessions"] = ["a9"]  # ana-q2: a gold session the history lacks
    write_lines(folder / "questions.jsonl", questions)
    data = load_cases(folder)
    assert [(w.kind, w.count, w.first) for w in data.warnings] == [
        ("empty_text", 1, ("line 3",)), ("history_without_questions", 1, ("cleo",)),
        ("gold_not_in_haystack", 1, ("ana-q2",))]
    result = run_bench(data, ["BM25"], extractor="none")
    assert result.warnings == data.warnings
    assert result.config["input_warnings"]["gold_not_in_haystack"] == {"count": 1, "first": ["ana-q2"]}
    pages = report_pages(result, "mine", str(folder), None)
    out = save_bench(result, tmp_path / "run", data.record(), pages)
    record = json.loads((out / "run.json").read_text())
    assert [w["kind"] for w in record["data_warnings"]] == ["empty_text", "history_without_questions",
                                                             "gold_not_in_haystack"]
    assert record["data_warnings"][2]["message"] == (
        f"{folder}: 1 questions have answer sessions that are not in their haystack (scored as misses); first: ana-q2")
    assert record["data"]["format"] == "generic"
    md = (out / "report.md").read_text()
    assert "## Data warnings" in md and "histories have turns but no question (not loaded); first: cleo" in md
    html_page = (out / "report.html").read_text()
    assert "<h2>Data warnings</h2>" in html_page and "turns have an empty text; first: line 3" in html_page
    clean = report_pages(run_bench(load_cases(FIXTURE), ["BM25"], extractor="none"), "fixture", "f", None)
    assert "Data warnings" not in clean["report.md"] and "Data warnings" not in clean["report.html"]


def test_bench_on_a_folder_end_to_end(tmp_path):
    out = tmp_path / "run"
    res = runner.invoke(app, ["bench", "--data", str(FIXTURE), "--methods", "BM25,AdaptiveGraph", "--extractor", "none",
                              "--out", str(out), "--miss-pages", "2"])
    assert res.exit_code == 0, res.output
    record = json.loads((out / "run.json").read_text())
    assert record["data"]["format"] == "generic" and record["data_warnings"] == []
    assert record["config"]["n_cases"] == 6 and record["config"]["n_memories"] == 2
    rankings = (out / "rankings.csv").read_text()
    assert all(q in rankings for q in ("ana-q1", "ana-q4", "ben-q2"))
    assert (out / "summary.csv").read_text().startswith("method,n,n_judged,MRR")
    assert "n_memories" not in res.output and "BM25" in res.output


def test_a_run_parses_its_data_once(tmp_path, monkeypatch):
    from taggraph.datasets import generic, longmemeval
    calls = []
    for module, name in ((generic, "read_jsonl"), (longmemeval, "read_json")):
        real = getattr(module, name)
        monkeypatch.setattr(module, name, lambda path, _real=real: calls.append(Path(path).name) or _real(path))
    for data in (FIXTURE, DEMO_DATA):
        calls.clear()
        res = runner.invoke(app, ["bench", "--data", str(data), "--methods", "BM25", "--extractor", "none",
                                  "--out", str(tmp_path / data.name), "--miss-pages", "0"])
        assert res.exit_code == 0, res.output
        assert sorted(calls) == (["questions.jsonl", "turns.jsonl"] if data == FIXTURE else [DEMO_DATA.name])


def test_an_installed_package_adds_a_format(tmp_path, monkeypatch):
    (tmp_path / "tsvturns.py").write_text(
        "from taggraph.datasets import Case, DatasetFormat\n"
        "from taggraph.core.store import Interaction\n"
        "def load(path, limit=None):\n"
        "    rows = [line.split('\\t') for line in path.read_text().splitlines()]\n"
        "    turns = [Interaction('s', user) for _, user in rows]\n"
        "    return [Case(qid, 'what?', 'tsv', turns, ['s']) for qid, _ in rows][:limit]\n"
        "FORMAT = DatasetFormat('tsv-turns', 'a .tsv of question ids and turns', lambda p: p.suffix == '.tsv', load)\n")
    info = tmp_path / "tsvturns-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: tsvturns\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[taggraph.datasets]\ntsv-turns = tsvturns:FORMAT\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(registry.FORMATS, "_installed", None)  # entry points read again
    assert format_names()[-1] == "tsv-turns"
    data = tmp_path / "mine.tsv"
    data.write_text("q1\tI keep bees.\nq2\tI play the cello.\n")
    loaded = load_cases(data)
    assert loaded.format.name == "tsv-turns" and [c.case_id for c in loaded] == ["q1", "q2"]
    assert "tsvturns" in sys.modules


def test_register_format_refuses_a_taken_name(monkeypatch):
    monkeypatch.setattr(registry.FORMATS, "_registered", dict(registry.FORMATS._registered))
    clash = DatasetFormat("generic", "something else", lambda p: False, lambda p, limit=None: [])
    with pytest.raises(ConfigError, match="dataset format name 'generic' is taken"):
        register_format(clash)
    register_format(clash, replace=True)
    assert get_format("generic") is clash and formats()[-1] is clash


def test_the_data_formats_example_runs(monkeypatch):
    import re
    root = Path(__file__).resolve().parents[2]
    page = root / "docs" / "data-formats.md"
    section = page.read_text(encoding="utf-8").split("## Your own data", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    monkeypatch.chdir(root)
    scope: dict = {}
    exec(compile(code, str(page), "exec"), scope)
    assert scope["data"].format.name == "generic" and scope["result"].summary.loc[0, "n"] == 5


def test_per_type_keeps_the_warnings_of_the_questions_it_keeps(tmp_path):
    """--per-type 1 ran ana-q1 and ana-q2 but warned about ana-q3's unread date, in stdout, run.json and the
    report; --limit did not."""
    import taggraph as tg

    folder = copy_fixture(tmp_path)
    records = lines(folder / "questions.jsonl")
    records[2]["date"] = "15/08/2024"  # ana-q3, the second 'pets' question
    records[4]["date"] = "16/08/2024"  # ben-q1, the first 'family' question
    write_lines(folder / "questions.jsonl", records)
    whole = [w for w in tg.load(folder).warnings if w.kind == "unread_date"]
    assert [w.count for w in whole] == [2]
    picked = tg.load(folder, per_type=1)
    assert [c.case_id for c in picked] == ["ana-q1", "ana-q2", "ben-q1"]
    [kept] = [w for w in picked.warnings if w.kind == "unread_date"]
    assert kept.count == 1 and kept.first == ("ben-q1 ('16/08/2024')",)
    records[4]["date"] = "2024-07-01"
    write_lines(folder / "questions.jsonl", records)
    assert not [w for w in tg.load(folder, per_type=1).warnings if w.kind == "unread_date"]


def test_the_checksum_covers_the_files_the_format_reads(tmp_path):
    """A folder's checksum covered every file in it: a README or a run beside the data changed it, so identical
    data was refused by compare; and a path to turns.jsonl left questions.jsonl out of it."""
    folder = copy_fixture(tmp_path)
    before = load_cases(folder).checksum
    (folder / "README.md").write_text("notes about my data\n")
    (folder / "old-run").mkdir()
    (folder / "old-run" / "run.json").write_text("{}")
    assert load_cases(folder).checksum == before == load_cases(folder / "turns.jsonl").checksum
    records = lines(folder / "questions.jsonl")
    records[1]["gold_sessions"] = ["a1"]
    write_lines(folder / "questions.jsonl", records)
    assert load_cases(folder / "turns.jsonl").checksum != before


def test_a_question_without_a_date_is_a_data_warning(tmp_path):
    """Without `date` the time rules read no date a question names; only an unreadable date was warned of."""
    folder = copy_fixture(tmp_path)
    records = lines(folder / "questions.jsonl")
    del records[1]["date"]
    write_lines(folder / "questions.jsonl", records)
    import taggraph as tg

    with pytest.warns(UserWarning):
        data = tg.load(folder)
    [undated] = [w for w in data.warnings if w.kind == "undated_question"]
    assert undated.count == 1 and undated.first == ("ana-q2",)


def test_gold_notes_give_note_level_metrics():
    """`gold_notes` were read and written to qrels.notes.txt, but no note-level metric came of them."""
    result = bench_module.bench(load_cases(FIXTURE), ["BM25"], extractor="none")
    row = result.summary.set_index("method").loc["BM25"]
    judged = [c for c in load_cases(FIXTURE) if c.gold_note_ids]
    assert row["note_n"] == len(judged) == 2 and row["note_MRR"] == 1.0


def test_an_abstention_question_is_judged_at_no_level(tmp_path):
    """An abstention question with gold notes counted at note level (note_n 3, note_MRR 0.733), though the
    session metrics leave it out."""
    folder = copy_fixture(tmp_path)
    records = lines(folder / "questions.jsonl")
    records[3].update(gold_sessions=["a2"], gold_notes=["a2#0"])  # ana-q4, an abstention question
    write_lines(folder / "questions.jsonl", records)
    row = bench_module.bench(load_cases(folder), ["BM25"], extractor="none").summary.set_index("method").loc["BM25"]
    assert (row["n"], row["note_n"]) == (5, 2)


def test_limit_keeps_the_warnings_of_the_questions_it_loads_and_per_type_is_checked(tmp_path):
    """--limit 1 still named ana-q2, ben-q1 and ben-q2 in its warnings; per_type=0 returned every question,
    -1 none."""
    import taggraph as tg

    folder = copy_fixture(tmp_path)
    records = lines(folder / "questions.jsonl")
    for r in records:
        r["date"] = "15/08/2024"
    write_lines(folder / "questions.jsonl", records)
    with pytest.warns(UserWarning):
        [unread] = [w for w in tg.load(folder, limit=1).warnings if w.kind == "unread_date"]
    assert unread.count == 1 and unread.first == ("ana-q1 ('15/08/2024')",)
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ConfigError, match="per_type must be a whole number"):
            tg.load(folder, per_type=bad)


def test_files_the_generic_format_does_not_read_are_named(tmp_path):
    from taggraph.datasets import load

    folder = tmp_path / "mixed"
    shutil.copytree(FIXTURE, folder)
    (folder / "Ada_Lovelace_dialogues_256k.json").write_text('{"_metadata": {}, "dialogues": []}')
    with pytest.warns(UserWarning, match=r"data files in the folder are not read .*Ada_Lovelace_dialogues_256k.json"):
        load(folder, fmt="generic")
