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

REPO = Path(__file__).resolve().parents[1]
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


def results_table() -> list[str]:
    return table_after(README.read_text(encoding="utf-8"), "## Results")


def test_the_readme_results_table_is_the_table_opening_benchmarks():
    benchmarks = table_after((REPO / "BENCHMARKS.md").read_text(encoding="utf-8"), "# Benchmarks")
    assert results_table() == benchmarks


def table_commands() -> list[str]:
    """Every command in the last column of the README's results table."""
    rows = results_table()[2:]
    return sorted({command for row in rows for command in re.findall(r"`([^`]+)`", row.rstrip(" |").rsplit("|", 1)[1])})


def test_the_results_table_has_a_command_on_every_row():
    rows = results_table()[2:]
    assert rows and all(re.search(r"`(python benchmarks/|taggraph )", row.rstrip(" |").rsplit("|", 1)[1]) for row in rows)


@pytest.mark.parametrize("command", [c for c in table_commands() if c.startswith("taggraph ")])
def test_each_taggraph_command_of_the_results_table_parses(command):
    _, name, *args = shlex.split(command)
    subcommand = typer.main.get_command(app).commands[name]
    params = subcommand.make_context(name, args).params
    unknown = set((params.get("methods") or "").split(",")) - {""} - set(tg.method_names())
    assert not unknown, f"{command}: no method {sorted(unknown)}"


@pytest.mark.parametrize("command", [c for c in table_commands() if c.startswith("python ")])
def test_each_script_of_the_results_table_exists_and_takes_its_options(command):
    _, script, *args = shlex.split(command)
    assert (REPO / script).is_file(), f"{script}: no such script"
    usage = subprocess.run([sys.executable, str(REPO / script), "--help"], capture_output=True, text=True,
                           timeout=300, cwd=REPO, check=True).stdout
    assert all(option in usage for option in args if option.startswith("--")), f"{command}: {usage}"


def test_the_readme_stays_short():
    assert len(README.read_text(encoding="utf-8").splitlines()) <= 300


def test_no_library_module_grows_past_600_lines():
    long = {str(p.relative_to(REPO)): n for p in (REPO / "taggraph").rglob("*.py")
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > 600}
    assert not long, f"split these by concern: {long}"


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
    scripts = [p.relative_to(REPO / "benchmarks").as_posix() for p in (REPO / "benchmarks").rglob("*.py")]
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
