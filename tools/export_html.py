"""Export notebooks as self-contained HTML that opens offline (no CDN, plotly.js inlined).

`marimo export html` loads marimo's frontend from cdn.jsdelivr.net, so offline the page is
blank. Instead this executes the notebook's .ipynb twin (its parameters cell as in JupyterLab)
and converts it with nbconvert's lab template minus its CDN scripts (`tools/offline_html`);
the kernel's plotly renderer is "notebook", which inlines plotly.js once per page (each chart's
MathJax tag, hard-wired to a CDN by plotly and unused by our charts, is dropped). marimo's
widgets are not drawn (they need marimo's frontend), nor the ipywidgets panels of 03 and 04 (they
need the widget manager, a CDN script, and a kernel): their cells say so in a line (`WIDGET_WORD`);
every table, chart and iframe is.

Usage: python tools/export_html.py OUT_DIR notebooks/04_retrieval.ipynb [...]  (`make notebook-html`)
"""

import os
import re
import sys
import tempfile
from pathlib import Path
from unittest.mock import patch

TOOLS = Path(__file__).resolve().parent
PLOTLY_MATHJAX = re.compile(r'<script src="https://cdnjs\.cloudflare\.com/ajax/libs/mathjax/[^"]*"></script>')
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_WORD = ("ipywidgets controls: they work in JupyterLab with a running kernel; on this static page the "
               "cells below show the notebook's parameters")


def say_what_widgets_were(nb) -> None:
    """A cell's ipywidgets value (a panel; empty without a widget manager) becomes `WIDGET_WORD`, as plain
    text; other widget outputs (progress bars a library displayed) are dropped."""
    for cell in nb.cells:
        outputs = [o for o in cell.get("outputs", []) if o["output_type"] == "execute_result"
                   or WIDGET_VIEW not in o.get("data", {})]
        for out in outputs:
            if WIDGET_VIEW in out.get("data", {}):
                out["data"] = {"text/plain": WIDGET_WORD}
        if "outputs" in cell:
            cell.outputs = outputs


def export_html(twin: Path, out_dir: Path) -> Path:
    """Execute `twin` (an .ipynb) and write OUT_DIR/<name>.html; returns its path."""
    import nbformat
    from nbconvert import HTMLExporter
    from nbconvert.preprocessors import ExecutePreprocessor
    from traitlets.config import Config

    nb = nbformat.read(twin, as_version=4)
    # the kernel inherits it (plotly.js inline, not from a CDN); later kernels get the caller's value back
    local = Config()
    local.KernelManager.transport = "ipc"  # the kernel talks over local sockets, not unencrypted TCP
    with patch.dict(os.environ, {"PLOTLY_RENDERER": "notebook"}), tempfile.TemporaryDirectory() as sockets:
        local.KernelManager.ip = str(Path(sockets) / "kernel")  # its socket files, removed with the folder
        ExecutePreprocessor(timeout=600, config=local).preprocess(nb, {"metadata": {"path": str(twin.parent)}})
    say_what_widgets_were(nb)
    exporter = HTMLExporter(template_name="offline_html", extra_template_basedirs=[str(TOOLS)])
    body = PLOTLY_MATHJAX.sub("", exporter.from_notebook_node(nb)[0])
    out = Path(out_dir) / f"{twin.stem}.html"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(body, encoding="utf-8")
    return out


if __name__ == "__main__":
    for name in sys.argv[2:]:
        print(export_html(Path(name), Path(sys.argv[1])))
