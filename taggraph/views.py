"""`tg.views`: what the notebooks show, in one namespace (re-exported from `taggraph.viz` and the sweeps).

Charts (`gold_rank_chart`, `score_chart`, `interval_chart`, `answer_chart`, `misses_chart`, the sweep
plots), a run's summary as the terminal and reports show it (`summary_view`), tables and pages of one question (`top_table`, `rank_table`, `explain_table`, `explain_misses`,
`explain_html`, `graph_html`), the ontology (`note_tags`, `top_tags`, `ontology_sunburst`, ...), the
JupyterLab panels (`graph_panel`, `note_panel`, `retrieval_panel`, `page_frame`, `table_view`), what they
are drawn from (`open_question`, `OpenQuestions`, `available_methods`, `build_retrievers`, `retrieve_all`,
`gold_notes`), `explain` (`tg.explain`, the text and page of `taggraph explain`), the notebooks' settings
(`notebook_settings`) and the prompt an LLM extractor gets (`llm_prompt`). Importing it brings the
experiments and viz rooms (slow), so `import taggraph` does not.

Here the two rooms meet: a question is opened by the experiments room (its store built once) and drawn by
the viz room, which never builds one.
"""

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from taggraph.atomic import atomic_write, refuse_input_as_output
from taggraph.config import DEFAULT_EXTRACTOR, DEMO_DATA
from taggraph.errors import ConfigError
from taggraph.experiments.question import OpenQuestions, available_methods, find_case, open_question
from taggraph.experiments.sweeps import plot_depth_sweep, plot_diffusion_contribution, plot_distractor_sweep
from taggraph.extraction.prompt import TEMPLATE, render
from taggraph.retrieval import DEFAULT_DEPTH, build_retrievers
from taggraph.viz.charts import answer_chart, gold_rank_chart, interval_chart, misses_chart, score_chart
from taggraph.viz.explain import (METRIC_K, explain_html, explain_misses, explain_table, explain_text, gold_notes,
                                  rank_table, retrieve_all, top_table)
from taggraph.viz.graphview import graph_html
from taggraph.viz.ontology_view import near_duplicates, note_tags, ontology_sunburst, top_level_shares, top_tags
from taggraph.viz.report import summary_view
from taggraph.viz.widgets import graph_panel, note_panel, page_frame, retrieval_panel, table_view

__all__ = ["OpenQuestions", "answer_chart", "available_methods", "build_retrievers", "explain", "explain_html",
           "explain_misses", "explain_table", "gold_notes", "gold_rank_chart", "graph_html", "graph_panel",
           "interval_chart", "llm_prompt", "misses_chart", "near_duplicates", "note_panel", "note_tags",
           "notebook_settings", "ontology_sunburst", "open_question", "page_frame", "plot_depth_sweep",
           "plot_diffusion_contribution", "plot_distractor_sweep", "rank_table", "retrieval_panel", "retrieve_all",
           "score_chart", "summary_view", "table_view", "top_level_shares", "top_table", "top_tags"]


def notebook_settings() -> tuple[str, int, str]:
    """(data path, question limit, extractor) a notebook starts from: TAGGRAPH_NOTEBOOK_DATA (default: the
    bundled demo), TAGGRAPH_NOTEBOOK_LIMIT (default 10), TAGGRAPH_NOTEBOOK_EXTRACTOR (default DEFAULT_EXTRACTOR).
    A notebook's parameters cell assigns them, so papermill's injected values come after and win. A limit
    that is not a whole number >= 1 is a ConfigError naming the variable."""
    limit = os.environ.get("TAGGRAPH_NOTEBOOK_LIMIT", "10")
    if not (limit.strip().isdigit() and int(limit) >= 1):
        raise ConfigError(f"TAGGRAPH_NOTEBOOK_LIMIT must be a whole number of questions >= 1, got {limit!r}")
    return (os.environ.get("TAGGRAPH_NOTEBOOK_DATA", str(DEMO_DATA)), int(limit),
            os.environ.get("TAGGRAPH_NOTEBOOK_EXTRACTOR", DEFAULT_EXTRACTOR))


def llm_prompt(user: str, assistant: str, existing_tags: Sequence[str]) -> str:
    """The prompt an LLM extractor gets for one interaction, given the memory's tags so far."""
    return render(TEMPLATE, user, assistant, existing_tags)


def explain(data: str | Path, question_id: str, note_id: str | None = None, out: str | Path | None = None,
            extractor: str = DEFAULT_EXTRACTOR, methods: Sequence[str] | None = None, depth: int = DEFAULT_DEPTH,
            method_params: Mapping[str, Mapping[str, Any]] | None = None, k: int = METRIC_K) -> str:
    """Why each method (did not) rank `note_id` (default: the question's first gold note) for question
    `question_id` of `data`: the question opened once (`open_question`, each method built with its
    `method_params` and retrieving `depth` notes), the terminal text returned (`explain_text`) and the page
    written to `out` when given (`explain_html`; never the data's own path, nor inside it)."""
    if out is not None:
        refuse_input_as_output(Path(out), [Path(data)], "explain")
    opened = open_question(find_case(data, question_id), extractor, methods, method_params)
    if note_id is None:
        if not opened.gold:
            raise ConfigError(f"question {question_id!r} has no gold note; pass a note id")
        note_id = opened.gold[0]
    text = explain_text(opened, note_id, depth, k)
    if out is not None:
        case = opened.case
        atomic_write(Path(out), explain_html(opened.store, case.question, note_id, opened.retrievers, k=k, depth=depth,
                                             answer=case.answer, gold=opened.gold, asked_on=case.asked_on,
                                             question_id=case.case_id))
    return text
