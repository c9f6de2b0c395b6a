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
    # 04 · Retrieval for one question, explained

    Every method ranks the same notes. For each method: its top notes with the reason each
    ranked there, the rank of every gold note, and for a gold note the full explanation: the
    paths from the query to it, or what is missing (no helpful tag, a token dropped as a
    stopword, the note that outranked it and by how much).
    """)
    return


@app.cell
def _():
    from taggraph.datasets import load_dataset
    from taggraph.experiments.runner import build_store
    from taggraph.viz.explain import (available_methods, build_retrievers, explain_html, explain_table, gold_notes,
                                      rank_table, retrieve_all, top_table)

    return (
        available_methods,
        build_retrievers,
        build_store,
        explain_html,
        explain_table,
        gold_notes,
        load_dataset,
        rank_table,
        retrieve_all,
        top_table,
    )


@app.cell
def _(DATA, LIMIT, load_dataset, mo):
    cases = {c.case_id: c for c in load_dataset(DATA, limit=LIMIT)}
    judged = [c for c in cases.values() if c.gold_session_ids]
    question = mo.ui.dropdown(options=list(cases), value=judged[min(5, len(judged) - 1)].case_id, label="question")
    question
    return cases, question


@app.cell
def _(
    DATA,
    EXTRACTOR,
    available_methods,
    build_retrievers,
    build_store,
    cases,
    gold_notes,
    mo,
    question,
):
    case = cases[question.value]
    store = build_store(case, EXTRACTOR)
    gold = gold_notes(DATA, case, store)
    retrievers = build_retrievers(store, available_methods())
    mo.plain_text(f"{case.case_id} ({case.question_type}): {case.question}\nanswer: {case.answer}\n"
                  f"gold notes: {', '.join(gold) or '(none: abstention question)'}")
    return case, gold, retrievers, store


@app.cell
def _(case, retrieve_all, retrievers, store):
    results = retrieve_all(store, case.question, retrievers)
    return (results,)


@app.cell
def _(mo):
    mo.md(r"""
    ## Rank of each gold note per method (empty: not retrieved within depth 40)
    """)
    return


@app.cell
def _(gold, rank_table, results):
    rank_table(results, gold)
    return


@app.cell
def _(mo):
    mo.md(r"""
    ## Top 5 of each method, with the evidence
    """)
    return


@app.cell
def _(case, gold, retrieve_all, retrievers, store, top_table):
    top_table(retrieve_all(store, case.question, retrievers, k=5, explain=True), gold)
    return


@app.cell
def _(mo):
    mo.md(r"""
    ## Why (not) this note?
    """)
    return


@app.cell
def _(gold, mo, store):
    note = mo.ui.dropdown(options=[n.note_id for n in store.notes], value=(gold or [store.notes[0].note_id])[0],
                          label="note")
    note
    return (note,)


@app.cell
def _(case, explain_table, note, retrievers, store):
    explain_table(store, case.question, note.value, retrievers)
    return


@app.cell
def _(case, explain_html, mo, note, retrievers, store):
    mo.iframe(explain_html(store, case.question, note.value, retrievers), height="900px")
    return


if __name__ == "__main__":
    app.run()
