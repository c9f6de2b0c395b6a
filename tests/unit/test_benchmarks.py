"""The benchmark scripts are modules of the package `benchmarks` (benchmarks/README.md): a script imports another
as ``benchmarks.NAME`` or ``benchmarks.history.NAME``, so no file under benchmarks/ edits ``sys.path``, and each
script imports as its module (a script reads data only under ``__main__``, so none runs here)."""

import importlib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BENCHMARKS = REPO / "benchmarks"
MODULES = sorted(".".join(p.relative_to(REPO).with_suffix("").parts).removesuffix(".__init__")
                 for p in BENCHMARKS.rglob("*.py"))


def test_no_file_under_benchmarks_edits_sys_path():
    files = [p for p in BENCHMARKS.rglob("*") if p.is_file() and "__pycache__" not in p.parts]
    editing = [str(p.relative_to(REPO)) for p in files if b"sys.path" in p.read_bytes()]
    assert files and not editing, (f"{editing}: import another script as benchmarks.NAME (run the script as "
                                   f"`python -m benchmarks.NAME`), not through sys.path")


def test_every_script_and_both_packages_are_found():
    assert {"benchmarks", "benchmarks.history", "benchmarks.fusion_joint_cv", "benchmarks.history.fusion_cv"} <= {*MODULES}


@pytest.mark.parametrize("name", MODULES)
def test_each_script_imports_as_its_module(name):
    module = importlib.import_module(name)
    assert module.__name__ == name and module.__doc__, f"{name}: its docstring gives its command"
