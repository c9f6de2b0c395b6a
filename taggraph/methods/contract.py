"""The method contract checked where a method is registered or loaded: `check_contract` names what a class lacks
(the contract itself is `taggraph.methods.base.Retriever`; `taggraph.testing.MethodContract` checks its
behaviour)."""

from __future__ import annotations

import dataclasses
import inspect
from typing import Any

from taggraph.errors import ConfigError
from taggraph.methods.base import Retriever
from taggraph.methods.params import check_defaults


def check_contract(name: str, cls: Any) -> type[Retriever]:
    """`cls` if it is a usable method class; ConfigError naming what to fix otherwise."""
    if not (isinstance(cls, type) and issubclass(cls, Retriever)):
        named = f"{cls.__module__}.{cls.__qualname__}" if hasattr(cls, "__qualname__") else repr(cls)[:80]
        raise ConfigError(f"method {name!r}: {named} ({type(cls).__name__}) is not a subclass of taggraph.Retriever")
    if cls.score is Retriever.score or cls.add is Retriever.add and cls.add_many is Retriever.add_many:
        raise ConfigError(f"method {name!r}: {cls.__name__} must define add(note) and "
                          f"score(text, *, asked_on=None)")
    for hook, signature in (("score", "score(self, text, *, asked_on=None)"),
                            ("evidence", "evidence(self, text, note, *, asked_on=None)")):
        if "asked_on" not in inspect.signature(getattr(cls, hook)).parameters:
            raise ConfigError(f"method {name!r}: {cls.__name__}.{hook} must take the keyword asked_on "
                              f"(def {signature}): the date the question is asked")
    try:
        inspect.signature(cls).bind(None, None)
    except TypeError:
        raise ConfigError(f"method {name!r}: {cls.__name__}.__init__ must take the store and the parameters "
                          f"(def __init__(self, store, params=None): super().__init__(store, params))") from None
    if not dataclasses.is_dataclass(cls.Params):
        raise ConfigError(f"method {name!r}: {cls.__name__}.Params must be a dataclass "
                          f"(@dataclass(frozen=True) class Params: ...)")
    check_defaults(name, cls.Params)
    return cls
