"""taggraph tune-embedder: pairs from a dataset's gold with BM25's hard negatives, a model folder written whole into
the cache with its card and int8 export, and the embedder tuned:NAME that reads it."""

import json

import numpy as np
import pytest
from typer.testing import CliRunner

import taggraph as tg
from taggraph.cli import app
from taggraph._infra.config import DEMO_DATA
from taggraph.datasets import Case
from taggraph.datasets.base import file_checksum
from taggraph.errors import ConfigError
from taggraph.studies import tune_embedder as tuning
from taggraph.runs.bench import run_bench
from taggraph.studies.tune_embedder import training_pairs, tune_embedder
from taggraph.embedders.base import get_embedder
from taggraph.embedders.tuned import tuned_models_dir
from taggraph.core.store import Interaction

runner = CliRunner()
pytest.importorskip("sentence_transformers")


def _case(case_id, question, gold_sessions, gold_notes=(), abstention=False):
    turns = [("s1", "I adopted a beagle puppy named Rex.", "Congratulations on Rex!"),
             ("s1", "I bought a red leash.", "Nice."),
             ("s2", "My neighbour's beagle barks at night.", "That sounds annoying."),
             ("s3", "Can you suggest a pasta recipe?", "Try carbonara."),
             *[(f"s{i}", f"I listened to {album} today.", "Good choice.") for i, album in enumerate(
                 ("jazz", "blues", "folk", "opera"), start=4)]]  # so that words of two notes have a positive idf
    return Case(case_id, question, "single-session-user", [Interaction(*t) for t in turns],
                gold_session_ids=list(gold_sessions), gold_note_ids=list(gold_notes), is_abstention=abstention)


def test_pairs_are_gold_notes_against_the_note_bm25_ranks_first_outside_the_gold_sessions():
    cases = [_case("q1", "What is my beagle called?", ["s1"], ["s1#0"]),
             _case("q2", "What beagle leash did I buy?", ["s1"]),  # no gold notes: every note of its session
             _case("q3", "What is my cat called?", [], abstention=True)]
    pairs = training_pairs(cases)
    beagle, leash, neighbour = (cases[0].interactions[i] for i in (0, 1, 2))
    assert [(q, p.split("\n")[0], n.split("\n")[0]) for q, p, n in pairs] == [
        ("What is my beagle called?", f"User: {beagle.user}", f"User: {neighbour.user}"),
        # BM25's order: the leash note first; the second pair takes the second note outside the gold sessions
        ("What beagle leash did I buy?", f"User: {leash.user}", f"User: {neighbour.user}"),
        ("What beagle leash did I buy?", f"User: {beagle.user}", "User: I listened to jazz today.")]  # "i" matches


@pytest.fixture(scope="module")
def tuned(tmp_path_factory):
    """A cache of its own holding the model `tune-embedder` trained for two steps (the first warms up from a learning
    rate of 0) on the demo's first questions."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TAGGRAPH_CACHE", str(tmp_path_factory.mktemp("cache")))
        res = runner.invoke(app, ["tune-embedder", "--data", str(DEMO_DATA), "--limit", "3", "--max-steps", "2",
                                  "--name", "demo-test"])
        assert res.exit_code == 0, res.output
        yield tuned_models_dir() / "demo-test", res.output


def test_tune_embedder_writes_the_model_its_card_and_its_int8_export(tuned):
    folder, output = tuned
    assert "use it: --embedder tuned:demo-test" in output
    card = json.loads((folder / "model_card.json").read_text())
    assert card["steps"] == 2 and card["seed"] == 0 and card["pairs"] >= 3 and card["base"]["name"] == "minilm"
    assert card["parameters"]["loss"] == "MultipleNegativesRankingLoss" and card["taggraph_commit"]
    assert card["data"] == [{"path": str(DEMO_DATA), "format": "longmemeval", "sha256": file_checksum(DEMO_DATA),
                             "licence": None}]
    assert card["weights_sha256"] == file_checksum(folder / "model.safetensors")
    assert card["int8"]["sha256"] == file_checksum(folder / card["int8"]["file"])
    readme = (folder / "README.md").read_text()
    assert "longmemeval_demo.json" in readme and card["weights_sha256"] in readme
    assert [p.name for p in folder.parent.iterdir() if not p.name.endswith(".lock")] == ["demo-test"]


def test_tuned_name_embeds_with_the_tuned_weights_and_ranks(tuned, monkeypatch):
    folder, _ = tuned
    monkeypatch.setenv("TAGGRAPH_CACHE", str(folder.parents[2]))
    embedder = get_embedder("tuned:demo-test", device="cpu")
    assert embedder.name == "tuned:demo-test" and json.loads((folder / "model_card.json").read_text())[
        "weights_sha256"] in embedder.cache_key
    texts = ["What is my dog's name?", "I adopted a beagle named Rex."]
    minilm = get_embedder("minilm", device="cpu")
    minilm.cache = embedder.cache = False
    assert not np.array_equal(embedder.embed(texts), minilm.embed(texts))  # the second step moved the weights
    cases = tg.load(DEMO_DATA, limit=2)
    result = run_bench(cases, ["TagGraph-Fusion"], "none",
                       method_params={"TagGraph-Fusion": {"embedder": "tuned:demo-test"}})
    assert result.config["methods"]["TagGraph-Fusion"]["embedder"] == "tuned:demo-test"
    assert result.rankings["RR"].notna().all() and (result.rankings["RR"] > 0).any()


def test_a_failed_or_killed_tuning_leaves_no_model(monkeypatch, tmp_path):
    monkeypatch.setenv("TAGGRAPH_CACHE", str(tmp_path))
    dataset = tg.load(DEMO_DATA, limit=2)

    def fails(tmp, *args):
        (tmp / "model.safetensors").write_bytes(b"half")
        raise RuntimeError("disk full")
    monkeypatch.setattr(tuning, "_train_into", fails)
    with pytest.raises(RuntimeError, match="disk full"):
        tune_embedder(dataset, "broken")
    assert [p.name for p in tuned_models_dir().iterdir() if not p.name.endswith(".lock")] == []
    killed = tuned_models_dir() / ".tuning-broken"  # what a run killed just before its rename leaves
    killed.mkdir()
    (killed / "model_card.json").write_text(json.dumps({"weights_sha256": "0" * 64}))
    with pytest.raises(ConfigError, match="no tuned model"):
        get_embedder("tuned:broken")

    def writes_a_card(tmp, pairs, source, card, started):
        (tmp / "model_card.json").write_text(json.dumps({**card, "weights_sha256": "1" * 64}))
    monkeypatch.setattr(tuning, "_train_into", writes_a_card)
    tune_embedder(dataset, "broken")  # the next run of the name removes the killed run's folder
    assert sorted(p.name for p in tuned_models_dir().iterdir() if not p.name.endswith(".lock")) == ["broken"]
    assert get_embedder("tuned:broken").cache_key == f"tuned:broken-{'1' * 64}"
    with pytest.raises(ConfigError, match="exists"):
        tune_embedder(dataset, "broken")


def test_an_unknown_tuned_name_is_one_line_naming_the_folder_and_the_command(monkeypatch, tmp_path):
    monkeypatch.setenv("TAGGRAPH_CACHE", str(tmp_path))
    res = runner.invoke(app, ["bench", "--methods", "OpenClaw", "--embedder", "tuned:nope", "--limit", "1",
                              "--out", str(tmp_path / "run")])
    assert res.exit_code == 2 and res.output.strip().count("\n") == 0
    assert str(tmp_path / "models" / "tuned" / "nope") in res.output
    assert "taggraph tune-embedder --data PATH --name nope" in res.output
    res = runner.invoke(app, ["tune-embedder", "--data", str(DEMO_DATA), "--name", "../elsewhere"])
    assert res.exit_code == 2 and "use letters, digits" in res.output


def test_a_missing_training_package_is_refused_before_any_work(monkeypatch):
    found = tuning.importlib.util.find_spec
    monkeypatch.setattr(tuning.importlib.util, "find_spec", lambda name: None if name == "accelerate" else found(name))
    with pytest.raises(ConfigError, match=r"needs accelerate, not installed: pip install 'taggraph\[dense,int8\]'"):
        tune_embedder(tg.load(DEMO_DATA, limit=1), "never")
