"""The answer generator and the embedder behind an Ollama server are bounded like the extractors: a total
deadline per request against a trickling server, replies capped before they are parsed, a failed reply one line naming the model and the host, and nothing of it cached."""

from __future__ import annotations

import time

import numpy as np
import pytest
from typer.testing import CliRunner

from tests.helpers.fake_ollama import FakeOllama, Raw
from taggraph.cli import app
from taggraph.errors import ConfigError, ServerError
from taggraph.studies.answers import OllamaGenerator
from taggraph.embedders.ollama import OllamaEmbedder
from taggraph._infra.model_clients import MAX_REPLY_BYTES


@pytest.fixture
def fake():
    server = FakeOllama(models=("qwen3:0.6b", "nomic-embed-text:latest")).start()
    yield server
    server.stop()


@pytest.fixture(autouse=True)
def isolated_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TAGGRAPH_CACHE", str(tmp_path / "cache"))


def test_an_answer_has_a_total_deadline_against_a_trickling_server(fake):
    fake.trickle = 0.5  # a byte every 0.5 s: each read is well within the timeout, the whole reply is not
    started = time.monotonic()
    with pytest.raises(ServerError, match=r"ollama:qwen3:0.6b at http://127\.0\.0\.1:\d+ \(/api/chat\).*deadline"):
        OllamaGenerator("qwen3:0.6b", host=fake.url, timeout=1).answer("What breed is my dog?", [])
    assert time.monotonic() - started < 10


def test_an_embedding_batch_has_a_total_deadline_against_a_trickling_server(fake):
    fake.trickle = 0.5
    started = time.monotonic()
    with pytest.raises(ServerError, match=r"ollama:nomic-embed-text at .* \(/api/embed\).*deadline"):
        OllamaEmbedder(host=fake.url, timeout=1).embed(["my dog is a beagle"])
    assert time.monotonic() - started < 10


def test_an_oversized_answer_is_refused_before_it_is_parsed(fake):
    fake.queue("x" * (2 * MAX_REPLY_BYTES))
    with pytest.raises(ServerError, match=f"over {MAX_REPLY_BYTES:,} bytes"):
        OllamaGenerator("qwen3:0.6b", host=fake.url).answer("q", [])


@pytest.mark.parametrize("reply, why", [
    ('{"embeddings": [[0.1, 0.2]]}', "holds 1 embeddings for 2 texts"),
    ('{"embeddings": [[0.1, 0.2], [0.3]]}', "not rows of numbers of one length"),
    ('{"embeddings": [[0.1, NaN], [0.3, 0.4]]}', "not a finite number"),
    ('{"embeddings": [[0.1, "a"], [0.3, 0.4]]}', "not rows of numbers"),
    ('[1, 2]', "no embeddings list"),
    ("<html>", "not JSON"),
])
def test_an_unusable_embedding_reply_is_one_line_and_never_cached(fake, reply, why):
    texts = ["my dog is a beagle", "I hike on weekends"]
    fake.embed_reply = Raw(200, reply)
    with pytest.raises(ServerError, match=why) as failed:
        OllamaEmbedder(host=fake.url).embed(texts)
    assert "\n" not in str(failed.value)
    fake.embed_reply = None  # the server is fixed: the texts are asked again, not read from the cache
    vectors = OllamaEmbedder(host=fake.url).embed(texts)
    assert vectors.shape == (2, fake.embed_dim) and np.isfinite(vectors).all()
    assert [r["path"] for r in fake.requests].count("/api/embed") == 2


def test_an_unreachable_server_is_one_line_naming_the_host():
    with pytest.raises(ServerError, match=r"ollama:qwen3:0.6b at http://127\.0\.0\.1:9 \(/api/chat\).*connect"):
        OllamaGenerator("qwen3:0.6b", host="http://127.0.0.1:9", timeout=5).answer("q", [])


@pytest.mark.parametrize("timeout", [0, -1, float("nan"), float("inf")])
def test_a_timeout_that_is_not_a_finite_positive_number_is_refused(timeout):
    with pytest.raises(ConfigError, match="finite number of seconds > 0"):
        OllamaGenerator("qwen3:0.6b", host="http://127.0.0.1:9", timeout=timeout)
    with pytest.raises(ConfigError, match="finite number of seconds > 0"):
        OllamaEmbedder(host="http://127.0.0.1:9", timeout=timeout)


def test_answers_timeout_ends_a_trickling_generator_in_one_line(fake, tmp_path):
    fake.trickle = 0.5
    started = time.monotonic()
    res = CliRunner().invoke(app, ["answers", "--limit", "1", "--extractor", "none", "--methods", "BM25",
                                   "--generator", "ollama:qwen3:0.6b", "--timeout", "1",
                                   "--out", str(tmp_path / "answers")], env={"OLLAMA_HOST": fake.url})
    assert res.exit_code != 0 and time.monotonic() - started < 60
    assert "deadline" in res.output and "Traceback" not in res.output and len(res.output.splitlines()) <= 2


@pytest.mark.parametrize("reply, why", [
    ('{"embeddings": [["0.1", "0.2"], ["0.3", "0.4"]]}', "not rows of numbers"),
    ('{"embeddings": [[true, false], [false, true]]}', "not rows of numbers"),
    ('{"embeddings": [[0.0, 0.0], [0.3, 0.4]]}', "an embedding of zeros"),
])
def test_strings_booleans_and_zeros_are_no_embedding(fake, reply, why):
    fake.embed_reply = Raw(200, reply)  # numpy read "0.1" and true as numbers, and cached them
    with pytest.raises(ServerError, match=why):
        OllamaEmbedder(host=fake.url).embed(["my dog is a beagle", "I hike on weekends"])


def test_a_model_that_changed_under_its_name_is_named_not_blamed_on_the_method(fake):
    """`ollama pull` of a new model under the old name: the notes' vectors cached at 8 dimensions, the question's
    now 16; numpy's matmul error was reported as the method's ('fix the method'), run after run."""
    OllamaEmbedder(host=fake.url).embed(["my dog is a beagle"])
    fake.embed_dim = 16
    embedder = OllamaEmbedder(host=fake.url)
    with pytest.raises(ConfigError, match=r"'ollama:nomic-embed-text': vectors of \[8, 16\] dimensions cached in "
                                          r".*the model behind the name changed"):
        embedder.embed(["my dog is a beagle", "a new text"])
    fresh = OllamaEmbedder(host=fake.url)
    fresh.embed(["my dog is a beagle"])  # all cached: 8
    with pytest.raises(ConfigError, match=r"vectors of \[8, 16\] dimensions"):
        fresh.embed_queries(["What breed is my dog?"])  # computed now: 16


def test_a_redirect_or_a_login_page_is_one_line_naming_the_model(fake):
    fake.page = "<html>Please log in</html>"
    with pytest.raises(ServerError, match=r"^ollama:qwen3:0.6b at .* \(/api/chat\) failed: .*text/html"):
        OllamaGenerator("qwen3:0.6b", host=fake.url).answer("q", [])
    fake.page = None
    elsewhere = FakeOllama(models=("qwen3:0.6b",)).start()
    fake.queue(Raw(307, "", (("Location", f"{elsewhere.url}/api/chat"),)))
    try:
        with pytest.raises(ServerError, match=r"redirect to http://127\.0\.0\.1:\d+/api/chat"):
            OllamaGenerator("qwen3:0.6b", host=fake.url).answer("What breed is my dog?", [])
        assert elsewhere.chats() == []  # the prompt, with the user's notes, went nowhere else
    finally:
        elsewhere.stop()
