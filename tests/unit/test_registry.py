"""The one registry helper (`taggraph.registry`): ``module:attr`` errors in one line, built-ins declared in one
literal table per kind and imported when first used, one entry-point policy (a built-in wins, a broken plug-in is confined to itself, entry
points read once), and run-time registrations carried to worker processes."""

from __future__ import annotations

import ast
import os
import pickle
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import pytest
from pydantic import Field

from taggraph.datasets import generic, get_format
from taggraph.datasets import registry as datasets
from taggraph.errors import ConfigError
from taggraph.extractors import get_extractor, register_extractor
from taggraph.extractors.ollama import OllamaExtractor
from taggraph.extractors.registry import EXTRACTORS, backend
from taggraph.registry import KINDS, Kind, Registry, load_attr, register, with_registered
from taggraph.embedders.base import EMBEDDERS, get_embedder
from taggraph.embedders.minilm_static import StaticEmbedder
from taggraph.methods.base import Retriever
from taggraph.methods.params import Component
from taggraph.methods.registry import METHODS, ablations_of, components, method, method_names, register_method

REPO = Path(__file__).resolve().parents[2]
GROUP = "taggraph.test_widgets"
BUILTIN_ALPHA = "the built-in alpha"
KINDS["widget"] = Kind("widget", GROUP, __name__)  # kinds of the tests' own: one line of KINDS each
KINDS["kit"] = Kind("kit", "taggraph.test_kits", "kits")
WIDGETS = Registry("widget", builtins={"alpha": f"{__name__}:BUILTIN_ALPHA"})

PLUGIN = """\
BETA = "an installed beta"
ALPHA = "an installed alpha"
"""


def install(folder: Path, entry_points: str, group: str = GROUP) -> None:
    """A distribution 'widgetplug' 1.5 on sys.path whose entry points are `entry_points` in `group`."""
    (folder / "widgetplug.py").write_text(PLUGIN)
    (folder / "explodes.py").write_text("raise RuntimeError('exploded at import')\n")
    info = folder / "widgetplug-1.5.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: widgetplug\nVersion: 1.5\n")
    (info / "entry_points.txt").write_text(f"[{group}]\n{entry_points}\n")
    sys.path.insert(0, str(folder))


@pytest.fixture
def plugged(tmp_path, monkeypatch):
    """widgetplug installed: a good entry point, one naming a built-in, one that fails to import."""
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.setattr(WIDGETS, "_installed", None)
    install(tmp_path, "beta = widgetplug:BETA\nalpha = widgetplug:ALPHA\ngamma = explodes:THING")
    yield tmp_path
    for module in ("widgetplug", "explodes"):
        sys.modules.pop(module, None)


@pytest.mark.parametrize("spec, words", [
    ("nodots", "'nodots' is not package.module:Class"),
    ("no_such_module_here:Thing", "cannot import 'no_such_module_here:Thing': no module named 'no_such_module_here'"),
    ("json:no_such_attr", "cannot import 'json:no_such_attr': json has no 'no_such_attr'"),
    ("explodes:THING", "importing 'explodes' fails: RuntimeError: exploded at import"),
])
def test_module_attr_errors_are_one_line_naming_what(plugged, spec, words):
    with pytest.raises(ConfigError, match=f"^widget 'w': {words}") as caught:
        load_attr(spec, "widget 'w'")
    assert "\n" not in str(caught.value)


def test_module_attr_walks_into_classes():
    assert load_attr("taggraph.registry:Registry.resolve", "x") is Registry.resolve


def test_a_builtin_wins_over_an_entry_point_of_its_name_and_the_clash_is_one_line(plugged):
    assert WIDGETS.get("alpha") == "the built-in alpha" and WIDGETS.get("beta") == "an installed beta"
    clash = WIDGETS.problems()["alpha"]
    assert "'alpha = widgetplug:ALPHA'" in clash and "widgetplug 1.5" in clash and "ignored" in clash
    assert WIDGETS.names() == ["alpha", "beta", "gamma"] and WIDGETS.entry_point("alpha") is None


def test_a_broken_plugin_is_confined_to_itself(plugged):
    assert WIDGETS.values() == ["the built-in alpha", "an installed beta"]
    with pytest.raises(ConfigError, match=r"^widget 'gamma': entry point 'gamma = explodes:THING' .* widgetplug 1.5 "
                                          r"fails to load: RuntimeError: exploded at import"):
        WIDGETS.get("gamma")
    assert "exploded" in WIDGETS.problems()["gamma"]


def test_entry_points_are_read_once_per_process(plugged, tmp_path_factory):
    assert "beta" in WIDGETS.names()
    install(tmp_path_factory.mktemp("later"), "delta = widgetplug:BETA")
    assert "delta" not in WIDGETS.names()


def test_an_installed_format_never_replaces_a_builtin_one(tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.setattr(datasets.FORMATS, "_installed", None)
    install(tmp_path, "generic = widgetplug:BETA", group=datasets.FORMATS.group)
    assert get_format("generic") is generic.FORMAT
    assert "names a built-in dataset format: ignored" in datasets.broken_formats()["generic"]


def test_a_builtin_is_imported_when_its_name_is_first_used(tmp_path, monkeypatch):
    package = tmp_path / "gadgets"
    package.mkdir()
    (package / "__init__.py").write_text("from taggraph.registry import KINDS, Kind, Registry\n"
                                         "KINDS['gadget'] = Kind('gadget', 'taggraph.test_gadgets', 'gadgets')\n"
                                         "GADGETS = Registry('gadget', "
                                         "builtins={'spanner': ('gadgets.spanner:Spanner', {'arg': 'SIZE'})})\n")
    (package / "spanner.py").write_text("class Spanner:\n    def __init__(self, size):\n        self.size = size\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    from gadgets import GADGETS

    try:
        assert GADGETS.forms() == ["spanner:SIZE"] and "gadgets.spanner" not in sys.modules  # listed, not imported
        found, args = GADGETS.resolve("spanner:10")
        assert found(*args).size == "10" and GADGETS.resolve("spanner") is None
        with pytest.raises(ConfigError, match="gadget 'spanner:' names no size: write spanner:SIZE"):
            GADGETS.resolve("spanner:")
    finally:
        for module in ("gadgets", "gadgets.spanner"):
            sys.modules.pop(module, None)


def test_an_extractor_by_name_imports_only_its_own_module():
    code = ("import sys, taggraph; taggraph.get_extractor('none'); "
            "print(sorted(set(taggraph.extractors.registry.EXTRACTORS.forms()) & {'gguf:PATH', 'offline-v2'}), "
            "'taggraph.extractors.llm' in sys.modules)")
    shown = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                           env={**os.environ, "PYTHONPATH": str(REPO)}).stdout.split()
    assert shown == ["['gguf:PATH',", "'offline-v2']", "False"]


def package_of(folder: Path, name: str, modules: dict[str, str], table: str, declare: str = "") -> None:
    """A package `name` in `folder` whose __init__ defines the registry KITS (built-ins `table`, hook `declare`:
    Python expressions) over its own modules, `modules`: module name -> source."""
    (folder / name).mkdir()
    (folder / name / "__init__.py").write_text(
        f"from taggraph.registry import Registry\n\nKITS = Registry('kit', builtins={table}"
        f"{', declare=' + declare if declare else ''})\n")
    for module, source in modules.items():
        (folder / name / f"{module}.py").write_text(source)


def forget(package: str) -> None:
    for module in [m for m in sys.modules if m == package or m.startswith(f"{package}.")]:
        sys.modules.pop(module)


def test_builtins_are_listed_in_table_order_whatever_was_imported_first(tmp_path, monkeypatch):
    package_of(tmp_path, "kits", {"axes": "class Axe:\n    pass\n", "hammers": "class Hammer:\n    pass\n"},
               table="{'axe': 'kits.axes:Axe', 'claw': 'kits.hammers:Hammer', 'sledge': 'kits.hammers:Hammer'}")
    monkeypatch.syspath_prepend(str(tmp_path))
    from kits import KITS
    from kits.hammers import Hammer

    try:
        assert KITS.names() == ["axe", "claw", "sledge"] and KITS.get("claw") is Hammer
        assert "kits.axes" not in sys.modules
    finally:
        forget("kits")


def test_a_declare_hook_keeps_what_a_builtin_and_its_literal_options_declare(tmp_path, monkeypatch):
    package_of(tmp_path, "tools", {"saws": "class Saw:\n    pass\n"},
               table="{'saw': ('tools.saws:Saw', {'size': 3}), 'rip-saw': ('tools.saws:Saw', {'teeth': ['rip']})}",
               declare="lambda name, spec, options: {name: (spec, options), name + '-small': (spec, {})}")
    monkeypatch.syspath_prepend(str(tmp_path))
    from tools import KITS

    try:
        assert KITS.names() == ["saw", "saw-small", "rip-saw", "rip-saw-small"] and "tools.saws" not in sys.modules
        assert KITS.get("rip-saw") == ("tools.saws:Saw", {"teeth": ["rip"]}) and KITS.get("saw-small") == \
            ("tools.saws:Saw", {})
    finally:
        forget("tools")


def test_a_name_declared_twice_in_a_table_is_refused(tmp_path, monkeypatch):
    twice = Registry("kit", builtins={"saw": "x:Saw", "saw-small": "x:Saw"},
                     declare=lambda name, spec, options: {name: spec, "saw-small": spec})
    with pytest.raises(ConfigError, match="built-in kit 'saw-small' is declared twice"):
        twice.names()


def test_taggraph_methods_lists_each_table_line_and_its_ablations():
    code = "import sys; from taggraph.cli import app; sys.argv = ['taggraph', 'methods']\ntry: app()\nexcept SystemExit: pass"
    shown = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                           env={**os.environ, "PYTHONPATH": str(REPO)}).stdout.splitlines()
    assert "TagGraph-Fusion-noTurns  (ablation of TagGraph-Fusion: -Turns)" in shown
    # registered with ablation_of but no component: it adds a switch, it removes none
    assert "TagGraph-TFIDF-boundTopLevel  (variant of TagGraph-TFIDF: adds bound_top_level=True)" in shown
    assert "AdaptiveGraph-noFileSeeding-noDiffusion  (ablation of AdaptiveGraph: -FileSeeding, -Diffusion)" in shown


def test_no_registry_reads_source():
    """Built-ins are declared in literal tables: no registry parses a module's source to find them."""
    registries = [REPO / "taggraph" / "registry.py", *REPO.glob("taggraph/*/registry.py"),
                  REPO / "taggraph" / "embedders" / "base.py"]
    for path in registries:
        imported = {alias.name for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
                    if isinstance(node, (ast.Import, ast.ImportFrom)) for alias in node.names}
        imported |= {node.module for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
                     if isinstance(node, ast.ImportFrom) and node.module}
        assert not imported & {"ast", "pkgutil"}, path


def test_a_methods_ablations_are_the_components_its_params_declare(tmp_path, monkeypatch):
    (tmp_path / "toy_method.py").write_text(
        "from dataclasses import dataclass\nfrom typing import Annotated\n\nfrom pydantic import Field\n\n"
        "from taggraph.methods.base import Retriever\nfrom taggraph.methods.params import Component\n\n\n"
        "class Toy(Retriever):\n"
        "    @dataclass(frozen=True)\n    class Params:\n        size: int = 2\n"
        "        flag: Annotated[bool, Component('Flag')] = True\n"
        "        steps: Annotated[int, Field(ge=0), Component('Steps', off=0)] = 3\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert components("toy_method:Toy") == {"flag": Component("Flag"), "steps": Component("Steps", off=0)}
    adaptive = [(m.component, m.defaults) for m in map(METHODS.get, ablations_of("AdaptiveGraph"))]
    assert adaptive == [("Diffusion", {"iterations": 0}), ("Chronological", {"chronological": False}),
                        ("FileSeeding", {"file_seeding": False})]


def tagger_name(spec: str) -> str:
    """What a worker process runs: an extractor built by name."""
    return get_extractor(spec).cache_key


class Tagger:
    """An extractor a notebook registers."""

    name, cache_key = "tagger", "tagger-v1"

    def extract(self, user_text, assistant_text, existing_tags):
        raise NotImplementedError


def test_registrations_of_every_kind_travel_to_workers_by_pickle(monkeypatch):
    monkeypatch.setattr(METHODS, "_registered", {})
    monkeypatch.setattr(EXTRACTORS, "_registered", {})
    monkeypatch.setattr(EMBEDDERS, "_registered", {})
    register_extractor("tagger", Tagger)
    register("embedder", "static-too", StaticEmbedder)
    task = pickle.dumps(with_registered(tagger_name))
    monkeypatch.setattr(EXTRACTORS, "_registered", {})  # a fresh worker: nothing registered
    monkeypatch.setattr(EMBEDDERS, "_registered", {})
    assert pickle.loads(task)("tagger") == "tagger-v1"
    assert get_embedder("static-too").name == "minilm-static"


def test_extractor_capabilities_are_attributes_of_the_backend():
    assert backend("ollama:llama3.2") is OllamaExtractor and OllamaExtractor.served and OllamaExtractor.reads_prompt
    assert not getattr(backend("offline"), "served", False) and not getattr(backend("none"), "reads_prompt", False)
    assert {"gguf:PATH", "none", "offline", "offline-v2", "ollama:MODEL", "openai:MODEL"} <= set(EXTRACTORS)


TOY_FORMAT = '''"""A toy format: a file whose first line is TOY."""
from pathlib import Path

from taggraph.datasets.base import DatasetFormat


def detect(path: Path) -> bool:
    return path.is_file() and path.read_bytes().startswith(b"TOY")


FORMAT = DatasetFormat(name="toy", expects="a file starting TOY", detect=detect, load=lambda path, limit=None: [])
'''


def test_a_builtin_format_is_one_module_and_one_line_of_the_table(tmp_path):
    shutil.copytree(REPO / "taggraph", tmp_path / "taggraph", ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "taggraph" / "datasets" / "toy.py").write_text(TOY_FORMAT)
    table = tmp_path / "taggraph" / "datasets" / "registry.py"
    line = '    "longmemeval": "taggraph.datasets.longmemeval:FORMAT",'
    source = table.read_text(encoding="utf-8")
    assert line in source
    table.write_text(source.replace(line, line + '\n    "toy": "taggraph.datasets.toy:FORMAT",'), encoding="utf-8")
    (tmp_path / "data.toy").write_text("TOY\n")
    code = ("import taggraph.datasets as d; from taggraph.datasets.registry import detect_format; "
            "print(d.format_names()); print(detect_format('data.toy').name)")
    shown = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=tmp_path,
                           env={**os.environ, "PYTHONPATH": str(tmp_path)}).stdout.splitlines()
    assert shown == ["['longmemeval', 'toy', 'locomo', 'realmem', 'atant', 'generic-past', 'generic']", "toy"]


def test_every_format_a_module_defines_has_its_line_in_the_table():
    """A DatasetFormat without its line in BUILTIN_FORMATS would be left out of detection without a word."""
    defined = set()
    for path in (REPO / "taggraph" / "datasets").glob("*.py"):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.Assign) and "DatasetFormat(" in ast.unparse(node.value):
                defined |= {f"taggraph.datasets.{path.stem}:{t.id}" for t in node.targets}
    assert defined == set(datasets.BUILTIN_FORMATS.values())
    assert datasets.format_names() == ["longmemeval", "locomo", "realmem", "atant", "generic-past", "generic"]


class Pooled(Retriever):
    """A method with an optional bounded count."""

    @dataclass(frozen=True)
    class Params:
        pool: Annotated[int, Field(ge=1)] | None = None
        switch: bool | None = None

    def add(self, note):
        pass

    def score(self, text, *, asked_on=None):
        return {}


def test_an_optional_number_refuses_a_switch_and_shows_its_type_and_range(monkeypatch):
    monkeypatch.setattr(METHODS, "_registered", {})
    register_method("Pooled", Pooled)
    pooled = METHODS.get("Pooled")
    with pytest.raises(ConfigError, match="parameter 'pool' must be int or None, got True"):
        pooled.params(pool=True)
    with pytest.raises(ConfigError, match="parameter 'switch' must be bool or None, got 1"):
        pooled.params(switch=1)
    assert pooled.params(pool=3).pool == 3 and pooled.params(pool=None).pool is None
    assert [(p["name"], p["type"], p["rule"]) for p in pooled.parameters()] == [
        ("pool", "int | None", ">= 1"), ("switch", "bool | None", "")]


@pytest.mark.usefixtures("clean_registry")
def test_taggraph_methods_says_what_every_method_is():
    from typer.testing import CliRunner

    from taggraph.cli import app
    from taggraph.methods import Retriever, register_method

    @register_method("Shouty")
    class Shouty(Retriever):
        """Scores a note by its exclamation marks.

        More words that the listing leaves out."""

        def add(self, note):
            pass

        def score(self, text, *, asked_on=None):
            return {}

    lines = CliRunner().invoke(app, ["methods"]).output.splitlines()
    described = {line.split("  - ")[0]: line.split("  - ", 1)[1] for line in lines if "  - " in line}
    plain = [line for line in lines if "  " not in line]  # neither described nor an ablation or variant
    assert not plain, plain
    assert described["Shouty"] == "Scores a note by its exclamation marks."
    assert described["TagGraph-Fusion"].startswith("lexical, dense, graph, session and time signals")


def test_no_parameter_rule_shows_a_validator_object_or_an_address():
    """`taggraph methods NAME` prints each rule: a converting validator (Fusion's weights) is no rule to meet."""
    rules = {(name, p["name"]): p["rule"] for name in method_names() for p in method(name).parameters()}
    assert not {where: rule for where, rule in rules.items() if "Validator" in rule or " at 0x" in rule}
    assert rules[("BM25", "b")] == ">= 0, <= 1"
