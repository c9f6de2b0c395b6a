"""The pages' shared shell (templates/shell.html, a jinja2 template with autoescape on), their CSS and JS (static/,
package data read with importlib.resources) and the HTML pieces more than one page draws (`html_table`,
`few_questions`)."""
from __future__ import annotations

from functools import cache
from importlib.resources import files

import jinja2
import pandas as pd
from markupsafe import Markup

_ENV = jinja2.Environment(loader=jinja2.PackageLoader("taggraph.viz", "templates"), autoescape=True,
                          keep_trailing_newline=True)


@cache
def static(name: str) -> Markup:
    """The package's static/`name` (CSS or JS), trusted as is."""
    return Markup((files("taggraph.viz") / "static" / name).read_text(encoding="utf-8"))


def template(name: str) -> jinja2.Template:
    """The package's templates/`name`."""
    return _ENV.get_template(name)


def shell_page(title: str, body: str, css: str = "", script: str = "") -> str:
    """A whole page: `title` (escaped), `css` and `script` inlined, `body` (HTML the page built, escaping its data)."""
    return template("shell.html").render(title=title, body=Markup(body), css=Markup(css), script=Markup(script))


def html_table(df: pd.DataFrame, cls: str = "", decimals: int | None = None) -> str:
    """`df` as an HTML table (text escaped); every float with `decimals` places when given (0 as 0.000)."""
    formats = {"float_format": f"{{:.{decimals}f}}".format} if decimals is not None else {}
    table = df.to_html(index=False, escape=True, na_rep="–", classes=cls or None, border=0, **formats)
    return f"<div class='wide'>{table}</div>"


def few_questions(summary: pd.DataFrame, below: int = 30) -> str:
    """A caveat when the means rest on fewer than `below` questions (our threshold)."""
    n = int(summary["n"].min()) if len(summary) else 0
    if n >= below:
        return ""
    return (f"<p class='caveat'>Only n = {n} judged questions: one question moves a method's MRR by up to "
            f"{1 / max(n, 1):.2f}, so differences between methods here are anecdotes, not findings.</p>")
