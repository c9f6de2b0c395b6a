"""`tg.views`: what the notebooks show, in one namespace (re-exported from `taggraph.viz` and the sweeps).

Charts (`gold_rank_chart`, `score_chart`, `interval_chart`, `answer_chart`, `misses_chart`, the sweep
plots), tables and pages of one question (`top_table`, `rank_table`, `explain_table`, `explain_misses`,
`explain_html`, `graph_html`), the ontology (`note_tags`, `top_tags`, `ontology_sunburst`, ...), the
JupyterLab panels (`graph_panel`, `note_panel`, `retrieval_panel`, `page_frame`, `table_view`), what they
are drawn from (`available_methods`, `build_retrievers`, `retrieve_all`, `gold_notes`), the notebooks'
settings (`notebook_settings`) and the prompt an LLM extractor gets (`llm_prompt`). Importing it brings
the experiments and viz rooms (slow), so `import taggraph` does not.
"""

from collections.abc import Sequence

from taggraph.config import notebook_settings
from taggraph.experiments.sweeps import plot_depth_sweep, plot_diffusion_contribution, plot_distractor_sweep
from taggraph.extraction.prompt import TEMPLATE, render
from taggraph.viz.charts import answer_chart, gold_rank_chart, interval_chart, misses_chart, score_chart
from taggraph.viz.explain import (available_methods, build_retrievers, explain_html, explain_misses, explain_table,
                                  gold_notes, rank_table, retrieve_all, top_table)
from taggraph.viz.graphview import graph_html
from taggraph.viz.ontology_view import near_duplicates, note_tags, ontology_sunburst, top_level_shares, top_tags
from taggraph.viz.widgets import graph_panel, note_panel, page_frame, retrieval_panel, table_view

__all__ = ["answer_chart", "available_methods", "build_retrievers", "explain_html", "explain_misses", "explain_table",
           "gold_notes", "gold_rank_chart", "graph_html", "graph_panel", "interval_chart", "llm_prompt",
           "misses_chart", "near_duplicates", "note_panel", "note_tags", "notebook_settings", "ontology_sunburst",
           "page_frame", "plot_depth_sweep", "plot_diffusion_contribution", "plot_distractor_sweep", "rank_table",
           "retrieval_panel", "retrieve_all", "score_chart", "table_view", "top_level_shares", "top_table",
           "top_tags"]


def llm_prompt(user: str, assistant: str, existing_tags: Sequence[str]) -> str:
    """The prompt an LLM extractor gets for one interaction, given the memory's tags so far."""
    return render(TEMPLATE, user, assistant, existing_tags)
