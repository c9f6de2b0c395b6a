"""The graph, explanation and report pages in a real headless Chromium, with all network lookups failing
and Chromium's net log checked: no page asks for anything beyond its own files.

Needs a Chromium binary (Debian: ``apt-get install -y chromium``); skipped otherwise. The marimo
export test also needs esbuild, which it installs with npm when none is found (skipped without npm).
"""

import html
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlparse

import pytest

from taggraph.extractors.base import Extraction
from taggraph._infra.atomic import atomic_write
from taggraph.core.store import Interaction
from taggraph.viz.explain import explain_html
from taggraph.viz.graph.page import save_graph_html

from tests.helpers.stores import HAND_ROWS, make_store

CHROMIUM = next((p for p in map(shutil.which, ("chromium", "chromium-browser", "google-chrome")) if p), None)
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(CHROMIUM is None, reason="no chromium binary on PATH (Debian: apt-get install -y chromium)"),
]

# Each payload would change the title or add an element with id "pwned" if it ever ran.
PAYLOADS = [
    "<script>document.title='pwned'</script>",
    '"><img src=x onerror="document.title=\'pwned\'">',
    "</script><script>document.body.appendChild(Object.assign(document.createElement('b'),{id:'pwned'}))</script>",
    "<img src=x onerror=\"document.body.appendChild(Object.assign(document.createElement('b'),{id:'pwned'}))\">",
]


def page_requests(netlog: Path, local_host: str | None = None) -> list[str]:
    """URLs the page itself asked for beyond file:, data:, blob: and `local_host` (Chromium's own
    background requests carry the initiator 'not an origin' and are left out)."""
    log = json.loads(netlog.read_text())
    start = log["constants"]["logEventTypes"]["URL_REQUEST_START_JOB"]
    urls = [e["params"]["url"] for e in log["events"] if e["type"] == start and "url" in e.get("params", {})
            and e["params"].get("initiator") != "not an origin"]
    return [u for u in urls if not u.startswith(("file:", "data:", "blob:"))
            and (local_host is None or urlparse(u).hostname != local_host)]


CONSOLE = re.compile(r':CONSOLE[^\]]*\] "(.*)", source: ')  # a console message in Chromium's log on stderr


def open_offline(tmp_path, page, fragment: str = "", console: list[str] | None = None) -> tuple[str, list[str]]:
    """The DOM after the page's scripts ran (5 s of virtual time) with all lookups failing, and the URLs
    the page asked for off the machine; the page's console messages (uncaught errors too) are added to
    `console` when given."""
    netlog = tmp_path / "netlog.json"
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
           "--no-first-run", f"--user-data-dir={tmp_path / 'profile'}", "--host-resolver-rules=MAP * ~NOTFOUND",
           f"--log-net-log={netlog}", "--enable-logging=stderr", "--v=0", "--virtual-time-budget=5000",
           "--dump-dom", page.as_uri() + fragment]
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=True)
    if console is not None:
        console += CONSOLE.findall(run.stderr)
    return run.stdout, page_requests(netlog)


def test_the_console_log_catches_an_undefined_function(tmp_path):
    page = tmp_path / "bad.html"
    page.write_text('<html><body><iframe srcdoc="x" onload="__resizeIframe(this)"></iframe></body></html>')
    console = []
    open_offline(tmp_path, page, console=console)
    assert any("__resizeIframe is not defined" in line for line in console), console


def dump_dom(tmp_path, page, fragment: str = "") -> str:
    """`open_offline`'s DOM; fails if the page asked for anything off the machine."""
    dom, asked = open_offline(tmp_path, page, fragment)
    assert asked == [], f"{page.name} asked the network for {asked}"
    return dom


def test_the_net_log_catches_a_page_that_fetches(tmp_path):
    page = tmp_path / "net.html"
    page.write_text('<html><body><img src="https://example.com/x.png"></body></html>')
    with pytest.raises(AssertionError, match="example.com"):
        dump_dom(tmp_path, page)


@pytest.fixture
def hostile_store():
    store = make_store(HAND_ROWS)
    for i, text in enumerate(PAYLOADS):
        store.remember(Interaction(f"h{i}", f"My dog {text} does yoga", f"Reply {text}"),
                       Extraction(what=["pet/dog", "activity/yoga"]))
    return store


def assert_not_pwned(dom: str, title: str) -> None:
    assert f"<title>{title}</title>" in dom
    assert "pwned" not in re.search(r"<title>(.*?)</title>", dom).group(1)
    assert 'id="pwned"' not in dom
    assert "<img" not in dom  # every payload's tag stayed text


def test_graph_page_draws_offline_and_runs_no_injected_script(hostile_store, tmp_path):
    page = save_graph_html(tmp_path / "graph.html", hostile_store, question="my dog does yoga",
                           gold_note_ids=["h1#0"])
    dom = dump_dom(tmp_path, page)
    assert re.search(r'<div id="graph"><div class="vis-network"[^>]*><canvas ', dom), "network canvas not drawn"
    assert_not_pwned(dom, "TagGraph base graph · memory t")


def test_explain_page_shows_payloads_as_text(hostile_store, tmp_path):
    page = tmp_path / "explain.html"
    atomic_write(page, explain_html(hostile_store, "dog yoga", "h3#0", ["BM25", "TagGraph-Basic", "AdaptiveGraph"]))
    dom = dump_dom(tmp_path, page)
    assert "<section" in dom and "TagGraph-Basic" in dom
    assert "&lt;img src=x onerror=" in dom  # shown to the reader, as text
    assert_not_pwned(dom, "Why note h3#0 for: dog yoga")


def test_explain_page_judges_by_the_cut_off_and_shows_the_context(hand_store, tmp_path):
    page = tmp_path / "why.html"
    atomic_write(page, explain_html(hand_store, "my dog beagle", "s2#0", ["BM25", "TagGraph-Basic"], k=5,
                                    answer="a beagle", gold=["s2#0"]))
    dom = dump_dom(tmp_path, page)
    assert "session rank 1 (note rank 1): in the top 5 by sessions" in dom and "this note is gold" in dom and "a beagle" in dom
    assert "k = 5" in dom and "Path boxes:" in dom
    assert_not_pwned(dom, "Why note s2#0 for: my dog beagle")


def test_run_report_draws_its_charts_offline_and_links_the_miss_pages(tmp_path):
    from taggraph._infra.config import DEMO_DATA
    from taggraph.datasets import load_dataset
    from taggraph.runs.bench import run_bench
    from taggraph.viz.miss_pages import MissPages
    from taggraph.viz.report import report_pages

    cases = load_dataset(DEMO_DATA)
    result = run_bench(cases, ["BM25", "TagGraph-TFIDF"], extractor="offline", backend=None, pages=MissPages(1))
    for name, text in report_pages(result, "demo report", "demo", None, cases, n_miss_pages=1).items():
        atomic_write(tmp_path / "run" / name, text)
    dom = dump_dom(tmp_path, tmp_path / "run" / "report.html")
    assert dom.count('class="main-svg"') >= 3, "plotly charts not drawn"
    assert 'class="misses"' in dom
    links = re.findall(r'href="(misses/[^"]+)"', dom)
    assert links and all((tmp_path / "run" / link).exists() for link in links)
    assert_not_pwned(dom, "demo report")
    explain_dom = dump_dom(tmp_path, tmp_path / "run" / next(link for link in links if "explain" in link))
    assert "Verdicts use <b>k = 5</b>" in explain_dom and "gold notes" in explain_dom


def test_exported_notebook_renders_offline(tmp_path):
    pytest.importorskip("nbconvert")
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))
    from export_html import export_html

    page = export_html(Path(__file__).resolve().parents[2] / "notebooks" / "04_retrieval.ipynb", tmp_path / "html")
    console = []
    dom, asked = open_offline(tmp_path, page, console=console)
    assert asked == []
    assert "04 · Retrieval for one question, explained" in dom
    assert dom.count('class="main-svg"') >= 2, "plotly charts not drawn"
    assert "Why (not) note" in dom  # the explain page, in its iframe's srcdoc
    assert console == [], console  # marimo's iframe called __resizeIframe, which only marimo's frontend defines
    # the explain frame grew to its page's height: no scrollbar of its own
    [height] = [int(h) for h in re.findall(r'<iframe [^>]*style="height: (\d+)px;?"', dom)]
    assert height > 900
    # the ipywidgets panels (retrieval, note) say what they are instead of an empty output
    assert dom.count("ipywidgets controls: they work in JupyterLab") == 2 and "widget-view+json" not in dom
    # evidence and reasons wrap, whole, in the tables (pandas ended them in '…' at 50 characters)
    cells = re.findall(r'<td style="[^"]*overflow-wrap:break-word[^"]*">([^<]*)</td>', dom)
    assert cells and max(map(len, cells)) > 50 and not any(c.endswith("...") for c in cells)


def test_graph_side_panel_explains_the_linked_note(hostile_store, tmp_path):
    from taggraph.methods import make_retriever

    retrievers = {m: make_retriever(m, hostile_store) for m in ("BM25", "TagGraph-Basic")}
    page = save_graph_html(tmp_path / "graph.html", hostile_store, question="my dog does yoga", retrievers=retrievers,
                           results_by_method={m: r.query("my dog does yoga") for m, r in retrievers.items()},
                           gold_note_ids=["h1#0"], max_nodes=12, question_id="t:<i>q1</i>")
    dom = dump_dom(tmp_path, page, "#note=h1%230")
    panel = re.search(r'<aside id="why">(.*?)</aside>', dom, re.S).group(1)
    assert "h1#0 · BM25" in panel and ("in the top 5" in panel or "ranked" in panel)
    assert "Edges:" in dom
    assert_not_pwned(dom, "TagGraph base graph · question t:&lt;i&gt;q1&lt;/i&gt;")


@pytest.fixture(scope="module")
def marimo_export(request):
    """tools/export_marimo_html.py's `export_marimo_html`, with the esbuild it finds, else one npm installs
    into pytest's cache (skipped without npm)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))
    import export_marimo_html as tool

    prefix = request.config.cache.mkdir("esbuild")
    cached = prefix / "node_modules" / ".bin" / "esbuild"
    with pytest.MonkeyPatch.context() as env:
        try:
            tool.find_esbuild()
        except SystemExit:
            if not cached.is_file():
                if shutil.which("npm") is None:
                    pytest.skip(f"no npm to install esbuild with; {tool.ESBUILD_HINT}")
                subprocess.run(["npm", "install", "--prefix", str(prefix), "--no-save", "--no-audit", "--no-fund",
                                f"esbuild@{tool.ESBUILD_VERSION}"], check=True, capture_output=True, timeout=300)
            env.setenv("ESBUILD", str(cached))
        yield tool.export_marimo_html


NOTEBOOK_01 = Path(__file__).resolve().parents[2] / "notebooks" / "01_extraction.py"
# Run after marimo drew the page: whether the slider's shadow root has its thumb and marimo's styles.
SLIDER_PROBE = """<script>setTimeout(() => { const root = document.querySelector("marimo-slider")?.shadowRoot;
  document.body.dataset.slider = root
    ? `thumb=${!!root.querySelector("[role=slider]")} sheets=${root.adoptedStyleSheets.length}` : "none";
}, 4000)</script>"""


def shown_by_marimo(tmp_path, page: Path) -> tuple[str, list[str]]:
    """`open_offline` on `page` with the slider probe added, its DOM less the scripts and hidden code
    (where marimo's export keeps the outputs as data): what is left, marimo's frontend drew."""
    head, _, tail = page.read_text(encoding="utf-8").rpartition("</body>")
    page.write_text(head + SLIDER_PROBE + "</body>" + tail, encoding="utf-8")
    dom, asked = open_offline(tmp_path, page)
    return re.sub(r"<script\b.*?</script>|<marimo-code\b.*?</marimo-code>", "", dom, flags=re.S), asked


def assert_notebook_01_drawn(shown: str) -> None:
    assert "01 · From one conversation turn to tags in the ontology</h1>" in shown, "markdown cell not drawn"
    assert "session demo_s07 · 2023/02/12" in shown  # mo.plain_text of the slider's turn
    assert "company/oakland_animal_service" in shown  # the 5W+Extra record, in marimo's JSON viewer
    assert re.search(r'data-slider="thumb=true sheets=[1-9]', shown), "mo.ui.slider not drawn with marimo's styles"


def test_marimo_export_draws_the_notebook_offline(marimo_export, tmp_path):
    [page] = marimo_export([NOTEBOOK_01], tmp_path / "html")
    shown, asked = shown_by_marimo(tmp_path, page)
    assert asked == []
    assert_notebook_01_drawn(shown)


def test_plain_marimo_export_fails_those_checks(tmp_path):
    """marimo's own page asks the CDN for its frontend and, offline, draws nothing."""
    page = tmp_path / "plain.html"
    snapshot_elsewhere = {**os.environ, "PYTHONPYCACHEPREFIX": str(tmp_path)}  # not in notebooks/__marimo__
    subprocess.run([sys.executable, "-m", "marimo", "export", "html", str(NOTEBOOK_01), "-o", str(page)], check=True,
                   capture_output=True, env=snapshot_elsewhere)
    shown, asked = shown_by_marimo(tmp_path, page)
    assert any("cdn.jsdelivr.net" in url for url in asked)
    with pytest.raises(AssertionError, match="markdown cell not drawn"):
        assert_notebook_01_drawn(shown)


def test_miss_pages_show_the_session_rank_the_report_counts(tmp_path):
    """Each miss page's session rank (of the first gold session) is the number in the report's miss table, beside
    the note rank; where the note's session is the first gold one, the verdict's class is the table's (a hit, a
    tie-order place or a miss); 'outranked by' lists the notes above the gold note, up to k, with session and
    score."""
    from taggraph._infra.config import DEMO_DATA
    from taggraph.datasets import load_dataset
    from taggraph.runs.bench import run_bench
    from taggraph.viz.miss_pages import MissPages
    from taggraph.viz.report import report_pages

    cases = load_dataset(DEMO_DATA)
    methods = ["BM25", "AdaptiveGraph", "TagGraph-Basic"]  # TagGraph-Basic finds nothing for demo_q08: a tie
    result = run_bench(cases, methods, backend=None, pages=MissPages(6))
    for name, text in report_pages(result, "demo", "demo", None, cases, n_miss_pages=6).items():
        atomic_write(tmp_path / "run" / name, text)
    report = dump_dom(tmp_path, tmp_path / "run" / "report.html")
    table = re.search(r'<table class="misses">(.*?)</table>', report, re.S).group(1)
    checked, seen = 0, set()
    for row in re.findall(r"<tr>(<td><code>.*?)</tr>", table, re.S):
        link = re.search(r'href="(misses/[^"]+explain\.html)"', row)
        if not link:
            continue
        cells = re.findall(r'<td class="(\w+) num">([^<]*)</td>', row)
        in_table = [re.match(r"(\d+|–)", c).group(1) for _, c in cells]
        page = dump_dom(tmp_path, tmp_path / "run" / link.group(1))
        for method, reported, (counted, _) in zip(methods, in_table, cells):
            found = re.search(rf'<tr class="(\w+)"><td>{method}</td><td class="verdict">[^<]*</td><td class="v">([^<]*)</td>'
                              rf'<td class="v session">([^<]*)</td>', page)
            judged, note_rank, session = found.groups()
            if "first gold session" not in session:
                assert judged in {"ok": ["hit"], "tie": ["tie"], "bad": ["near", "miss"]}[counted], (link, method)
                seen.add(judged)
            first_gold = re.search(r"first gold session: (\d+)", session)
            assert (first_gold.group(1) if first_gold else re.match(r"(\d+|–)", session).group(1)) == reported, (link, method)
            note_rank = note_rank.split(" (")[0]  # '4 (demo_s41#1)': the note that gave the session its rank
            assert note_rank == "–" or session == "–" or int(note_rank) >= int(re.match(r"\d+", session).group()), link
            checked += 1
        above = re.findall(r'outranked by \(the notes above it[^)]*\)</dt><dd><table class="outranked">(.*?)</table>',
                           page, re.S)
        for block in above:
            rows = re.findall(r"<tr><td>(\d+)</td><td>(?:<a href=\"[^\"]+#note=[^\"]+\">)?<code>[^<]+</code>(?:</a>)?</td><td>[^<]+</td>"
                              r"<td class=\"text\">[^<]*</td><td class=\"v\">[\d.e+-]+</td><td class=\"v\">(?:tie|\+[\d.e+-]+)</td>",
                              block)
            assert rows, link
            assert rows[:5] == [str(r) for r in range(1, min(5, len(rows)) + 1)]
    assert checked >= 4 and {"hit", "tie"} <= seen, seen


def test_explain_page_judges_the_session_rank_as_the_report_counts(tmp_path):
    """demo_q11: AdaptiveGraph ranks the gold note 11th but its session 4th (by its note demo_s41#1, which the page
    explains), a hit by Success@5 (green, not 'outside the top 5'); demo_q08: TagGraph-Basic's session rank 3 is owed
    to tie order (purple)."""
    from taggraph._infra.config import DEMO_DATA
    from taggraph.datasets import load_dataset
    from taggraph.runs.runner import build_store
    from taggraph.datasets.base import gold_note_ids

    cases = {c.case_id: c for c in load_dataset(DEMO_DATA)}
    for qid, method, cls, words in [
            ("demo_q11", "AdaptiveGraph", "hit", "session rank 4 (note rank 4): in the top 5 by sessions"),
            ("demo_q08", "TagGraph-Basic", "tie",
             "session rank 3 (note rank 4) only by tie order (score 0); not found by the method")]:
        case = cases[qid]
        store = build_store(case, "offline-v2")
        gold = gold_note_ids(case, store)
        page = tmp_path / f"{qid}.html"
        atomic_write(page, explain_html(store, case.question, gold[0], [method], gold=gold, asked_on=case.question_date))
        dom = dump_dom(tmp_path, page)
        assert f'<tr class="{cls}"><td>{method}</td><td class="verdict">{words}</td>' in dom
        assert f'<section class="{cls}"><h2>{method}: {words}</h2>' in dom


def test_outranked_rows_show_the_notes_text_a_link_and_say_tie_at_an_equal_score(tmp_path):
    """demo_q12 under TagGraph-Stopwords scores every note 0: the notes above the gold note are there by note order,
    'tie', not '+0'; each row starts the note's text and links to it on the graph page."""
    from taggraph._infra.config import DEMO_DATA
    from taggraph.datasets import load_dataset
    from taggraph.runs.runner import build_store
    from taggraph.datasets.base import gold_note_ids

    case = next(c for c in load_dataset(DEMO_DATA) if c.case_id == "demo_q12")
    store = build_store(case, "offline-v2")
    gold = gold_note_ids(case, store)
    page = tmp_path / "demo_q12.explain.html"
    atomic_write(page, explain_html(store, case.question, gold[0], ["TagGraph-Stopwords", "BM25"], gold=gold,
                                    asked_on=case.question_date, links={"graph page": "demo_q12.graph.html"}))
    dom = dump_dom(tmp_path, page)
    blocks = re.findall(r'outranked by \(the notes above it[^)]*\)</dt><dd><table class="outranked">(.*?)</table>',
                        dom, re.S)
    stopwords, bm25 = blocks
    first = store.notes[0]
    assert re.search(rf'<a href="demo_q12.graph.html#note={re.escape(first.note_id.replace("#", "%23"))}"><code>'
                     rf'{re.escape(first.note_id)}</code></a>', stopwords)
    assert html.escape(first.user.split()[0]) in stopwords
    margins = re.findall(r'<td class="v">(tie|\+[^<]*)</td></tr>', stopwords)
    assert margins and set(margins) == {"tie"}
    assert all(m != "+0" and (m == "tie" or float(m) > 0) for m in re.findall(r'<td class="v">(tie|\+[^<]*)</td></tr>', bm25))


def test_adaptive_graphs_reason_says_where_the_pagerank_mass_came_from(tmp_path):
    """demo_q12: AdaptiveGraph seeds no tag ('hiking' and 'trail' are stopwords); its reason gives the note's PPR mass
    and the shares that flowed in over its edges, not only 'score 0.00217'."""
    from taggraph._infra.config import DEMO_DATA
    from taggraph.datasets import load_dataset
    from taggraph.runs.runner import build_store
    from taggraph.datasets.base import gold_note_ids

    case = next(c for c in load_dataset(DEMO_DATA) if c.case_id == "demo_q12")
    store = build_store(case, "offline-v2")
    gold = gold_note_ids(case, store)
    page = tmp_path / "demo_q12.explain.html"
    atomic_write(page, explain_html(store, case.question, gold[0], ["AdaptiveGraph"], gold=gold,
                                    asked_on=case.question_date))
    dom = dump_dom(tmp_path, page)
    reason = re.search(r'<tr class="\w+"><td>AdaptiveGraph</td>(?:<td[^>]*>[^<]*</td>){4}<td>([^<]*)</td>', dom).group(1)
    assert reason.startswith("PPR mass 0.00217: 100% from other notes' file seeds (most: demo_s49#0"), reason
    shares = [int(p) for p in re.findall(r"(\d+)% over the edge from ", reason)]
    assert "over the edge from topic:4" in reason and 99 <= sum(shares) <= 101, reason  # the last step, whole
    assert "mass from" in dom and "walk breaks" in dom  # the shares and the unseeded tags, in the details
