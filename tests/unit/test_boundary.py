"""Nothing silent at the boundary between a method and a ranking: scores that are not
finite, impossible note indexes and wrong types from `score()`, and a method's own exception are one line
naming the method, the question and the fix, for built-in and plug-in methods alike; a method named twice
runs once; failed extractions stop a bench unless allowed, and then are said; a failing `evidence()` is
said on its page instead of losing the run."""

from __future__ import annotations

import json
import math
import sys
import warnings

import numpy as np
import pytest
from typer.testing import CliRunner

import taggraph as tg
from taggraph.cli import app
from taggraph._infra.config import DEMO_DATA
from taggraph.datasets import load_dataset
from taggraph.errors import ServerError
from taggraph.runs.bench import run_bench
from taggraph.extractors import registry as extractors
from taggraph.methods import make_retriever, registry
from taggraph.methods.base import MethodError

from tests.helpers.stores import make_store, HAND_ROWS

runner = CliRunner()


@pytest.fixture(scope="module")
def cases():
    return load_dataset(DEMO_DATA)


@pytest.fixture
def clean_registry(monkeypatch):
    """Registrations made by a test stay in that test."""
    monkeypatch.setattr(registry.METHODS, "_registered", dict(registry.METHODS._registered))
    monkeypatch.setattr(extractors.EXTRACTORS, "_registered", dict(extractors.EXTRACTORS._registered))


def spoilt(spoil):
    """A plug-in method scoring note i with i + 1, its scores then passed through `spoil`."""
    class Spoilt(tg.Retriever):
        def add(self, note):
            pass

        def score(self, text, *, asked_on=None):
            return spoil({i: float(i + 1) for i in range(len(self.store))})
    return Spoilt


SPOILS = {
    "nan": (lambda s: {**s, 0: math.nan}, r"gave 1 note a score that is not finite \(first: note 0, nan\)"),
    "inf": (lambda s: {**s, 2: math.inf}, r"not finite \(first: note 2, inf\).*overflows"),
    "-inf": (lambda s: {**s, 1: -math.inf}, r"not finite \(first: note 1, -inf\)"),
    "negative": (lambda s: {**s, -1: 99.0}, r"returned note index -1, but the memory holds \d+ notes"),
    "past the end": (lambda s: {**s, len(s): 99.0}, r"returned note index (\d+), but the memory holds \1 notes"),
    "str key": (lambda s: {str(i): v for i, v in s.items()}, r"the key '0' \(str\); keys are note indexes"),
    "float key": (lambda s: {0.5: 1.0}, r"the key 0.5 \(float\)"),
    "bool key": (lambda s: {True: 1.0}, r"the key True \(bool\)"),
    "str value": (lambda s: {0: "0.5"}, r"gave note 0 the score '0.5' \(str\); scores are numbers"),
    "None value": (lambda s: {0: None}, r"gave note 0 the score None \(NoneType\)"),
    "list": (lambda s: list(s.items()), r"returned list, not a dict"),
    "None": (lambda s: None, r"returned NoneType, not a dict"),
}


@pytest.mark.parametrize("kind", SPOILS)
def test_a_broken_score_is_one_line_naming_method_question_and_fix(kind, cases, clean_registry):
    spoil, said = SPOILS[kind]
    tg.register_method("Spoilt", spoilt(spoil))
    with pytest.raises(MethodError, match=r"^method 'Spoilt', question 'demo_q01': score\(\) .*" + said) as err:
        run_bench(cases[:2], ["BM25", "Spoilt"], extractor="none")
    assert "\n" not in str(err.value)


def test_an_overflowing_in_range_parameter_is_refused_like_any_other_breach(cases, tmp_path):
    """BM25's k1 has no upper bound; 1e308 overflows to inf scores (MRR 0.20 before, without a word)."""
    with pytest.raises(MethodError, match=r"^method 'BM25', question 'demo_q0\d': .*notes a score that is not "
                                          r"finite \(first: note \d+, inf\).*overflows"):
        run_bench(cases[:2], ["BM25"], extractor="none", method_params={"BM25": {"k1": 1e308}})
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # numpy's overflow warning would be printed before the line
        res = runner.invoke(app, ["bench", "--methods", "BM25", "--param", "BM25.k1=1e308", "--limit", "2",
                                  "--extractor", "none", "--miss-pages", "0", "--out", str(tmp_path / "run")])
    assert res.exit_code == 2 and res.output.count("\n") == 1 and "not finite" in res.output, res.output


def test_a_method_s_own_exception_names_method_and_question_and_keeps_the_original(cases, clean_registry):
    class Crashing(spoilt(lambda s: s)):
        def score(self, text, *, asked_on=None):
            return {0: 1.0} if "dog" in text else {0: 1 / 0}

    tg.register_method("Crashing", Crashing)
    with pytest.raises(MethodError, match=r"^method 'Crashing', question 'demo_q02': raised ZeroDivisionError: "
                                          r"division by zero \(fix the method; its traceback is this error's "
                                          r"__cause__, shown by --debug on the command line\)") as err:
        run_bench(cases[:2], ["Crashing"], extractor="none")
    assert isinstance(err.value.__cause__, ZeroDivisionError)  # in Python, where no --debug exists


def test_a_method_that_calls_sys_exit_fails_the_bench_in_one_line(cases, clean_registry, tmp_path):
    class Exits(spoilt(lambda s: s)):
        def score(self, text, *, asked_on=None):
            sys.exit(0)

    tg.register_method("Exits", Exits)
    with pytest.raises(MethodError, match=r"^method 'Exits', question 'demo_q01': raised SystemExit: 0"):
        run_bench(cases[:1], ["Exits"], extractor="none")
    res = runner.invoke(app, ["bench", "--methods", "Exits", "--limit", "1", "--out", str(tmp_path / "run")])
    assert res.exit_code == 2 and "raised SystemExit" in res.output and not (tmp_path / "run").exists()


def test_an_exception_while_indexing_names_the_method_and_question_too(cases, clean_registry):
    class BadIndex(spoilt(lambda s: s)):
        def add(self, note):
            raise KeyError(note.note_id)

    tg.register_method("BadIndex", BadIndex)
    with pytest.raises(MethodError, match=r"^method 'BadIndex', question 'demo_q01': raised KeyError: 'demo_s"):
        run_bench(cases[:1], ["BadIndex"], extractor="none")


def test_outside_a_bench_the_breach_names_the_method(clean_registry):
    tg.register_method("Spoilt", spoilt(lambda s: {**s, -1: 1.0}))
    retriever = make_retriever("Spoilt", make_store(HAND_ROWS))
    with pytest.raises(MethodError, match=r"^method 'Spoilt': score\(\) returned note index -1, but the memory "
                                          r"holds 5 notes \(indexes 0 to 4\)"):
        retriever.query("dog")
    with pytest.raises(MethodError, match="note index -1"):
        retriever.explain("dog", "s1#0")


def test_the_cli_says_it_in_one_line_with_exit_status_2(tmp_path, clean_registry):
    tg.register_method("Spoilt", spoilt(lambda s: {**s, 0: math.nan}))
    res = runner.invoke(app, ["bench", "--methods", "Spoilt", "--limit", "2", "--out", str(tmp_path / "run")])
    assert res.exit_code == 2
    assert res.output.strip().splitlines() == [
        "error: method 'Spoilt', question 'demo_q01': score() gave 1 note a score that is not finite (first: "
        "note 0, nan); leave out the notes the method does not reach, and look for a parameter so large that the "
        "arithmetic overflows"]
    assert not (tmp_path / "run").exists()


def test_a_method_named_twice_runs_once(cases):
    result = run_bench(cases, ["BM25", "BM25"], extractor="none")
    assert result.summary["method"].tolist() == ["BM25"]
    assert result.summary.loc[0, "n"] == 12
    assert len(result.rankings) == len(cases)


class HalfFailing:
    """An extractor whose server answers every other turn with something unusable."""

    name = "half-failing"
    cache_key = "half-failing"

    def __init__(self):
        self.calls = 0

    def extract(self, user_text, assistant_text, existing_tags):
        self.calls += 1
        if self.calls % 2:
            return tg.Extraction(error="model output is str, not a JSON object:\n'Sorry, I cannot'")
        return tg.Extraction(what=["topic/" + user_text.split()[0].lower()])


def test_failed_extractions_stop_the_bench_unless_allowed(cases):
    with pytest.raises(ServerError, match=r"^\d+ of \d+ notes of the memory of 'demo_q01' failed extraction with "
                                          r"test_boundary:HalfFailing \(first: note 'demo_s\d+#0': model output "
                                          r"is str, not a JSON object: 'Sorry, I cannot'\); .*"
                                          r"--allow-failed-extractions"):
        run_bench(cases[:2], ["BM25"], extractor=HalfFailing())
    allowed = run_bench(cases[:2], ["BM25"], extractor=HalfFailing(), allow_failed_extractions=True)
    failed = allowed.config["failed_extractions"]
    assert failed["notes"] > 0 and failed["memories"] == 2
    assert failed["first"].startswith("note 'demo_s") and failed["first"].endswith("'Sorry, I cannot'")
    (warning,) = [w for w in allowed.warnings if w.kind == "failed_extractions"]
    assert warning.count == failed["notes"] and warning.first[0] == failed["first"]


def test_allowed_failed_extractions_are_said_on_stdout_in_the_report_and_in_run_json(tmp_path, clean_registry):
    extractors.register_extractor("half-failing", HalfFailing)
    refused = runner.invoke(app, ["bench", "--methods", "BM25", "--limit", "2", "--extractor", "half-failing",
                                  "--out", str(tmp_path / "refused")])
    assert refused.exit_code == 2 and "--allow-failed-extractions" in refused.output
    assert not (tmp_path / "refused").exists()
    out = tmp_path / "run"
    res = runner.invoke(app, ["bench", "--methods", "BM25", "--limit", "2", "--extractor", "half-failing",
                              "--allow-failed-extractions", "--miss-pages", "0", "--out", str(out)])
    assert res.exit_code == 0, res.output
    line = next(x for x in res.stdout.splitlines() if "failed extraction" in x)
    assert line.startswith("warning: half-failing: ") and "first: note 'demo_s" in line
    record = json.loads((out / "run.json").read_text())
    assert record["config"]["failed_extractions"]["notes"] > 0
    assert record["config"]["failed_extractions"]["first"] in line
    assert any(w["kind"] == "failed_extractions" for w in record["data_warnings"])
    assert line.removeprefix("warning: ") in (out / "report.md").read_text()


def test_a_failing_evidence_is_said_on_its_page_and_the_run_is_saved(tmp_path, clean_registry):
    class NoEvidence(spoilt(lambda s: s)):
        def evidence(self, text, note, *, asked_on=None):
            raise RuntimeError("evidence\nbroke")

    tg.register_method("NoEvidence", NoEvidence)
    out = tmp_path / "run"
    res = runner.invoke(app, ["bench", "--methods", "BM25,NoEvidence", "--limit", "3", "--miss-pages", "1",
                              "--out", str(out)])
    assert res.exit_code == 0, res.output
    pages = sorted(out.glob("misses/*.explain.html"))
    assert pages
    page = pages[0].read_text()
    assert "NoEvidence.evidence() failed: RuntimeError: evidence broke" in page
    assert "BM25 over" in page or "terms" in page  # BM25's own evidence still shows


def test_any_evidence_detail_is_shown_as_text_and_the_run_is_saved(tmp_path, clean_registry):
    class OddDetail(spoilt(lambda s: s)):
        def evidence(self, text, note, *, asked_on=None):
            return tg.Evidence(summary="odd", detail={"set": {2, 1}, "object": Marker(), 3: np.int64(4),
                                                      "paths": "not the built-in shape"})

    class Marker:
        def __repr__(self):
            return "<marker & co>"

    tg.register_method("OddDetail", OddDetail)
    explanation = make_retriever("OddDetail", make_store(HAND_ROWS)).explain("dog", "s2#0")
    assert explanation.details == {"set": [1, 2], "object": "<marker & co>", "3": 4, "paths": "not the built-in shape"}
    out = tmp_path / "run"
    res = runner.invoke(app, ["bench", "--methods", "BM25,OddDetail", "--limit", "3", "--miss-pages", "1",
                              "--out", str(out)])
    assert res.exit_code == 0, res.output
    page = next(out.glob("misses/*.explain.html")).read_text()
    assert "&lt;marker &amp; co&gt;" in page and "not the built-in shape" in page


@pytest.mark.parametrize("detail, message", [
    ({"walk": [["a", "b", "c"]]}, "detail['walk'] must be a list of [from, to] node ids"),
    ({"walk_breaks": [{"node": "a"}]}, "detail['walk_breaks'] must be a list of"),
    ([("a", 1)], "returned a detail of type list, not a dict"),
])
def test_a_detail_the_graph_page_cannot_draw_is_a_failed_evidence(detail, message, clean_registry):
    class BadWalk(spoilt(lambda s: s)):
        def evidence(self, text, note, *, asked_on=None):
            return tg.Evidence(summary="walked", detail=detail)

    tg.register_method("BadWalk", BadWalk)
    explanation = make_retriever("BadWalk", make_store(HAND_ROWS)).explain("dog", "s2#0")
    assert "BadWalk.evidence() failed: TypeError: " + message in explanation.reason


def test_a_page_that_cannot_be_drawn_says_so_and_the_run_is_saved(tmp_path, monkeypatch):
    import taggraph.viz.graph.page as graphview

    def broken(*args, **kwargs):
        raise RuntimeError("graph\nbroke")

    monkeypatch.setattr(graphview, "graph_page", broken)
    out = tmp_path / "run"
    res = runner.invoke(app, ["bench", "--methods", "BM25,TagGraph-Stopwords", "--miss-pages", "1", "--out", str(out)])
    assert res.exit_code == 0, res.output
    page = next(out.glob("misses/*.graph.html")).read_text()
    assert "could not be drawn" in page and "RuntimeError: graph broke" in page
    assert "BM25" in next(out.glob("misses/*.explain.html")).read_text()


def test_an_evidence_that_is_no_evidence_is_said_too(clean_registry):
    class WrongEvidence(spoilt(lambda s: s)):
        def evidence(self, text, note, *, asked_on=None):
            return "a string"

    tg.register_method("WrongEvidence", WrongEvidence)
    explanation = make_retriever("WrongEvidence", make_store(HAND_ROWS)).explain("dog", "s2#0")
    assert explanation.reason.endswith("WrongEvidence.evidence() failed: TypeError: returned str, not a "
                                       "taggraph.Evidence")


def test_an_evidence_that_exits_is_said_too_and_the_process_goes_on(clean_registry):
    class ExitingEvidence(spoilt(lambda s: s)):
        def evidence(self, text, note, *, asked_on=None):
            raise SystemExit(4)

    tg.register_method("ExitingEvidence", ExitingEvidence)
    explanation = make_retriever("ExitingEvidence", make_store(HAND_ROWS)).explain("dog", "s2#0")
    assert explanation.reason.endswith("ExitingEvidence.evidence() failed: SystemExit: 4")
