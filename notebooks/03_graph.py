import marimo

__generated_with = "0.25.2"
app = marimo.App(width="medium")


@app.cell
def _():
    import marimo as mo

    from taggraph.config import notebook_settings

    # The one setting: TAGGRAPH_NOTEBOOK_DATA (default: the bundled demo), _LIMIT, _EXTRACTOR
    DATA, LIMIT, EXTRACTOR = notebook_settings()
    return DATA, EXTRACTOR, LIMIT, mo


@app.cell
def _(mo):
    mo.md(r"""
    # 03 · The base graph of one case

    Four node kinds (paper, section 3.2): **tag** nodes (paths some note carries), **ontology**
    nodes (pure taxonomy ancestors), **topic** nodes (one per distinct 5W frame) and **file**
    nodes (one per note). Gold notes are gold stars; the drop-down in the view rings one
    method's top-5 notes in red with their rank; concepts the question matches have a black
    ring. Hover a node for its tags and a snippet. The page is self-contained and offline.
    """)
    return


@app.cell
def _():
    from taggraph.datasets import load_dataset
    from taggraph.experiments.runner import build_store
    from taggraph.viz.explain import available_methods, gold_notes, retrieve_all, top_table
    from taggraph.viz.graphview import graph_html

    return (
        available_methods,
        build_store,
        gold_notes,
        graph_html,
        load_dataset,
        retrieve_all,
        top_table,
    )


@app.cell
def _(DATA, LIMIT, load_dataset, mo):
    cases = {c.case_id: c for c in load_dataset(DATA, limit=LIMIT)}
    question = mo.ui.dropdown(options=list(cases), value=next(iter(cases)), label="question")
    neighbourhood = mo.ui.switch(label="only the question's neighbourhood")
    hops = mo.ui.slider(1, 4, value=2, label="hops", show_value=True)
    mo.hstack([question, neighbourhood, hops], justify="start")
    return cases, hops, neighbourhood, question


@app.cell
def _(
    DATA,
    EXTRACTOR,
    available_methods,
    build_store,
    cases,
    gold_notes,
    mo,
    question,
    retrieve_all,
):
    case = cases[question.value]
    store = build_store(case, EXTRACTOR)
    gold = gold_notes(DATA, case, store)
    results = retrieve_all(store, case.question, available_methods())
    mo.plain_text(f"{case.case_id} ({case.question_type}): {case.question}\ngold notes: {', '.join(gold)}")
    return case, gold, results, store


@app.cell
def _(case, gold, graph_html, hops, mo, neighbourhood, results, store):
    page = graph_html(store, question=case.question, results_by_method=results, gold_note_ids=gold,
                      neighbourhood_of=case.question if neighbourhood.value else None, hops=hops.value)
    mo.iframe(page, height="720px")
    return


@app.cell
def _(store):
    store.graph.stats()
    return


@app.cell
def _(gold, results, top_table):
    top_table(results, gold, k=5)
    return


if __name__ == "__main__":
    app.run()
