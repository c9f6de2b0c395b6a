"""The graph page's HTML (templates/graph.html), style and script (static/graph.css, graph.js), with vis-network's
own inlined: the page is self-contained and our own template, not pyvis's (which links Bootstrap from a CDN even
with ``cdn_resources="in_line"``)."""

from __future__ import annotations

from pathlib import Path

import pyvis
from markupsafe import Markup

from taggraph.viz.page_shell import static, template

VIS_DIR = Path(pyvis.__file__).parent / "templates" / "lib" / "vis-9.1.2"


def fill_template(heading: str, question: str, **built: str) -> str:
    """The page: `heading` and `question` escaped; `built` (HTML and script JSON the page built, escaping its
    data) and vis-network's CSS and JS inserted as they are."""
    vis = {"vis_css": (VIS_DIR / "vis-network.css").read_text(encoding="utf-8"),
           "vis_js": (VIS_DIR / "vis-network.min.js").read_text(encoding="utf-8")}
    trusted = {name: Markup(text) for name, text in {**built, **vis}.items()}
    return template("graph.html").render(heading=heading, question=question, css=static("graph.css"),
                                         script=static("graph.js"), **trusted)
