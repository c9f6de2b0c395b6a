"""The one experiment runner: each memory built once, every method asked every question.

A *memory* is one case history (its interactions). Cases whose histories are
identical (same `history_checksum`: ATANT stories, LoCoMo conversations, repeated
LongMemEval haystacks) share one store and one set of method indexes, and all
their questions are asked of it, as an agent asks its one memory many questions.
Memories are independent, so they run in parallel (`parallel_map`); results do not
depend on the number of workers nor on sharing (`share_memories=False` rebuilds
per question, for comparison).

Every experiment (bench, ablation, sweeps, diagnostics) produces its rows with
`MemoryRun.ask`, so the row schema is written once (there), and scores
and summarizes them with `taggraph.evaluation.metrics`.
"""

from __future__ import annotations

import contextlib
import hashlib
import signal
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from joblib import Parallel, delayed

from taggraph._infra.config import DEFAULT_EXTRACTOR
from taggraph.datasets import Case
from taggraph.evaluation.metrics import session_scores
from taggraph.extractors import Extractor, extractor_spec, get_extractor
from taggraph._infra.progress import progress
from taggraph.registry import with_registered
from taggraph.methods import Retriever, make_retriever
from taggraph.methods.base import method_errors, same_score
from taggraph.core.store import MemoryStore

_EXTRACTORS: dict[tuple, Any] = {}


def extractor_for(extractor: str | Extractor, options: dict[str, Any] | None = None) -> Extractor:
    """One extractor per process, name and options (spaCy and model clients load once). An object is
    used as it is and kept as the extractor of its spec (`extractor_spec`), so a later build by the
    spec that run.json records (the report's miss pages) uses the same object."""
    if not isinstance(extractor, str):
        if not any(known is extractor for known in _EXTRACTORS.values()):  # spec once per object (entry points: ~40 ms)
            _EXTRACTORS[(extractor_spec(extractor), ())] = get_extractor(extractor, **(options or {}))
        return extractor
    key = (extractor, tuple(sorted((options or {}).items())))
    if key not in _EXTRACTORS:
        _EXTRACTORS[key] = get_extractor(extractor, **(options or {}))
    return _EXTRACTORS[key]


def build_store(case: Case, extractor: str | Extractor = DEFAULT_EXTRACTOR,
                extractor_options: dict[str, Any] | None = None) -> MemoryStore:
    """The case's memory: every interaction remembered in order. `extractor` is a name or an object
    (`taggraph.extractors.get_extractor`); `extractor_options` go with a name."""
    store = MemoryStore(case.case_id, extractor_for(extractor, extractor_options))
    store.remember_many(case.interactions)
    return store


def _hash_interaction(h, interaction) -> None:
    for part in (interaction.session_id, interaction.user, interaction.assistant, interaction.timestamp,
                 interaction.note_id or ""):
        h.update(part.encode("utf-8", "surrogatepass") + b"\0")
    h.update(b"\1")


def history_checksum(case: Case) -> str:
    """sha256 over the case's interactions (session, texts, timestamp, note id), in order."""
    h = hashlib.sha256()
    for i in case.interactions:
        _hash_interaction(h, i)
    return h.hexdigest()


def prefix_checksums(case: Case) -> list[str]:
    """`history_checksum` of each prefix of the case's history: [0] the empty one, [n] its first n interactions."""
    h, sums = hashlib.sha256(), [hashlib.sha256().hexdigest()]
    for i in case.interactions:
        _hash_interaction(h, i)
        sums.append(h.hexdigest())
    return sums


def group_by_history(cases: Sequence[Case], share: bool = True) -> list[list[Case]]:
    """Cases sharing one history, groups in first-seen order (one case per group unless `share`)."""
    if not share:
        return [[c] for c in cases]
    groups: dict[str, list[Case]] = {}
    for case in cases:
        groups.setdefault(history_checksum(case), []).append(case)
    return list(groups.values())


def group_by_growth(cases: Sequence[Case], share: bool = True) -> list[list[Case]]:
    """`group_by_history`, then each group whose history begins a longer one's joined to the longest such group,
    its cases ordered by history length: one memory that grows, each question asked when it holds that question's
    history (RealMem: a persona's queries, each asked of the sessions before it). Groups in first-seen order."""
    groups = group_by_history(cases, share)
    if not share or len(groups) < 2:
        return groups
    unowned = {history_checksum(group[0]): g for g, group in enumerate(groups)}
    grown: dict[int, list[int]] = {}
    for g in sorted(range(len(groups)), key=lambda g: -len(groups[g][0].interactions)):
        if history_checksum(groups[g][0]) not in unowned:
            continue  # joined to a longer history already
        members = [unowned.pop(checksum) for checksum in prefix_checksums(groups[g][0]) if checksum in unowned]
        grown[min(members)] = members
    return [sorted((c for g in members for c in groups[g]), key=lambda c: len(c.interactions))
            for _, members in sorted(grown.items())]


def parallel_map(fn: Callable, items: Sequence, *args: Any, workers: int = 1, backend: str | None = "loky",
                 desc: str = "cases") -> list:
    """[fn(item, *args) for item in items], in order; over joblib workers when workers != 1.

    ``backend=None`` uses the active ``joblib.parallel_config`` (e.g. inside `dask_backend`); ``"dask"`` the
    Dask client of this process (`taggraph.runs.dask_backend.dask_jobs`).
    """
    if backend == "dask":
        from taggraph.runs.dask_backend import dask_jobs
        context, workers = dask_jobs(workers)
        with context:
            return parallel_map(fn, items, *args, workers=workers, backend=None, desc=desc)
    if workers == 1:
        return [fn(item, *args) for item in progress(items, desc=desc, unit="memory")]
    fn = with_registered(fn)  # what a notebook registered here (methods, extractors, ...) is known in the workers too
    jobs = (delayed(fn)(item, *args) for item in items)
    with _stopped_by_signals():
        return list(progress(Parallel(n_jobs=workers, backend=backend, return_as="generator")(jobs),
                             total=len(items), desc=desc, unit="memory"))


class _Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP, raised in the main process so that joblib aborts and kills its workers."""


@contextlib.contextmanager
def _stopped_by_signals() -> Iterator[None]:
    """While workers run: SIGTERM and SIGHUP (which would end this process at once, leaving joblib's loky
    workers idle for 5 minutes with their memory) raise `_Terminated`, a KeyboardInterrupt, as SIGINT does;
    on either, the workers are killed, and a SIGTERM/SIGHUP is then delivered again, so the process still
    ends with that signal's status. Only in the main thread (Python's rule for signal handlers)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum, frame):
        raise _Terminated(signum)

    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGTERM, getattr(signal, "SIGHUP", None)) if sig}
    try:
        yield
    except KeyboardInterrupt as exc:
        _kill_workers()
        if isinstance(exc, _Terminated):
            signum = exc.args[0]
            signal.signal(signum, signal.SIG_DFL if previous[signum] in (None, stop) else previous[signum])
            previous.pop(signum)
            signal.raise_signal(signum)
        raise
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _kill_workers() -> None:
    """Kill the loky workers joblib reuses between calls (its abort may leave them to an idle timeout)."""
    from joblib.externals.loky import reusable_executor
    executor = getattr(reusable_executor, "_executor", None)
    if executor is not None:
        executor.shutdown(wait=False, kill_workers=True)


class MemoryRun:
    """The methods over one store, each index built once on first use, asked question after question.

    `timings` collects one "index" row per method and one "query" row per question and
    method; `configs` each method's recorded parameters.
    """

    def __init__(self, store: MemoryStore, methods: Sequence[str],
                 method_params: dict[str, dict[str, Any]] | None = None) -> None:
        self.store = store
        self.methods = list(methods)
        self.method_params = method_params or {}
        self.retrievers: dict[str, Retriever] = {}
        self.timings: list[dict[str, Any]] = []
        self.configs: dict[str, dict[str, Any]] = {}

    def retriever(self, name: str) -> Retriever:
        if name not in self.retrievers:
            t0 = time.perf_counter()
            self.retrievers[name] = make_retriever(name, self.store, **self.method_params.get(name, {}))
            self.timings.append({"question_id": self.store.case_id, "stage": "index", "method": name,
                                 "seconds": time.perf_counter() - t0})
            self.configs[name] = self.retrievers[name].config()
        return self.retrievers[name]

    def ask(self, case: Case, k: int, **extra: Any) -> list[dict[str, Any]]:
        """One ranking row per method for `case`'s question at retrieval depth `k`, plus `extra` columns.

        Besides the ranked notes and their de-duplicated sessions, a row holds the gold notes the data names
        (none when it names none: the note metrics and ``qrels.notes.txt`` leave such a question out), the notes' scores
        (``ranked_scores``), each session's score (``ranked_session_scores``: its best note's) and the
        sessions a tie at the depth cut leaves out (``tied_beyond_depth``, `tied_beyond`), which the
        tie-aware metrics need (`taggraph.evaluation.metrics.tie_metrics`)."""
        rows = []
        for name in self.methods:
            with method_errors(name, case.case_id):  # a method's failure names it and the question
                retriever = self.retriever(name)
                t0 = time.perf_counter()
                results = retriever.query(case.question, k=k, asked_on=case.asked_on)
                self.timings.append({"question_id": case.case_id, "stage": "query", "method": name,
                                     "seconds": time.perf_counter() - t0})
                beyond = tied_beyond(retriever, case, results, k)
            sessions = session_scores((r.session_id for r in results), (r.score for r in results), k)
            rows.append({"question_id": case.case_id, "question_type": case.question_type, "method": name,
                         **extra, "notes": len(self.store),
                         "ranked_session_ids": [sid for sid, _ in sessions],
                         "gold_session_ids": list(case.gold_session_ids),
                         "ranked_note_ids": [r.note_id for r in results], "gold_note_ids": list(case.gold_note_ids),
                         "abstention": case.is_abstention,
                         "ranked_scores": [r.score for r in results],
                         "ranked_session_scores": [score for _, score in sessions],
                         "tied_beyond_depth": beyond})
        return rows


def tied_beyond(retriever: Retriever, case: Case, results: Sequence, k: int) -> list[str]:
    """Sessions, in note order, of the notes beyond the first `k` whose score equals the last retrieved
    note's (`same_score`), less the sessions already retrieved: the part of the cut's tie group the ranking leaves out.
    Empty unless the ranking is full and the store larger; then the method ranks once more (its whole
    `Retriever.ranking`, untimed), since the ranking holds only the first k."""
    if len(results) < k or len(retriever.store) <= k:
        return []
    cut, shown = results[-1].score, {r.note_id for r in results}
    seen = {r.session_id for r in results}
    notes = retriever.store.notes
    tied = sorted(i for i, s in retriever.ranking(case.question, asked_on=case.asked_on)
                  if same_score(s, cut) and notes[i].note_id not in shown)
    return list(dict.fromkeys(notes[i].session_id for i in tied if notes[i].session_id not in seen))
