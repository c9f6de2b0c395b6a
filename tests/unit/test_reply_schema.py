"""The LLM reply schema is published: taggraph/extractors/reply.schema.json is the schema the
extractors send, a JSON Schema any validator reads, and docs/llm-extraction.md points to it."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from taggraph.extractors.llm import output_schema

REPO = Path(__file__).resolve().parents[2]
PUBLISHED = REPO / "taggraph" / "extractors" / "reply.schema.json"


def test_the_published_schema_is_the_one_the_extractors_send():
    published = json.loads(PUBLISHED.read_text(encoding="utf-8"))
    assert published.pop("$schema") == "https://json-schema.org/draft/2020-12/schema" and published.pop("description")
    sent = {key: value for key, value in output_schema().items() if key != "description"}
    assert published == sent, "regenerate reply.schema.json from taggraph.extractors.llm.output_schema()"


def test_a_validator_reads_it_and_the_docs_point_to_it():
    schema = json.loads(PUBLISHED.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    reply = {"who": ["person/priya"], "what": ["pet/dog"], "when": [], "where": [], "why": [], "extra": [],
             "summary": "The user adopted a dog."}
    jsonschema.validate(reply, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"who": "person/priya"}, schema)
    assert "taggraph/extractors/reply.schema.json" in (REPO / "docs" / "llm-extraction.md").read_text(encoding="utf-8")
