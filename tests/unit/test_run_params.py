"""What tells two runs apart: their recorded settings flattened and diffed (`viz.run_params`)."""

from taggraph.viz.run_params import difference_line, differences, run_params, unusual


def record(alpha=0.85, time=True, extractor="offline-v2"):
    return {"config": {"extractor": extractor, "depth": 40, "methods": {
        "AdaptiveGraph": {"method": "AdaptiveGraph", "alpha": alpha, "origin": "x", "provenance": {"class": "x"}},
        "TagGraph-Fusion": {"time": time, "weights": {"turns": 3.0}}}}}


def test_two_runs_that_differ_by_param_are_told_apart_in_one_line():
    a, b = run_params(record()), run_params(record(alpha=0.5, time=False))
    assert a == {"extractor": "offline-v2", "depth": "40", "AdaptiveGraph.alpha": "0.85",
                 "TagGraph-Fusion.time": "True", "TagGraph-Fusion.weights.turns": "3.0"}  # no origin nor provenance
    assert differences(a, b) == ["AdaptiveGraph.alpha=0.5", "TagGraph-Fusion.time=False"]
    assert difference_line(["a", "b"], [a, b]) == "b: AdaptiveGraph.alpha=0.5, TagGraph-Fusion.time=False"
    assert difference_line(["a", "b"], [a, a]) == "the runs record the same settings"


def test_a_method_only_one_run_ran_is_no_difference_and_a_row_names_what_most_runs_set_otherwise():
    a, b = run_params(record()), {**run_params(record()), "BM25.k1": "5.0"}
    assert differences(a, b) == []
    assert unusual([a, a, run_params(record(extractor="none"))]) == [[], [], ["extractor=none"]]
