import marimo

__generated_with = "0.25.2"
app = marimo.App(width="medium")


@app.cell
def _(mo):
    mo.md(r"""
    # 06 · Distractor sweep and retrieval depth

    Paper, section 6.1: does diffusion hurt on small stores? Each case keeps its gold sessions
    plus n distractor sessions sampled from its own haystack (nested samples, fixed seed; tags
    extracted once over the full haystack). Diffusion's contribution at each n is MRR with
    PageRank iterations minus MRR without them, with and without file seeding. On the demo,
    haystacks hold only 10 to 13 distractors, so the larger counts take them all (the lines
    under the chart name each count a haystack cannot fill).

    Both charts draw the paper's MRR (solid), where sessions with equal scores rank in note
    order, and beside it, dashed, MRR with ties averaged (`MRR_tieavg`, McSherry & Najork).
    Where gold sessions come first in the history (LoCoMo), a configuration that scores them
    0 still ranks them first by note order: where the two lines differ in sign, tie order,
    not diffusion, decides the sign.
    """)
    return


@app.cell
def _():
    import marimo as mo

    import taggraph as tg

    # Parameters: tagged `parameters` in the .ipynb twin (papermill -p NAME VALUE). DATA, LIMIT and
    # EXTRACTOR: $TAGGRAPH_NOTEBOOK_DATA, _LIMIT and _EXTRACTOR, else the bundled demo, 10 and offline-v2.
    DATA, LIMIT, EXTRACTOR = tg.views.notebook_settings()
    COUNTS = (0, 3, 8, 18, 36)  # distractor sessions added to each question's gold sessions
    return COUNTS, DATA, EXTRACTOR, LIMIT, mo, tg


@app.cell
def _(COUNTS, DATA, EXTRACTOR, LIMIT, tg):
    cases = tg.load(DATA, limit=LIMIT)
    sweep = tg.distractor_sweep(cases, counts=COUNTS, extractor=EXTRACTOR)
    tg.views.chart_view(tg.views.plot_distractor_sweep(sweep.summary))
    return (
        cases,
        sweep,
    )


@app.cell
def _(cases, mo, sweep, tg):
    # counts a haystack cannot fill (it then takes every distractor it has), and oracle files (none at all)
    mo.md("\n\n".join([*(f"- {_w}" for _w in sweep.warnings), tg.views.distractor_note(cases)])
          or "Every count was filled: each judged question's haystack holds at least the largest count.")
    return


@app.cell
def _(sweep, tg):
    tg.views.chart_view(tg.views.plot_diffusion_contribution(sweep.contribution))
    return


@app.cell
def _(sweep, tg):
    tg.views.table_view(sweep.contribution.round(3))
    return


@app.cell
def _(sweep, tg):
    tg.views.table_view(sweep.summary.round(3))
    return


@app.cell
def _(mo):
    mo.md(r"""
    ## Retrieval depth (appendix E)

    The paper fixes depth 40 and reports that TagGraph-TFIDF changes by less than 0.004 MRR
    across depths 20, 40 and 80.
    """)
    return


@app.cell
def _(EXTRACTOR, cases, tg):
    depths = tg.depth_sweep(cases, extractor=EXTRACTOR)
    tg.views.chart_view(tg.views.plot_depth_sweep(depths.summary))
    return (depths,)


@app.cell
def _(depths, tg):
    tg.views.table_view(depths.summary.round(3))
    return


if __name__ == "__main__":
    app.run()
