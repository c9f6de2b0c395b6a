import marimo

__generated_with = "0.25.2"
app = marimo.App(width="medium")


@app.cell
def _(mo):
    mo.md(r"""
    # 01 · From one conversation turn to tags in the ontology

    Every interaction (a user turn and the assistant reply) goes through the extractor, which
    returns a 5W+Extra record (paper, section 3.1). The record's tags are normalized into
    ontology paths, written on the first line of a Markdown note, and added to the case's
    ontology: reused when the path already exists, minted otherwise.

    Settings: `TAGGRAPH_NOTEBOOK_DATA` (default: the bundled demo), `TAGGRAPH_NOTEBOOK_LIMIT`,
    `TAGGRAPH_NOTEBOOK_EXTRACTOR` (default `offline-v2`: spaCy rules and WordNet categories, no network).
    """)
    return


@app.cell
def _():
    import marimo as mo

    import taggraph as tg

    # Parameters: tagged `parameters` in the .ipynb twin (papermill -p NAME VALUE). DATA, LIMIT and
    # EXTRACTOR: $TAGGRAPH_NOTEBOOK_DATA, _LIMIT and _EXTRACTOR, else the bundled demo, 10 and offline-v2.
    DATA, LIMIT, EXTRACTOR = tg.views.notebook_settings()
    TURN = None  # the turn shown first; None: the first case's first gold turn
    return DATA, EXTRACTOR, LIMIT, TURN, mo, tg


@app.cell
def _(DATA, LIMIT, TURN, tg):
    cases = tg.load(DATA, limit=LIMIT)
    tg.views.check_parameters(DATA, cases, TURN=TURN)  # one line naming TURN when it is out of range
    case = cases[0]
    first_gold = next((i for i, it in enumerate(case.interactions) if it.session_id in case.gold_session_ids), 0)
    first_turn = first_gold if TURN is None else TURN
    return case, first_turn


@app.cell
def _(case, first_turn, mo):
    turn = mo.ui.slider(0, len(case.interactions) - 1, value=first_turn, label="turn of the first case",
                        show_value=True)
    # outside marimo (JupyterLab) its slider does not render: the turn shown below, in words
    turn if mo.running_in_notebook() else mo.plain_text(f"turn of the first case: {first_turn} (a slider in marimo)")
    return (turn,)


@app.cell
def _(case, mo, turn):
    interaction = case.interactions[turn.value]
    mo.plain_text(f"session {interaction.session_id} · {interaction.timestamp}\n\n"
                  f"User: {interaction.user}\n\nAssistant: {interaction.assistant}")
    return (interaction,)


@app.cell
def _(mo):
    mo.md(r"""
    ## The 5W+Extra record

    The store before this turn holds the earlier turns; its ontology is what the extractor sees
    (an LLM extractor gets it in its prompt and is asked to reuse paths).
    """)
    return


@app.cell
def _(EXTRACTOR, case, interaction, tg, turn):
    extractor = tg.get_extractor(EXTRACTOR)
    before = tg.MemoryStore(case.case_id, extractor)
    before.remember_many(case.interactions[: turn.value])
    extraction = extractor.extract(interaction.user, interaction.assistant, before.ontology.tags())
    extraction.model_dump()
    return (before,)


@app.cell
def _(mo):
    mo.md(r"""
    ## Two model-free taggers side by side

    `offline` tags nouns from a small keyword table and files the rest under `topic/`;
    `offline-v2` types every noun by its WordNet category (`pet/dog`, `breed/shiba_inu`,
    `dish/lasagna`), so the ontology has real top-level categories instead of one catch-all.
    What neither can do, and an LLM extractor can: read what the user *means* - a stated goal
    or reason in other words, a preference implied by a story, a fact the assistant's answer
    pins down - because both only see the words the user wrote.
    """)
    return


@app.cell
def _(before, interaction, tg):
    import pandas as pd

    pd.DataFrame([{"extractor": name, **{c: ", ".join(v) for c, v in tg.get_extractor(name).extract(
        interaction.user, interaction.assistant, before.ontology.tags()).tags().items()}}
        for name in ("offline", "offline-v2")])
    return


@app.cell
def _(mo):
    mo.md(r"""
    ## The note

    The tag line carries the normalized paths (lowercase, underscores, singular nouns, depth at
    most 4); empty categories read `n/a`.
    """)
    return


@app.cell
def _(EXTRACTOR, case, mo, tg, turn):
    from dataclasses import replace

    after = tg.build_store(replace(case, interactions=case.interactions[: turn.value + 1]), EXTRACTOR)
    note = after.notes[-1]
    mo.plain_text(note.to_markdown())
    return after, note


@app.cell
def _(mo):
    mo.md(r"""
    ## The tags in the ontology

    The store now holds the turns up to this one. `uses` counts its notes that carry the path;
    `minted_by` is the note that first used it (this note when `reused` is false).
    """)
    return


@app.cell
def _(after, note, tg):
    tg.views.note_tags(after, note)
    return


@app.cell
def _(mo, note, tg):
    mo.plain_text(tg.Ontology(note.paths()).to_markdown() or "(the note has no tags)")
    return


@app.cell
def _(after):
    {"notes": len(after), "distinct tags": len(after.ontology), "minted": after.minted,
     "reused": after.reused, "reuse (occurrences / distinct)": round(after.ontology.reuse(), 3)}
    return


@app.cell
def _(mo):
    mo.md(r"""
    ## The prompt an LLM extractor would get

    (`--extractor ollama:MODEL` or `gguf:PATH`; the offline extractors use spaCy rules, and WordNet, instead.)
    """)
    return


@app.cell
def _(before, interaction, mo, tg):
    mo.plain_text(tg.views.llm_prompt(interaction.user, interaction.assistant, before.ontology.tags()))
    return


if __name__ == "__main__":
    app.run()
