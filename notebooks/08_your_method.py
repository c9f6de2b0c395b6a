import marimo

__generated_with = "0.25.2"
app = marimo.App(width="medium")


@app.cell
def _(mo):
    mo.md(r"""
    # 08 · Your method beside the paper's

    A method is a subclass of `tg.Retriever` that writes three things: `add(note)` (index one
    note; called once per note, in order), `score(text, *, asked_on=None)` (a score per note
    index it reaches; `asked_on` is the date the question is asked) and, optionally,
    `evidence(text, note, *, asked_on=None)`, a `tg.Evidence` saying why. Its parameters are a
    frozen dataclass `Params`, ranges declared on the fields; `tg.register_method` names it. From
    then on it runs wherever a built-in method does: the bench (with workers too), `Memory`, the
    explain and graph pages. This notebook uses public names only.
    """)
    return


@app.cell
def _():
    import marimo as mo

    import taggraph as tg

    # Parameters: tagged `parameters` in the .ipynb twin (papermill -p NAME VALUE). DATA, LIMIT and
    # EXTRACTOR: $TAGGRAPH_NOTEBOOK_DATA, _LIMIT and _EXTRACTOR, else the bundled demo, 10 and offline-v2.
    DATA, LIMIT, EXTRACTOR = tg.views.notebook_settings()
    K = 5  # the cut-off of Success@k and of what counts as a miss
    return DATA, EXTRACTOR, K, LIMIT, mo, tg


@app.cell
def _(tg):
    from collections import Counter
    from dataclasses import dataclass
    from typing import Annotated

    from pydantic import Field

    @tg.register_method("TagOverlap")
    class TagOverlap(tg.Retriever):
        """Counts the question's words among the words of each note's tags (its tag line only)."""

        @dataclass(frozen=True)
        class Params:
            min_len: Annotated[int, Field(ge=1, le=20)] = 3  # shorter words are ignored

        def __init__(self, store, params=None):
            super().__init__(store, params)
            self.tag_words = []

        def words(self, text):
            cleaned = "".join(c.lower() if c.isalnum() else " " for c in text)
            return [w for w in cleaned.split() if len(w) >= self.params.min_len]

        def add(self, note):
            self.tag_words.append(Counter(self.words(" ".join(note.paths()))))

        def score(self, text, *, asked_on=None):
            query = self.words(text)
            scores = {i: float(sum(words[w] for w in query)) for i, words in enumerate(self.tag_words)}
            return {i: s for i, s in scores.items() if s > 0}

        def evidence(self, text, note, *, asked_on=None):
            shared = sorted(set(self.words(text)) & set(self.tag_words[note.index]))
            if not shared:
                return tg.Evidence(missing=f"none of the question's words is in its tags {note.paths()}")
            return tg.Evidence(summary="its tags hold " + ", ".join(shared), detail={"shared_words": shared})

    _min5 = tg.register_method("TagOverlap-min5", TagOverlap, min_len=5)  # a second setting of the same class
    MINE = ["TagOverlap", "TagOverlap-min5"]
    return (MINE,)


@app.cell
def _(DATA, EXTRACTOR, K, LIMIT, MINE, tg):
    cases = tg.load(DATA, limit=LIMIT)
    tg.views.check_parameters(DATA, cases, K=K)
    result = tg.bench(cases, [*MINE, "BM25", "AdaptiveGraph", "TagGraph-Fusion"], baseline="BM25",
                      extractor=EXTRACTOR)
    tg.views.table_view(
        tg.views.summary_view(result)[["method", "n", "MRR", "MRR_tieavg", "Success@5", "ΔMRR vs BM25", "p", "sig"]])
    return cases, result


@app.cell
def _(mo):
    mo.md(r"""
    ## Two settings of one method, paired per question

    `TagOverlap-min5` ignores words under five letters. The difference in MRR with its 95%
    bootstrap interval and a paired randomization test over the same questions:
    """)
    return


@app.cell
def _(result, tg):
    tg.compare([result], ["TagOverlap=TagOverlap-min5"]).pairs[
        ["method_a", "method_b", "n", "MRR_a", "MRR_b", "diff", "ci_low", "ci_high", "p_value", "wins", "losses"]]
    return


@app.cell
def _(K, mo, result, tg):
    # strict misses (the paper's rank, ties in note order) and those in the top K only by tie order
    misses, _text = tg.views.method_misses(result.rankings, "TagOverlap", K)
    mo.vstack([mo.md(f"## Where TagOverlap misses\n\n{_text}"),
               tg.views.table_view(misses) if len(misses) else mo.md("")])
    return (misses,)


@app.cell
def _(EXTRACTOR, K, cases, misses, mo, tg):
    _by_id = {c.case_id: c for c in cases}
    _case = _by_id[misses["question_id"].iloc[0]] if len(misses) else None
    if _case is None:
        _shown = mo.md("TagOverlap misses no question here: nothing to explain.")
    else:
        _store = tg.build_store(_case, EXTRACTOR)
        _gold = tg.views.gold_notes(_case, _store)
        _shown = tg.views.page_frame(tg.views.explain_html(_store, _case.question, _gold[0],
                                                           ["TagOverlap", "BM25", "AdaptiveGraph"], k=K,
                                                           answer=_case.answer, gold=_gold,
                                                           asked_on=_case.asked_on))
    _shown
    return


if __name__ == "__main__":
    app.run()
