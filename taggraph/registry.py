"""Names of every kind resolved one way: a `Registry` each for methods, extractors, dataset formats, embedders.

A registry maps a name to what builds the thing named (a class, a function or an object), from three sources,
looked up in this order:

- run-time registrations (`register(kind, name, obj)`, the one front-end for every kind): a notebook's or a
  script's own. They travel
  to worker processes: `with_registered(fn)` runs `fn` there knowing every registry's registrations (the
  experiment runner wraps its tasks in it);
- built-ins: one literal table per kind, name -> ``"module:attr"`` or ``("module:attr", {options})`` (the
  registry's `builtins`, written in the kind's registry module: `taggraph.methods.registry.BUILTIN_METHODS`, ...).
  A module is imported when one of its names is first used, not before (``get_extractor("none")`` does not
  import the LLM clients). A registry's `declare` hook turns a table entry (name, ``module:attr``, the literal
  options) into the names it keeps (methods: a `Method` each, and its ablations). Listed in table order. Adding
  a built-in is one module and one line in its table;
- installed packages: entry points in the registry's `group` (`KINDS`), read once per process, on first use.

One policy for entry points, whatever the kind: a built-in always wins. An entry point that names a built-in
is ignored, and the clash is reported in `problems()` in one line naming its package. A plug-in that fails to
load (or that the registry's `adopt` refuses) is confined to itself: listing and every other name work, and
its one-line reason is in `problems()` and raised where it is named.

A name may carry an argument, ``ollama:MODEL``: a built-in declared with ``arg="MODEL"`` needs it, registered
and installed names take it when given (`Registry.resolve`). `load_attr` imports what a ``module:attr``
string names, failing in one line.
"""

from __future__ import annotations

import importlib
import re
import sys
import types
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from importlib.metadata import EntryPoint
from typing import Any

from taggraph._infra import entry_points
from taggraph.errors import ConfigError

DOTTED = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*")
_FIX = "give package.module:Class on the Python path (the current folder counts)"
_ALL: dict[tuple[str, str], Registry] = {}  # (module defining it, kind) -> registry: what `restore` fills


@dataclass(frozen=True)
class Kind:
    """A kind of name: what its messages call it, the entry-point group installed packages declare it in, and the
    module that defines its registry (imported by `register`)."""

    label: str
    group: str
    home: str


# Every kind of name, one line each: what `register(kind, ...)` takes, and the one place each entry-point group
# is spelt.
KINDS = {
    "method": Kind("method", "taggraph.methods", "taggraph.methods.registry"),
    "format": Kind("dataset format", "taggraph.datasets", "taggraph.datasets.registry"),
    "extractor": Kind("extractor", "taggraph.extractors", "taggraph.extractors.registry"),
    "embedder": Kind("embedder", "taggraph.embedders", "taggraph.embedders.base"),
}
_BY_KIND: dict[str, Registry] = {}  # kind -> its registry, filled as each is defined


def register(kind: str, name: str, obj: Any, *, replace: bool = False) -> Any:
    """Register `obj` as `name` of `kind` (a key of `KINDS`: "method", "format", "extractor", "embedder") in this
    process; the kind's registry checks it (`admit`), and a name taken by something else is refused unless
    `replace`. Returns `obj`."""
    if kind not in KINDS:
        raise ConfigError(f"cannot register a {kind!r}: the kinds are {', '.join(KINDS)}")
    importlib.import_module(KINDS[kind].home)  # defines the kind's registry
    _BY_KIND[kind].add(name, obj, replace=replace)
    return obj


def same_definition(old: Any, new: Any) -> bool:
    """Whether `new` is `old` itself or `old` defined again (a notebook cell run twice: a class or function of the
    same module and name)."""
    defined = (type, types.FunctionType)
    return old is new or isinstance(old, defined) and isinstance(new, defined) and \
        (old.__module__, old.__qualname__) == (new.__module__, new.__qualname__)


def load_attr(spec: str, what: str) -> Any:
    """What ``package.module:attr`` names (dots in attr walk into classes); a one-line ConfigError starting
    with `what` (e.g. "method 'X'") when the spec is malformed, its module cannot be imported or raises,
    or the attribute is missing."""
    module, _, attr = spec.partition(":")
    if not (DOTTED.fullmatch(module) and DOTTED.fullmatch(attr)):
        raise ConfigError(f"{what}: {spec!r} is not package.module:Class; {_FIX}")
    try:
        found = importlib.import_module(module)
    except ModuleNotFoundError as exc:
        raise ConfigError(f"{what}: cannot import {spec!r}: no module named {exc.name!r} (install its package "
                          f"or put its folder on PYTHONPATH); {_FIX}") from None
    except (Exception, SystemExit) as exc:  # the user's module raised while it was imported
        raise ConfigError(f"{what}: importing {module!r} fails: {entry_points.one_line(exc)}") from None
    for part in attr.split("."):
        if not hasattr(found, part):
            raise ConfigError(f"{what}: cannot import {spec!r}: {module} has no {attr!r}")
        found = getattr(found, part)
    return found


class Registry:
    """Names of one `kind` (a key of `KINDS`): run-time registrations, the built-ins of the table `builtins`, and
    the entry points of the kind's `group`. `adopt(name, loaded)` checks what an entry point names and
    returns what the registry keeps for it (ConfigError when it is not usable); `admit(name, obj)` does the same
    for a run-time registration (default: `adopt`), and `same(old, new)` says whether a registration repeats
    what a name already holds (default: the same object, or a class defined again). `declare(name, spec, options)`:
    what the registry keeps of a built-in, {name: value} (the names it declares); without it a built-in is
    what its ``module:attr`` names, imported on first use. The option ``arg="ARG"`` says the name needs an
    argument, written ``NAME:ARG``."""

    def __init__(self, kind: str, *, builtins: Mapping[str, str | tuple[str, dict[str, Any]]] = {},
                 adopt: Callable[[str, Any], Any] | None = None, admit: Callable[[str, Any], Any] | None = None,
                 same: Callable[[Any, Any], bool] = same_definition,
                 declare: Callable[[str, str, dict[str, Any]], dict[str, Any]] | None = None) -> None:
        self.kind, self.group = KINDS[kind].label, KINDS[kind].group
        self._table = dict(builtins)
        self._adopt = adopt or (lambda name, loaded: loaded)
        self._admit = admit or self._adopt
        self._same = same
        self._declare = declare
        self._builtin: dict[str, Any] = {}
        self._args: dict[str, str] = {}  # built-in name -> the argument it needs, written NAME:ARG
        self._registered: dict[str, Any] = {}
        self._table_read = False
        self._installed: _Installed | None = None
        self._home = sys._getframe(1).f_globals.get("__name__", "__main__")  # as collections.namedtuple finds it
        _ALL[(self._home, self.kind)] = self
        _BY_KIND[kind] = self

    def add(self, name: str, obj: Any, *, replace: bool = False) -> Any:
        """Keep what `admit` makes of `obj` as `name` in this process (what `register` calls); a name taken by
        something else is refused unless `replace`: the one place that check is made. Returns what is kept."""
        value = self._admit(name, obj)
        old = self.get(name) if self.declared(name) else None
        if old is not None and not replace and not self._same(old, value):
            raise ConfigError(f"{self.kind} name {name!r} is taken by {_shown(old)}; pick another name or pass "
                              f"replace=True")
        self._registered[name] = value
        return value

    def is_builtin(self, name: str) -> bool:
        self._read_table()
        return name in self._builtin

    def declared(self, name: str) -> bool:
        """Whether `name` is registered in this process or built in (installed names aside)."""
        return name in self._registered or self.is_builtin(name)

    def get(self, name: str) -> Any:
        """What `name` names: registered, built in or installed; None when it is none of them. An installed
        plug-in that fails raises its one-line ConfigError."""
        if name in self._registered:
            return self._registered[name]
        if self.is_builtin(name):
            if isinstance(self._builtin[name], _Declared):  # its module imported now, on first use
                self._builtin[name] = load_attr(self._builtin[name].spec, f"built-in {self.kind} {name!r}")
            return self._builtin[name]
        return self._plugin(name)

    def resolve(self, spec: str) -> tuple[Any, tuple[str, ...]] | None:
        """What `spec` names and the argument it carries: ``NAME`` -> (value, ()), ``NAME:ARG`` ->
        (value, (ARG,)); None when no name of the registry matches."""
        self._read_table()
        if spec not in self._args and (found := self.get(spec)) is not None:
            return found, ()
        name, colon, arg = spec.partition(":")
        if not colon or (found := self.get(name)) is None:
            return None
        if name in self._builtin and name not in self._registered:
            if name not in self._args:
                return None  # a built-in that takes no argument
            if not arg:
                raise ConfigError(f"{self.kind} {spec!r} names no {self._args[name].lower()}: write "
                                  f"{name}:{self._args[name]}")
        return found, (arg,)

    def names(self, installed: bool = True) -> list[str]:
        """Every name known now: built in (in table order), registered, then installed (unless not)."""
        self._read_table()
        names = [*self._builtin, *(n for n in self._registered if n not in self._builtin)]
        return names + [n for n in self._state().entry_points if n not in names] if installed else names

    def forms(self, installed: bool = True) -> list[str]:
        """`names` as written, ``ollama:MODEL`` for a built-in that needs its argument."""
        return [f"{n}:{self._args[n]}" if n in self._args else n for n in self.names(installed)]

    def __iter__(self) -> Iterator[str]:
        return iter(self.forms())

    def values(self) -> list[Any]:
        """What each usable name names, in `names` order (every plug-in loaded: one that fails is left out,
        its reason in `problems`)."""
        out = []
        for name in self.names():
            try:
                out.append(self.get(name))
            except ConfigError:
                continue
        return out

    def entry_point(self, name: str) -> EntryPoint | None:
        """The entry point that installs `name`, if one does and no registration or built-in shadows it."""
        return None if name in self._registered or self.is_builtin(name) else self._state().entry_points.get(name)

    def problems(self) -> dict[str, str]:
        """The installed names that are not usable: name -> why, in one line (a plug-in that failed to load,
        one that names a built-in)."""
        return dict(self._state().problems)

    def registered_here(self) -> dict[str, Any]:
        """This process's run-time registrations (what a worker process is told: `restore`)."""
        return dict(self._registered)

    def restore(self, registered: dict[str, Any]) -> None:
        """Register `registered` (another process's `registered_here`) in this process."""
        self._registered.update(registered)

    def _read_table(self) -> None:
        """What the table `builtins` declares, read once (`declare` applied to each entry)."""
        if self._table_read:
            return
        self._table_read = True
        for name, entry in self._table.items():
            spec, options = (entry, {}) if isinstance(entry, str) else (entry[0], dict(entry[1]))
            if arg := options.pop("arg", None):
                self._args[name] = arg
            if self._declare is not None:
                entries = self._declare(name, spec, options)
            elif options:
                raise ConfigError(f"built-in {self.kind} {name!r}: a {self.kind} takes no options ({', '.join(options)})")
            else:
                entries = {name: _Declared(spec)}
            for key, value in entries.items():
                if key in self._builtin:
                    raise ConfigError(f"built-in {self.kind} {key!r} is declared twice")
                self._builtin[key] = value

    def _state(self) -> _Installed:
        """The entry points of `group`, read once per process; those naming a built-in are set aside."""
        if self._installed is None:
            self._read_table()
            state = _Installed()
            for name, ep in entry_points.installed(self.group).items():
                if name in self._builtin:
                    state.problems[name] = (f"{self.kind} {name!r}: {entry_points.describe(ep)} names a built-in "
                                            f"{self.kind}: ignored, the built-in is used; rename it in that package")
                else:
                    state.entry_points[name] = ep
            self._installed = state
        return self._installed

    def _plugin(self, name: str) -> Any:
        """The installed plug-in `name`, loaded and adopted once; None when no entry point names it."""
        state = self._state()
        ep = state.entry_points.get(name)
        if ep is None:
            return None
        if name not in state.loaded and name not in state.problems:
            try:
                state.loaded[name] = self._adopt(name, entry_points.load(ep))
            except ConfigError as exc:  # this plug-in only: the registry and the other names still work
                state.problems[name] = self._one_line(name, ep, exc)
        if name in state.problems:
            raise ConfigError(state.problems[name])
        return state.loaded[name]

    def _one_line(self, name: str, ep: EntryPoint, exc: ConfigError) -> str:
        """`exc` starting with the kind and name, ending with the entry point and package when it lacks them."""
        text, head = str(exc), f"{self.kind} {name!r}"
        text = text if text.startswith(head) else f"{head}: {text}"
        return text if "entry point '" in text else f"{text} ({entry_points.describe(ep)})"


def _shown(value: Any) -> str:
    """What holds a taken name, in a message: a class or function by its module and name."""
    target = getattr(value, "target", value)  # a method's class (or its module:Class)
    return f"{target.__module__}.{target.__qualname__}" if hasattr(target, "__qualname__") else repr(target)


class _Declared:
    """A built-in of a table: ``module:attr``, imported when its name is first used."""

    def __init__(self, spec: str) -> None:
        self.spec = spec


class _Installed:
    """A registry's entry points as read once: usable ones by name, what each loaded to, and the problems."""

    def __init__(self) -> None:
        self.entry_points: dict[str, EntryPoint] = {}
        self.loaded: dict[str, Any] = {}
        self.problems: dict[str, str] = {}


def registered_here() -> dict[tuple[str, str], dict[str, Any]]:
    """Every registry's run-time registrations in this process, to hand to worker processes (`restore`)."""
    return {key: registry.registered_here() for key, registry in _ALL.items() if registry._registered}


def restore(registered: dict[tuple[str, str], dict[str, Any]]) -> None:
    """Register `registered` (from another process's `registered_here`) in this process's registries."""
    for (module, kind), entries in registered.items():
        importlib.import_module(module)  # defines the registry
        _ALL[(module, kind)].restore(entries)


def with_registered(fn: Callable) -> Callable:
    """`fn` that, wherever it runs (a joblib worker, a Dask worker), first knows this process's registrations
    of every kind."""
    return _WithRegistered(fn, registered_here())


class _WithRegistered:
    """A picklable wrapper (joblib and Dask pickle it with cloudpickle; a class defined in a notebook travels
    by value)."""

    def __init__(self, fn: Callable, registered: dict[tuple[str, str], dict[str, Any]]) -> None:
        self.fn, self.registered = fn, registered

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        restore(self.registered)
        return self.fn(*args, **kwargs)
