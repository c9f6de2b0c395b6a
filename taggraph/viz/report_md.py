"""report.md: the run report as Markdown tables, text from data escaped in its tables and data warnings
(``& < > |``: `markdown_table`)."""

from __future__ import annotations

import re

import pandas as pd

from taggraph.viz.provenance_view import provenance_lines, provenance_table
from taggraph.viz.report_tables import (NAMES_NOTE, TIE_NOTES, comparison_table, has_ties, per_type_table,
                                        significance_note, summary_view, tie_share_table)


def _provenance_md(result, record: dict | None) -> list[str]:
    return ["## Provenance", "", *[f"- {_markdown_text(line)}" for line in provenance_lines(result, record)], "",
            markdown_table(provenance_table(result), index=False), ""]


def _markdown_text(value):
    """A text value with the characters Markdown or HTML would read as markup (``& < > |``) escaped."""
    if not isinstance(value, str):
        return value
    return value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("|", "\\|")


def markdown_table(table: pd.DataFrame, index: bool = True, decimals: int = 3) -> str:
    """`table` as a Markdown table whose text cells, column names and index labels (question types and method
    names from data) render as the text they are (`_markdown_text`); every number column with `decimals` places
    (0 as 0.000, not 0)."""
    shown = table.rename(columns=_markdown_text, index=_markdown_text)
    for column in shown.select_dtypes(include=["object", "string"]).columns:
        shown[column] = shown[column].map(_markdown_text)
    return shown.to_markdown(index=index, floatfmt=f".{decimals}f")


def markdown_report(result, title: str, data_label: str, benchmark: str | None, record: dict | None = None) -> str:
    cfg = result.config
    readers: dict[str, list[str]] = {}  # embedder -> the methods that read with it
    for name, c in cfg["methods"].items():
        if c.get("embedder") is not None:
            readers.setdefault(str(c["embedder"]), []).append(name)
    shown = [f"`{e}`" + (f" ({', '.join(readers[e])})" if len(readers) > 1 else "") for e in sorted(readers)]
    dense = (f" Dense embedder: {', '.join(shown)} (the paper's OpenClaw used `nomic-embed-text`)." if readers else "")
    parts = [f"# {title}", "",
             f"Data: `{data_label}` - {_abstention_text(cfg['n_cases'], cfg['n_abstention'])} "
             f"Extractor: `{cfg['extractor']}`."
             f"{dense} Depth {cfg['depth']}.", "", *data_warnings_md(result),
             f"## MRR and the other metrics (session level, de-duplicated through depth {cfg['depth']})", "",
             NAMES_NOTE, "", markdown_table(summary_view(result), index=False), "",
             *([_markdown_text(significance_note(result)), ""] if significance_note(result) else []),
             *_tie_notes_md(result)]
    if benchmark:
        parts += [f"## Beside the paper's Table 1 ({benchmark}, MRR; the paper's rows used LLM extraction)", "",
                  re.sub(r"(?<= )nan(?= )", "–", markdown_table(
                      comparison_table(result.summary, benchmark, cfg["extractor"]).round(3))), ""]  # not in the paper
    for method, lines in result.verdicts.items():
        parts += [f"## Does each component of {method} earn its keep?", "", *[f"- {line}" for line in lines], ""]
    parts += ["## Success@k per question type (the paper's appendix G recall@k; %)", "",
              markdown_table(per_type_table(result.rankings, list(result.summary["method"])), index=False),
              "", *_provenance_md(result, record)]
    return "\n".join(parts)


def _abstention_text(questions: int, abstention: int) -> str:
    """How many questions the run asked and how many of them are abstention questions, left out of every metric."""
    asked = f"{questions} question{'s' if questions != 1 else ''}"
    if not abstention:
        return f"{asked}, none of them an abstention question."
    one = abstention == 1
    return (f"{asked}, of which {abstention} abstention question{'' if one else 's'} (the answer is not in the "
            f"history, so the sessions {'it names are' if one else 'they name are'} not judged; LongMemEval marks "
            f"{'it' if one else 'them'} `_abs`) {'is' if one else 'are'} excluded from every metric.")


def _tie_notes_md(result) -> list[str]:
    """The definitions of the tie-aware columns and MRR_from_tie_order per question type, when the run has them."""
    if not has_ties(result):
        return []
    return [*[f"- {line}" for line in TIE_NOTES], "", "MRR_from_tie_order per question type:", "",
            markdown_table(tie_share_table(result.per_type, list(result.summary["method"])), index=False), ""]


def data_warnings_md(result) -> list[str]:
    """A "Data warnings" section (one item per `DataWarning` of the result), or nothing without any."""
    found = getattr(result, "warnings", [])
    return ["## Data warnings", "", *[f"- {_markdown_text(w.message)}" for w in found], ""] if found else []
