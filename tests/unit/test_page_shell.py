"""The page shell: autoescape on, its CSS and JS read as package data, named in pyproject's package data."""
import tomllib
from pathlib import Path

from taggraph.viz.page_shell import shell_page, static

ROOT = Path(__file__).resolve().parents[2]


def test_the_shell_escapes_the_title_and_keeps_the_built_body():
    page = shell_page("<script>alert(1)</script>", "<h1>kept</h1>", css="b{}", script="var x = 1 < 2;")
    assert "<title>&lt;script&gt;alert(1)&lt;/script&gt;</title>" in page
    assert "<body><h1>kept</h1><script>var x = 1 < 2;</script></body>" in page and "<style>b{}</style>" in page


def test_every_static_file_is_read_and_shipped_as_package_data():
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["taggraph"]
    assert {"viz/static/*", "viz/templates/*"} <= set(data)
    for path in (ROOT / "taggraph/viz/static").iterdir():
        assert static(path.name) == path.read_text(encoding="utf-8")


def test_no_page_prologue_is_written_in_python():
    assert not [p for p in (ROOT / "taggraph").rglob("*.py") if "<!doctype" in p.read_text(encoding="utf-8").lower()]
