"""The experiment commands over several --data files, and `answers --k` above the default depth."""

import json
from pathlib import Path

import pandas as pd
from typer.testing import CliRunner

from taggraph.cli import app

runner = CliRunner()
LOCOMO = Path(__file__).parents[1] / "fixtures" / "locomo" / "locomo_tiny.json"


def two_locomo_files(tmp_path: Path) -> list[Path]:
    """The fixture and a copy of it with its first question only: two datasets both named "LoCoMo"."""
    samples = json.loads(LOCOMO.read_text())
    samples = [{**samples[0], "qa": samples[0]["qa"][:1]}]
    other = tmp_path / "locomo_one.json"
    other.write_text(json.dumps(samples))
    return [LOCOMO, other]


def over_two_locomo_files(command: str, tmp_path: Path):
    """`taggraph <command>` over `two_locomo_files`, untagged: (its result, its out folder)."""
    files, out = two_locomo_files(tmp_path), tmp_path / command
    res = runner.invoke(app, [command, "--data", str(files[0]), "--data", str(files[1]), "--extractor", "none",
                              "--out", str(out)])
    assert res.exit_code == 0, res.output
    return res, out


def test_ablation_counts_every_file_of_one_dataset_name(tmp_path):
    res, out = over_two_locomo_files("ablation", tmp_path)
    labels = ["LoCoMo (locomo_tiny.json)", "LoCoMo (locomo_one.json)"]
    assert list(pd.read_csv(out / "ablation.csv")["dataset"]) == labels
    assert list(dict.fromkeys(pd.read_csv(out / "summary.csv")["dataset"])) == labels
    rankings = pd.read_csv(out / "rankings.csv")
    assert list(dict.fromkeys(rankings["dataset"])) == labels
    assert rankings[rankings["dataset"] == labels[1]]["question_id"].nunique() == 1
    run = json.loads((out / "run.json").read_text())
    assert run["config"]["none"]["datasets"] == labels
    assert [d["dataset"] for d in run["data"]] == labels
    assert all(label in res.output for label in labels)


def test_diagnose_counts_every_file_of_one_dataset_name(tmp_path):
    _, out = over_two_locomo_files("diagnose", tmp_path)
    run = json.loads((out / "run.json").read_text())
    assert [d["dataset"] for d in run["data"]] == ["LoCoMo (locomo_tiny.json)", "LoCoMo (locomo_one.json)"]
    units = pd.read_csv(out / "units.csv")
    assert set(units["dataset"]) <= {"LoCoMo (locomo_tiny.json)", "LoCoMo (locomo_one.json)"}


def test_a_data_file_given_twice_is_refused(tmp_path):
    res = runner.invoke(app, ["ablation", "--data", str(LOCOMO), "--data", str(LOCOMO), "--extractor", "none",
                              "--out", str(tmp_path / "abl")])
    assert res.exit_code == 2 and "is given twice" in res.output and not (tmp_path / "abl").exists()


def one_long_session(folder: Path, notes: int) -> Path:
    """A generic dataset of one session of `notes` user/assistant notes and one question about it."""
    folder.mkdir()
    turns = [{"history": "h", "session": "s1", "role": role, "text": f"{role} turn {i} about the garden"}
             for i in range(notes) for role in ("user", "assistant")]
    (folder / "turns.jsonl").write_text("".join(json.dumps(t) + "\n" for t in turns))
    question = {"id": "q1", "history": "h", "question": "What about the garden?", "answer": "garden",
                "gold_sessions": ["s1"]}
    (folder / "questions.jsonl").write_text(json.dumps(question) + "\n")
    return folder


class CountingGenerator:
    """Records how many notes each answer was given."""

    label = "counting"
    given: list[int] = []

    def answer(self, question, notes, question_date=""):
        CountingGenerator.given.append(len(notes))
        return "garden"


def test_answers_gives_the_generator_k_notes_above_the_default_depth(tmp_path, monkeypatch):
    import taggraph.studies.answers as answers
    monkeypatch.setattr(answers, "ExtractiveBaseline", CountingGenerator)
    CountingGenerator.given = []
    data = one_long_session(tmp_path / "long", 45)
    out = tmp_path / "ans"
    res = runner.invoke(app, ["answers", "--data", str(data), "--methods", "BM25", "--extractor", "none",
                              "--k", "45", "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert CountingGenerator.given == [45]
    config = json.loads((out / "run.json").read_text())["config"]["none"]
    assert config["k"] == 45 and config["retrieval"]["depth"] == 45


def test_answer_accuracy_refuses_rankings_shallower_than_k(tmp_path):
    import pytest

    import taggraph as tg
    from taggraph.errors import ConfigError
    from taggraph.studies.answers import answer_accuracy
    from taggraph.runs.bench import run_bench
    cases = tg.load(one_long_session(tmp_path / "long", 12))
    bench = run_bench(cases, ["BM25"], "none", depth=10)
    with pytest.raises(ConfigError, match="at most 10 notes deep"):
        answer_accuracy(cases, bench.rankings, CountingGenerator(), k=11)
