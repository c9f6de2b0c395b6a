"""TagGraph-Fusion's why as a newcomer reads it, in headless Chromium: on demo_q06 and demo_q12 every view (the
explain page, the graph page's header, notebook 04's contrast table) lists every note above the note it explains,
with its rank; the explain page's legend names every signal it shows; the anchoring note of demo_q06's time window
is named; no number is in scientific notation. Reuses tests/browser/test_browser.py's Chromium helpers."""

import re
import html

import pytest
from typer.testing import CliRunner

from taggraph._infra.config import DEMO_DATA, DEFAULT_EXTRACTOR
from taggraph.cli import app
from taggraph.runs.question import find_case, open_question
from taggraph.views import contrast_table

from test_browser import dump_dom, pytestmark  # noqa: F401  (slow, needs chromium)

SCIENTIFIC = re.compile(r"\d(?:\.\d+)?e[-+]\d+", re.I)


def _page(tmp_path, command: str, question: str):
    out = tmp_path / f"{command}-{question}.html"
    result = CliRunner().invoke(app, [command, "--question", question, "--methods", "TagGraph-Fusion", "--out", str(out)])
    assert result.exit_code == 0, result.output
    return dump_dom(tmp_path, out)


def _text(dom: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", " ", re.sub(r"<(script|style)\b.*?</\1>", " ", dom, flags=re.S)))


@pytest.mark.parametrize("question", ["demo_q06", "demo_q12"])
def test_every_view_lists_every_note_above_with_its_rank(tmp_path, question):
    opened = open_question(find_case(DEMO_DATA, question), DEFAULT_EXTRACTOR, ["TagGraph-Fusion"])
    fusion, store, case = opened.retrievers["TagGraph-Fusion"], opened.store, opened.case
    ranked = [store.notes[i].note_id for i, _ in fusion.rank(case.question, len(store), asked_on=case.asked_on)]

    def above(note_id: str) -> set[tuple[int, str]]:
        return {(r, n) for r, n in enumerate(ranked[:ranked.index(note_id)], 1)}

    explain = _page(tmp_path, "explain", question)
    listed = {(int(r), n) for r, n in re.findall(r"<li>rank (\d+) <code>([^<]+)</code>:", explain)}
    explained = ranked[max(r for r, _ in listed)]  # the note just below the last rival
    assert listed == above(explained), "the explain page lists every note above the note it explains"
    graph = _page(tmp_path, "graph", question)
    walk = html.unescape(re.search(r'<div id="walk">(.*?)</div></div>', graph, re.S).group(1))
    shown = {(int(r), n) for n, r in re.findall(r"note (\S+) \(rank (\d+)\) (?:scores|ties)", walk)}
    focus = ranked[max(r for r, _ in shown)] if shown else None
    assert shown and shown == above(focus), "the graph page's header lists every note above its note"
    table = contrast_table(store, case.question, explained, ["TagGraph-Fusion"], asked_on=case.asked_on)
    assert set(zip(table["rank"], table["rival"])) == above(explained), "notebook 04's table: the same notes"
    assert (table["meaning"] != "").all(), "every signal of the notebook's table has its meaning"
    for dom in (explain, graph):
        assert not SCIENTIFIC.search(_text(dom)), SCIENTIFIC.search(_text(dom)).group(0)
    signals = set(re.findall(r"<tr><th title=\"[^\"]+\">(\w+)</th>", explain))
    legend = set(re.findall(r"<dt><code>(\w+)</code></dt><dd>[^<]+</dd>", explain))
    assert signals and signals <= legend, "the legend names every signal the contrast shows"


def test_the_time_window_names_the_note_that_dated_it(tmp_path):
    """demo_q06's "before the Chicago Marathon" is dated by the note that best matches the clause."""
    text = _text(_page(tmp_path, "explain", "demo_q06"))
    assert "window before 2023-06-04 (+-7 days): the date of demo_s23#0, the best match for 'the chicago marathon'" in text
