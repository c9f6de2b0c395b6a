"""Served LLM extractors against hostile servers: a total deadline per
request, replies capped before they are parsed or cached, unusable replies never cached, the API key never
printed, a huge model list and a NaN option refused in one line."""

from __future__ import annotations

import time

import pytest
from typer.testing import CliRunner

from tests.helpers.fake_ollama import FakeOllama, reply
from tests.helpers.fake_openai import Envelope, Error, FakeOpenAI, Raw
from taggraph.cli import app
from taggraph.errors import ConfigError, ServerError
from taggraph._infra.model_clients import MAX_REPLY_BYTES
from taggraph.runs import runner
from taggraph.extractors import get_extractor, llm
from taggraph.extractors.ollama import OllamaExtractor
from taggraph.extractors.openai import OpenAIExtractor

ARGS = ("I adopted a beagle.", "Congratulations!", [])
SECRET = "sk-secret-4242"


@pytest.fixture(autouse=True)
def isolated(tmp_path, monkeypatch):
    monkeypatch.setenv("TAGGRAPH_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setattr(runner, "_EXTRACTORS", {})


@pytest.fixture(params=["openai", "ollama"])
def served(request):
    """(server, make(**kw) -> extractor) for each kind of served extractor, without retry waits."""
    if request.param == "openai":
        fake = FakeOpenAI().start()
        def make(**kw):
            return OpenAIExtractor("smollm2", host=fake.base_url, backoff=0, **kw)
    else:
        fake = FakeOllama().start()
        def make(**kw):
            return OllamaExtractor("llama3.2", host=fake.url, backoff=0, **kw)
    yield fake, make
    fake.stop()


def test_timeout_is_a_total_deadline_against_a_trickling_server(served):
    server, make = served
    server.trickle = 0.5  # the whole reply would take minutes; every byte comes well within the timeout
    extractor = make(timeout=1, retries=0)
    started = time.monotonic()
    result = extractor.extract(*ARGS)
    assert "deadline" in result.error and time.monotonic() - started < 10


def test_an_oversized_reply_is_refused_before_it_is_parsed_or_cached(served):
    server, make = served
    server.default = reply(summary="x" * (2 * MAX_REPLY_BYTES))
    result = make(retries=0).extract(*ARGS)
    assert f"over {MAX_REPLY_BYTES:,} bytes" in result.error
    server.default = reply(what=["pet/dog"])
    assert make().extract(*ARGS).what == ["pet/dog"] and len(server.chats()) == 2


@pytest.mark.parametrize("unusable", ["null", "", "42", '{"mood": "happy", "topic": "dogs"}'])
def test_unusable_replies_fail_and_are_asked_again_once_the_server_is_fixed(served, unusable):
    server, make = served
    server.default = unusable
    first = make()
    assert first.extract(*ARGS).error and first.stats["failures"] == 1
    server.default = reply(what=["pet/dog"])
    again = make()
    assert again.extract(*ARGS).what == ["pet/dog"] and again.stats["requests"] == 1
    assert make().extract(*ARGS).what == ["pet/dog"] and len(server.chats()) == 2  # the usable one is cached


def test_an_api_key_with_a_newline_is_refused_and_never_printed(monkeypatch, tmp_path):
    server = FakeOpenAI().start()
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", f"{SECRET}\nsecond-line")
    try:
        with pytest.raises(ConfigError, match="holds a space, newline") as refused:
            get_extractor("openai:smollm2")
        res = CliRunner().invoke(app, ["extract", "--limit", "1", "--extractor", "openai:smollm2",
                                       "--out", str(tmp_path / "s")])
    finally:
        server.stop()
    assert SECRET not in str(refused.value) and res.exit_code == 2
    assert SECRET not in res.output and "second-line" not in res.output and "holds a space" in res.output


def test_an_api_key_with_a_non_ascii_character_is_refused_and_never_printed(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", f"{SECRET}\u00e9")  # httpx raised UnicodeEncodeError building the header
    with pytest.raises(ConfigError, match="non-ASCII character") as refused:
        get_extractor("openai:smollm2")
    assert SECRET not in str(refused.value)


def test_a_key_a_server_echoes_is_blanked_in_the_error_line():
    server = FakeOpenAI().start()
    server.default = Error(400, f"Incorrect API key provided: {SECRET}")
    try:
        result = OpenAIExtractor("smollm2", host=server.base_url, api_key=SECRET, backoff=0).extract(*ARGS)
    finally:
        server.stop()
    assert "Incorrect API key provided: <OPENAI_API_KEY>" in result.error and SECRET not in result.error


def test_a_listing_of_200000_models_gives_a_short_line():
    server = FakeOpenAI(models=tuple(f"model-{i:06d}" for i in range(200_000))).start()
    try:
        with pytest.raises(ServerError, match="model 'gpt-x' is not on") as refused:
            OpenAIExtractor("gpt-x", host=server.base_url).check()
    finally:
        server.stop()
    assert len(str(refused.value)) < 500 and "and 199,990 more" in str(refused.value)


@pytest.mark.parametrize("value", ["nan", "inf", "-inf"])
def test_a_non_finite_option_is_refused_before_any_request(value, monkeypatch, tmp_path):
    server = FakeOpenAI().start()
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    try:
        res = CliRunner().invoke(app, ["extract", "--limit", "1", "--extractor", "openai:smollm2",
                                       "--option", f"temperature={value}", "--out", str(tmp_path / "s")])
    finally:
        server.stop()
    assert res.exit_code == 2 and f"option temperature={float(value)!r} is not a finite number" in res.output
    assert server.requests == [] and len(res.output.strip().splitlines()) == 1


def test_the_up_front_check_has_a_total_deadline_too(served, monkeypatch):
    server, make = served
    server.trickle = 0.5
    monkeypatch.setattr(llm, "CHECK_TIMEOUT", 1.0)
    started = time.monotonic()
    with pytest.raises(ServerError, match="not usable: timed out: no complete reply within the 1 s deadline"):
        make().check()
    assert time.monotonic() - started < 10


def test_a_password_in_the_host_url_is_blanked_in_every_error_line():
    server = FakeOpenAI().start()
    host = server.base_url.replace("http://", "http://me:hunter2secret@")
    server.stop()  # nothing listens there now
    extractor = OpenAIExtractor("smollm2", host=host, backoff=0, retries=0, max_failures_in_a_row=1)
    with pytest.raises(ServerError) as stopped:
        extractor.extract(*ARGS)
    with pytest.raises(ServerError) as checked:
        extractor.check()
    for error in (stopped.value, checked.value):
        assert "hunter2secret" not in str(error) and "me:***@" in str(error)


@pytest.mark.parametrize("answer", ["error", "not a completion", "page"])
def test_a_key_echoed_where_the_reply_is_cut_leaves_no_part_of_it(answer, monkeypatch, tmp_path):
    server = FakeOpenAI().start()  # each echo ends so that the old cut (300, 80, 80 chars) kept "sk-secret"
    if answer == "error":
        server.default = Error(400, "x" * 275 + f" key was Bearer {SECRET}")
    elif answer == "not a completion":
        server.default = Envelope({"note": "y" * 53 + f"Bearer {SECRET}"})
    else:
        server.page = "y" * 63 + f"Bearer {SECRET}"
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    out = tmp_path / "s"
    try:
        res = CliRunner().invoke(app, ["extract", "--limit", "1", "--extractor", "openai:smollm2", "--out", str(out)])
    finally:
        server.stop()
    written = res.output.encode() + b"".join(p.read_bytes() for p in out.rglob("*") if p.is_file())
    assert b"Bearer <OPENAI" in written
    assert not [n for n in range(8, len(SECRET) + 1) if SECRET[:n].encode() in written]


@pytest.mark.parametrize("answer, said", [
    (Raw(307, "", (("Location", "http://127.0.0.1:1/v1/chat/completions2"),)),
     "HTTP 307 redirect to http://127.0.0.1:1/v1/chat/completions2; give the final URL"),
    (Raw(200, '{"choices": [ {not json'), "the reply is not JSON: '{\"choices\": [ {not json'")])
def test_a_redirect_or_a_body_that_is_not_json_is_named_in_one_line(answer, said):
    server = FakeOpenAI().start()
    server.default = answer
    extractor = OpenAIExtractor("smollm2", host=server.base_url, backoff=0, retries=0, max_failures_in_a_row=1)
    try:
        with pytest.raises(ServerError) as stopped:
            extractor.extract(*ARGS)
    finally:
        server.stop()
    assert said in str(stopped.value) and "\n" not in str(stopped.value)


@pytest.mark.parametrize("answer, said", [(Raw(200, '{"hello": "world"}'), 'not a chat response: {"hello": "world"}'),
                                          (Raw(200, "{not json"), "the reply is not JSON: '{not json'")])
def test_an_ollama_reply_that_is_no_chat_response_is_one_line(answer, said):
    server = FakeOllama().start()
    server.default = answer
    try:
        result = OllamaExtractor("llama3.2", host=server.url, backoff=0).extract(*ARGS)
    finally:
        server.stop()
    assert said in result.error and "\n" not in result.error


def test_a_key_echoed_in_a_model_name_leaves_no_part_of_it_after_the_cut():
    server = FakeOpenAI(models=("y" * 43 + f"Bearer {SECRET}",)).start()  # the old 60-character cut kept "sk-secret"
    try:
        with pytest.raises(ServerError, match="is not on") as refused:
            OpenAIExtractor("gpt-x", host=server.base_url, api_key=SECRET).check()
    finally:
        server.stop()
    assert "Bearer <OPENAI" in str(refused.value)
    assert not [n for n in range(8, len(SECRET) + 1) if SECRET[:n] in str(refused.value)]
