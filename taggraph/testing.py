"""The method contract as tests: `MethodContract`, the class every method's tests inherit, built in or plug-in.

A subclass names the method and its parameters; pytest then runs each check on it::

    from taggraph.testing import MethodContract

    class TestTagOverlap(MethodContract):
        method = "TagOverlap"      # a registered name, package.module:Class, or the Retriever subclass itself
        params = {"min_len": 4}    # over the registered values; objects (an embedder) as they are

The checks run over a small memory: one demo case's 23 notes (`fixture_notes`: tagged once per process by
the offline extractor; no network, no model). They are:

- scores are keyed by note index, finite (`Retriever.score`'s contract, as every ranking checks it);
- notes added one at a time, with questions asked while the memory grows, give the scores of building
  over the whole memory at once;
- the parameters round-trip through run.json: the configuration the bench records builds the method
  again (as the report's pages do), with the same configuration and the same scores;
- the method runs in a worker process (``bench(..., workers=2)``: its registration and parameters
  cloudpickled to a joblib worker) and scores there as here;
- ``evidence`` answers for every note and question, reached or not (score 0); a method that returns signals
  (``Evidence.signals``) names each once, and their contributions add up to the note's score, so that its
  contrast with the notes above it explains the whole margin;
- ``score`` and ``evidence`` take ``asked_on`` as every method gets it, a ``datetime`` or None: the dataset's
  date, an aware date-time, and the calendar's first and last days (a common "unknown" sentinel).

A method that embeds is checked without a model by passing ``BagOfWordsEmbedder()`` to the parameter it declares
`EMBEDDER` (``{"embedder": BagOfWordsEmbedder()}`` for the built-ins).
The checks raise AssertionError naming the method, the question and what differs; they need no pytest
to import or call, and pytest (the ``test`` extra) collects them from each ``Test*`` subclass. The base
class itself is not collected: its name does not start with ``Test``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import os
import pkgutil
import weakref
from collections.abc import Mapping
from datetime import datetime, timedelta, timezone
from functools import lru_cache
from types import MappingProxyType
from typing import Any, ClassVar

import numpy as np

from taggraph._infra.config import DEMO_DATA
from taggraph.datasets import load_dataset
from taggraph.core.notes import Note
from taggraph.methods import (Evidence, Retriever, check_methods, make_retriever, method, register_method,
                                registered_methods)
from taggraph.methods.base import MethodError, check_walk, checked_scores, json_plain, one_line
from taggraph.embedders.base import Embedder
from taggraph.runs.provenance import method_origin
from taggraph.methods.signals import Signal, adds_up, signals_total
from taggraph.core.store import MemoryStore
from taggraph.core.text import tokenize

FIXTURE_CASE = 4  # demo_q05: 13 sessions, 23 notes, dated (multi-session)
QUESTIONS = ("How much did I spend on the brake repair for my car?", "what did I buy", "morning yoga",
             "the restaurant in Lisbon you recommended", "zqxj vbnw", "")  # the last two reach few notes or none


@lru_cache(maxsize=1)
def fixture_notes() -> tuple[tuple[Note, ...], str]:
    """The notes of the demo case the checks ask (tagged by the offline extractor), and its question date."""
    from taggraph.runs.runner import build_store
    case = load_dataset(DEMO_DATA, fmt="longmemeval")[FIXTURE_CASE]
    return tuple(build_store(case, "offline").notes), case.asked_on


def fixture_store(notes: tuple[Note, ...] = ()) -> MemoryStore:
    """A new memory holding copies of `notes`, in order."""
    store = MemoryStore("contract")
    for note in notes:
        store.add_note(dataclasses.replace(note))
    return store


class BagOfWordsEmbedder(Embedder):
    """A deterministic embedder without a model: each token counted in one of `dim` buckets (md5 of the token)."""

    name = "bag-of-words"

    def __init__(self, dim: int = 1024, cache: bool = False, **kw: Any) -> None:
        super().__init__(cache=cache, **kw)
        self.dim = dim

    def _embed(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for tok in tokenize(text):
                out[row, int(hashlib.md5(tok.encode()).hexdigest(), 16) % self.dim] += 1
        return out


Scores = dict[str, dict[int, float]]  # question -> the method's score() of it
_REFERENCES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # contract class -> (retriever, Scores)


class MethodContract:
    """The checks every method passes (module docstring). Set `method`, and `params` when the defaults will not
    do (a method that embeds: its `EMBEDDER` parameter set to ``BagOfWordsEmbedder()``); `questions` may be
    replaced."""

    method: ClassVar[str | type[Retriever] | None] = None
    params: ClassVar[Mapping[str, Any]] = MappingProxyType({})
    questions: ClassVar[tuple[str, ...]] = QUESTIONS

    # -- the checks -----------------------------------------------------------------------

    def test_scores_are_keyed_by_note_index_and_finite(self) -> None:
        _, scores = self.reference()
        for question, found in scores.items():
            self.check_scores(question, found, fixture_notes()[1])

    def test_adding_note_by_note_equals_building_at_once(self) -> None:
        notes = fixture_notes()[0]
        store = fixture_store()
        grown = self.build(store)
        for question, found in self.scores_of(grown).items():  # an empty memory reaches no note
            assert found == {}, f"{self.name()}: score({question!r}) over an empty memory gave {one_line(found, 80)}"
        for count, note in enumerate(notes, 1):
            store.add_note(dataclasses.replace(note))
            if count in (1, len(notes) // 2):
                self.scores_of(grown)  # asked while the memory grows: what it keeps from a question must follow
        self.assert_same(self.reference()[1], self.scores_of(grown), "with the notes added one at a time")

    def test_parameters_round_trip_through_run_json(self) -> None:
        name = self.name()
        retriever, scores = self.reference()
        record = {**retriever.config(), **method_origin(name)}  # what the bench writes for the method
        assert record.get("method") == name, f"{name}: config() records the method as {record.get('method')!r}"
        try:
            read = json.loads(json.dumps(record, allow_nan=False))
        except (TypeError, ValueError) as exc:
            raise AssertionError(f"{name}: run.json cannot record config() {one_line(record, 120)}: {exc}") from None
        changed = sorted(k for k in record if read.get(k) != record[k])
        assert not changed, f"{name}: config() changes when written to run.json: {', '.join(changed)}"
        origin = read.get("origin")
        if origin is not None:
            assert _imported(origin) is method(name).cls(), \
                f"{name}: run.json's origin {origin!r} does not import the method's class"
        objects = {k: v for k, v in self.params.items() if not _plain(v)}  # run.json names them; given again
        try:
            again = make_retriever(name, fixture_store(fixture_notes()[0]),
                                   **{**{k: v for k, v in read.items() if k != "method"}, **objects})
        except Exception as exc:
            raise AssertionError(f"{name}: run.json's record {one_line(read, 120)} does not build the method "
                                 f"again: {type(exc).__name__}: {one_line(exc)}") from exc
        rebuilt = json.loads(json.dumps({**again.config(), **method_origin(name)}))
        changed = sorted(k for k in {*read, *rebuilt} if read.get(k) != rebuilt.get(k))
        assert not changed, f"{name}: built again from run.json, it records other values of {', '.join(changed)}"
        self.assert_same(scores, self.scores_of(again), "built again from run.json's record")

    def test_runs_the_same_in_a_worker_process(self) -> None:
        from taggraph.runs.runner import parallel_map
        notes, asked_on = fixture_notes()
        job = (self.name(), dict(self.params), notes, self.questions, asked_on)
        try:
            [(pid, scores)] = parallel_map(_scores_in_worker, [job], workers=2, desc="contract")
        except Exception as exc:
            raise AssertionError(f"{self.name()}: does not run in a worker process ({type(exc).__name__}: "
                                 f"{one_line(exc)}); its class, parameters and registration must pickle "
                                 f"(cloudpickle), as bench(..., workers=2) sends them") from exc
        assert pid != os.getpid(), "the worker check ran in this process"
        self.assert_same(self.reference()[1], scores, "in a worker process")

    def test_evidence_for_every_note(self) -> None:
        retriever, scores = self.reference()
        _, asked_on = fixture_notes()
        for question in self.questions:
            for note in retriever.store.notes:
                score = scores[question].get(note.index)
                self.check_evidence(retriever, question, note, asked_on, f"scored {score or 'unreached'}",
                                    score or 0.0)

    def test_asked_on_is_accepted(self) -> None:
        retriever, _ = self.reference()
        note = retriever.store.notes[0]
        for asked_on in (None, fixture_notes()[1], datetime(2023, 10, 1, 16, 40, tzinfo=timezone(timedelta(hours=-7))),
                         datetime(1, 1, 1), datetime(9999, 12, 31, 23, 59)):
            for question in self.questions[:2]:
                self.check_scores(question, self.score(retriever, question, asked_on), asked_on)
                self.check_evidence(retriever, question, note, asked_on, f"asked on {asked_on!r}")

    # -- what the checks share ----------------------------------------------------------

    def name(self) -> str:
        """The method's registered name; a class not registered as it is (without fixed values) is registered
        under its own name first."""
        if self.method is None:
            raise TypeError(f"{type(self).__name__}: set method = a registered name, package.module:Class or a "
                            f"Retriever subclass")
        if isinstance(self.method, str):
            return check_methods([self.method])[0]
        for name in registered_methods():
            if method(name).target is self.method and not method(name).defaults:
                return name
        register_method(self.method.__name__, self.method)
        return self.method.__name__

    def build(self, store: MemoryStore) -> Retriever:
        """The method with `params` over `store`, every note indexed."""
        return make_retriever(self.name(), store, **self.params)

    def reference(self) -> tuple[Retriever, Scores]:
        """The method built over the whole fixture memory at once and its scores of `questions`, built once
        per contract class."""
        cls = type(self)
        if cls not in _REFERENCES:
            retriever = self.build(fixture_store(fixture_notes()[0]))
            _REFERENCES[cls] = retriever, self.scores_of(retriever)
        return _REFERENCES[cls]

    def score(self, retriever: Retriever, question: str, asked_on: datetime | None) -> dict[int, float]:
        """`retriever.score`; an exception it raises as an AssertionError naming the question."""
        try:
            return retriever.score(question, asked_on=asked_on)
        except Exception as exc:
            raise AssertionError(f"{self.name()}: score({question!r}, asked_on={asked_on!r}) raised "
                                 f"{type(exc).__name__}: {one_line(exc)}") from exc

    def scores_of(self, retriever: Retriever) -> Scores:
        """Each question's scores, asked on the fixture case's date as the bench asks."""
        return {q: self.score(retriever, q, fixture_notes()[1]) for q in self.questions}

    def check_scores(self, question: str, scores: Any, asked_on: datetime | None) -> None:
        """AssertionError unless `scores` keep `Retriever.score`'s contract over the fixture memory."""
        try:
            checked_scores(self.name(), scores, len(fixture_notes()[0]))
        except MethodError as exc:
            raise AssertionError(f"{exc.method}: score({question!r}, asked_on={asked_on!r}): {exc.problem}") \
                from None

    def check_evidence(self, retriever: Retriever, question: str, note: Note, asked_on: datetime | None,
                       context: str, score: float | None = None) -> None:
        """AssertionError unless `evidence` returns an `Evidence` of the declared field types for `note`, and,
        when it returns signals, each named once with a finite contribution, adding up to `score` when given."""
        where = f"{self.name()}: evidence({question!r}, note {note.note_id!r}) ({context})"
        try:
            found = retriever.evidence(question, note, asked_on=asked_on)
        except Exception as exc:
            raise AssertionError(f"{where} raised {type(exc).__name__}: {one_line(exc)}") from exc
        assert isinstance(found, Evidence), f"{where} returned {type(found).__name__}, not a taggraph.Evidence"
        assert isinstance(found.summary, str) and isinstance(found.detail, dict) and all(
            v is None or isinstance(v, str) for v in (found.missing, found.fallback)), \
            f"{where}: summary is a str, missing and fallback a str or None, detail a dict; got {found!r}"
        try:  # what every explanation does with a detail (`Retriever._explain`): a failure here fails each page
            check_walk(json_plain(found.detail))
        except (TypeError, ValueError) as exc:
            raise AssertionError(f"{where}: its detail cannot be shown: {one_line(exc)}") from exc
        signals = found.signals
        assert all(isinstance(x, Signal) and isinstance(x.name, str) and math.isfinite(x.contribution)
                   for x in signals), f"{where}: each signal a taggraph.Signal with a name and a finite contribution"
        assert len({x.name for x in signals}) == len(signals), f"{where}: a signal named twice"
        assert not signals or score is None or adds_up(signals, score), (
            f"{where}: its signals' contributions add up to {signals_total(signals)!r}, the score is {score!r}")

    def assert_same(self, expected: Scores, got: Scores, how: str) -> None:
        """AssertionError naming the first question and note whose score differs from the one at once."""
        for question, want in expected.items():
            have = got[question]
            if set(want) != set(have):
                raise AssertionError(f"{self.name()}: {how}, score({question!r}) reaches notes "
                                     f"{sorted(set(have) ^ set(want))[:10]} that differ from building at once")
            for idx, value in want.items():
                if not _close(value, have[idx]):
                    raise AssertionError(f"{self.name()}: {how}, score({question!r}) gives note {idx} "
                                         f"{have[idx]!r}, not {value!r} as building at once")


def _scores_in_worker(job: tuple) -> tuple[int, Scores]:
    """In a worker process: the method built over the notes sent, its scores of the questions sent."""
    name, params, notes, questions, asked_on = job
    retriever = make_retriever(name, fixture_store(notes), **params)
    return os.getpid(), {q: retriever.score(q, asked_on=asked_on) for q in questions}


def _close(a: Any, b: Any) -> bool:
    """Equal scores, up to float summation order (1e-12); two NaN are equal (the finite check names them)."""
    try:
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12) or (math.isnan(a) and math.isnan(b))
    except TypeError:
        return a == b


def _plain(value: Any) -> bool:
    """Whether run.json must record `value` itself (numbers, strings, and dataclasses, sequences and mappings of
    them), not an object's name."""
    if isinstance(value, (tuple, list)):
        return all(_plain(v) for v in value)
    if isinstance(value, Mapping):
        return all(_plain(v) for v in value.values())
    return value is None or isinstance(value, (bool, int, float, str)) or dataclasses.is_dataclass(value)


def _imported(spec: str) -> Any:
    """What ``module:Class`` names, None when it does not import."""
    try:
        return pkgutil.resolve_name(spec)
    except (ImportError, AttributeError, ValueError):
        return None
