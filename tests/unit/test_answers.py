import json
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from taggraph._infra.config import DEMO_DATA
from taggraph.datasets import load_dataset
from taggraph.evaluation.answer_metrics import containment, normalize_answer, token_f1
from taggraph.studies.answers import (OFFLINE_LABEL, AnswersLeftOutWarning, ExtractiveBaseline, OllamaGenerator,
                                         answer_accuracy)
from taggraph.runs.bench import run_bench
from taggraph.core.notes import Note

from tests.helpers.fake_ollama import FakeOllama

LOCOMO = Path(__file__).parents[1] / "fixtures" / "locomo" / "locomo_tiny.json"  # 8 questions, conv-t1:q4 adversarial


@pytest.fixture
def fake():
    server = FakeOllama(models=("qwen3:0.6b",)).start()
    yield server
    server.stop()


def note(user, assistant="", note_id="s#0", timestamp="2023/05/01"):
    return Note(note_id=note_id, session_id="s", user=user, assistant=assistant, timestamp=timestamp)


def test_squad_normalization_and_scores():
    assert normalize_answer("The  Cat, a Dog!") == "cat dog"
    assert token_f1("The answer is three.", "three") == pytest.approx(0.5)  # P = 1/3, R = 1
    assert token_f1("three three", "three") == pytest.approx(2 * 0.5 * 1 / 1.5)  # multiset overlap is 1
    assert token_f1("", "") == 1.0 and token_f1("x", "") == 0.0 and token_f1("four", "three") == 0.0
    assert containment("I think it was Thirty Three.", "three") == 1.0
    assert containment("threefold", "three") == 0.0  # whole tokens only
    assert containment("anything", "") == 0.0


def test_extractive_baseline_picks_the_best_overlapping_sentence():
    gen = ExtractiveBaseline()
    notes = [note("I love hiking. My dog is a beagle named Max.", "Beagles are great!"),
             note("My cat is grey.", note_id="s#1")]
    assert gen.answer("What breed is my dog?", notes) == "My dog is a beagle named Max."
    assert gen.answer("anything", []) == ""
    assert gen.label == OFFLINE_LABEL == "offline-baseline (not an LLM)"


def test_ollama_generator_request_and_reply(fake):
    fake.queue("<think>the notes say beagle</think>\nMax is a beagle.")
    gen = OllamaGenerator("qwen3:0.6b", host=fake.url)
    assert gen.answer("What breed is my dog?", [note("My dog Max is a beagle.")], "2023/06/01") == "Max is a beagle."
    body = fake.chats()[0]
    assert body["model"] == "qwen3:0.6b" and body["options"]["temperature"] == 0 and body["stream"] is False
    system, user = body["messages"]
    assert system["role"] == "system" and "only the notes" in system["content"]
    assert "My dog Max is a beagle." in user["content"] and "What breed is my dog?" in user["content"]
    assert "2023/06/01" in user["content"] and "2023/05/01" in user["content"]
    assert gen.label == "ollama:qwen3:0.6b"


def test_ollama_host_from_environment(fake, monkeypatch):
    monkeypatch.setenv("OLLAMA_HOST", fake.url)
    fake.queue("ok")
    assert OllamaGenerator("qwen3:0.6b").answer("q", []) == "ok"


def test_answer_accuracy_scores_every_method_and_labels_the_generator(fake):
    cases = load_dataset(DEMO_DATA)
    answerable = [c for c in cases if c.answer and not c.is_abstention]
    gold = {c.question: c.answer for c in cases}
    # the fake model answers with the gold answer inside a sentence: containment 1, token F1 < 1
    fake.default = lambda body: f"I believe it is {gold[body['messages'][1]['content'].split('Question: ')[1][:-8]]}."
    bench = run_bench(cases, ["BM25", "AdaptiveGraph"], extractor="none")
    llm = answer_accuracy(cases, bench.rankings, OllamaGenerator("qwen3:0.6b", host=fake.url), k=5)
    assert len(llm.rows) == 2 * len(answerable) and set(llm.rows["generator"]) == {"ollama:qwen3:0.6b"}
    assert (llm.rows["containment"] == 1.0).all() and (llm.rows["token_f1"] < 1.0).all()
    user_prompt = fake.chats()[0]["messages"][1]["content"]
    assert user_prompt.count("[Note ") == 5  # the top-5 notes
    base = answer_accuracy(cases, bench.rankings, ExtractiveBaseline())
    assert set(base.rows["generator"]) == set(base.summary["generator"]) == {OFFLINE_LABEL}
    summary = base.summary.set_index("method")
    assert list(summary.index) == ["BM25", "AdaptiveGraph"] and (summary["n_answerable"] == len(answerable)).all()
    mrr = bench.summary.set_index("method")["MRR"]
    assert summary.loc["BM25", "MRR"] == pytest.approx(mrr["BM25"])  # same questions as the bench summary
    assert 0 <= summary["containment"].min() and summary["token_f1"].max() <= 1


def test_locomo_adversarial_questions_are_left_out_with_a_warning_and_counted():
    """conv-t1:q4 has only an adversarial_answer: it is not scored, and the result says so (warning, summary,
    config) instead of an n and MRR over fewer questions than bench's without a word."""
    cases = load_dataset(LOCOMO)
    bench = run_bench(cases, ["BM25"], extractor="none")
    with pytest.warns(AnswersLeftOutWarning, match=r"1 of 8 questions left out .*1 adversarial .*first conv-t1:q4"):
        res = answer_accuracy(cases, bench.rankings, ExtractiveBaseline())
    assert "conv-t1:q4" not in set(res.rows["question_id"]) and len(res.rows) == 7
    row = res.summary.set_index("method").loc["BM25"]
    assert row["n_answerable"] == 7 and row["left_out"] == 1
    assert res.config["left_out"] == {"adversarial": ["conv-t1:q4"]} and res.config["questions"] == 8
    assert len(res.warnings) == 1 and "adversarial_answer" in res.warnings[0]
    judged = bench.rankings[bench.rankings["question_id"] != "conv-t1:q4"]
    assert row["MRR"] == pytest.approx(judged["RR"].mean())  # over the questions scored, not bench's 8


def test_the_answers_command_prints_and_saves_what_it_left_out(tmp_path):
    from taggraph.cli import app

    out = tmp_path / "ans"
    res = CliRunner().invoke(app, ["answers", "--data", str(LOCOMO), "--methods", "BM25", "--extractor", "none",
                                   "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert res.stdout.count("warning: answers: 1 of 8 questions left out") == 1, res.stdout
    config = json.loads((out / "run.json").read_text())["config"]["none"]
    assert config["left_out"] == {"adversarial": ["conv-t1:q4"]} and "adversarial_answer" in config["warnings"][0]
    saved = pd.read_csv(out / "answers.csv")
    assert saved[["n_answerable", "left_out"]].values.tolist() == [[7, 1]]
