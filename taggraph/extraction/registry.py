"""The one place an extractor given by name or as an object becomes an `Extractor`.

`get_extractor(spec, **options)` takes, in this order:

- an object with the `Extractor` interface (``name``, ``cache_key``, ``extract``): returned as it is;
- a built-in name: ``offline-v2`` (the default), ``offline``, ``none``, ``ollama:MODEL``,
  ``gguf:PATH``, ``openai:MODEL``;
- a name given to `register_extractor` in this process, or one an installed package declares in
  the entry-point group ``taggraph.extractors``; ``NAME:ARG`` passes ARG to that factory first,
  as ``ollama:MODEL`` does;
- ``package.module:Class``: a class (called with ``options``), a factory function, or an
  extractor object in that module.

`extractor_spec(extractor)` is the string that builds an extractor again (run.json records it);
`rebuild_extractor` builds the one a store recorded, or says in one line how to pass it.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable
from typing import Any

from taggraph import plugins
from taggraph.config import DEFAULT_EXTRACTOR
from taggraph.errors import ConfigError
from taggraph.extraction.base import Extraction, Extractor

GROUP = "taggraph.extractors"  # the entry-point group installed packages declare extractors in
FORMS = ("offline-v2, offline, none, ollama:MODEL, gguf:PATH, openai:MODEL, package.module:Class, "
         f"an extractor object, or a name from register_extractor or the entry-point group {GROUP!r}")
_DOTTED = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*")


class NoTagsExtractor:
    """Stores interactions without tags (a control: graph methods get no entry points)."""

    name = "none"
    cache_key = "none"

    def extract(self, user_text: str, assistant_text: str, existing_tags: list[str]) -> Extraction:
        return Extraction()


_PLAIN = {"offline-v2": ("taggraph.extraction.offline_v2", "OfflineV2Extractor"),
          "offline": ("taggraph.extraction.offline", "OfflineExtractor"),
          "none": (__name__, "NoTagsExtractor")}
_PREFIXED = {"ollama": ("taggraph.extraction.llm", "OllamaExtractor"),  # PREFIX:ARG -> Class(ARG, **options)
             "gguf": ("taggraph.extraction.llm", "GGUFExtractor"),
             "openai": ("taggraph.extraction.llm", "OpenAIExtractor")}
_REGISTERED: dict[str, Callable[..., Any]] = {}


def register_extractor(name: str, factory: Callable[..., Any]) -> None:
    """Make `name` (and ``name:ARG``) build an extractor with `factory` in this process, e.g.
    ``register_extractor("mine", MyExtractor)``; installed packages use the entry-point group instead."""
    if not isinstance(name, str) or not _DOTTED.fullmatch(name.replace("-", "_")) or name in _PLAIN \
            or name in _PREFIXED:
        raise ConfigError(f"cannot register extractor name {name!r}: use a new plain name (letters, digits, "
                          f"_ . -), not a built-in one")
    if not callable(factory):
        raise ConfigError(f"register_extractor({name!r}, ...) needs a class or function, got {type(factory).__name__}")
    _REGISTERED[name] = factory


def _plugins() -> dict[str, Callable[[], Any]]:
    """Loaders of the registered names and the installed entry points (registered names win)."""
    loaders: dict[str, Callable[[], Any]] = {name: (lambda e=ep: plugins.load(e))
                                             for name, ep in plugins.installed(GROUP).items()}
    loaders.update({name: (lambda f=factory: f) for name, factory in _REGISTERED.items()})
    return loaders


def _attribute(module_name: str, qualname: str, spec: str) -> Any:
    """`module_name`'s attribute `qualname` (dots walk into classes), or ConfigError saying what is missing."""
    if module_name == "__main__" or "<locals>" in qualname:
        raise ConfigError(f"extractor {spec!r} was defined in a script, notebook or function, so it cannot be "
                          f"built by name: move the class into an importable module, or pass the object")
    try:
        value = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        raise ConfigError(f"extractor {spec!r}: no module named {exc.name!r} (install its package or put its "
                          f"folder on PYTHONPATH); known forms: {FORMS}") from None
    except (Exception, SystemExit) as exc:  # the user's module raised while it was imported
        raise ConfigError(f"extractor {spec!r}: importing {module_name!r} fails: {plugins.one_line(exc)}") from None
    for part in qualname.split("."):
        if not hasattr(value, part):
            raise ConfigError(f"extractor {spec!r}: {module_name} has no {qualname!r}") from None
        value = getattr(value, part)
    return value


def _factory(spec: str) -> tuple[Any, tuple]:
    """What builds `spec` (a class, a function or an extractor object) and its positional arguments."""
    if spec in _PLAIN:
        return _attribute(*_PLAIN[spec], spec), ()
    prefix, colon, rest = spec.partition(":")
    if colon and prefix in _PREFIXED:
        if not rest:
            raise ConfigError(f"extractor {spec!r} names no model: write {prefix}:MODEL")
        return _attribute(*_PREFIXED[prefix], spec), (rest,)
    loaders = _plugins()
    try:
        if spec in loaders:
            return loaders[spec](), ()
        if colon and prefix in loaders:
            return loaders[prefix](), (rest,)
    except ConfigError as exc:  # its package fails to load: named in one line
        raise ConfigError(f"extractor {spec!r}: {exc}") from None
    if colon and _DOTTED.fullmatch(prefix) and _DOTTED.fullmatch(rest):
        return _attribute(prefix, rest, spec), ()
    known = f" (installed: {', '.join(sorted(loaders))})" if loaders else ""
    raise ConfigError(f"unknown extractor {spec!r}: use {FORMS}{known}")


def _checked(extractor: Any, source: str) -> Extractor:
    missing = [a for a in ("name", "cache_key", "extract") if not hasattr(extractor, a)]
    if missing or isinstance(extractor, type) or not callable(extractor.extract):
        raise ConfigError(f"{source} is a {type(extractor).__name__}, not an extractor: it lacks "
                          f"{', '.join(missing) or 'an extract method'} (see taggraph.Extractor)")
    return extractor


def get_extractor(spec: str | Extractor = DEFAULT_EXTRACTOR, **options: Any) -> Extractor:
    """The extractor `spec` names (module docstring), built with `options`; an object is returned as it is."""
    if not isinstance(spec, str):
        if options:
            raise ConfigError(f"options {sorted(options)} go with an extractor name, not with the object "
                              f"{type(spec).__name__}: build the object with them")
        return _checked(spec, f"extractor {type(spec).__name__}")
    factory, args = _factory(spec.strip())
    if isinstance(factory, type) or not hasattr(factory, "extract"):
        if not callable(factory):
            raise ConfigError(f"extractor {spec!r} is a {type(factory).__name__}, not a class, function or extractor")
        return _checked(factory(*args, **options), f"what extractor {spec!r} built")
    if args or options:
        raise ConfigError(f"extractor {spec!r} is an object: it takes no argument or options")
    return _checked(factory, f"extractor {spec!r}")


def extractor_spec(extractor: str | Extractor) -> str:
    """The string `get_extractor` builds `extractor` again from (without the options it was built with, as
    for a name): a string itself; an object's ``name`` when that name builds its class; else its
    ``module:Class``."""
    if isinstance(extractor, str):
        return extractor
    cls = type(extractor)
    try:
        factory, _ = _factory(str(getattr(extractor, "name", "")))
        if factory is cls or factory is extractor:
            return extractor.name
    except ConfigError:
        pass
    return f"{cls.__module__}:{cls.__qualname__}"


def rebuild_extractor(spec: str, source: str) -> Extractor:
    """`get_extractor(spec)` for a name recorded in `source` (a store folder); when that name builds
    nothing, a ConfigError saying how to pass the extractor instead."""
    try:
        return get_extractor(spec)
    except ConfigError as exc:
        raise ConfigError(f"{source}: recorded extractor {spec!r} cannot be built ({exc}); pass it, e.g. "
                          f"Memory.load(folder, extractor=MyExtractor()) or extractor='package.module:Class', "
                          f"or give the extractor a name that builds it (name = 'package.module:Class', "
                          f"register_extractor, or an entry point in {GROUP!r})") from None


def check_portable(extractor: str | Extractor) -> None:
    """ConfigError unless `extractor` can go to worker processes: a name always can; an object must pickle
    (with cloudpickle, as joblib's loky and Dask send it)."""
    if isinstance(extractor, str):
        return
    try:
        import cloudpickle  # what joblib >= 1.5 sends tasks with
    except ImportError:
        from joblib.externals import cloudpickle  # vendored in older joblib

    try:
        cloudpickle.dumps(extractor)
    except Exception as exc:  # pickling raises TypeError, PicklingError, AttributeError, ... by what it meets
        raise ConfigError(f"extractor {type(extractor).__name__} cannot be sent to worker processes ({exc}); "
                          f"pass it by name ({extractor_spec(extractor)!r}), or run with one worker") from None
