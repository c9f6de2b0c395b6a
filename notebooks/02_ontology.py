import marimo

__generated_with = "0.25.2"
app = marimo.App(width="medium")


@app.cell
def _(mo):
    mo.md(r"""
    # 02 · The ontology: tree, reuse, near-duplicates

    Each history (the questions asked of one conversation share it) grows its own ontology of slash-separated tag paths. The paper (appendix D,
    Table 2) measures vocabulary convergence as **reuse** = tag occurrences / distinct tags:
    higher means the extractor uses the same tags again instead of minting new ones.
    Prompting for reuse does not prevent near-duplicate labels, listed at the end.

    The two model-free taggers side by side: `offline` files what its keyword table lacks under
    one catch-all, `topic/`; `offline-v2` types each noun by its WordNet anchor and keeps
    WordNet's category word on the path (`accessory/jewelry/necklace`,
    `family/relative/grandma`, `activity/sport/basketball`), so "jewelry", "relatives" or
    "sports" in a question meets a node. Neither can do what an LLM extractor does: name what a
    conversation is about when no word of it is written (a trip being planned from flights,
    hotels and an itinerary; the interest behind a request) or a category WordNet lacks.
    """)
    return


@app.cell
def _():
    import marimo as mo

    import taggraph as tg

    # Parameters: tagged `parameters` in the .ipynb twin (papermill -p NAME VALUE). DATA, LIMIT and
    # EXTRACTOR: $TAGGRAPH_NOTEBOOK_DATA, _LIMIT and _EXTRACTOR, else the bundled demo, 10 and offline-v2.
    DATA, LIMIT, EXTRACTOR = tg.views.notebook_settings()
    TAGGERS = ("offline", "offline-v2")  # extractors whose ontologies stand beside EXTRACTOR's
    return DATA, EXTRACTOR, LIMIT, TAGGERS, mo, tg


@app.cell
def _():
    import pandas as pd
    import plotly.express as px

    return (
        pd,
        px,
    )


@app.cell
def _(DATA, EXTRACTOR, LIMIT, TAGGERS, tg):
    cases = tg.load(DATA, limit=LIMIT)
    histories = tg.views.histories(cases)  # one store per history: its questions share one memory
    stores_by = {name: [tg.build_store(c, name) for c in histories]
                 for name in dict.fromkeys([EXTRACTOR, *TAGGERS])}
    return (stores_by,)


@app.cell
def _(stores_by, tg):
    tg.views.table_view(tg.vocabulary_stats(stores_by))
    return


@app.cell
def _(stores_by, tg):
    tg.views.chart_view(tg.views.top_level_shares(stores_by))
    return


@app.cell
def _(EXTRACTOR, mo, stores_by):
    tagger = mo.ui.dropdown(options=list(stores_by), value=EXTRACTOR, label="extractor of the views below")
    # outside marimo (JupyterLab) its drop-downs do not render: their values, in words
    tagger if mo.running_in_notebook() else mo.plain_text(f"extractor of the views below: {EXTRACTOR}")
    return (tagger,)


@app.cell
def _(pd, stores_by, tagger, tg):
    stores = stores_by[tagger.value]
    tg.views.table_view(pd.DataFrame([{**tg.store_vocabulary(s), "minted": s.minted, "reused": s.reused,
                                       "reuse": round(s.ontology.reuse(), 3)} for s in stores]
                                     ).rename(columns={"case_id": "history of"}))
    return (stores,)


@app.cell
def _(mo, stores):
    pick = mo.ui.dropdown(options={s.case_id: i for i, s in enumerate(stores)}, value=stores[0].case_id,
                          label="history of question")
    pick if mo.running_in_notebook() else mo.plain_text(f"history of question: {stores[0].case_id}")
    return (pick,)


@app.cell
def _(pick, stores, tagger, tg):
    store = stores[pick.value]
    tg.views.chart_view(tg.views.ontology_sunburst(
        store.ontology, title=f"Ontology of the history of {store.case_id} by {tagger.value} (area: tag uses)"))
    return (store,)


@app.cell
def _(mo):
    mo.md(r"""
    ## Reuse counts

    How many notes carry each path: most paths are used once, a few (`user`, broad topics)
    by many notes.
    """)
    return


@app.cell
def _(px, store, tg):
    tg.views.chart_view(px.histogram(tg.views.top_tags(store.ontology, n=None), x="uses",
                                     title="Tag paths by number of uses", labels={"count": "tag paths"}))
    return


@app.cell
def _(store, tg):
    tg.views.top_tags(store.ontology, n=15)
    return


@app.cell
def _(mo):
    mo.md(r"""
    ## Near-duplicate tags

    Paths whose last segments are near-identical (difflib ratio at least 0.8), or the same
    segment under different parents. Graph methods treat them as different concepts, so a
    question matching one does not reach notes tagged with the other.
    """)
    return


@app.cell
def _(store, tg):
    tg.views.near_duplicates(store.ontology)
    return


if __name__ == "__main__":
    app.run()
