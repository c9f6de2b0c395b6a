"""The marimo notebooks are the source of truth; their .ipynb twins must match a fresh export.

Regenerate the twins with ``make notebooks``, i.e.::

    python tools/make_twins.py notebooks/[0-9][0-9]_*.py

(`marimo export ipynb`, then the first code cell tagged ``parameters``). Executing the twins
with their defaults is CI's job: ``pytest --nbmake notebooks/``; one twin is executed here with
papermill-style injected parameters.
"""

import base64
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import numpy
import pytest

marimo = pytest.importorskip("marimo")
nbformat = pytest.importorskip("nbformat")

NOTEBOOK_DIR = Path(__file__).resolve().parents[2] / "notebooks"
NOTEBOOKS = sorted(NOTEBOOK_DIR.glob("[0-9][0-9]_*.py"))
sys.path.insert(0, str(NOTEBOOK_DIR.parent / "tools"))
from make_twins import make_twin  # noqa: E402


def cells(path: Path) -> list[tuple[str, str]]:
    return [(c.cell_type, c.source) for c in nbformat.read(path, as_version=4).cells]


def test_series_is_complete():
    assert [p.stem for p in NOTEBOOKS] == ["01_extraction", "02_ontology", "03_graph", "04_retrieval",
                                           "05_ablations", "06_distractor_sweep", "07_failure_diagnostics",
                                           "08_your_method"]


@pytest.mark.parametrize("source", NOTEBOOKS, ids=lambda p: p.stem)
def test_ipynb_twin_is_current(source, tmp_path):
    twin = source.with_suffix(".ipynb")
    assert twin.exists(), f"{twin.name} is missing: run `make notebooks`"
    fresh = make_twin(source, tmp_path / twin.name)
    assert cells(fresh) == cells(twin), f"{twin.name} is stale: run `make notebooks` ({source.name} changed)"
    first = next(c for c in nbformat.read(twin, as_version=4).cells if c.cell_type == "code")
    assert "parameters" in first.metadata.get("tags", []), f"{twin.name}: run `make notebooks` (parameters tag)"


def test_marimo_check_passes():
    result = subprocess.run([sys.executable, "-m", "marimo", "check", "--strict", *map(str, NOTEBOOKS)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("source", NOTEBOOKS, ids=lambda p: p.stem)
def test_runs_as_a_script(source, tmp_path):
    """`python notebooks/NN_name.py` runs every cell headless; a cell that reads the value of a control it
    creates fails there (marimo forbids it), as notebooks 01-04 once did."""
    copy = tmp_path / source.name  # marimo may write a session folder beside the file it runs
    copy.write_text(source.read_text())
    env = {**os.environ, "TAGGRAPH_NOTEBOOK_LIMIT": "2"}
    result = subprocess.run([sys.executable, str(copy)], capture_output=True, text=True, timeout=300, env=env,
                            cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-2000:]


@pytest.mark.parametrize("source", NOTEBOOKS, ids=lambda p: p.stem)
def test_is_a_marimo_app(source):
    spec = importlib.util.spec_from_file_location(f"notebook_{source.stem}", source)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # defines the cells, runs none
    assert isinstance(module.app, marimo.App)


def inject_parameters(nb, **values):
    """What `papermill -p NAME VALUE` does: a cell tagged `injected-parameters` after the `parameters` cell."""
    at = next(i for i, c in enumerate(nb.cells) if "parameters" in c.metadata.get("tags", []))
    source = "\n".join(f"{k} = {v!r}" for k, v in values.items())
    nb.cells.insert(at + 1, nbformat.v4.new_code_cell(source, metadata={"tags": ["injected-parameters"]}))
    return nb


@pytest.mark.slow
def test_twin_runs_with_injected_parameters(tmp_path):
    nbclient = pytest.importorskip("nbclient")
    nb = inject_parameters(nbformat.read(NOTEBOOK_DIR / "04_retrieval.ipynb", as_version=4), QUESTION="demo_q03",
                           QUERY="which restaurant in Alfama?", METHOD="BM25", K=3, EXTRACTOR="none")
    nbclient.NotebookClient(nb, timeout=300, resources={"metadata": {"path": str(tmp_path)}}).execute()
    text = "\n".join(str(o.get("data", o.get("text", ""))) for c in nb.cells for o in c.get("outputs", []))
    assert "asked: which restaurant in Alfama?" in text and "demo_q03" in text and "Top 3 of each method" in text
    assert "your own question: no gold notes" in text and "TqdmWarning" not in text



@pytest.mark.slow
@pytest.mark.parametrize("name", ["01_extraction", "02_ontology"])
def test_twin_shows_no_bare_marimo_control(name, tmp_path):
    """Outside marimo a mo.ui control renders as nothing (an unknown <marimo-ui-element>): each twin shows its
    value in words instead, so no output is empty without a word."""
    nbclient = pytest.importorskip("nbclient")
    nb = nbformat.read(NOTEBOOK_DIR / f"{name}.ipynb", as_version=4)
    nbclient.NotebookClient(nb, timeout=300, resources={"metadata": {"path": str(tmp_path)}}).execute()
    bare = [c.source for c in nb.cells for o in c.get("outputs", [])
            if str(o.get("data", {}).get("text/html", "")).lstrip().startswith("<marimo-ui-element")]
    assert bare == []

def test_marimo_html_export_names_the_esbuild_install_when_missing(tmp_path, monkeypatch):
    import export_marimo_html

    monkeypatch.setenv("ESBUILD", str(tmp_path / "no-esbuild"))
    with pytest.raises(SystemExit, match=r"esbuild not found: `npm install --prefix .*esbuild@"):
        export_marimo_html.export_marimo_html([NOTEBOOKS[0]], tmp_path)
    assert not any(tmp_path.iterdir())  # nothing exported, nothing run


@pytest.mark.slow
def test_failure_diagnostics_scores_answers_of_bm25_beside_the_graph_methods(tmp_path):
    nbclient = pytest.importorskip("nbclient")
    nb = nbformat.read(NOTEBOOK_DIR / "07_failure_diagnostics.ipynb", as_version=4)
    nbclient.NotebookClient(nb, timeout=300, resources={"metadata": {"path": str(tmp_path)}}).execute()
    cell = next(c for c in nb.cells if c.cell_type == "code" and "answer_accuracy(" in c.source
                and "import" not in c.source)
    table = "\n".join(str(o.get("data", {}).get(kind, "")) for o in cell.outputs for kind in ("text/plain", "text/html"))
    assert all(m in table for m in ("BM25", "TagGraph-Basic", "AdaptiveGraph")), table


@pytest.mark.parametrize("source", NOTEBOOKS, ids=lambda p: p.stem)
def test_imports_only_public_names(source):
    """A notebook is a client of the public library: no import of a name (or module) starting with '_'."""
    import ast
    private = []
    for node in ast.walk(ast.parse(source.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module != "__future__":
            parts = [*(node.module or "").split("."), *(a.name for a in node.names)]
        elif isinstance(node, ast.Import):
            parts = [p for a in node.names for p in a.name.split(".")]
        else:
            continue
        private += [p for p in parts if p.startswith("_")]
    assert not private, f"{source.name} imports private names: {private}"


@pytest.mark.parametrize("source", NOTEBOOKS, ids=lambda p: p.stem)
def test_imports_only_the_public_face(source):
    """A notebook imports the library only as `import taggraph as tg` (no `from taggraph.x import`, no
    `import taggraph.x`), and every `tg.NAME` it uses is in `tg.__all__` (`tg.views.NAME`: `tg.views.__all__`)."""
    import ast

    import taggraph as tg

    tree = ast.parse(source.read_text(encoding="utf-8"))
    deep = [ast.unparse(node) for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "taggraph"
            or isinstance(node, ast.Import) and any(a.name.split(".")[0] == "taggraph"
                                                    and (a.name, a.asname) != ("taggraph", "tg") for a in node.names)]
    assert not deep, f"{source.name} reaches past `import taggraph as tg`: {deep}"
    used = {(node.value.id, node.attr) if isinstance(node.value, ast.Name) else ("tg.views", node.attr)
            for node in ast.walk(tree) if isinstance(node, ast.Attribute) and (
                isinstance(node.value, ast.Name) and node.value.id == "tg"
                or isinstance(node.value, ast.Attribute) and ast.unparse(node.value) == "tg.views")}
    public = {"tg": set(tg.__all__), "tg.views": set(tg.views.__all__)}
    unlisted = sorted(f"{space}.{name}" for space, name in used if name not in public[space])
    assert not unlisted, f"{source.name} uses names the public face does not list: {unlisted}"


def plotted(values):
    """A plotly array as saved: a list, or base64 bytes with a dtype (plotly's typed arrays)."""
    if isinstance(values, dict):
        return numpy.frombuffer(base64.b64decode(values["bdata"]), dtype=values["dtype"]).tolist()
    return values


@pytest.mark.slow
def test_notebook_parameters_of_their_own_reach_the_cells(tmp_path):
    """01's TURN picks the turn shown; 06's COUNTS are the distractor counts swept (papermill-style)."""
    nbclient = pytest.importorskip("nbclient")
    outputs = {}
    for name, values in {"01_extraction": {"TURN": 2, "LIMIT": 2},
                         "06_distractor_sweep": {"COUNTS": (0, 2), "LIMIT": 2}}.items():
        nb = inject_parameters(nbformat.read(NOTEBOOK_DIR / f"{name}.ipynb", as_version=4), **values)
        nbclient.NotebookClient(nb, timeout=300, resources={"metadata": {"path": str(tmp_path)}}).execute()
        outputs[name] = [o for c in nb.cells for o in c.get("outputs", [])]
    assert any("turn of the first case: 2 " in str(o.get("data", o.get("text", ""))) for o in outputs["01_extraction"])
    sweep = next(o["data"]["application/vnd.plotly.v1+json"] for o in outputs["06_distractor_sweep"]
                 if "MRR by distractor" in str(o.get("data", {}).get("application/vnd.plotly.v1+json", "")))
    assert {int(x) for trace in sweep["data"] for x in plotted(trace["x"])} == {0, 2}
