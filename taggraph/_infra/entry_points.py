"""Installed plug-ins (entry points): each loaded on its own, so one that fails is confined to itself and
its failure is one line naming its package, version and entry point."""

from __future__ import annotations

from importlib.metadata import EntryPoint, entry_points
from typing import Any

from taggraph.errors import ConfigError


def installed(group: str) -> dict[str, EntryPoint]:
    """The entry points installed packages declare in `group`: name -> entry point."""
    return {ep.name: ep for ep in entry_points(group=group)}


def package(ep: EntryPoint) -> tuple[str | None, str | None]:
    """The distribution (name, version) that declares `ep`; (None, None) when it is not known."""
    dist = getattr(ep, "dist", None)
    return (dist.name, dist.version) if dist is not None else (None, None)


def describe(ep: EntryPoint) -> str:
    """'entry point 'name = module:attr' (taggraph.methods) of package mypkg 1.0'."""
    name, version = package(ep)
    return (f"entry point '{ep.name} = {ep.value}' ({ep.group}) of package "
            f"{f'{name} {version}' if name else '(unknown)'}")


def one_line(exc: BaseException, limit: int = 300) -> str:
    """`exc` as one short line: its type and its message with whitespace folded."""
    text = " ".join(f"{type(exc).__name__}: {exc}".split())
    return text if len(text) <= limit else text[:limit] + "..."


def load(ep: EntryPoint) -> Any:
    """What `ep` names, imported; ConfigError in one line naming the package and entry point when its module
    cannot be imported for any reason (a missing module, an exception or a SyntaxError at import)."""
    try:
        return ep.load()
    except (Exception, SystemExit) as exc:  # a plug-in's import may raise anything; it is confined here
        raise ConfigError(f"{describe(ep)} fails to load: {one_line(exc)}; fix or uninstall that package") from None
