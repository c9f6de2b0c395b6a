import gzip
import json
from pathlib import Path

import pytest

import taggraph as tg

from taggraph._infra.config import DEMO_DATA
from taggraph.datasets import DatasetError
from taggraph.datasets.atant import AtantCase
from taggraph.datasets.base import DatasetWarning
from taggraph.datasets.registry import detect_format
from taggraph.datasets.locomo import LocomoCase

FIXTURES = Path(__file__).parents[1] / "fixtures"


def test_detects_each_format_by_content(tmp_path):
    assert detect_format(DEMO_DATA).name == "longmemeval"
    gz = tmp_path / "renamed.bin"  # name says nothing; gzip content does
    gz.write_bytes(gzip.compress(DEMO_DATA.read_bytes()))
    assert detect_format(gz).name == "longmemeval"
    assert detect_format(FIXTURES / "locomo" / "locomo_tiny.json").name == "locomo"
    assert detect_format(FIXTURES / "atant" / "core").name == "atant"


def test_load_any_dispatches():
    assert len(tg.load(DEMO_DATA, limit=3).cases) == 3
    assert all(isinstance(c, LocomoCase) for c in tg.load(FIXTURES / "locomo" / "locomo_tiny.json").cases)
    atant = tg.load(FIXTURES / "atant" / "r2").cases
    assert all(isinstance(c, AtantCase) and c.split == "r2" for c in atant)


@pytest.mark.parametrize("content,message", [
    ([{"question": "q", "answer": "a"}], r"unknown format.*fields \['answer', 'question'\]"),
    ({"haystack_sessions": []}, "unknown format.*got dict"),
    ([], "unknown format"),
])
def test_unknown_json_is_a_clear_error(tmp_path, content, message):
    path = tmp_path / "other.json"
    path.write_text(json.dumps(content))
    with pytest.raises(DatasetError, match=message) as err:
        detect_format(path)
    assert "other.json" in str(err.value)


def test_folder_without_stories_and_bad_json(tmp_path):
    (tmp_path / "notes.txt").write_text("x")
    with pytest.raises(DatasetError, match="without .yaml/.yml"):
        detect_format(tmp_path)
    bad = tmp_path / "bad.json"
    bad.write_text("{nope")
    with pytest.raises(DatasetError, match="invalid JSON"):
        detect_format(bad)


def test_detects_your_own_data_by_folder_or_file():
    generic = FIXTURES / "generic"
    assert detect_format(generic).name == "generic"
    assert detect_format(generic / "turns.jsonl").name == "generic"  # either file names its folder
    assert detect_format(generic / "questions.jsonl").name == "generic"
    assert len(tg.load(generic / "turns.jsonl").cases) == 6


def test_a_jsonl_of_another_shape_is_an_unknown_format_not_a_json_error(tmp_path):
    path = tmp_path / "turns.jsonl"
    path.write_text('{"speaker": "me", "said": "hi"}\n{"speaker": "you", "said": "hello"}\n')
    with pytest.raises(DatasetError) as err:
        detect_format(path)
    text = str(err.value)
    assert "unknown format" in text and "got JSON Lines with fields ['said', 'speaker']" in text
    assert "Extra data" not in text
    for name in ("longmemeval", "locomo", "atant", "generic"):
        assert f"({name})" in text


def test_an_unknown_format_name_lists_the_known_ones():
    from taggraph.errors import ConfigError
    with pytest.raises(ConfigError, match="unknown format 'csv'; known: longmemeval, locomo, realmem, atant, generic"):
        tg.load(DEMO_DATA, fmt="csv")


def test_tg_load_is_one_loader_for_every_format():
    """`tg.load`: a `Dataset` of any registered format, `limit` then `per_type` applied, the warnings raised."""


    with pytest.warns(DatasetWarning, match="no answer sessions"):
        locomo = tg.load(FIXTURES / "locomo" / "locomo_tiny.json")
    assert isinstance(locomo, tg.Dataset) and isinstance(locomo.format, tg.DatasetFormat)
    assert locomo.format.name == "locomo" and all(isinstance(c, LocomoCase) for c in locomo)
    demo = tg.load(DEMO_DATA, per_type=1)
    types = [c.question_type for c in demo]
    assert len(types) == len(set(types)) == len({c.question_type for c in tg.load(DEMO_DATA).cases}) > 1
    assert [c.case_id for c in tg.load(DEMO_DATA, limit=2)] == [c.case_id for c in tg.load(DEMO_DATA).cases[:2]]


def _big_locomo(first: str) -> list[dict]:
    """The tiny LoCoMo file with `first` ('conversation' or 'qa') first in each sample and past the 64 KB head (400
    times its first session's turns, numbered on, or 400 times its questions)."""
    samples = json.loads((FIXTURES / "locomo" / "locomo_tiny.json").read_text())
    for sample in samples:
        if first == "conversation":
            turns = sample["conversation"]["session_1"] * 400
            sample["conversation"]["session_1"] = [dict(turn, dia_id=f"D1:{i}") for i, turn in enumerate(turns, 1)]
        else:
            sample["qa"] *= 400
    return [{first: s[first], **{k: v for k, v in s.items() if k != first}} for s in samples]


@pytest.mark.parametrize("first", ["conversation", "qa"])
def test_locomo_is_detected_by_structure_whichever_field_comes_first(tmp_path, first):
    """A valid LoCoMo file whose samples open with a conversation past the head (as `json.dump` writes a dict
    built that way) was an unknown format."""
    path = tmp_path / "samples.json"
    path.write_text(json.dumps(_big_locomo(first)))
    assert path.stat().st_size > 1 << 17 and detect_format(path).name == "locomo" and tg.load(path, limit=1).cases
    gz = tmp_path / "samples.json.gz"
    gz.write_bytes(gzip.compress(path.read_bytes()))
    assert detect_format(gz).name == "locomo"


def test_a_list_naming_locomo_fields_in_strings_only_is_no_locomo(tmp_path):
    path = tmp_path / "other.json"
    path.write_text(json.dumps([{"note": '"conversation": {', "text": '"qa": ['}]))
    with pytest.raises(DatasetError, match="unknown format"):
        detect_format(path)


@pytest.mark.parametrize("command", [["bench", "--methods", "BM25"], ["extract", "--extractor", "none"]])
@pytest.mark.parametrize("fmt,path,message", [
    ("atant", "locomo/locomo_tiny.json", "locomo_tiny.json: a file; format atant expects a folder of ATANT .yaml "
                                         "stories"),
    ("longmemeval", "atant/core", "core: a folder; format longmemeval expects a JSON list of LongMemEval question "
                                  "records ('haystack_sessions')"),
    ("locomo", "atant/core", "core: a folder; format locomo expects a JSON list of LoCoMo samples ('conversation', "
                             "'qa')"),
])
def test_a_format_given_for_the_other_kind_of_path_is_one_line(tmp_path, command, fmt, path, message):
    """--format atant on a file was a NotADirectoryError traceback; --format longmemeval on a folder said
    'truncated or corrupt gzip'."""
    from typer.testing import CliRunner

    from taggraph.cli import app
    res = CliRunner().invoke(app, [*command, "--format", fmt, "--data", str(FIXTURES / path),
                                   "--out", str(tmp_path / "out")])
    assert res.exit_code == 2 and res.output.strip().splitlines()[-1].endswith(message), res.output


def test_score_of_a_run_folder_refuses_a_format_its_data_is_not(tmp_path):
    """`score RUN --format atant` read the longmemeval data RUN records and ignored --format."""
    from typer.testing import CliRunner

    from taggraph.cli import app
    runner = CliRunner()
    run = tmp_path / "run"
    assert runner.invoke(app, ["bench", "--methods", "BM25", "--limit", "1", "--out", str(run)]).exit_code == 0
    res = runner.invoke(app, ["score", str(run), "--format", "atant", "--out", str(tmp_path / "s")])
    assert res.exit_code == 2 and res.output.strip().splitlines()[-1].startswith(
        f"error: --format atant: {run}/run.json records longmemeval data ("), res.output
    assert res.output.strip().endswith("not a folder of ATANT .yaml stories; give atant data as --data, or leave "
                                       "--format out")
    res = runner.invoke(app, ["score", str(run), "--format", "longmemeval", "--out", str(tmp_path / "s")])
    assert res.exit_code == 0, res.output
