"""ipywidgets controls for the notebooks' .ipynb twins in JupyterLab, where marimo's widgets do not render.

A notebook shows a panel when `marimo.running_in_notebook()` is false: controls above an output that
each change of a control clears and fills again, calling the functions the marimo cells call
(`taggraph.viz.explain`, `taggraph.viz.graphview`). ipywidgets is in the ``notebooks`` extra.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Iterable, Mapping
from functools import lru_cache
from typing import Any

from IPython.display import HTML, Pretty

from taggraph.datasets import Case
from taggraph.experiments.runner import build_store
from taggraph.viz.explain import (available_methods, build_retrievers, explain_html, gold_notes, retrieve_all,
                                  top_table)
from taggraph.viz.graphview import graph_html


def panel(render: Callable[..., Iterable[Any]], **controls: Any):
    """`controls` (name -> ipywidget) in a row above an Output holding what `render(**values)` yields,
    values being the controls' current values; every change of a value renders the Output again.

    The parts are formatted into the Output's `outputs` (`append_display_data`), so the panel needs
    no frontend to fill and a test can read what it shows."""
    import ipywidgets as w

    out = w.Output()

    def update(_change: Any = None) -> None:
        out.outputs = ()
        for part in render(**{name: c.value for name, c in controls.items()}):
            out.append_display_data(part)

    for control in controls.values():
        control.observe(update, names="value")
    update()
    return w.VBox([w.HBox(list(controls.values())), out])


def iframe(page: str, height: int) -> HTML:
    """A self-contained HTML page in an iframe (`srcdoc`), as marimo's `mo.iframe` shows it (in a div:
    IPython warns about a bare iframe, which it wants as `IFrame(url)`)."""
    return HTML(f"<div><iframe srcdoc='{html.escape(page, quote=True)}' width='100%' height='{height}px' "
                "frameborder='0'></iframe></div>")


def _memory(cases: Mapping[str, Case], extractor: str):
    """question id -> (case, store, retrievers of every available method, gold notes), built once each."""
    methods = available_methods()

    @lru_cache(maxsize=None)
    def memory(question: str):
        case = cases[question]
        store = build_store(case, extractor)
        return case, store, build_retrievers(store, methods), gold_notes(case, store)

    return methods, memory


def retrieval_panel(cases: Mapping[str, Case], extractor: str, question: str, query: str = "",
                    method: str = "AdaptiveGraph", k: int = 5):
    """04's controls in JupyterLab: question, method, k and a free-text question (read on Enter).

    Each change shows the case and what was asked, `method`'s top k with the evidence, and its
    `explain_html` of the first gold note (or, for a free-text question or one without gold notes, of
    its top note). The arguments are the controls' starting values."""
    import ipywidgets as w

    methods, memory = _memory(cases, extractor)

    def render(question: str, method: str, k: int, query: str):
        case, store, retrievers, gold = memory(question)
        asked = query.strip() or case.question
        gold, answer = (gold, case.answer) if asked == case.question else ([], "")
        chosen = {method: retrievers[method]}
        when = case.question_date  # a free-text question is asked on the case's date too
        top = retrieve_all(store, asked, chosen, k=k, explain=True, asked_on=when)
        note = (gold or [r.note_id for r in top[method]] or [store.notes[0].note_id])[0]
        yield Pretty(f"{case.case_id} ({case.question_type}), {len(store)} notes\nasked: {asked}\n"
                     + (f"answer: {answer}\ngold notes: {', '.join(gold) or '(none: abstention question)'}"
                        if answer or gold else "your own question: no gold notes"))
        yield HTML(f"<h3>Top {k} of {html.escape(method)}, with the evidence</h3>")
        yield top_table(top, gold, k=k)
        yield iframe(explain_html(store, asked, note, chosen, k=k, answer=answer, gold=gold, asked_on=when), height=700)

    return panel(render, question=w.Dropdown(options=list(cases), value=question, description="question"),
                 method=w.Dropdown(options=methods, value=method, description="method"),
                 k=w.IntSlider(value=k, min=1, max=20, description="k", continuous_update=False),
                 query=w.Text(value=query, description="or ask", placeholder="your own question (Enter)",
                              continuous_update=False, layout=w.Layout(width="40em")))


def graph_panel(cases: Mapping[str, Case], extractor: str, question: str,
                method: str = "AdaptiveGraph", k: int = 5):
    """03's controls in JupyterLab: question, method (whose top k the graph rings first), only the
    question's neighbourhood, hops. Each change shows the question, its gold notes and `graph_html`."""
    import ipywidgets as w

    methods, memory = _memory(cases, extractor)

    def render(question: str, method: str, neighbourhood: bool, hops: int):
        case, store, retrievers, gold = memory(question)
        ordered = {m: retrievers[m] for m in sorted(retrievers, key=lambda m: m != method)}  # the page starts on it
        yield Pretty(f"{case.case_id} ({case.question_type}): {case.question}\ngold notes: {', '.join(gold)}"
                     f"\nringed first: the top {k} of {method}")
        page = graph_html(store, question=case.question,
                          results_by_method=retrieve_all(store, case.question, ordered, asked_on=case.question_date),
                          gold_note_ids=gold, neighbourhood_of=case.question if neighbourhood else None, hops=hops,
                          top_k=k, retrievers=ordered, asked_on=case.question_date)
        yield iframe(page, height=720)

    return panel(render, question=w.Dropdown(options=list(cases), value=question, description="question"),
                 method=w.Dropdown(options=methods, value=method, description="method"),
                 neighbourhood=w.Checkbox(value=False, description="only the question's neighbourhood"),
                 hops=w.IntSlider(value=2, min=1, max=4, description="hops", continuous_update=False))
