import marimo

__generated_with = "0.25.2"
app = marimo.App(width="medium")


@app.cell
def _(mo):
    mo.md(r"""
    # 04 · Retrieval for one question, explained

    Every method ranks the same notes. For each method: its top notes with the reason each
    ranked there, the rank of every gold note, and for a gold note the full explanation: the
    paths from the query to it, or what is missing (no helpful tag, a token dropped as a
    stopword, the note that outranked it and by how much). Type your own question in the box
    to ask the same memory something else (no gold notes then). In JupyterLab the controls
    are ipywidgets: they render one method's top notes and explanation under them, and the
    cells below show the parameters' question.
    """)
    return


@app.cell
def _():
    import marimo as mo

    import taggraph as tg

    # Parameters: tagged `parameters` in the .ipynb twin (papermill -p NAME VALUE). DATA, LIMIT and
    # EXTRACTOR: $TAGGRAPH_NOTEBOOK_DATA, _LIMIT and _EXTRACTOR, else the bundled demo, 10 and offline-v2.
    DATA, LIMIT, EXTRACTOR = tg.views.notebook_settings()
    QUESTION = None  # question id; None: the sixth judged question
    QUERY = ""  # free text asked instead of the dataset question when not empty
    METHOD = "AdaptiveGraph"  # the method whose top note is explained when no gold note is known
    K = 5  # top-k cut-off of the tables and the explain verdicts
    return DATA, EXTRACTOR, K, LIMIT, METHOD, QUERY, QUESTION, mo, tg


@app.cell
def _(DATA, EXTRACTOR, K, LIMIT, METHOD, QUERY, QUESTION, mo, tg):
    cases = {c.case_id: c for c in tg.load(DATA, limit=LIMIT)}
    questions = tg.views.OpenQuestions(cases, EXTRACTOR, also=METHOD)  # each memory built once, on first choice
    tg.views.check_parameters(DATA, list(cases.values()), questions.methods, K=K, QUESTION=QUESTION, METHOD=METHOD)
    judged = [c for c in cases.values() if c.gold_session_ids]
    _first = QUESTION or judged[min(5, len(judged) - 1)].case_id
    question = mo.ui.dropdown(options=list(cases), value=_first, label="question")
    own = mo.ui.text(value=QUERY, label="or ask your own question", full_width=True)
    k = mo.ui.slider(1, tg.views.slider_max(K), value=K, label="k", show_value=True)
    # outside marimo (JupyterLab) its widgets do not render: ipywidgets controls instead, each change
    # rendering this question's view again under them; the cells below keep the parameters' choice
    (mo.vstack([mo.hstack([question, k], justify="start"), own]) if mo.running_in_notebook()
     else tg.views.retrieval_panel(questions, _first, QUERY, METHOD, K))
    return k, own, question, questions


@app.cell
def _(mo, own, question, questions, tg):
    opened = questions[question.value]
    case, store, retrievers = opened.case, opened.store, opened.retrievers
    asked = own.value.strip() or case.question
    gold = opened.gold if asked == case.question else []
    answer = case.answer if asked == case.question else ""
    asked_on = case.asked_on  # every question, your own too, is asked on the case's date, as the bench asks
    mo.plain_text(tg.views.question_header(case, len(store), asked, gold, answer))
    return answer, asked, asked_on, gold, retrievers, store


@app.cell
def _(asked, asked_on, retrievers, store, tg):
    results = tg.views.retrieve_all(store, asked, retrievers, asked_on=asked_on)
    return (results,)


@app.cell
def _(mo):
    mo.md(r"""
    ## Rank of each gold note per method (empty: not retrieved within depth 40)
    """)
    return


@app.cell
def _(gold, mo, results, tg):
    tg.views.table_view(tg.views.rank_table(results, gold)) if gold else mo.md("No gold notes for this question.")
    return


@app.cell
def _(gold, k, results, tg):
    tg.views.chart_view(tg.views.gold_rank_chart(results, gold, k=k.value))
    return


@app.cell
def _(gold, results, tg):
    tg.views.chart_view(tg.views.score_chart(results, gold))
    return


@app.cell
def _(k, mo):
    mo.md(f"""
    ## Top {k.value} of each method, with the evidence
    """)
    return


@app.cell
def _(asked, asked_on, gold, k, retrievers, store, tg):
    _top = tg.views.retrieve_all(store, asked, retrievers, k=k.value, explain=True, asked_on=asked_on)
    tg.views.table_view(tg.views.top_table(_top, gold, k=k.value, store=store))
    return


@app.cell
def _(mo):
    mo.md(r"""
    ## Why (not) this note?

    Pick a note: every method's verdict, rank and evidence for it, then the full explanation. In
    JupyterLab the drop-down is an ipywidgets panel that shows both for the note you pick; the two
    cells under it keep the first gold note.
    """)
    return


@app.cell
def _(METHOD, answer, asked, asked_on, gold, k, mo, results, retrievers, store, tg):
    _first = results[METHOD][0].note_id if results.get(METHOD) else store.notes[0].note_id
    _chosen = (gold or [_first])[0]
    note = mo.ui.dropdown(options=[n.note_id for n in store.notes], value=_chosen, label="note")
    # outside marimo (JupyterLab) its drop-down does not render: an ipywidgets one with the note's views under it
    (note if mo.running_in_notebook()
     else tg.views.note_panel(store, asked, retrievers, _chosen, k=k.value, answer=answer, gold=gold,
                              asked_on=asked_on))
    return (note,)


@app.cell
def _(asked, asked_on, note, retrievers, store, tg):
    tg.views.table_view(tg.views.explain_table(store, asked, note.value, retrievers, asked_on=asked_on))
    return


@app.cell
def _(answer, asked, asked_on, gold, k, note, retrievers, store, tg):
    tg.views.page_frame(tg.views.explain_html(store, asked, note.value, retrievers, k=k.value, answer=answer,
                                              gold=gold, asked_on=asked_on))
    return


@app.cell
def _(mo):
    mo.md(r"""
    ## TagGraph-Fusion, signal by signal

    The note beside the note at rank 1 and the one just above it: each signal's part of the score (the parts add
    up to it), the rival's lead, the signal that decided, and what each signal read (the query terms and their
    BM25 weights, the turn the embedder matched best, the graph route, the time rule with both dates).
    """)
    return


@app.cell
def _(asked, asked_on, mo, note, retrievers, store, tg):
    _table = (tg.views.contrast_table(store, asked, note.value, retrievers, asked_on=asked_on)
              if "TagGraph-Fusion" in retrievers else None)
    (tg.views.table_view(_table) if _table is not None and len(_table)
     else mo.md("TagGraph-Fusion ranks this note first, or does not run here: nothing above it to contrast."))
    return


if __name__ == "__main__":
    app.run()
