"""The marimo notebooks are the source of truth; their .ipynb twins must match a fresh export.

Regenerate the twins with ``make notebooks``, i.e.::

    for f in notebooks/*.py; do marimo export ipynb "$f" -o "${f%.py}.ipynb" --force; done

Executing the twins is CI's job: ``pytest --nbmake notebooks/``.
"""

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

marimo = pytest.importorskip("marimo")
nbformat = pytest.importorskip("nbformat")

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("[0-9][0-9]_*.py"))


def cells(path: Path) -> list[tuple[str, str]]:
    return [(c.cell_type, c.source) for c in nbformat.read(path, as_version=4).cells]


def test_series_is_complete():
    assert [p.stem for p in NOTEBOOKS] == ["01_extraction", "02_ontology", "03_graph", "04_retrieval",
                                           "05_ablations", "06_distractor_sweep", "07_failure_diagnostics"]


@pytest.mark.parametrize("source", NOTEBOOKS, ids=lambda p: p.stem)
def test_ipynb_twin_is_current(source, tmp_path):
    twin = source.with_suffix(".ipynb")
    assert twin.exists(), f"{twin.name} is missing: run `make notebooks`"
    fresh = tmp_path / twin.name
    subprocess.run([sys.executable, "-m", "marimo", "export", "ipynb", str(source), "-o", str(fresh), "--force"],
                   check=True, capture_output=True, timeout=120)
    assert cells(fresh) == cells(twin), f"{twin.name} is stale: run `make notebooks` ({source.name} changed)"


def test_marimo_check_passes():
    result = subprocess.run([sys.executable, "-m", "marimo", "check", "--strict", *map(str, NOTEBOOKS)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("source", NOTEBOOKS, ids=lambda p: p.stem)
def test_is_a_marimo_app(source):
    spec = importlib.util.spec_from_file_location(f"notebook_{source.stem}", source)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # defines the cells, runs none
    assert isinstance(module.app, marimo.App)
