"""A broken plug-in distribution: entry points naming a good method, a module that raises at import, one with a
SyntaxError and a function (the confinement tests and the fault tier install it)."""

from __future__ import annotations

from pathlib import Path

BROKEN = """\
[taggraph.methods]
GoodOverlap = goodplug:Overlap
BrokenRaises = raisesplug:Thing
BrokenSyntax = syntaxplug:Thing
AFunction = goodplug:a_function

[taggraph.datasets]
brokenfmt = raisesplug:FORMAT

[taggraph.extractors]
brokentagger = syntaxplug:Tagger
"""

GOOD = '''
import taggraph as tg


class Overlap(tg.Retriever):
    def add(self, note):
        pass

    def score(self, text, *, asked_on=None):
        return {}


def a_function():
    return None
'''


def install_broken(folder: Path) -> Path:
    """A distribution 'brokenplug' 2.5 whose entry points name a good method, a module that raises at
    import, one with a SyntaxError and a function."""
    (folder / "goodplug.py").write_text(GOOD)
    (folder / "raisesplug.py").write_text("raise RuntimeError('plug-in exploded at import')\n")
    (folder / "syntaxplug.py").write_text("def broken(:\n")
    info = folder / "brokenplug-2.5.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: brokenplug\nVersion: 2.5\n")
    (info / "entry_points.txt").write_text(BROKEN)
    return folder
