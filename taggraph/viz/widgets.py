"""ipywidgets controls for the notebooks' .ipynb twins in JupyterLab, where marimo's widgets do not render,
and the views the notebooks show in marimo and in JupyterLab alike (`table_view`, `page_frame`, `chart_view`).

A notebook shows a panel when `marimo.running_in_notebook()` is false: controls above an output that
each change of a control clears and fills again, calling the functions the marimo cells call
(`taggraph.viz.explain`, `taggraph.viz.graph.page`). ipywidgets is in the ``notebooks`` extra.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

import pandas as pd
from IPython.display import HTML, Pretty

from taggraph.methods.base import Retriever
from taggraph.runs.retrieval import retrieve_all
from taggraph.core.store import MemoryStore
from taggraph.viz.explain import explain_html, explain_table, top_table
from taggraph.viz.graph.page import graph_html

if TYPE_CHECKING:  # the panels browse questions the runs room opens; they never open one
    from taggraph.runs.question import OpenQuestions


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
    return w.VBox([w.HBox(list(controls.values()), layout=w.Layout(flex_flow="row wrap")), out])


# Cells wrap (pandas and marimo's tables end a long cell in '…'); headers too, so a wide table fits sooner.
_CELL = "border:1px solid #ddd;padding:3px 6px;text-align:left;vertical-align:top;white-space:normal;"
_TEXT = _CELL + "overflow-wrap:break-word;min-width:8em;max-width:40em;"


def _cell_text(value: Any) -> str:
    if isinstance(value, float):
        return "–" if pd.isna(value) else f"{value:.4g}"
    return "–" if value is None or value is pd.NA else str(value)


def table_view(table: pd.DataFrame) -> HTML:
    """`table` whole, for a notebook (marimo or JupyterLab): every cell's text wraps instead of ending in
    '…', and a table wider or longer than the view scrolls in its own box, its scrollbars in view. A named
    index (`rank_table`'s note_id) is the first column."""
    if table.index.name is not None:
        table = table.reset_index()
    wide = {c for c in table.columns if table[c].map(lambda v: isinstance(v, str) and len(v) > 40).any()}
    head = "".join(f"<th style='{_CELL}background:#f3f3f3;position:sticky;top:0'>{html.escape(str(c))}</th>"
                   for c in table.columns)
    rows = "".join("<tr>" + "".join(f"<td style='{_TEXT if c in wide else _CELL}'>{html.escape(_cell_text(v))}</td>"
                                    for c, v in zip(table.columns, row)) + "</tr>"
                   for row in table.itertuples(index=False))
    # A box at most 80% of the window high scrolls both ways, so its sideways scrollbar is in view with the table's
    # top (below a long table it was dozens of rows down), the header row staying on top.
    return HTML("<div class='taggraph-table' style='overflow:auto;max-width:100%;max-height:80vh'>"
                "<table style='border-collapse:collapse;font-size:13px'>"
                f"<thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table></div>")


# Keeps the frame as high as its page (a srcdoc page is same-origin), so it has no scrollbar of its own: set
# once loaded, then again whenever the page's height changes (a narrower window or sidebar wraps its text, a wider
# one unwraps it). The page's own height (offsetHeight), not scrollHeight, which never drops below the frame's.
# marimo's mo.iframe calls __resizeIframe instead, which only marimo's frontend defines.
_FIT = ("const frame = this, root = this.contentDocument.documentElement, "
        "fit = () => { frame.style.height = root.offsetHeight + 'px'; }; "
        "fit(); new this.contentWindow.ResizeObserver(fit).observe(root);")


def iframe(page: str, height: int, fit: bool = False) -> HTML:
    """A self-contained HTML page in an iframe (`srcdoc`; in a div: IPython warns about a bare iframe,
    which it wants as `IFrame(url)`), `height` px high or, with `fit`, as high as the page once loaded."""
    onload = f' onload="{_FIT}"' if fit else ""
    return HTML(f"<div><iframe srcdoc='{html.escape(page, quote=True)}' width='100%' height='{height}px' "
                f"frameborder='0'{onload}></iframe></div>")


def _marimo():
    """The marimo module when this runs in a marimo notebook (`marimo.running_in_notebook()`), else None."""
    try:
        import marimo as mo
    except ImportError:
        return None
    return mo if mo.running_in_notebook() else None


def page_frame(page: str, height: int = 900, fit: bool = True):
    """A self-contained page (explain, graph) as a notebook shows it: marimo's `mo.iframe` under marimo,
    else (JupyterLab, nbconvert's export) `iframe`, which needs no marimo function. `fit`: as high as the
    page (explain pages), else `height` px (graph pages)."""
    mo = _marimo()
    if mo is not None:
        return mo.iframe(page, height=f"{height}px")
    return iframe(page, height, fit)


# marimo's modebar, less its reset button: no plotly logo, and no Chart Studio button (plotly.js 4 shows one that
# sends the chart's data to chart-studio.plotly.com when clicked); the chart follows the frame's width.
_CHART_CONFIG = {"displaylogo": False, "showSendToCloud": False, "responsive": True}


def chart_view(fig: Any):
    """A plotly figure as a notebook shows it. Under marimo's server (`marimo run`, `marimo edit`): a frame
    (`mo.iframe`, its page served by marimo as a file) holding a self-contained page of the figure, plotly.js
    from the installed plotly package and no MathJax, so nothing is asked off the machine: marimo's own plotly
    output asks cdn.jsdelivr.net for MathJax for every chart, whatever it holds. As high as marimo draws a
    chart (540 px unless the figure sets its height), as wide as the cell.

    Elsewhere the figure itself: in JupyterLab and nbconvert, and where marimo serves no files (`marimo export
    html`: the ~5 MB page would sit in the notebook's output, over marimo's size limit; tools/export_marimo_html.py
    drops the MathJax address from the page it writes)."""
    mo = _marimo()
    if mo is None:
        return fig
    height = fig.layout.height or 540
    page = fig.to_html(include_plotlyjs=True, full_html=True, include_mathjax=False, default_width="100%",
                       default_height=f"{height}px", config=_CHART_CONFIG)
    frame = mo.iframe(page.replace("<head>", "<head><style>body{margin:0}</style>", 1), height=f"{height}px")
    return fig if "srcdoc=" in frame.text else frame


def gold_line(case: Any, gold: Sequence[str]) -> str:
    """A question's gold notes as the panels print them; none said as such (an abstention question's too)."""
    return ", ".join(gold) or ("(none: abstention question)" if case.is_abstention else "(none)")


def question_header(case: Any, notes: int, asked: str, gold: Sequence[str], answer: str) -> str:
    """The header of 04's question (cell and panel): the case, what was asked and, for the dataset's question,
    its answer and gold notes (an abstention question's answer may be empty: it is still the dataset's
    question, with no gold notes); for a free-text question, that it has none."""
    head = f"{case.case_id} ({case.question_type}), {notes} notes\nasked: {asked}\n"
    if asked != case.question:
        return head + "your own question: no gold notes"
    return head + f"answer: {answer or '(none given)'}\ngold notes: {gold_line(case, gold)}"


def slider_max(k: int, least: int = 20) -> int:
    """The k slider's top: `least`, or k when the parameters ask for more."""
    return max(least, k)


def retrieval_panel(questions: OpenQuestions, question: str, query: str = "", method: str = "AdaptiveGraph",
                    k: int = 5):
    """04's controls in JupyterLab over `questions` (`tg.views.OpenQuestions`: each opened on first choice):
    question, method, k and a free-text question (read on Enter).

    Each change shows the case and what was asked, `method`'s top k with the evidence, and its
    `explain_html` of the first gold note (or, for a free-text question or one without gold notes, of
    its top note). The arguments are the controls' starting values."""
    import ipywidgets as w

    def render(question: str, method: str, k: int, query: str):
        opened = questions[question]
        case, store, retrievers, gold = opened.case, opened.store, opened.retrievers, opened.gold
        asked = query.strip() or case.question
        gold, answer = (gold, case.answer) if asked == case.question else ([], "")
        chosen = {method: retrievers[method]}
        when = case.asked_on  # a free-text question is asked on the case's date too
        top = retrieve_all(store, asked, chosen, k=k, explain=True, asked_on=when)
        note = (gold or [r.note_id for r in top[method]] or [store.notes[0].note_id])[0]
        yield Pretty(question_header(case, len(store), asked, gold, answer))
        yield HTML(f"<h3>Top {k} of {html.escape(method)}, with the evidence</h3>")
        yield table_view(top_table(top, gold, k=k, store=store))
        yield iframe(explain_html(store, asked, note, chosen, k=k, answer=answer, gold=gold, asked_on=when,
                                  question_id=case.case_id if asked == case.question else ""), 700, fit=True)

    return panel(render, question=w.Dropdown(options=list(questions), value=question, description="question"),
                 method=w.Dropdown(options=questions.methods, value=method, description="method"),
                 k=w.IntSlider(value=k, min=1, max=slider_max(k), description="k", continuous_update=False,
                               layout=w.Layout(width="30em", min_width="30em")),
                 query=w.Text(value=query, description="or ask", placeholder="your own question (Enter)",
                              continuous_update=False, layout=w.Layout(width="40em")))


def note_panel(store: MemoryStore, question: str, retrievers: Mapping[str, Retriever], note: str, k: int = 5,
               answer: str = "", gold: Sequence[str] = (), asked_on: datetime | None = None):
    """04's note choice in JupyterLab: a drop-down of every note of `store` (starting on `note`) above
    `explain_table` and `explain_html` of the chosen note for `retrievers`."""
    import ipywidgets as w

    def render(note: str):
        yield table_view(explain_table(store, question, note, retrievers, asked_on=asked_on))
        yield iframe(explain_html(store, question, note, retrievers, k=k, answer=answer, gold=gold,
                                  asked_on=asked_on), 700, fit=True)

    return panel(render, note=w.Dropdown(options=[n.note_id for n in store.notes], value=note, description="note"))


def graph_panel(questions: OpenQuestions, question: str, method: str = "AdaptiveGraph", k: int = 5):
    """03's controls in JupyterLab over `questions` (`tg.views.OpenQuestions`): question, method (whose top k the
    graph rings first), only the question's neighbourhood, hops. Each change shows the question, its gold notes
    and `graph_html`."""
    import ipywidgets as w

    def render(question: str, method: str, neighbourhood: bool, hops: int):
        opened = questions[question]
        case, store, retrievers, gold = opened.case, opened.store, opened.retrievers, opened.gold
        ordered = {m: retrievers[m] for m in sorted(retrievers, key=lambda m: m != method)}  # the page starts on it
        yield Pretty(f"{case.case_id} ({case.question_type}): {case.question}\ngold notes: {gold_line(case, gold)}"
                     f"\nringed first: the top {k} of {method}")
        page = graph_html(store, question=case.question,
                          results_by_method=retrieve_all(store, case.question, ordered, asked_on=case.asked_on),
                          gold_note_ids=gold, neighbourhood_of=case.question if neighbourhood else None, hops=hops,
                          top_k=k, retrievers=ordered, asked_on=case.asked_on, question_id=case.case_id)
        yield iframe(page, height=720)

    return panel(render, question=w.Dropdown(options=list(questions), value=question, description="question"),
                 method=w.Dropdown(options=questions.methods, value=method, description="method"),
                 neighbourhood=w.Checkbox(value=False, description="only the question's neighbourhood"),
                 hops=w.IntSlider(value=2, min=1, max=4, description="hops", continuous_update=False))
