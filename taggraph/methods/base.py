"""The method contract: what a retrieval method writes, and what every method gets for free.

A method subclasses `Retriever` and writes:

- ``Params``: a frozen dataclass of its parameters and their defaults, ranges declared on the
  field (``alpha: Annotated[float, Field(ge=0, le=1)] = 0.85``). Checked before a run starts
  (`params.make_params`), recorded in run.json (`config`), used to rebuild the method in the report's
  pages. A method without parameters keeps the empty default. A field that switches one part of
  the method on declares it, ``graph: Annotated[bool, Component("Graph")] = True``: a built-in method
  gets its ablation ``NAME-noGraph``, the field set to the component's `off` value (False). The
  field that names the method's sentence embedder is declared ``Annotated[str | Embedder, EMBEDDER]``,
  and the one naming its device ``Annotated[str, DEVICE]``: ``--embedder``/``--device`` reach them, and
  the method embeds when its embedder field is not None.
- ``add(note)``: index one note. Called once per note, in store order, before the next score.
  ``add_many(notes)`` may be overridden to index a batch at once (one embedding call).
- ``score(text, *, asked_on=None)``: {note index: score} of the notes the method reaches, a dict or, for a
  method that scores with numpy, a `Scores` (the same mapping held as two arrays: nothing per note in Python);
  `asked_on` is when the question is asked, a `datetime.datetime` (aware when the data gave an offset), None
  when unknown. A case's date is read once where the data is loaded (`Case.asked_on`); a string or a
  `datetime.date` given to query, rank or explain is read once there (`question_date`): no method parses it.
- ``evidence(text, note, *, asked_on=None)`` (optional): an `Evidence` saying why `note`
  scored what it did: a one-line `summary`, what it `missing`, a `fallback` taken, and free
  `detail` the views show as they are.

Every ranking is taken through `Retriever.ranking` or `Retriever.rank`, which check what ``score`` returns: a dict
(or `Scores`) whose keys are note indexes of the store (ints, 0 to len - 1) and whose values are finite numbers. The
first k come from `np.argpartition` over the scores, ties by earlier note first: no sort of every reached note. A breach,
and any exception a method raises while it ranks, is a `MethodError`: one line naming the method, the
question when the caller knows it (`method_errors`: the bench's runner) and the fix. A failing
``evidence`` does not stop a page: the explanation says that it failed.

State is set up in ``__init__(self, store, params=None)`` after ``super().__init__``: no note
is indexed before the registry (or the first query) calls `sync`. The method's name is the
one it is registered under (`taggraph.methods.registry.register_method`); `rank`, `query`
and `explain` come from this class.
"""

from __future__ import annotations

import contextlib
import dataclasses
import heapq
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import date, datetime, time
from numbers import Integral, Real
from typing import Any, ClassVar

import numpy as np

from taggraph.errors import ConfigError, TaggraphError
from taggraph.core.notes import Note
from taggraph.methods.params import EMBEDDER, NoParams, make_params, recorded, role_field
from taggraph.methods.scores import Scores
from taggraph.methods.signals import Contrast, Signal, contrast
from taggraph.core.store import Interaction, MemoryStore
from taggraph.core.text import parse_datetime, snippet

DEFAULT_DEPTH = 40  # paper, appendix E: retrieval depth fixed at 40


class MethodError(TaggraphError, RuntimeError):
    """A method that broke its contract or raised: `method`, `question` (None when unknown) and `problem`
    (what happened and the fix), said in one line. Built from plain arguments, so it pickles (workers)."""

    def __init__(self, method: str, problem: str, question: str | None = None) -> None:
        super().__init__(method, problem, question)
        self.method, self.problem, self.question = method, problem, question

    def __str__(self) -> str:
        asked = f", question {self.question!r}" if self.question is not None else ""
        return f"method {self.method!r}{asked}: {self.problem}"


def one_line(text: Any, limit: int = 300) -> str:
    """`text` on one line (whitespace runs as one space), cut at a word to at most `limit` characters."""
    return snippet(" ".join(str(text).split()), limit)


@contextlib.contextmanager
def method_errors(method: str, question: str | None = None) -> Iterator[None]:
    """Inside: a `MethodError` gains `question`, and any exception other than taggraph's own (which already
    say what and where), SystemExit included, becomes a MethodError naming `method` and `question`, the original
    as its cause."""
    try:
        yield
    except MethodError as exc:
        if exc.question is not None or question is None:
            raise
        raise MethodError(exc.method, exc.problem, question) from exc.__cause__
    except TaggraphError:
        raise
    except (Exception, SystemExit) as exc:  # sys.exit() in a method ends the method, not the run
        raise MethodError(method, f"raised {type(exc).__name__}: {one_line(exc)} (fix the method; its traceback "
                                  f"is this error's __cause__, shown by --debug on the command line)", question) from exc


def checked_scores(method: str, scores: Any, notes: int) -> dict[int, float] | Scores:
    """`scores` if it keeps the contract of `Retriever.score` over a store of `notes` notes; MethodError
    naming the first breach and the fix otherwise."""
    if isinstance(scores, Scores):
        return _checked_arrays(method, scores, notes)
    if not isinstance(scores, dict):
        raise MethodError(method, f"score() returned {type(scores).__name__}, not a dict; return "
                                  f"{{note index: score}}, an empty dict when no note is reached")
    not_finite, first = 0, None
    for idx, value in scores.items():
        if type(idx) is not int and (isinstance(idx, bool) or not isinstance(idx, Integral)):
            raise MethodError(method, f"score() returned the key {one_line(repr(idx), 60)} "
                                      f"({type(idx).__name__}); keys are note indexes, ints (note.index)")
        if not 0 <= idx < notes:
            raise MethodError(method, f"score() returned note index {idx}, but the memory holds {notes} notes "
                                      f"(indexes 0 to {notes - 1}); key each score by note.index")
        if type(value) is not float and (isinstance(value, bool) or not isinstance(value, Real)):
            raise MethodError(method, f"score() gave note {idx} the score {one_line(repr(value), 60)} "
                                      f"({type(value).__name__}); scores are numbers (float)")
        if not math.isfinite(value):
            not_finite += 1
            first = first or (idx, value)
    if not_finite:
        raise _not_finite(method, not_finite, *first)
    return scores


def _not_finite(method: str, count: int, idx: int, value: float) -> MethodError:
    """The MethodError of `count` scores that are not finite, the first of note `idx`."""
    return MethodError(method, f"score() gave {count} note{'s' * (count > 1)} a score that is not finite (first: note "
                               f"{idx}, {value}); leave out the notes the method does not reach, and look for a "
                               f"parameter so large that the arithmetic overflows")


def _checked_arrays(method: str, scores: Scores, notes: int) -> Scores:
    """`checked_scores` of a `Scores`, vectorized: integer indexes, strictly ascending, within the store; finite
    real values, one per index."""
    index, value = scores.index, scores.value
    if index.ndim != 1 or value.shape != index.shape:
        raise MethodError(method, f"score() returned Scores of {index.shape} indexes and {value.shape} values; "
                                  f"give one value per note index, both 1-d")
    if len(index) and index.dtype.kind not in "iu":
        raise MethodError(method, f"score() returned Scores with {index.dtype} indexes; they are note indexes, ints")
    if len(value) and value.dtype.kind not in "iuf":
        raise MethodError(method, f"score() returned Scores with {value.dtype} values; scores are numbers (float)")
    if len(index) and not (index[0] >= 0 and index[-1] < notes and (np.diff(index) > 0).all()):
        raise MethodError(method, f"score() returned Scores whose indexes are not strictly ascending within 0 to "
                                  f"{notes - 1} (the memory holds {notes} notes); build it with Scores.of_dense")
    bad = np.flatnonzero(~np.isfinite(value))
    if len(bad):
        raise _not_finite(method, len(bad), int(index[bad[0]]), float(value[bad[0]]))
    return Scores(index.astype(np.int64, copy=False), value.astype(np.float64, copy=False))


@dataclass
class Evidence:
    """Why one note scored what it did under one method, for one question.

    `summary`: the evidence in one line ("BM25 over the query terms 'dog' 0.742").
    `missing`: what the note lacks, when the method has nothing for it ("shares no query term").
    `fallback`: a fallback the method took for this query ("PPR ran with a uniform teleport").
    `detail`: structured evidence (matched terms, graph paths, component scores, ...), shown as is.
    `signals`: for a method that scores by signals, the note's score split into `Signal` parts that add up to
    it (`taggraph.methods.signals`); the views then contrast the note with those ranked above it.
    """

    summary: str = ""
    missing: str | None = None
    fallback: str | None = None
    detail: dict[str, Any] = field(default_factory=dict)
    signals: list[Signal] = field(default_factory=list)


def json_plain(value: Any) -> Any:
    """`value` in JSON's types, as pages and files show it: integers and reals as int and float, tuples as lists,
    sets as lists sorted by repr, mapping keys as strings, numpy values as Python's, anything else as its repr."""
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    if isinstance(value, Integral):
        return int(value)
    if isinstance(value, Real):
        return float(value)
    if isinstance(value, Mapping):
        return {str(k): json_plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_plain(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted((json_plain(v) for v in value), key=repr)
    if hasattr(value, "tolist"):  # numpy arrays and scalars
        return json_plain(value.tolist())
    return repr(value)


def check_walk(detail: Mapping[str, Any]) -> None:
    """TypeError unless the keys the graph page draws have its shapes: ``walk``, a list of [from, to] node
    ids; ``walk_breaks``, a list of {"node": id, "why": text}."""
    walk, breaks = detail.get("walk", []), detail.get("walk_breaks", [])
    if not (isinstance(walk, list) and all(isinstance(e, list) and len(e) == 2 and all(isinstance(n, str) for n in e)
                                           for e in walk)):
        raise TypeError("detail['walk'] must be a list of [from, to] node ids")
    if not (isinstance(breaks, list) and all(isinstance(b, dict) and isinstance(b.get("node"), str)
                                             and isinstance(b.get("why"), str) for b in breaks)):
        raise TypeError('detail[\'walk_breaks\'] must be a list of {"node": id, "why": text}')


@dataclass
class Explanation:
    """Why a note ranked where it did, in one method's own terms.

    `reason` is one human sentence built from the rank and the method's `evidence`.
    `outranked_by` lists the notes ranked just above this one (at most the cut-off k of them,
    best first), each with note_id, session_id, rank, score and margin over this note.
    `details` is the method's free-form evidence (`Evidence.detail`).
    `contrast`: when the method returns signals (`Evidence.signals`), the note beside the notes above it, signal
    by signal (`signals.Contrast`); None otherwise.
    """

    method: str
    note_id: str
    retrieved: bool
    rank: int | None
    score: float
    reason: str
    evidence: Evidence = field(default_factory=Evidence)
    outranked_by: list[dict[str, Any]] = field(default_factory=list)
    contrast: Contrast | None = None

    @property
    def details(self) -> dict[str, Any]:
        return self.evidence.detail


@dataclass
class Result:
    note_id: str
    score: float
    session_id: str
    rank: int
    explanation: Explanation | None = None


class _Follower:
    """The store's listener for one retriever: each new note is indexed as it arrives."""

    def __init__(self, retriever: Retriever) -> None:
        self.retriever = retriever

    def add(self, note: Note) -> None:
        self.retriever.sync()


class Retriever:
    """Base class of every retrieval method (the contract is the module docstring)."""

    Params: ClassVar[type] = NoParams

    def __init__(self, store: MemoryStore, params: Any = None) -> None:
        """`params`: an instance of `Params`, or a dict of values over its defaults (checked), or None."""
        self.store = store
        self.params = params if isinstance(params, self.Params) else \
            make_params(type(self).__name__, self.Params, dict(params or {}))
        self.name = type(self).__name__  # the registry sets the registered name
        self._indexed = 0
        self._follower: _Follower | None = None

    @classmethod
    def embeds(cls, params: Any) -> bool:
        """Whether the method with `params` runs a sentence embedder (and so needs sentence-transformers):
        by default, when its field declared `EMBEDDER` is not None."""
        field_name = role_field(type(params), EMBEDDER) if dataclasses.is_dataclass(params) else None
        return field_name is not None and getattr(params, field_name) is not None

    def config(self) -> dict[str, Any]:
        """The method's name and parameters, as recorded in run.json."""
        return {"method": self.name, **recorded(self.params)}

    def sync(self) -> None:
        """Index the store's notes not indexed yet, in order; from then on, each new note as it arrives."""
        pending = self.store.notes[self._indexed:]
        if pending:
            self._indexed += len(pending)
            self.add_many(pending)
        if self._follower is None:
            self._follower = _Follower(self)
            self.store.attach(self._follower)

    def add(self, note: Note) -> None:
        raise NotImplementedError(f"{type(self).__name__} must define add(note)")

    def add_many(self, notes: list[Note]) -> None:
        for note in notes:
            self.add(note)

    def score(self, text: str, *, asked_on: datetime | None = None) -> dict[int, float]:
        """Scores of the notes the method reaches, by note index; notes absent were not reached."""
        raise NotImplementedError(f"{type(self).__name__} must define score(text, *, asked_on=None)")

    def evidence(self, text: str, note: Note, *, asked_on: datetime | None = None) -> Evidence:
        """Why `note` scored what it did for `text`; by default nothing beyond its score."""
        return Evidence()

    def rank(self, text: str, k: int = DEFAULT_DEPTH, *, asked_on: str | date | None = None) -> list[tuple[int, float]]:
        """Top-k (note index, score): score descending, ties by earlier note first."""
        k = check_k(k)
        return self._order(self.scored(text, asked_on=asked_on), k)

    def ranking(self, text: str, *, asked_on: str | date | None = None) -> list[tuple[int, float]]:
        """Every note `score` reaches, as (note index, score) in rank order (`_order`)."""
        return self._order(self.scored(text, asked_on=asked_on))

    def scored(self, text: str, *, asked_on: str | date | None = None) -> dict[int, float] | Scores:
        """What `score` returns, checked (`checked_scores`); a contract breach or an exception of the method is a
        MethodError (module docstring)."""
        asked_on = question_date(asked_on)
        # numpy's overflow warnings are not printed: a score they leave infinite is refused in one line instead
        with method_errors(self.name), np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            self.sync()
            return checked_scores(self.name, self.score(text, asked_on=asked_on), len(self.store))

    @staticmethod
    def _order(scores: dict[int, float] | Scores, k: int | None = None) -> list[tuple[int, float]]:
        """The first `k` (all when None) of checked `scores`: score descending, ties by earlier note first."""
        if isinstance(scores, Scores):
            return scores.top(k)
        key = lambda kv: (-kv[1], kv[0])  # noqa: E731
        return sorted(scores.items(), key=key) if k is None else heapq.nsmallest(k, scores.items(), key=key)

    def remember(self, interaction: Interaction) -> Note:
        return self.store.remember(interaction)

    def query(self, text: str, k: int = DEFAULT_DEPTH, *, asked_on: str | date | None = None,
              explain: bool = False) -> list[Result]:
        """The k best notes for `text` asked on date `asked_on`, each with its explanation when `explain`."""
        k = check_k(k)
        asked_on = question_date(asked_on)
        scores = self.scored(text, asked_on=asked_on)
        ranked = self._order(scores, k)
        full = self._order(scores) if explain else ranked
        out = []
        for r, (idx, s) in enumerate(ranked, 1):
            note = self.store.notes[idx]
            exp = self._explain(text, note, k, scores, full, asked_on) if explain else None
            out.append(Result(note.note_id, float(s), note.session_id, r, exp))
        return out

    def explain(self, text: str, note_id: str, k: int = DEFAULT_DEPTH, *,
                asked_on: str | date | None = None) -> Explanation:
        """Why `note_id` was (not) among the first `k` for `text` asked on date `asked_on`."""
        note = self.store.by_id.get(note_id)
        if note is None:
            raise KeyError(f"no note {note_id!r} in case {self.store.case_id!r}")
        k = check_k(k)
        asked_on = question_date(asked_on)
        scores = self.scored(text, asked_on=asked_on)
        if isinstance(scores, Scores):  # the ranking down to the note, or to the cut-off: all an explanation reads
            rank = scores.place(note.index)
            full = scores.top(None if rank is None else max(rank, k))
        else:
            full = self._order(scores)
        return self._explain(text, note, k, scores, full, asked_on)

    def _explain(self, text: str, note: Note, k: int, scores: Mapping[int, float],
                 full: list[tuple[int, float]], asked_on: datetime | None) -> Explanation:
        """The explanation of `note` from the method's `scores` and the ranking `full` in rank order, which holds at
        least the notes down to `note` and the k-th (all of them when `note` was not reached)."""
        rank = next((r for r, (idx, _) in enumerate(full, 1) if idx == note.index), None)
        retrieved = rank is not None and rank <= k
        try:
            ev = self.evidence(text, note, asked_on=asked_on)
            if not isinstance(ev, Evidence):
                raise TypeError(f"returned {type(ev).__name__}, not a taggraph.Evidence")
            if not isinstance(ev.detail, Mapping):
                raise TypeError(f"returned a detail of type {type(ev.detail).__name__}, not a dict")
            ev = dataclasses.replace(ev, detail=json_plain(ev.detail))
            check_walk(ev.detail)
        except (Exception, SystemExit) as exc:  # a page states it and goes on: the others' evidence still shows
            ev = Evidence(summary=f"{self.name}.evidence() failed: {type(exc).__name__}: {one_line(exc)}")
        score = float(scores.get(note.index, 0.0))
        said = ev.summary or f"score {score:.4g}"
        if retrieved:
            reason = f"ranked {rank} of {len(self.store)} notes: {said}"
            if score == 0 and ev.missing:
                reason = (f"ranked {rank} of {len(self.store)} notes only by tie order (earlier notes first), "
                          f"with score 0: {ev.missing}")
        elif rank is None or (score == 0 and ev.missing):
            reason = ev.missing or "not reached by this method"
        else:
            cut_idx, cut_score = full[k - 1]
            reason = (f"reached ({said}) but ranked {rank}, below the first {k} (the cut-off k = {k}); "
                      f"the last retrieved note {self.store.notes[cut_idx].note_id!r} scored {cut_score:.4g}")
        if ev.fallback:
            reason += f" (fallback: {ev.fallback})"
        start = max((rank or 1) - 1 - k, 0)  # the (at most k) notes just above this one; none when unranked
        outranked = [{"note_id": self.store.notes[i].note_id, "session_id": self.store.notes[i].session_id,
                      "rank": start + j + 1, "score": float(s), "margin": float(s - score)}
                     for j, (i, s) in enumerate(full[start:(rank or 1) - 1])]
        return Explanation(self.name, note.note_id, retrieved, rank, score, reason, ev, outranked,
                           self._contrast(text, note, rank, score, ev, full, asked_on))

    def _contrast(self, text: str, note: Note, rank: int | None, score: float, ev: Evidence,
                  full: list[tuple[int, float]], asked_on: datetime | None) -> Contrast | None:
        """The note beside the notes above it, signal by signal, when the method returns signals; None when it
        does not, or when a rival's evidence fails (the page then shows the rest)."""
        if not ev.signals:
            return None
        try:
            return contrast(note.note_id, rank, score, ev.signals, full,
                            lambda i: self.evidence(text, self.store.notes[i], asked_on=asked_on).signals,
                            lambda i: (self.store.notes[i].note_id, self.store.notes[i].session_id))
        except Exception:  # noqa: BLE001 - a method's failing evidence never stops an explanation
            return None


def question_date(asked_on: str | date | None, strict: bool = False) -> datetime | None:
    """`asked_on` as every method gets it: a datetime (a date: its midnight; a string: what
    `taggraph.core.text.parse_datetime` reads, None when it reads nothing, or with `strict` a ConfigError), or None."""
    if asked_on is None or isinstance(asked_on, datetime):
        return asked_on
    if isinstance(asked_on, date):
        return datetime.combine(asked_on, time())
    if isinstance(asked_on, str):
        moment = parse_datetime(asked_on)
        if moment is None and strict:
            raise ConfigError(f"asked_on {asked_on[:60]!r} is not a date: write 2023/05/30 (Tue) 23:40, 2023/05/30 "
                              f"or ISO 8601 (2023-05-30T23:40), or pass a datetime.date or datetime.datetime")
        return moment
    raise ConfigError(f"asked_on must be a date string, a datetime.date or a datetime.datetime, got "
                      f"{type(asked_on).__name__} {str(asked_on)[:40]!r}")


TIE_RTOL = 1e-9  # free choice: far above float rounding (~1e-16), far below any real difference of scores


def same_score(a: float, b: float) -> bool:
    """Whether two scores are one tie: equal, or within TIE_RTOL of the larger, since the same terms summed in
    another order differ in the last bits (1 + 1/3 + 1/3 + 1/3 is 1.9999999999999998 and 2 is 2)."""
    return a == b or abs(a - b) <= TIE_RTOL * max(abs(a), abs(b))


def check_k(k: int) -> int:
    """`k` if it is a positive number of results; ConfigError otherwise (a negative k is not 'all but one')."""
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ConfigError(f"k must be a positive whole number of results, got {k!r}")
    return k
