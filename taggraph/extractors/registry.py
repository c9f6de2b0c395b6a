"""The one place an extractor given by name or as an object becomes an `Extractor`.

`get_extractor(spec, **options)` takes, in this order:

- an object with the `Extractor` interface (``name``, ``cache_key``, ``extract``): returned as it is;
- a name of `EXTRACTORS` (a `taggraph.registry.Registry`): a built-in (``offline-v2``, the default,
  ``offline``, ``none``, ``ollama:MODEL``, ``gguf:PATH``, ``openai:MODEL``; each one module of this package
  and one line of `BUILTIN_EXTRACTORS`), a name given to `register_extractor` in this
  process, or one an installed package declares in the entry-point group ``taggraph.extractors`` (a
  built-in name wins over it); ``NAME:ARG`` passes ARG to that factory first, as ``ollama:MODEL`` does;
- ``package.module:Class``: a class (called with ``options``), a factory function, or an
  extractor object in that module.

What a backend can do is said by its class, not by its name: ``served = True`` (a server generates:
it takes ``timeout`` and ``options``, and has ``check`` and ``close``), ``reads_prompt = True`` (it
takes ``prompt_path``); `backend(spec)` is the class or factory a name builds with.

`extractor_spec(extractor)` is the string that builds an extractor again (run.json records it);
`rebuild_extractor` builds the one a store recorded, or says in one line how to pass it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from taggraph._infra.config import DEFAULT_EXTRACTOR
from taggraph.errors import ConfigError
from taggraph.extractors.base import Extractor
from taggraph.registry import DOTTED, Registry, load_attr, register
# The built-in extractors, name -> the class (``arg``: the argument the name needs, written NAME:ARG).
BUILTIN_EXTRACTORS = {
    "offline-v2": "taggraph.extractors.offline_v2:OfflineV2Extractor",
    "offline": "taggraph.extractors.offline:OfflineExtractor",
    "none": "taggraph.extractors.no_tags:NoTagsExtractor",
    "ollama": ("taggraph.extractors.ollama:OllamaExtractor", {"arg": "MODEL"}),
    "openai": ("taggraph.extractors.openai:OpenAIExtractor", {"arg": "MODEL"}),
    "gguf": ("taggraph.extractors.gguf:GGUFExtractor", {"arg": "PATH"}),
}


def _admit(name: str, factory: Any) -> Callable[..., Any]:
    """`factory` if `name` is a new plain name and `factory` a class or function (what `EXTRACTORS` keeps)."""
    if not isinstance(name, str) or not DOTTED.fullmatch(name.replace("-", "_")) or EXTRACTORS.is_builtin(name):
        raise ConfigError(f"cannot register extractor name {name!r}: use a new plain name (letters, digits, "
                          f"_ . -), not a built-in one")
    if not callable(factory):
        raise ConfigError(f"register_extractor({name!r}, ...) needs a class or function, got {type(factory).__name__}")
    return factory


EXTRACTORS = Registry("extractor", builtins=BUILTIN_EXTRACTORS, admit=_admit)


def forms() -> str:
    """Every way to name an extractor, for messages and help: the built-ins, then the other forms."""
    return (f"{', '.join(sorted(EXTRACTORS.forms(installed=False)))}, package.module:Class, an extractor object, "
            f"or a name from register_extractor or the entry-point group {EXTRACTORS.group!r}")


def register_extractor(name: str, factory: Callable[..., Any], *, replace: bool = False) -> None:
    """Make `name` (and ``name:ARG``) build an extractor with `factory` in this process, e.g.
    ``register_extractor("mine", MyExtractor)`` (``register("extractor", name, factory)``); a name taken by
    another factory is refused unless `replace`. Installed packages use the entry-point group instead."""
    register("extractor", name, factory, replace=replace)


def _factory(spec: str) -> tuple[Any, tuple]:
    """What builds `spec` (a class, a function or an extractor object) and its positional arguments."""
    found = EXTRACTORS.resolve(spec)  # an installed package that fails to load: its one line
    if found is not None:
        return found
    module, colon, attr = spec.partition(":")
    if colon and DOTTED.fullmatch(module) and DOTTED.fullmatch(attr):
        if module == "__main__":
            raise ConfigError(f"extractor {spec!r} was defined in a script, notebook or function, so it cannot be "
                              f"built by name: move the class into an importable module, or pass the object")
        return load_attr(spec, f"extractor {spec!r}"), ()
    others = sorted(n for n in EXTRACTORS.names() if not EXTRACTORS.is_builtin(n))
    known = f" (installed: {', '.join(others)})" if others else ""
    raise ConfigError(f"unknown extractor {spec!r}: use {forms()}{known}")


def backend(spec: str) -> Any:
    """The class, function or object extractor name `spec` builds with (its capabilities are its attributes:
    ``served``, ``reads_prompt``)."""
    return _factory(spec.strip())[0]


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
                          f"register_extractor, or an entry point in {EXTRACTORS.group!r})") from None


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
