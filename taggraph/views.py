"""`tg.views`: what the notebooks show, in one namespace (re-exported from `taggraph.viz` and the sweeps).

Charts (`gold_rank_chart`, `score_chart`, `interval_chart`, `answer_chart`, `misses_chart`, the sweep
plots) and how a notebook shows one (`chart_view`: under marimo, in a frame that asks nothing off the machine), a run's summary as the terminal and reports show it (`summary_view`), tables and pages of one question (`top_table`, `rank_table`, `explain_table`, `explain_misses`,
`explain_html`, `graph_html`), the ontology (`note_tags`, `top_tags`, `ontology_sunburst`, ...), the
JupyterLab panels (`graph_panel`, `note_panel`, `retrieval_panel`, `page_frame`, `table_view`), what they
are drawn from (`open_question`, `OpenQuestions`, `available_methods`, `build_retrievers`, `retrieve_all`,
`gold_notes` = `datasets.base.gold_note_ids`, `question_header`), `explain` (`tg.explain`, the text and page of
`taggraph explain`), the notebooks' settings and their checks (`notebook_settings`, `check_parameters`), one store
per history (`histories`, `history_stores`), the notebooks' data-dependent lines (`distractor_note`, `no_misses_text`, `answer_caveat`,
`method_misses`) and the prompt an LLM extractor gets (`llm_prompt`). Importing it brings the
runs and viz rooms (slow), so `import taggraph` does not.

Here the two rooms meet: a question is opened by the runs room (its store built once) and drawn by
the viz room, which never builds one.
"""

import numbers
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from taggraph._infra.atomic import atomic_write, refuse_input_as_output
from taggraph._infra.config import DEFAULT_EXTRACTOR, DEMO_DATA
from taggraph.datasets import Case, Dataset
from taggraph.datasets.base import gold_note_ids as gold_notes
from taggraph.datasets.registry import input_paths
from taggraph.errors import ConfigError
from taggraph.evaluation.metrics import without_abstention
from taggraph.evaluation.placement import focus
from taggraph.runs.bench import BenchResult
from taggraph.runs.question import OpenQuestions, available_methods, find_case, open_question
from taggraph.runs.folders import check_run_folder
from taggraph.runs.runner import build_store, group_by_history
from taggraph.studies.sweeps import plot_depth_sweep, plot_diffusion_contribution, plot_distractor_sweep
from taggraph.extractors.prompt import TEMPLATE, render
from taggraph.methods import DEFAULT_DEPTH, method_names
from taggraph.runs.retrieval import build_retrievers, retrieve_all
from taggraph.viz.charts import answer_chart, gold_rank_chart, interval_chart, misses_chart, score_chart
from taggraph.viz.explain import (METRIC_K, explain_html, explain_misses, explain_table, explain_text, rank_table,
                                  top_table)
from taggraph.viz.graph.page import graph_html, graph_page
from taggraph.viz.miss_pages import MissPages
from taggraph.viz.ontology_view import near_duplicates, note_tags, ontology_sunburst, top_level_shares, top_tags
from taggraph.viz.report_tables import summary_view
from taggraph.viz.run_folder import write_run
from taggraph.viz.widgets import (chart_view, gold_line, graph_panel, note_panel, page_frame, question_header, retrieval_panel, slider_max,
                                  table_view)

__all__ = ["OpenQuestions", "answer_caveat", "answer_chart", "available_methods", "bench", "build_retrievers", "score",
           "chart_view", "check_parameters", "contrast_table", "distractor_note", "explain", "explain_html", "explain_misses", "explain_table",
           "gold_notes", "gold_rank_chart", "graph_html", "graph_panel", "histories", "history_stores",
           "interval_chart", "llm_prompt", "method_misses", "misses_chart", "near_duplicates", "no_misses_text",
           "note_panel", "note_tags", "notebook_settings", "ontology_sunburst", "open_question", "page_frame",
           "gold_line", "plot_depth_sweep", "plot_diffusion_contribution", "plot_distractor_sweep", "question_header", "rank_table",
           "retrieval_panel", "retrieve_all", "score_chart", "slider_max", "summary_view", "table_view",
           "top_level_shares", "top_table", "top_tags"]


def notebook_settings() -> tuple[str, int, str]:
    """(data path, question limit, extractor) a notebook starts from: TAGGRAPH_NOTEBOOK_DATA (default: the
    bundled demo), TAGGRAPH_NOTEBOOK_LIMIT (default 10), TAGGRAPH_NOTEBOOK_EXTRACTOR (default DEFAULT_EXTRACTOR).
    A notebook's parameters cell assigns them, so papermill's injected values come after and win. A limit
    that is not a whole number >= 1 is a ConfigError naming the variable."""
    limit = os.environ.get("TAGGRAPH_NOTEBOOK_LIMIT", "10")
    if not (limit.strip().isdigit() and int(limit) >= 1):
        raise ConfigError(f"TAGGRAPH_NOTEBOOK_LIMIT must be a whole number of questions >= 1, got {limit!r}")
    return (os.environ.get("TAGGRAPH_NOTEBOOK_DATA", str(DEMO_DATA)), int(limit),
            os.environ.get("TAGGRAPH_NOTEBOOK_EXTRACTOR", DEFAULT_EXTRACTOR))


def _first_ids(ids: Sequence[str], n: int = 5) -> str:
    return ", ".join(ids[:n]) + (f", … ({len(ids)} in all)" if len(ids) > n else "")


def check_parameters(data: str | Path, cases: Sequence[Case], methods: Sequence[str] | None = None,
                     k_values: Sequence[int] | None = None, **params: Any) -> None:
    """A notebook's parameters checked before any control or store is made: ConfigError in one line naming
    the parameter. Each is checked when given (None: the notebook's default): ``K`` (a whole number >= 1),
    ``QUESTION`` (a question id of `cases`, loaded from `data`; `k_values`: the only K a notebook can take),
    ``METHOD`` (one of `methods`, default every known method), ``TURN`` (a turn of the first case: 0 to its number
    of turns - 1)."""
    unknown = set(params) - {"K", "QUESTION", "METHOD", "TURN"}
    if unknown:
        raise TypeError(f"check_parameters: no parameter {sorted(unknown)}")
    name = Path(str(data)).name
    k = params.get("K")
    if k is not None and (isinstance(k, bool) or not isinstance(k, numbers.Integral) or k < 1):
        raise ConfigError(f"K must be a whole number >= 1, got {k!r}")
    if k is not None and k_values is not None and k not in k_values:
        raise ConfigError(f"K must be one of {', '.join(map(str, k_values))} here (the metrics' cut-offs), got {k!r}")
    question = params.get("QUESTION")
    ids = [c.case_id for c in cases]
    if question is not None and question not in ids:
        raise ConfigError(f"QUESTION {question!r} is no question of {name}; first ids: {_first_ids(ids)}")
    method = params.get("METHOD")
    known = list(methods) if methods is not None else method_names()
    if method is not None and method not in known:
        raise ConfigError(f"METHOD {method!r} is no method here; known: {', '.join(known)}")
    turn = params.get("TURN")
    if turn is not None:
        turns = len(cases[0].interactions) if cases else 0
        if isinstance(turn, bool) or not isinstance(turn, numbers.Integral) or not 0 <= turn < turns:
            raise ConfigError(f"TURN must be a whole number from 0 to {turns - 1} (the first case, "
                              f"{cases[0].case_id if cases else '-'}, has {turns} turns), got {turn!r}")


def histories(cases: Iterable[Case]) -> list[Case]:
    """One case per history (the first question asked of it; `group_by_history`): what a per-memory view builds
    a store for, so the questions of one history (LoCoMo's conversation, an oracle's `_abs` twin) count once."""
    return [group[0] for group in group_by_history(list(cases))]


def history_stores(cases: Iterable[Case], extractor: str = DEFAULT_EXTRACTOR) -> dict:
    """Question id -> its memory, one store built per history and shared by the questions asked of it."""
    out = {}
    for group in group_by_history(list(cases)):
        store = build_store(group[0], extractor)
        out.update({c.case_id: store for c in group})
    return out


def no_misses_text(cases: Sequence[Case], limit: int, k: int, data: str | Path = "") -> str:
    """07's line when no graph configuration misses: why, and whether running more questions can change it (not
    when every question already ran, nor on an oracle file, where no session-level miss can happen)."""
    text = (f"No graph configuration misses a gold note in its top {k} among these {len(cases)} questions: "
            "nothing to classify.")
    if distractor_note(cases):
        return text + (" Every history holds gold sessions only (an oracle file), so a session-level miss cannot "
                       "happen here; use a haystack file (LongMemEval-S, LoCoMo).")
    if len(cases) < limit:
        return text + f" These are all the data's questions (TAGGRAPH_NOTEBOOK_LIMIT is {limit})."
    demo = Path(str(data)).resolve() == Path(DEMO_DATA).resolve()
    return text + (" Raise `TAGGRAPH_NOTEBOOK_LIMIT` to run more questions"
                   + (" (the bundled demo's misses are demo_q11-q13: 13 or more)." if demo else "."))


def answer_caveat(format_name: str) -> str:
    """A caveat on the extractive answerer's scores for a data format where they say little, else ''."""
    if format_name == "locomo":
        return ("**LoCoMo:** its gold answers are short phrases or dates written in no turn (\"7 May 2023\", "
                "\"Adoption agencies\"), while the extractive answerer returns a whole sentence of a note: token F1 "
                "and containment near 0 here say little about retrieval. An LLM generator "
                "(`taggraph answers --generator ollama:MODEL`) is the fair test.")
    return ""


def distractor_note(cases: Iterable[Case]) -> str:
    """A line when no judged case's history holds a session that is not gold (an oracle file): then there are no
    distractors, every configuration ranks gold sessions only, and ablation or sweep verdicts cannot be tested
    here. Empty otherwise."""
    judged = [c for c in cases if c.gold_session_ids and not c.is_abstention]
    if not judged or any({i.session_id for i in c.interactions} - set(c.gold_session_ids) for c in judged):
        return ""
    return (f"**No distractors:** none of these {len(judged)} judged questions' histories holds a session that is "
            "not gold (an oracle file), so every configuration ranks gold sessions only and scores at or near MRR 1. "
            "The ablations' and the sweep's verdicts cannot be tested on this data; use a haystack file "
            "(LongMemEval-S, LoCoMo).")


def method_misses(rankings: pd.DataFrame, method: str, k: int) -> tuple[pd.DataFrame, str]:
    """`method`'s judged questions (abstention left out) whose first gold session is outside its top `k`, and one
    sentence saying what is counted. Two counts: by the paper's rank (ties in note order: RR < 1/k), and those
    inside the top k only by tie order (``Success@k_tieavg`` < 1: gold sessions tied with others that another
    order would push out), when the rankings have the column (k = 1, 3, 5). The table: strict misses first,
    each with ``miss`` saying which kind."""
    if method not in set(rankings["method"]):
        raise ConfigError(f"{method!r} has no rankings here; ranked: {', '.join(dict.fromkeys(rankings['method']))}")
    mine = without_abstention(rankings[(rankings["method"] == method) & rankings["RR"].notna()])
    strict = mine["RR"] < 1 / k
    tie_column = f"Success@{k}_tieavg"
    tied = ~strict & (mine[tie_column] < 1) if tie_column in mine else strict & False
    table = pd.concat([mine[strict].assign(miss=f"outside the top {k}"),
                       mine[tied].assign(miss=f"in the top {k} only by tie order")])
    text = (f"{int(strict.sum())} of {len(mine)} judged questions have no gold session in {method}'s top {k} by "
            "the paper's rank (ties in note order)")
    if tie_column in mine:
        expected = float((1 - mine[tie_column]).sum())
        text += (f"; {int(tied.sum())} more have one there only by tie order (tied with other sessions, another order "
                 f"would push it out). With ties averaged, {expected:.1f} are expected to miss.")
    else:
        text += f" (a tie-aware count needs k in 1, 3, 5, got {k})."
    return table[[c for c in ["question_id", "RR", "RR_tieavg", tie_column, "miss"] if c in table]], text


def bench(cases: Dataset | Sequence[Case], methods: Sequence[str] | None = None, baseline: str | None = "BM25",
          out: str | Path | None = None, force: bool = False, miss_pages: int = 10, **options: Any) -> BenchResult:
    """`taggraph bench` from Python (`tg.bench`): `runs.bench.bench(cases, methods, baseline, **options)`,
    a `BenchResult`; with `out`, also the run folder the command writes (its tables, TREC files, run.json, and
    report.md and report.html with the explain and graph pages of the first `miss_pages` missed questions),
    which `tg.compare`, `tg.score` and `taggraph fuse` read. `cases` is then what `tg.load` returned: its path
    and sha256 go into run.json. `out` is checked before the run; `force` replaces a run there."""
    from taggraph.runs.bench import bench as run

    if out is not None:
        _check_out(Path(out), cases, force)
        options.setdefault("pages", MissPages(miss_pages))
    result = run(cases, list(methods) if methods else None, baseline, **options)
    if out is not None:
        write_run(result, Path(out), cases, force, miss_pages)
    return result


def score(runs: Sequence[str | Path], cases: Dataset, methods: Sequence[str] | None = None,
          baseline: str | None = None, out: str | Path | None = None, force: bool = False,
          depth: int = DEFAULT_DEPTH, **options: Any) -> BenchResult:
    """`taggraph score` from Python (`tg.score`): other systems' rankings (`runs`: run folders, rankings.csv, TREC or
    JSONL files) scored with exactly bench's metrics on `cases` (from `tg.load`), beside our `methods` run on them
    (`options` go to their run, as `tg.bench`'s), each compared with `baseline` when given; with `out`, its run
    folder, as the command writes it."""
    from taggraph.runs.bench import add_benchmark_metrics, add_significance, run_bench, score_external

    if out is not None:
        _check_out(Path(out), cases, force, keep=[Path(r) for r in runs])
    base = run_bench(cases, list(methods), depth=depth, pages=MissPages() if out is not None else None,
                     **options) if methods else None
    result = score_external([Path(r) for r in runs], cases, depth, base)
    add_benchmark_metrics(result, cases)
    add_significance(result, baseline)
    if out is not None:
        write_run(result, Path(out), cases, force, command="score")
    return result


def _check_out(out: Path, cases: Any, force: bool, keep: Sequence[Path] = ()) -> None:
    """ConfigError before any run when `out` cannot take a run folder or `cases` cannot be recorded in one."""
    if not isinstance(cases, Dataset):
        raise ConfigError(f"out={str(out)!r}: a run folder records its data's path and sha256: pass the dataset "
                          f"tg.load returned, not {type(cases).__name__}")
    check_run_folder(out, force, keep=[*input_paths(cases.path, cases.format.name), *keep])


def contrast_table(store, question: str, note_id: str, retrievers: Mapping[str, Any] | Sequence[str],
                   method: str = "TagGraph-Fusion", asked_on=None) -> pd.DataFrame:
    """`method`'s note `note_id` beside the notes ranked above it, signal by signal, with what each signal read
    (`Explanation.contrast`, as the explain and graph pages show it); empty for a method without signals or a
    note ranked first."""
    retriever = build_retrievers(store, retrievers)[method]
    contrast = retriever.explain(question, note_id, asked_on=asked_on).contrast
    return contrast.table() if contrast is not None else pd.DataFrame()


def llm_prompt(user: str, assistant: str, existing_tags: Sequence[str]) -> str:
    """The prompt an LLM extractor gets for one interaction, given the memory's tags so far."""
    return render(TEMPLATE, user, assistant, existing_tags)


def explain(data: str | Path, question_id: str, note_id: str | None = None, out: str | Path | None = None,
            extractor: str = DEFAULT_EXTRACTOR, methods: Sequence[str] | None = None, depth: int = DEFAULT_DEPTH,
            method_params: Mapping[str, Mapping[str, Any]] | None = None, k: int = METRIC_K,
            fmt: str | None = None, graph_out: str | Path | None = None) -> str:
    """Why each method (did not) rank `note_id` (default: the gold note the graph page opens on, `placement.focus`)
    for question `question_id` of `data` (read in format `fmt`, default detected): the question opened once
    (`open_question`, each method built with its `method_params` and retrieving `depth` notes), the terminal text
    returned (`explain_text`), the page written to `out` when given (`explain_html`) and the question's graph page to
    `graph_out` when given, each page linking the other (never the data's own path, nor inside it)."""
    opened = _opened(data, question_id, fmt, extractor, methods, method_params, out, graph_out)
    if note_id is None and not opened.gold:
        raise ConfigError(f"question {question_id!r} has no gold note; pass a note id")
    note_id = question_pages(opened, note_id, out, graph_out, k, depth)
    return explain_text(opened, note_id, depth, k)


def graph(data: str | Path, question_id: str, out: str | Path, extractor: str = DEFAULT_EXTRACTOR,
          methods: Sequence[str] | None = None, depth: int = DEFAULT_DEPTH,
          method_params: Mapping[str, Mapping[str, Any]] | None = None, fmt: str | None = None,
          explain_out: str | Path | None = None, neighbourhood: bool = False, **drawing: Any) -> None:
    """`taggraph graph`: question `question_id`'s graph page written to `out` (`drawing`: `graph_page`'s hops,
    max_nodes, whole_graph; `neighbourhood`: only the nodes near the question) and, when `explain_out` is given, its
    explain page there, on the same gold note, each page linking the other."""
    opened = _opened(data, question_id, fmt, extractor, methods, method_params, explain_out, out)
    question_pages(opened, None, explain_out, out, METRIC_K, depth,
                   neighbourhood_of=opened.case.question if neighbourhood else None, **drawing)


def _opened(data, question_id, fmt, extractor, methods, method_params, *outs) -> Any:
    for out, command in zip(outs, ("explain", "graph")):
        if out is not None:
            refuse_input_as_output(Path(out), input_paths(data, fmt), command)
    return open_question(find_case(data, question_id, fmt), extractor, methods, method_params)


def question_pages(opened: Any, note_id: str | None, explain_out: str | Path | None, graph_out: str | Path | None,
                   k: int = METRIC_K, depth: int = DEFAULT_DEPTH, **drawing: Any) -> str | None:
    """The `opened` question's graph page (to `graph_out`) and explain page of `note_id` (to `explain_out`), each
    written when its path is given and linking the other when both are; `note_id` None: the gold note the graph
    page opens on (`placement.focus`). Returns the note explained."""
    case, store = opened.case, opened.store
    rankings = opened.rankings()
    drawn = None
    if note_id is None:
        note_id = focus(rankings, store, opened.gold, k)[1]
    if graph_out is not None:
        drawing.setdefault("top_k", k)
        page = graph_page(store, question=case.question, gold_note_ids=opened.gold, retrievers=opened.retrievers,
                          results_by_method={m: [store.notes[i].note_id for i, _ in r[:depth]]
                                             for m, r in rankings.items()},
                          depth=depth, asked_on=case.asked_on, question_id=case.case_id,
                          links=_link("explain page", explain_out, graph_out), **drawing)
        atomic_write(Path(graph_out), page.html)
        drawn = page.notes
    if explain_out is not None and note_id is not None:
        atomic_write(Path(explain_out), explain_html(
            store, case.question, note_id, opened.retrievers, k=k, depth=depth, answer=case.answer, gold=opened.gold,
            asked_on=case.asked_on, question_id=case.case_id, graph_notes=drawn,
            links=_link("graph page", graph_out, explain_out)))
    return note_id


def _link(label: str, target: str | Path | None, page: str | Path | None) -> dict[str, str] | None:
    """{label: `target`'s path relative to `page`'s folder}, None when either page is not written."""
    if target is None or page is None:
        return None
    return {label: Path(os.path.relpath(Path(target).resolve(), Path(page).resolve().parent)).as_posix()}
