"""Write the .ipynb twin of each marimo notebook (`marimo export ipynb`), with its first code cell
tagged `parameters` (the papermill convention), so `papermill -p NAME VALUE` overrides it. Cells keep
the source's order (`--sort top-down`): the title, a markdown cell, comes first.

Usage: python tools/make_twins.py notebooks/0*_*.py  (what `make notebooks` runs)
"""

import subprocess
import sys
from pathlib import Path

import nbformat


def make_twin(source: Path, twin: Path) -> Path:
    """Export `source` to `twin` and tag the twin's first code cell `parameters`."""
    subprocess.run([sys.executable, "-m", "marimo", "export", "ipynb", str(source), "--sort", "top-down",
                    "-o", str(twin), "--force"],
                   check=True, capture_output=True, timeout=120)
    nb = nbformat.read(twin, as_version=4)
    first = next(c for c in nb.cells if c.cell_type == "code")
    first.metadata["tags"] = sorted({*first.metadata.get("tags", []), "parameters"})
    nbformat.write(nb, twin)
    return twin


if __name__ == "__main__":
    for name in sys.argv[1:]:
        make_twin(Path(name), Path(name).with_suffix(".ipynb"))
