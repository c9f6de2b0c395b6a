"""The explain and graph pages of a run's missed questions: drawn by the run while each memory exists
(`MissPages`), then picked for the run folder (`miss_pages`); a page that cannot be drawn says why (`failed_page`)."""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from taggraph.datasets.base import gold_note_ids
from taggraph.evaluation.metrics import score_rankings
from taggraph.evaluation.placement import misses_table
from taggraph.viz.page_shell import shell_page


def miss_page_name(question_id: str, kind: str) -> str:
    return f"misses/{re.sub(r'[^A-Za-z0-9_.-]', '_', question_id)}.{kind}.html"


@dataclass(frozen=True)
class MissPages:
    """The run's page recorder (`run_bench(..., pages=MissPages(n))`): called by the runner for each memory
    while it exists, it draws the explain and graph pages ({run-folder file name: html}) of the memory's first
    `n` missed questions with the run's own retrievers, both on the gold note the graph page opens on
    (`GraphPage.focus`). The
    report then only picks the pages of the run's first `n` misses: no store is built again."""
    n: int = 10
    k: int = 5

    def __call__(self, run, cases: Sequence, rows: list[dict], depth: int) -> dict[str, str]:
        from taggraph.viz.explain import explain_html
        from taggraph.viz.graph.page import graph_page

        if not self.n or not rows:
            return {}
        by_id = {c.case_id: c for c in cases}
        misses = misses_table(score_rankings(pd.DataFrame(rows)), self.k)
        ranked = {(r["question_id"], r["method"]): r["ranked_note_ids"] for r in rows}
        pages: dict[str, str] = {}
        explained = 0
        for qid in misses["question_id"]:
            case, store = by_id[qid], run.store
            gold = gold_note_ids(case, store)
            if not gold:  # a miss by construction (no gold notes): nothing to explain, and it takes no page's place
                continue
            if explained == self.n:
                break
            explained += 1
            names = {kind: miss_page_name(qid, kind).split("/", 1)[1] for kind in ("explain", "graph")}
            try:  # the graph page first: the explain page links only the notes it draws
                graph = graph_page(store, question=case.question, gold_note_ids=gold, neighbourhood_of=case.question,
                                   top_k=self.k, retrievers=run.retrievers, depth=depth, asked_on=case.asked_on,
                                   results_by_method={m: ranked[qid, m] for m in run.methods}, question_id=qid,
                                   links={"explain page": names["explain"], "run report": "../report.html"})
                pages[miss_page_name(qid, "graph")], drawn, note = graph.html, graph.notes, graph.focus or gold[0]
            except Exception as exc:  # a page that cannot be drawn says so; it never costs the run
                pages[miss_page_name(qid, "graph")] = failed_page(f"graph page of {qid}", exc)
                drawn, note = frozenset(), gold[0]
            try:
                pages[miss_page_name(qid, "explain")] = explain_html(
                    store, case.question, note, run.retrievers, k=self.k, depth=depth, answer=case.answer,
                    gold=gold, asked_on=case.asked_on, question_id=qid, graph_notes=drawn,
                    links={"graph page": names["graph"], "run report": "../report.html"})
            except Exception as exc:
                pages[miss_page_name(qid, "explain")] = failed_page(f"explain page of {qid}", exc)
        return pages


def failed_page(what: str, exc: Exception) -> str:
    """A page in place of `what`, which could not be drawn: the error, in one line."""
    message = html.escape(f"{type(exc).__name__}: {' '.join(str(exc).split())}"[:500])
    return shell_page(f"{what}: not drawn", f"<h1>The {html.escape(what)} could not be drawn</h1>"
            f"<p><code>{message}</code></p>"
            f"<p><a href='../report.html'>run report</a></p>")


def miss_pages(result, misses: pd.DataFrame, n: int) -> dict[str, str]:
    """The recorded pages (`BenchResult.pages`, by `MissPages`) of the run's first `n` missed questions that
    have them (a question without known gold notes has none)."""
    chosen = [qid for qid in misses["question_id"] if miss_page_name(qid, "explain") in result.pages][:n]
    return {name: result.pages[name] for qid in chosen for name in (miss_page_name(qid, "explain"), miss_page_name(qid, "graph"))}
