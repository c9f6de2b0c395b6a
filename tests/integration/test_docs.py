"""The README and docs/: every relative link resolves, the results table's commands exist and equal
BENCHMARKS.md's, the CLI reference is current, the README stays short, and no page cites the issue tracker."""

from __future__ import annotations

import importlib.util
import itertools
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

import taggraph as tg
from taggraph.cli import app

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"
PAGES = [README, REPO / "benchmarks" / "README.md", *sorted((REPO / "docs").glob("*.md"))]
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")


def without_fences(text: str) -> str:
    """The text outside fenced code blocks, where a line starting with # is a heading."""
    return re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)


def prose(text: str) -> str:
    """The text outside fenced code blocks and inline code spans."""
    return re.sub(r"`[^`\n]*`", "", without_fences(text))


def anchors(page: Path) -> set[str]:
    """GitHub's anchors for the headings of a markdown page (a repeated heading gets -1, -2, ...)."""
    seen: dict[str, int] = {}
    found = set()
    for heading in re.findall(r"^#{1,6} +(.+?) *$", without_fences(page.read_text(encoding="utf-8")), re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.replace("`", "").lower()).replace(" ", "-")
        found.add(slug if slug not in seen else f"{slug}-{seen[slug]}")
        seen[slug] = seen.get(slug, 0) + 1
    return found


def relative_links(page: Path) -> list[str]:
    return [target for target in LINK.findall(prose(page.read_text(encoding="utf-8")))
            if not re.match(r"[a-z]+:", target)]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(REPO)))
def test_every_relative_link_resolves_to_a_file_and_heading(page):
    broken = []
    for target in relative_links(page):
        path, _, anchor = target.partition("#")
        linked = (page.parent / path).resolve() if path else page
        if not linked.exists():
            broken.append(f"{target}: no such file")
        elif anchor and linked.suffix == ".md" and anchor not in anchors(linked):
            broken.append(f"{target}: no heading #{anchor} in {linked.relative_to(REPO)}")
    assert not broken, f"{page.relative_to(REPO)}: " + "; ".join(broken)


def test_the_link_check_catches_a_missing_file_and_a_missing_heading(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("# Title\n\n## The `Memory` facade\n\n[ok](#the-memory-facade) [gone](#nowhere) "
                    "[file](other.md) `[code](skipped.md)`\n", encoding="utf-8")
    assert relative_links(page) == ["#the-memory-facade", "#nowhere", "other.md"]
    assert anchors(page) == {"title", "the-memory-facade"}


def table_after(text: str, marker: str) -> list[str]:
    """The first markdown table after `marker`, line by line."""
    lines = text.split(marker, 1)[1].splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("|"))
    return list(itertools.takewhile(lambda line: line.startswith("|"), lines[start:]))


def commands_after(text: str, marker: str) -> list[str]:
    """The numbered list of commands under the first table after `marker`, in its order."""
    after = text.split(marker, 1)[1].split("\n|", 1)[1].split("\n\n#", 1)[0]
    listed = re.findall(r"^(\d+)\. `([^`]+)`$", after, re.M)
    assert [int(n) for n, _ in listed] == list(range(1, len(listed) + 1)), listed
    return [command for _, command in listed]


def results_table() -> list[str]:
    return table_after(README.read_text(encoding="utf-8"), "## Results")


def table_commands() -> list[str]:
    """The commands listed under the README's results table, numbered from 1."""
    return commands_after(README.read_text(encoding="utf-8"), "## Results")


def test_the_readme_results_table_is_the_table_opening_benchmarks():
    benchmarks = (REPO / "BENCHMARKS.md").read_text(encoding="utf-8")
    assert results_table() == table_after(benchmarks, "# Benchmarks")
    assert table_commands() == commands_after(benchmarks, "# Benchmarks")


def test_the_results_table_names_a_listed_command_on_every_row():
    rows, commands = results_table()[2:], table_commands()
    numbers = [row.rstrip(" |").rsplit("|", 1)[1].strip() for row in rows]
    assert rows and all(n.isdigit() and 1 <= int(n) <= len(commands) for n in numbers), numbers
    assert all(re.match(r"(python benchmarks/|python -m benchmarks\.|taggraph )", c) for c in commands)


def test_the_results_table_reads_without_commands_in_its_cells():
    """Its commands are listed under it, so no cell holds one and no line runs past 240 characters (316 before)."""
    table = results_table()
    assert not [line for line in table if re.search(r"`(python |taggraph )", line)]
    assert max(map(len, table)) <= 240


@pytest.mark.parametrize("command", [c for c in table_commands() if c.startswith("taggraph ")])
def test_each_taggraph_command_of_the_results_table_parses(command):
    _, name, *args = shlex.split(command)
    subcommand = typer.main.get_command(app).commands[name]
    params = subcommand.make_context(name, args).params
    unknown = set((params.get("methods") or "").split(",")) - {""} - set(tg.method_names())
    assert not unknown, f"{command}: no method {sorted(unknown)}"


@pytest.mark.parametrize("command", [c for c in table_commands() if c.startswith("python ")])
def test_each_script_of_the_results_table_exists_and_takes_its_options(command):
    """A script runs as a file (`python benchmarks/NAME.py`) or as a module from the root (`python -m benchmarks.NAME`)."""
    _, *words = shlex.split(command)
    if words[0] == "-m":
        _, module, *args = words
        script, run = Path(*module.split(".")).with_suffix(".py"), ["-m", module]
    else:
        script, *args = words
        run = [str(REPO / script)]
    assert (REPO / script).is_file(), f"{script}: no such script"
    usage = subprocess.run([sys.executable, *run, "--help"], capture_output=True, text=True,
                           timeout=300, cwd=REPO, check=True).stdout
    assert all(option in usage for option in args if option.startswith("--")), f"{command}: {usage}"


def test_the_readme_stays_short():
    assert len(README.read_text(encoding="utf-8").splitlines()) <= 300


def test_no_library_module_grows_past_500_lines():
    long = {str(p.relative_to(REPO)): n for p in (REPO / "taggraph").rglob("*.py")
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > 500}
    assert not long, f"split these by concern: {long}"


def test_at_most_8_loose_modules_at_the_top_of_the_package():
    """The rest lives in rooms named by the paper's concepts and the plug-in points (docs/architecture.md)."""
    loose = sorted(p.name for p in (REPO / "taggraph").glob("*.py") if p.name != "__init__.py")
    assert len(loose) <= 8, loose


@pytest.mark.parametrize("page", [README, *sorted((REPO / "docs").glob("*.md"))], ids=lambda p: p.name)
def test_no_page_cites_the_issue_tracker(page):
    assert not re.findall(r"\bissues? #?\d+", page.read_text(encoding="utf-8"), re.I)


def test_the_cli_reference_is_what_its_generator_writes():
    spec = importlib.util.spec_from_file_location("cli_docs", REPO / "tools" / "cli_docs.py")
    cli_docs = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(cli_docs)
    assert cli_docs.CLI_DOC.read_text(encoding="utf-8") == cli_docs.cli_reference(), \
        "docs/cli.md is stale: run python tools/cli_docs.py"


def test_benchmarks_readme_lists_every_script():
    listing = (REPO / "benchmarks" / "README.md").read_text(encoding="utf-8")
    scripts = [p.relative_to(REPO / "benchmarks").as_posix() for p in (REPO / "benchmarks").rglob("*.py")
               if p.name != "__init__.py"]
    unlisted = [s for s in scripts if f"`{s}`" not in listing]
    assert scripts and not unlisted, f"benchmarks/README.md: add a row for {unlisted} (what it reproduces, current or history)"


def test_the_readme_demo_table_is_what_bench_prints(tmp_path):
    block = re.search(r"^```\n( +method  n .*?)\n\nrun folder: runs/demo\n```", README.read_text(encoding="utf-8"),
                      re.S | re.M)
    assert block, "the README's `make demo` output block is gone"
    result = CliRunner().invoke(app, ["bench", "--miss-pages", "0", "--out", str(tmp_path / "demo")])
    assert result.exit_code == 0, result.output
    printed = result.stdout.splitlines()
    shown = [line.removesuffix(" ...") for line in block.group(1).splitlines()]
    assert len(shown) == len(printed) - 2  # bench's rows, then a blank line and the run folder line
    for readme_line, bench_line in zip(shown, printed):
        assert bench_line.startswith(readme_line), f"README: {readme_line!r}\nbench:  {bench_line!r}"


def test_bench_data_help_sends_your_own_data_to_the_page_that_describes_its_format():
    """It said 'see the README', which does not describe turns.jsonl and questions.jsonl."""
    from taggraph.cli.app import DATA_HELP

    page = re.search(r"your own data, see (\S+?);", DATA_HELP).group(1)
    assert "turns.jsonl" in (REPO / page).read_text(encoding="utf-8")


def test_the_results_pages_give_the_readme_s_current_fusion_figure():
    """docs/results.md gave Fusion 0.968 out of fold on LongMemEval-S dev (an earlier version) where the README gives
    0.960: it gives the README's figure as the current one and says what 0.968 was."""
    fusion = next(row for row in results_table() if row.startswith("| **TagGraph-Fusion**"))
    current = fusion.split(" | ")[5].split(" / ")[0]
    results = (REPO / "docs" / "results.md").read_text(encoding="utf-8")
    row = next(line for line in results.splitlines() if line.startswith("| **TagGraph-Fusion**"))
    assert f"**{current} out of fold**" in row and "current" in row
    assert all("earlier version" in line for line in results.splitlines() if re.search(r"\b0\.968(?!\d)", line))


def test_the_readme_gives_the_notebooks_default_question_limit(monkeypatch):
    """The notebooks run fewer demo questions than the report, so their figures differ: the README says how many."""
    from taggraph.datasets import load_dataset
    from taggraph.views import notebook_settings

    monkeypatch.delenv("TAGGRAPH_NOTEBOOK_LIMIT", raising=False)
    monkeypatch.delenv("TAGGRAPH_NOTEBOOK_DATA", raising=False)
    data, limit, _ = notebook_settings()
    cases = load_dataset(data)
    judged = sum(not c.is_abstention for c in cases[:limit])
    assert (f"first {limit} of the bundled demo's {len(cases)} questions ({judged} of them judged"
            in " ".join(README.read_text(encoding="utf-8").split()))
    assert "seven notebooks there were" not in (REPO / "docs" / "notebooks.md").read_text(encoding="utf-8")


def test_the_views_page_reads_in_short_paragraphs_under_headings():
    """docs/views.md was one paragraph of 60 lines."""
    text = without_fences((REPO / "docs" / "views.md").read_text(encoding="utf-8"))
    paragraphs = [p for p in re.split(r"\n\s*\n", text) if p.strip()]
    assert max(len(p.splitlines()) for p in paragraphs) <= 12
    assert len(re.findall(r"^##+ ", text, re.M)) >= 6


def test_the_graph_view_screenshot_is_a_demo_miss_at_1280_px():
    """docs/graph_view.png showed the old header on demo_q03, which no default method misses."""
    import struct

    png = (REPO / "docs" / "graph_view.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and struct.unpack(">I", png[16:20])[0] == 1280
    alt = re.search(r"!\[([^\]]*)\]\(graph_view\.png\)", (REPO / "docs" / "views.md").read_text(encoding="utf-8"))
    assert alt and "demo_q12, a demo miss" in alt.group(1)
