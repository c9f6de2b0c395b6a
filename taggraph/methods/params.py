"""A method's `Params` checked and described: values over the defaults (`make_params`), the defaults against
their own declarations (`check_defaults`), the fields that switch a part (`Component`) or name the embedder or
device (`Role`: `EMBEDDER`, `DEVICE`), values as run.json records them (`recorded`), and each field in words
(`described`: type, rule, description)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from types import UnionType
from typing import Annotated, Any, Literal, Union, get_args, get_origin, get_type_hints

from pydantic import ConfigDict, TypeAdapter, ValidationError

from taggraph.errors import ConfigError

# every parameter value is finite (no nan, no inf); objects (an Embedder) are taken as they are
PARAM_CONFIG = ConfigDict(allow_inf_nan=False, arbitrary_types_allowed=True, extra="forbid")  # a misspelt key fails


@dataclass(frozen=True)
class NoParams:
    """The parameters of a method that has none."""


@dataclass(frozen=True)
class Component:
    """The part of a method a `Params` field switches, named in its ablation ``NAME-no<name>``; `off`: the
    field's value with the part off. Written in the field's annotation."""

    name: str
    off: Any = False


@dataclass(frozen=True)
class Role:
    """What a `Params` field names for the outside: the method's sentence embedder or the device it runs on."""

    role: Literal["embedder", "device"]


EMBEDDER = Role("embedder")
DEVICE = Role("device")


@lru_cache(maxsize=None)
def role_field(params_class: type, role: Role) -> str | None:
    """The field of `params_class` declared with `role` (``Annotated[..., EMBEDDER]``), or None."""
    hints = get_type_hints(params_class, include_extras=True)
    return next((f.name for f in dataclasses.fields(params_class)
                 if role in getattr(hints[f.name], "__metadata__", ())), None)


def _configure(params_class: type) -> None:
    """Give `params_class` and the dataclasses among its fields PARAM_CONFIG, unless they have their own.

    A class pickled by value (a notebook's method in a worker process: cloudpickle) comes back with
    copies of the `dataclasses.MISSING` sentinel in its fields, which pydantic reads as a default
    factory beside a default; they are put back to the sentinel itself."""
    for f in dataclasses.fields(params_class):
        for attr in ("default", "default_factory"):
            if type(getattr(f, attr)).__name__ == "_MISSING_TYPE":
                setattr(f, attr, dataclasses.MISSING)
    if "__pydantic_config__" not in vars(params_class):
        params_class.__pydantic_config__ = PARAM_CONFIG
    for hint in get_type_hints(params_class).values():
        if dataclasses.is_dataclass(hint):
            _configure(hint)


@lru_cache(maxsize=None)
def _adapter(params_class: type) -> TypeAdapter:
    _configure(params_class)
    return TypeAdapter(params_class)


def make_params(method: str, params_class: type, values: dict[str, Any]) -> Any:
    """`params_class` filled with `values` over its defaults; ConfigError naming the method, the
    parameter, the value and the rule it breaks (unknown name, wrong type, out of range, nan)."""
    adapter = _adapter(params_class)  # first: it puts back the sentinels of a class pickled by value
    known = {f.name: f for f in dataclasses.fields(params_class)}
    for key, value in values.items():
        if key not in known:
            raise ConfigError(f"method {method!r} has no parameter {key!r}; its parameters: "
                              f"{', '.join(known) or 'none'}")
        field_ = known[key]
        default = field_.default_factory() if field_.default_factory is not dataclasses.MISSING else field_.default
        _refuse_switch_for_number(method, key, value, get_type_hints(params_class)[key], default)
    try:
        return adapter.validate_python(dict(values))
    except ValidationError as exc:
        raise ConfigError(f"method {method!r}: parameter {_first_error(exc)}") from None


def _refuse_switch_for_number(method: str, key: str, value: Any, hint: Any, default: Any) -> None:
    """ConfigError for a bool where the declared type (`hint`, beside None or not) is a number or the reverse, also
    inside a nested dataclass given as a dict (TagGraph-Fusion's weights): pydantic's lax mode reads True as 1."""
    if dataclasses.is_dataclass(hint) and isinstance(value, Mapping):
        hints = get_type_hints(hint)
        for name, inner in value.items():
            if name in hints:
                _refuse_switch_for_number(method, f"{key}.{name}", inner, hints[name], getattr(default, name, None))
        return
    kind = _number_kind(hint)
    if kind and isinstance(value, (bool, int, float)) and isinstance(value, bool) != (kind is bool):
        like = "or None" if default is None else f"like its default {default!r}"
        raise ConfigError(f"method {method!r}: parameter {key!r} must be {kind.__name__} {like}, got {value!r}")


def _number_kind(hint: Any) -> type | None:
    """bool, int or float when `hint` declares one (alone or beside None), else None."""
    if get_origin(hint) in (Union, UnionType):
        kinds = [a for a in get_args(hint) if a is not type(None)]
        return _number_kind(kinds[0]) if len(kinds) == 1 else None
    return hint if hint in (bool, int, float) else None


def check_defaults(method: str, params_class: type) -> None:
    """ConfigError naming the method and the field when a default of `params_class` breaks its own declaration
    (outside its declared range, or of another type: "3" for an int), so a method is refused where it is
    defined, not in a run."""
    adapter = _adapter(params_class)  # first: it puts back the sentinels of a class pickled by value
    given = {}
    for f in dataclasses.fields(params_class):
        value = f.default_factory() if f.default_factory is not dataclasses.MISSING else f.default
        if value is not dataclasses.MISSING:
            given[f.name] = value
    try:  # nested dataclasses checked field by field
        checked = adapter.validate_python({k: dataclasses.asdict(v) if dataclasses.is_dataclass(v) else v
                                           for k, v in given.items()})
    except ValidationError as exc:
        raise ConfigError(f"method {method!r}: {params_class.__qualname__} default {_first_error(exc)} "
                          f"(fix the default)") from None
    converted = next(filter(None, (_converted(n, v, getattr(checked, n)) for n, v in given.items())), None)
    if converted:
        field_, default, read = converted
        raise ConfigError(f"method {method!r}: {params_class.__qualname__} default {field_} = {default!r}: not of "
                          f"its declared type, which reads it as {read!r} (fix the default)")


def _converted(name: str, value: Any, checked: Any) -> tuple[str, Any, Any] | None:
    """The first (field, default, value read) under field `name` whose default pydantic had to convert to the
    declared type to read it as `checked` ("3" as 3, 1 as True); None when none (an int is a float)."""
    if dataclasses.is_dataclass(value) and dataclasses.is_dataclass(checked):
        inner = (_converted(f"{name}.{f.name}", getattr(value, f.name), getattr(checked, f.name))
                 for f in dataclasses.fields(value))
        return next(filter(None, inner), None)
    same = value is checked or value == checked and (type(value) is type(checked) or
                                                     (type(value), type(checked)) == (int, float))
    return None if same else (name, value, checked)


def _first_error(exc: ValidationError) -> str:
    """The first of pydantic's errors as 'field = value: rule'."""
    err = exc.errors()[0]
    return f"{'.'.join(str(x) for x in err['loc'])} = {err.get('input')!r}: {err['msg']}"


def recorded(value: Any) -> Any:
    """A parameter value as run.json records it: dataclasses and mappings as dicts, tuples and lists as lists
    (which the parameters read back), objects by their `name`."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: recorded(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (tuple, list)):
        return [recorded(v) for v in value]
    if isinstance(value, Mapping):
        return {k: recorded(v) for k, v in value.items()}
    return getattr(value, "name", repr(value))


def described(params: Any) -> list[dict[str, Any]]:
    """Each field of `params` (a `Params` instance) in words: name, value as run.json records it, type, its
    declared rule (">= 0, < 1") and its one-line description."""
    hints = get_type_hints(type(params), include_extras=True)
    out = []
    for f in dataclasses.fields(params):
        shown, rules = _type_and_rules(hints[f.name])
        out.append({"name": f.name, "value": recorded(getattr(params, f.name)), "type": shown,
                    "rule": ", ".join(rules), "description": _description(hints[f.name])})
    return out


_BOUNDS = {"ge": ">=", "gt": ">", "le": "<=", "lt": "<"}


def _type_and_rules(hint: Any) -> tuple[str, list[str]]:
    """A declared type in words and its declared bounds: ``Annotated[int, Field(ge=1)] | None`` -> ("int | None",
    [">= 1"])."""
    if get_origin(hint) is Annotated:
        base, *marks = get_args(hint)
        shown, rules = _type_and_rules(base)
        own = [_rule(m) for m in marks for m in getattr(m, "metadata", [m]) if not isinstance(m, (Component, Role))]
        return shown, [rule for rule in own if rule] + rules
    if get_origin(hint) in (Union, UnionType):
        parts = [_type_and_rules(arg) for arg in get_args(hint)]
        return " | ".join(shown for shown, _ in parts), [rule for _, rules in parts for rule in rules]
    return ("None" if hint is type(None) else getattr(hint, "__name__", str(hint))), []


def _description(hint: Any) -> str:
    """The one-line description a field declares (``Annotated[int, Field(description=...)]``), else ''."""
    marks = get_args(hint)[1:] if get_origin(hint) is Annotated else ()
    return next((m.description for m in marks if getattr(m, "description", None)), "")


def _rule(constraint: Any) -> str:
    """A declared bound in words: annotated_types.Ge(ge=0) -> '>= 0'; '' for a validator that converts a value
    (pydantic's BeforeValidator: no rule a user has to meet)."""
    if callable(getattr(constraint, "func", None)):
        return ""
    for attr, sign in _BOUNDS.items():
        if hasattr(constraint, attr):
            return f"{sign} {getattr(constraint, attr)}"
    return repr(constraint)
