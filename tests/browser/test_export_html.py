"""tools/export_html.py: a notebook's export runs its kernel over local sockets and says nothing of TCP."""

import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

REPO = Path(__file__).parents[2]


@pytest.mark.slow
def test_the_export_runs_its_kernel_without_unencrypted_tcp(tmp_path):
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("print('exported ' + 'alone')")])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, tmp_path / "tiny.ipynb")
    run = subprocess.run([sys.executable, str(REPO / "tools" / "export_html.py"), str(tmp_path / "out"),
                          str(tmp_path / "tiny.ipynb")], capture_output=True, text=True, timeout=300, check=True)
    assert "TCP" not in run.stderr + run.stdout, run.stderr
    assert "exported alone" in (tmp_path / "out" / "tiny.html").read_text()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out", "tiny.ipynb"]  # no socket file left
