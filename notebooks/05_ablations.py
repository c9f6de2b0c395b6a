import marimo

__generated_with = "0.25.2"
app = marimo.App(width="medium")


@app.cell
def _(mo):
    mo.md(r"""
    # 05 · Component ablation

    The method is the parameter METHOD (any method that declares ablations, e.g. TagGraph-Fusion; the tables and
    charts below name it). By default it is the paper's experiment, section 5.1 and appendix F (Table 3):
    remove one AdaptiveGraph component at a time
    with the graph and the query seeds fixed. **-Diffusion** ranks by the teleport vector (no
    PageRank iterations), **-Chronological** drops the links between consecutive notes,
    **-File seeding** puts no TF-IDF mass on file nodes. A cell is MRR(ablation) -
    MRR(AdaptiveGraph): negative means the component was contributing. The paper (GPT-OSS
    extraction) reports -0.020 / -0.001 / -0.119 on LongMemEval-S.
    """)
    return


@app.cell
def _():
    import marimo as mo

    import taggraph as tg

    # Parameters: tagged `parameters` in the .ipynb twin (papermill -p NAME VALUE). DATA, LIMIT and
    # EXTRACTOR: $TAGGRAPH_NOTEBOOK_DATA, _LIMIT and _EXTRACTOR, else the bundled demo, 10 and offline-v2.
    DATA, LIMIT, EXTRACTOR = tg.views.notebook_settings()
    METHOD = "AdaptiveGraph"  # whose components are removed one at a time (any method declaring ablations)
    return DATA, EXTRACTOR, LIMIT, METHOD, mo, tg


@app.cell
def _(DATA, EXTRACTOR, LIMIT, METHOD, tg):
    from pathlib import Path

    cases = tg.load(DATA, limit=LIMIT)
    # a method with no ablations is refused here, in one line naming those that have some
    ablation = tg.component_ablation(cases, extractor=EXTRACTOR, method=METHOD,
                                     dataset=Path(DATA).name.split(".")[0])
    tg.views.table_view(ablation.table)
    return ablation, cases


@app.cell
def _(METHOD, ablation, tg):
    import plotly.express as px

    _long = ablation.table.melt(id_vars=["dataset"], value_vars=list(tg.ablation_columns(METHOD).values()),
                                var_name="removed", value_name="MRR change")
    tg.views.chart_view(px.bar(_long, x="removed", y="MRR change", color="dataset", barmode="group",
                               text_auto=".3f", title=f"MRR change from removing one {METHOD} component"))
    return


@app.cell
def _(METHOD, ablation, cases, mo, tg):
    intervals = tg.ablation_intervals(ablation)
    _n = int(intervals["n"].min())
    _verdicts = [f"- {_name}: {_line}" for _name, _run in ablation.runs.items()
                 for _line in _run.verdicts[METHOD]]
    mo.md(tg.views.distractor_note(cases) + f"""

    **n = {_n} questions.** Each MRR change is a mean of {_n} paired differences; the interval is a 95%
    percentile bootstrap over questions (`scipy.stats.bootstrap`). """
          + (f"With n this small one question moves MRR by up to {1 / _n:.2f}: an interval that "
             "contains 0 means the sign is not established, whatever the table shows." if _n < 30 else "")
          + "\n\nDoes each component earn its keep (removing it costs at least 0.005 MRR at p < 0.05)?\n\n"
          + "\n".join(_verdicts))
    return (intervals,)


@app.cell
def _(intervals, tg):
    tg.views.table_view(intervals.round(3))
    return


@app.cell
def _(intervals, tg):
    tg.views.chart_view(tg.views.interval_chart(intervals))
    return


@app.cell
def _(ablation, tg):
    tg.views.table_view(ablation.summary.round(3))
    return


@app.cell
def _(mo):
    mo.md(r"""
    ## Per question: reciprocal rank of the first gold session

    Where the components matter: questions whose reciprocal rank changes between the full
    method and an ablation.
    """)
    return


@app.cell
def _(ablation, mo, tg):
    _rankings = next(iter(ablation.runs.values())).rankings
    _rr = _rankings.pivot(index="question_id", columns="method", values="RR").dropna()
    _changed = _rr[_rr.nunique(axis=1) > 1].round(3)
    (tg.views.table_view(_changed) if len(_changed)
     else mo.md("No question's reciprocal rank changes between the full method and an ablation."))
    return


if __name__ == "__main__":
    app.run()
