"""The `taggraph` app, its one error handler and the option parsers every command shares.

Error handling: the project's own errors (`taggraph.errors.TaggraphError`: bad input,
bad configuration, an unreachable server, a file that cannot be written) end the
command with one line on stderr and exit status 2; ``--debug`` shows their traceback.
Any other exception is a bug in taggraph and keeps its traceback.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import sys
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Optional

import typer

from taggraph._infra.config import DEMO_DATA
from taggraph.errors import ConfigError, TaggraphError

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="Tag-augmented graph retrieval over LLM agent memories: bench, experiments, views.")
_state = {"debug": False}

DEFAULT_DATA = DEMO_DATA


def _extractor_help() -> str:
    """--extractor's help: the built-in extractors, from the registry, and the other forms."""
    from taggraph.extractors.registry import EXTRACTORS
    return f"{' | '.join(sorted(EXTRACTORS.forms(installed=False)))} | package.module:Class | a name from the " \
           f"entry-point group {EXTRACTORS.group}"


def served_extractors() -> str:
    """The built-in extractors a server runs (their class says ``served``), as written: "ollama:, openai:"."""
    from taggraph.extractors.registry import EXTRACTORS
    return ", ".join(f"{n}:" for n in sorted(EXTRACTORS.names(installed=False))
                     if getattr(EXTRACTORS.get(n), "served", False))


def extractor_backend(spec: str):
    """The class (or factory, or object) extractor name `spec` builds with: what it can do is its attributes
    (``served``, ``reads_prompt``)."""
    from taggraph.extractors.registry import backend
    return backend(spec)


def embedder_help() -> str:
    """--embedder's help: the built-in embedders, from the registry, and where installed ones come from."""
    from taggraph.embedders.base import EMBEDDERS
    return f"{' | '.join(EMBEDDERS.forms(installed=False))} | a name from the entry-point group {EMBEDDERS.group}"


EXTRACTOR_HELP = _extractor_help()


@app.callback()
def main(debug: bool = typer.Option(False, "--debug", help="Show tracebacks instead of one-line errors.")) -> None:
    _state["debug"] = debug
    # `--methods mymod:MyMethod` and `--extractor mymod:MyTagger` import from the current folder, as
    # `python -m` and uvicorn's app specs do (a console script's path does not hold it); appended, so
    # nothing of the folder shadows an installed module
    if os.getcwd() not in sys.path:
        sys.path.append(os.getcwd())


def command(name: str | None = None, help_text: str | None = None) -> Callable:
    """Register a function as an app command whose TaggraphErrors become one line and exit 2, and whose warnings
    are lines too (`warnings_as_lines`); `help_text` goes under its options in `--help` (an epilog)."""
    def add_command(fn: Callable) -> Callable:
        @functools.wraps(fn)
        def run(*args, **kwargs):
            try:
                with warnings_as_lines():
                    return fn(*args, **kwargs)
            except TaggraphError as exc:
                if _state["debug"]:
                    raise
                typer.echo(f"error: {exc}", err=True)
                raise typer.Exit(2) from None
        app.command(name, epilog=help_text)(run)
        return fn
    return add_command


@contextlib.contextmanager
def warnings_as_lines() -> Iterator[None]:
    """Each warning raised inside (a run that lacks questions, a dataset question without gold) printed
    on leaving, as one line ``warning: ...`` on stderr, instead of Python's two-line format; on leaving by
    an error too, which they may explain."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")
        for hidden in (ResourceWarning, DeprecationWarning, PendingDeprecationWarning):  # as Python hides them:
            warnings.simplefilter("ignore", hidden)  # about objects and libraries, never about the user's run
        try:
            yield
        finally:
            for w in caught:
                typer.echo(f"warning: {w.message}", err=True)


def names(spec: str | None) -> list[str]:
    """'a, b,,c' -> ['a', 'b', 'c']."""
    return [s.strip() for s in (spec or "").split(",") if s.strip()]


def whole_numbers(spec: str, option: str) -> list[int]:
    """'0,3,8' -> [0, 3, 8]; ConfigError naming `option` for an entry that is not a whole number."""
    try:
        return [int(s) for s in names(spec)]
    except ValueError:
        raise ConfigError(f"{option} expects comma-separated whole numbers, got {spec!r}") from None


def methods_option(spec: Optional[str]) -> list[str]:
    """Comma-separated method names or package.module:Class specs (default: the paper's), resolved by
    the registry."""
    from taggraph.methods import DEFAULT_METHODS, check_methods
    if spec is not None and not names(spec):
        raise ConfigError(f"--methods names no method ({spec!r}); leave it out for the default ones")
    return check_methods(names(spec) or DEFAULT_METHODS)


def positive(value: Optional[int], option: str) -> Optional[int]:
    """`value` unless it is below 1: --limit 0 or -1 would silently mean 'everything'."""
    if value is not None and value < 1:
        raise ConfigError(f"{option} must be at least 1, got {value}")
    return value


def timeout_option(value: float) -> float:
    """`--timeout` in seconds, more than 0."""
    if not value > 0:
        raise ConfigError(f"--timeout must be more than 0 seconds, got {value}")
    return value


def checked_extractor(name: str, **options):
    """`get_extractor(name, **options)`; one with a server (Ollama) is checked up front, so a closed port
    or a missing model ends the command in one line before any case runs."""
    from taggraph.extractors import get_extractor
    extractor = get_extractor(name, **options)
    if hasattr(extractor, "check"):
        extractor.check()
    return extractor


def extractor_names(spec: str, **options) -> list[str]:
    """Comma-separated extractor names, each server checked up front (`checked_extractor`); the runner
    builds its own extractors per worker process, so these are closed again."""
    out = names(spec)
    for name in out:
        close = getattr(checked_extractor(name, **options), "close", None)
        if close is not None:
            close()
    return out


def parse_value(text: str):
    """A command-line value as bool/None (true, false, none), int, float, a JSON object or list (it starts
    with { or [: TagGraph-Fusion's weights='{"note_stem": 1.0}'), or string."""
    literal = {"true": True, "false": False, "none": None}
    if text.lower() in literal:
        return literal[text.lower()]
    if text.lstrip().startswith(("{", "[")):
        try:
            value = json.loads(text)
        except json.JSONDecodeError as err:
            raise ConfigError(f"value {text!r} is not valid JSON: {err.msg} at character {err.pos}") from None
        except RecursionError:
            value = None
        if value is None or _nesting(value) > MAX_NESTING:
            raise ConfigError(f"value {text[:40]!r}... is JSON nested more than {MAX_NESTING} levels deep") from None
        return value
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    return text


MAX_NESTING = 32  # a parameter value is a few levels deep; deeper would overflow the recursion of later checks


def _nesting(value) -> int:
    """How deep lists and dicts nest in `value`, counted without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (list, dict)):
            deepest = max(deepest, depth)
            stack.extend((v, depth + 1) for v in (item.values() if isinstance(item, dict) else item))
    return deepest


def key_values(pairs: list[str], option: str = "--option") -> dict:
    """`--option num_ctx=8192` pairs as a dict."""
    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise ConfigError(f"{option} expects KEY=VALUE, got {pair!r}")
        out[key] = parse_value(value)
    return out


def method_params(pairs: list[str], embedder: str | None = None, device: str | None = None,
                  running: list[str] | None = None) -> dict[str, dict]:
    """`--param AdaptiveGraph.iterations=0` pairs as {method: {key: value}}; `embedder` and `device`
    go to the parameters declared `EMBEDDER` and `DEVICE` of every method that embeds
    (`taggraph.methods.embeds`) unless a --param names that method's own or the method fixes it
    (TagGraph-Fusion-e5's embedder is what it is). Unknown methods, parameters,
    out-of-range values and (with `running`, the methods the command runs) a --param for a method not run
    fail here, before any case runs."""
    from taggraph.methods import DEVICE, EMBEDDER, check_methods, check_params, method
    from taggraph.embedders.base import get_embedder, resolve_device
    from taggraph.methods.registry import embedding_methods
    dense = embedding_methods() if embedder or device else []
    out: dict[str, dict] = {}
    if embedder:
        get_embedder(embedder)  # an unknown name fails here, before any case runs
    if device:
        resolve_device(device)  # an unknown device, or cuda without one, fails here too
    for m in dense:  # to the parameters each method declares EMBEDDER and DEVICE, whatever their names
        for role, value in ((EMBEDDER, embedder), (DEVICE, device)):
            if value and (field_name := method(m).role_field(role)) and field_name not in method(m).defaults:
                out.setdefault(m, {})[field_name] = value
    for pair in pairs:
        target, _, value = pair.partition("=")
        named, dot, key = target.partition(".")
        if not dot or not key or "=" not in pair:
            raise ConfigError(f"--param expects METHOD.KEY=VALUE, got {pair!r}")
        name = check_methods([named])[0]
        if running is not None and name not in running:
            raise ConfigError(f"--param {target}: {name} is not among the methods run ({', '.join(running)})")
        out.setdefault(name, {})[key] = parse_value(value)
    for option, value, role in (("--embedder", embedder, EMBEDDER), ("--device", device, DEVICE)):
        if value and running is not None and not any(method(m).role_field(role) in out.get(m, {}) for m in running):
            warnings.warn(f"{option} {value} reaches none of the methods run ({', '.join(running)}): none of them "
                          "embeds, or each fixes its own embedder")
    for name, params in out.items():
        check_params(name, params)
    return out


def format_help() -> str:
    """--format's help: the registered dataset formats, installed ones included."""
    from taggraph.datasets import format_names
    from taggraph.datasets.registry import broken_formats
    broken = f" Installed but not used: {'; '.join(broken_formats().values())}." if broken_formats() else ""
    return f"{' | '.join(format_names())} (default: detect from the content).{broken}"


def format_option():
    """--format, as every command reading --data takes it: a registered format's name (one chosen by name only,
    such as generic-past, included), passed to `load_data`; None detects the format from the content."""
    return typer.Option(None, "--format", help=format_help())


def data_help(default: str = "the bundled demo") -> str:
    """--data's help: what each registered dataset format reads (installed ones included), from the registry."""
    from taggraph.datasets import formats
    described = "; ".join(f"{f.name}: {f.expects}" for f in formats())
    return f"Dataset file or folder, its format detected from the content ({described}); default: {default}."


DATA_HELP = data_help()


def load_data(data: Path, fmt: str | None = None, limit: int | None = None, per_type: int | None = None):
    """`--data` loaded by the one loader (`taggraph.datasets.load`, `tg.load`), each data warning printed
    as one line."""
    from taggraph.datasets import load
    with warnings_as_lines():
        return load(data, fmt=fmt, limit=positive(limit, "--limit"), per_type=positive(per_type, "--per-type"))
