"""One broken plug-in is confined to itself: listing, help and runs that do not
name it work; using or listing it gives one line naming its package and entry point; bad method names and
modules are one-line errors, not tracebacks."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated

import pytest
from pydantic import Field

import taggraph as tg
from taggraph.cli.app import parse_value
from taggraph.datasets import registry as datasets
from taggraph.errors import ConfigError
from taggraph.extractors import get_extractor
from taggraph.extractors.registry import EXTRACTORS
from taggraph.methods import registry

from tests.helpers.plugins import install_broken

REPO = Path(__file__).resolve().parents[2]
TAGGRAPH = str(Path(sys.executable).with_name("taggraph"))

@pytest.fixture
def broken(tmp_path, monkeypatch):
    """The broken distribution on sys.path, registries read again (and restored after the test)."""
    monkeypatch.syspath_prepend(str(install_broken(tmp_path)))
    monkeypatch.setattr(registry.METHODS, "_registered", dict(registry.METHODS._registered))
    for kind in (registry.METHODS, datasets.FORMATS, EXTRACTORS):
        monkeypatch.setattr(kind, "_installed", None)  # entry points read again
    return tmp_path


def cli(args: list[str], folder: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "TQDM_DISABLE": "1", "HF_HUB_OFFLINE": "1",
           "PYTHONPATH": os.pathsep.join([str(folder), str(REPO)])}
    return subprocess.run([TAGGRAPH, *args], cwd=folder, capture_output=True, text=True, timeout=600, env=env)


def one_line(text: str) -> str:
    lines = text.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in text, text
    return lines[0]


def test_the_cli_lists_helps_and_runs_beside_a_broken_plugin(tmp_path):
    folder = install_broken(tmp_path)
    assert cli(["--help"], folder).returncode == 0
    helped = cli(["bench", "--help"], folder)
    assert helped.returncode == 0 and "brokenfmt" in helped.stdout, helped.stderr
    listed = cli(["methods"], folder)
    assert listed.returncode == 0, listed.stderr
    lines = listed.stdout.splitlines()
    names = [line.split("  ")[0] for line in lines]
    assert names[0] == "BM25" and "GoodOverlap" in names and "TagGraph-Fusion-noTurns  (ablation of " \
        "TagGraph-Fusion: -Turns)" in lines
    raised = next(line for line in lines if line.startswith("BrokenRaises"))
    assert "brokenplug 2.5" in raised and "BrokenRaises = raisesplug:Thing" in raised and "exploded" in raised
    run = cli(["bench", "--methods", "BM25", "--embedder", "minilm-static", "--extractor", "none", "--limit", "2",
               "--miss-pages", "0", "--out", "run"], folder)
    assert run.returncode == 0, run.stderr
    used = cli(["bench", "--methods", "BM25,BrokenSyntax", "--out", "run2"], folder)
    assert used.returncode == 2 and not (folder / "run2").exists()
    line = one_line(used.stderr)
    assert "'BrokenSyntax = syntaxplug:Thing'" in line and "package brokenplug 2.5" in line and "SyntaxError" in line
    fmt = cli(["bench", "--format", "brokenfmt", "--out", "run3"], folder)
    assert fmt.returncode == 2 and "brokenplug 2.5" in one_line(fmt.stderr)


def test_a_broken_method_plugin_fails_where_it_is_used(broken):
    assert {"GoodOverlap", "BrokenRaises", "AFunction"} <= set(tg.method_names())
    assert registry.check_methods(["BM25", "GoodOverlap"]) == ["BM25", "GoodOverlap"]
    assert "minilm" not in str(registry.embedding_methods()) and "TagGraph-Fusion" in registry.embedding_methods()
    with pytest.raises(ConfigError, match=r"RuntimeError: plug-in exploded at import.*brokenplug|brokenplug.*exploded"):
        registry.check_methods(["BrokenRaises"])
    with pytest.raises(ConfigError, match=r"AFunction.*not a subclass of taggraph.Retriever.*package brokenplug 2.5"):
        registry.check_methods(["AFunction"])


def test_a_broken_dataset_plugin_leaves_the_other_formats(broken):
    names = datasets.format_names()
    assert "generic" in names and "brokenfmt" not in names
    assert "brokenplug 2.5" in datasets.broken_formats()["brokenfmt"]
    with pytest.raises(ConfigError, match=r"dataset format 'brokenfmt'.*brokenfmt = raisesplug:FORMAT.*brokenplug 2.5"):
        datasets.get_format("brokenfmt")


def test_a_broken_extractor_plugin_is_named(broken):
    with pytest.raises(ConfigError, match=r"extractor 'brokentagger'.*brokenplug 2.5.*SyntaxError"):
        get_extractor("brokentagger")
    assert get_extractor("none").name == "none"


@pytest.mark.parametrize("spec, words", [
    (":X", "is not package.module:Class"), (".rel:X", "is not package.module:Class"),
    ("raisesplug:Thing", "importing 'raisesplug' fails: RuntimeError: plug-in exploded"),
    ("syntaxplug:Thing", "importing 'syntaxplug' fails: SyntaxError"),
])
def test_bad_module_specs_are_one_line(broken, spec, words):
    with pytest.raises(ConfigError, match=words) as caught:
        registry.check_methods([spec])
    assert "\n" not in str(caught.value)
    with pytest.raises(ConfigError):
        get_extractor(spec)


@pytest.mark.parametrize("name", ["", "a,b", " padded", "dotted.name", "k=v", None])
def test_register_method_refuses_names_the_cli_cannot_write(broken, name):
    cls = registry.method("BM25").cls()
    with pytest.raises(ConfigError, match="cannot register method name"):
        tg.register_method(name, cls)


def test_register_method_refuses_a_function(broken):
    with pytest.raises(ConfigError, match="not a subclass of taggraph.Retriever"):
        tg.register_method("Func", lambda store, params=None: None)


def test_register_method_refuses_an_init_without_params(broken):
    class StoreOnly(tg.Retriever):
        def __init__(self, store):
            super().__init__(store)

        def add(self, note):
            pass

        def score(self, text, *, asked_on=None):
            return {}

    with pytest.raises(ConfigError, match=r"method 'StoreOnly': StoreOnly.__init__ must take the store and the "
                                          r"parameters \(def __init__\(self, store, params=None\)"):
        tg.register_method("StoreOnly", StoreOnly)


@dataclass(frozen=True)
class Weights:
    lexical: Annotated[float, Field(ge=0)] = -1.0


class OutOfRange(tg.Retriever):
    @dataclass(frozen=True)
    class Params:
        alpha: Annotated[float, Field(ge=0, le=1)] = 5.0

    def add(self, note):
        pass

    def score(self, text, *, asked_on=None):
        return {}


class NestedOutOfRange(OutOfRange):
    @dataclass(frozen=True)
    class Params:
        weights: Weights = field(default_factory=Weights)


@dataclass(frozen=True)
class TextWeights:
    lexical: float = "1.0"


class WrongType(OutOfRange):
    @dataclass(frozen=True)
    class Params:
        k: Annotated[int, Field(ge=1)] = "3"


class SwitchAsNumber(OutOfRange):
    @dataclass(frozen=True)
    class Params:
        stem: bool = 1


class NestedWrongType(OutOfRange):
    @dataclass(frozen=True)
    class Params:
        weights: TextWeights = field(default_factory=TextWeights)


TYPE = "not of its declared type, which reads it as"


@pytest.mark.parametrize("cls, words", [
    (OutOfRange, r"OutOfRange.Params default alpha = 5.0: .*less than or equal to 1"),
    (NestedOutOfRange, r"NestedOutOfRange.Params default weights.lexical = -1.0: .*greater than or equal to 0"),
    (WrongType, rf"WrongType.Params default k = '3': {TYPE} 3 \(fix the default\)"),
    (SwitchAsNumber, rf"SwitchAsNumber.Params default stem = 1: {TYPE} True \(fix the default\)"),
    (NestedWrongType, rf"NestedWrongType.Params default weights.lexical = '1.0': {TYPE} 1.0 \(fix the default\)"),
])
def test_a_default_outside_its_own_range_or_type_is_refused_where_the_method_is_defined(broken, cls, words):
    with pytest.raises(ConfigError, match=rf"method 'Ranged': {words}") as refused:
        tg.register_method("Ranged", cls)
    assert "\n" not in str(refused.value) and "Ranged" not in registry.method_names()
    with pytest.raises(ConfigError, match=words):
        registry.check_methods([f"{__name__}:{cls.__name__}"])


def test_an_int_default_of_a_float_is_of_its_type(broken):
    class IntForFloat(OutOfRange):
        @dataclass(frozen=True)
        class Params:
            alpha: float = 1
            names: tuple[str, ...] = ("a",)

    tg.register_method("IntForFloat", IntForFloat)
    assert registry.method("IntForFloat").params().alpha == 1


def test_deeply_nested_json_values_are_one_line_errors():
    assert parse_value('{"a": [1, {"b": 2}]}') == {"a": [1, {"b": 2}]}
    for depth in (40, 1000, 100_000):
        with pytest.raises(ConfigError, match="nested more than 32 levels"):
            parse_value("[" * depth + "]" * depth)


@pytest.mark.parametrize("name", ["n", "k", "question_type", "question_id"])
def test_register_method_refuses_a_report_column_name(broken, name):
    """A method named "n" registered, then crashed bench's report ("cannot insert n, already exists")."""
    cls = registry.method("BM25").cls()
    with pytest.raises(ConfigError, match=f"cannot register method name '{name}': the report's tables have"):
        tg.register_method(name, cls)
