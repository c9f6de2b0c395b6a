"""Every command's --data help lists every registered data format, from the registry (issue 31, item 8)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from taggraph.cli import app
from taggraph.datasets import format_names


@pytest.mark.parametrize("command", ["bench", "explain", "graph", "extract", "embed", "score", "ablation",
                                     "sweep-distractors", "sweep-depth", "vocab", "diagnose", "answers", "fuse"])
def test_data_help_names_every_format(command):
    shown = " ".join(CliRunner().invoke(app, [command, "--help"], terminal_width=1000).output.split())
    assert "LongMemEval JSON(.gz) file" not in shown
    for name in format_names():
        assert f"{name}:" in shown, (command, name)
