"""Every command's --data help lists every registered data format, from the registry; a question
limit is a whole number >= 1 in Python and in the notebooks' settings too."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

import taggraph as tg
from taggraph.cli import app
from taggraph._infra.config import DEMO_DATA
from taggraph.errors import ConfigError
from taggraph.datasets import format_names


@pytest.mark.parametrize("command", ["bench", "explain", "graph", "extract", "embed", "score", "ablation",
                                     "sweep-distractors", "sweep-depth", "vocab", "diagnose", "answers", "fuse"])
def test_data_help_names_every_format(command):
    shown = " ".join(CliRunner().invoke(app, [command, "--help"], terminal_width=1000).output.split())
    assert "LongMemEval JSON(.gz) file" not in shown
    for name in format_names():
        assert f"{name}:" in shown, (command, name)


@pytest.mark.parametrize("limit", [0, -1, 1.5, True, "3"])
def test_a_limit_that_is_no_count_of_questions_is_refused(limit):
    with pytest.raises(ConfigError, match=r"limit must be a whole number of questions >= 1"):
        tg.load(DEMO_DATA, limit=limit)
    assert len(tg.load(DEMO_DATA, limit=2)) == 2


@pytest.mark.parametrize("value", ["abc", "0", "-1", ""])
def test_a_notebook_limit_that_is_no_count_is_refused_naming_the_variable(value, monkeypatch):
    monkeypatch.setenv("TAGGRAPH_NOTEBOOK_LIMIT", value)
    with pytest.raises(ConfigError, match=f"TAGGRAPH_NOTEBOOK_LIMIT must be a whole number of questions >= 1, "
                                          f"got {value!r}"):
        tg.views.notebook_settings()
    monkeypatch.setenv("TAGGRAPH_NOTEBOOK_LIMIT", "7")
    assert tg.views.notebook_settings()[1] == 7
