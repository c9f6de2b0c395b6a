import marimo

__generated_with = "0.25.2"
app = marimo.App(width="medium")


@app.cell
def _(mo):
    mo.md(r"""
    # 03 · The base graph of one case

    Four node kinds (paper, section 3.2): **tag** nodes (paths some note carries), **ontology**
    nodes (pure taxonomy ancestors), **topic** nodes (one per distinct 5W frame) and **file**
    nodes (one per note). Gold notes are gold stars; the drop-down in the view rings, for one
    method, the best note of each of its top-5 sessions in red with the session's rank (as the
    metrics count); concepts the question matches have a black ring. Hover a node for its tags and a
    snippet; click a note to see, in the side panel, why the chosen method did (not) retrieve it.
    Topics are named by their rarest tags. The page is self-contained and offline.

    The tags come from `offline-v2` (unless `EXTRACTOR` says otherwise), which types each
    noun by its WordNet anchor and category word, so ontology nodes are categories
    (`accessory/jewelry/necklace`, `family/relative/grandma`). A model-free tagger can only
    keep words that are written and the categories WordNet gives them; an LLM extractor also
    names what a conversation is about when no single word says it (a trip being planned, the
    interest behind a request), which is the node a later question will look for.
    """)
    return


@app.cell
def _():
    import marimo as mo

    import taggraph as tg

    # Parameters: tagged `parameters` in the .ipynb twin (papermill -p NAME VALUE). DATA, LIMIT and
    # EXTRACTOR: $TAGGRAPH_NOTEBOOK_DATA, _LIMIT and _EXTRACTOR, else the bundled demo, 10 and offline-v2.
    DATA, LIMIT, EXTRACTOR = tg.views.notebook_settings()
    QUESTION = None  # question id; None: the first question
    METHOD = "AdaptiveGraph"  # whose top K the graph rings first
    K = 5  # top-k cut-off
    return DATA, EXTRACTOR, K, LIMIT, METHOD, QUESTION, mo, tg


@app.cell
def _(DATA, EXTRACTOR, K, LIMIT, METHOD, QUESTION, mo, tg):
    cases = {c.case_id: c for c in tg.load(DATA, limit=LIMIT)}
    questions = tg.views.OpenQuestions(cases, EXTRACTOR, also=METHOD)  # each memory built once, on first choice
    tg.views.check_parameters(DATA, list(cases.values()), questions.methods, K=K, QUESTION=QUESTION, METHOD=METHOD)
    _first = QUESTION or next(iter(cases))
    question = mo.ui.dropdown(options=list(cases), value=_first, label="question")
    neighbourhood = mo.ui.switch(label="only the question's neighbourhood")
    hops = mo.ui.slider(1, 4, value=2, label="hops", show_value=True)
    # outside marimo (JupyterLab) its widgets do not render: ipywidgets controls instead, each change
    # drawing this question's graph again under them; the cells below keep the parameters' choice
    (mo.hstack([question, neighbourhood, hops], justify="start") if mo.running_in_notebook()
     else tg.views.graph_panel(questions, _first, METHOD, K))
    return hops, neighbourhood, question, questions


@app.cell
def _(METHOD, mo, question, questions, tg):
    opened = questions[question.value]
    case, store, gold = opened.case, opened.store, opened.gold
    # the page's drop-down starts on its first method: METHOD
    retrievers = {m: opened.retrievers[m] for m in sorted(opened.retrievers, key=lambda m: m != METHOD)}
    results = tg.views.retrieve_all(store, case.question, retrievers, explain=True,  # the evidence of the table
                                    asked_on=case.asked_on)  # as the bench asks
    mo.plain_text(f"{case.case_id} ({case.question_type}): {case.question}\n"
                  f"gold notes: {tg.views.gold_line(case, gold)}")
    return case, gold, results, retrievers, store


@app.cell
def _(K, case, gold, hops, neighbourhood, results, retrievers, store, tg):
    page = tg.views.graph_html(store, question=case.question, results_by_method=results, gold_note_ids=gold,
                               neighbourhood_of=case.question if neighbourhood.value else None, hops=hops.value,
                               top_k=K, retrievers=retrievers, asked_on=case.asked_on)
    tg.views.page_frame(page, height=720, fit=False)
    return


@app.cell
def _(store):
    store.graph.stats()
    return


@app.cell
def _(K, gold, results, tg):
    tg.views.chart_view(tg.views.gold_rank_chart(results, gold, k=K))
    return


@app.cell
def _(K, gold, results, store, tg):
    tg.views.table_view(tg.views.top_table(results, gold, k=K, store=store))
    return


if __name__ == "__main__":
    app.run()
