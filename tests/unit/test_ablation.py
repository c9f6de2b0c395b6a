from pathlib import Path

import pytest

from taggraph._infra.config import DEMO_DATA
from taggraph.datasets import load_dataset
from taggraph.datasets.atant import load_atant
from taggraph.evaluation.verdicts import ABLATION_COLUMNS, FULL
from taggraph.studies.ablation import component_ablation

ATANT = Path(__file__).parents[1] / "fixtures" / "atant" / "core"


@pytest.fixture(scope="module")
def result():
    return component_ablation({"demo": load_dataset(DEMO_DATA), "atant": load_atant(ATANT)}, extractor="none")


def test_table_shape_and_deltas(result):
    cells = [f"{col}{p}" for col in ABLATION_COLUMNS.values() for p in ("", " p", " p_holm", " p_bh")]
    assert list(result.table.columns) == ["dataset", "method", "n", "full", *cells]
    assert list(result.table["dataset"]) == ["demo", "atant"]
    for _, row in result.table.iterrows():
        mrr = result.summary[result.summary["dataset"] == row["dataset"]].set_index("method")["MRR"]
        assert row["full"] == pytest.approx(mrr[FULL])
        for method, column in ABLATION_COLUMNS.items():
            assert row[column] == pytest.approx(mrr[method] - mrr[FULL])
            assert 0 < row[f"{column} p"] <= 1 and (row[column] != 0 or row[f"{column} p"] == 1.0)
            assert row[f"{column} p"] <= row[f"{column} p_bh"] <= row[f"{column} p_holm"] <= 1


def test_question_counts_exclude_abstention_and_count_unmatched_as_misses(result):
    n = result.table.set_index("dataset")["n"]
    assert n["demo"] == 12  # one abstention question out of 13
    assert n["atant"] == 8  # one question no batch strictly matches: a miss, as its data warning says


def test_file_seeding_is_the_only_route_without_tags(result):
    # extractor "none": no concept seeds, so removing file seeding leaves plain PageRank
    demo = result.table.set_index("dataset").loc["demo"]
    assert demo["-File seeding"] < -0.3
    assert result.config["methods"]["AdaptiveGraph-noDiffusion"]["iterations"] == 0


def test_single_list_is_one_dataset():
    res = component_ablation(load_dataset(DEMO_DATA, limit=2), extractor="none", dataset="LongMemEval-S")
    assert res.table["dataset"].tolist() == ["LongMemEval-S"] and set(res.runs) == {"LongMemEval-S"}


def test_ablations_of_a_method_come_from_the_registry():
    from taggraph.evaluation.verdicts import ablation_columns
    from taggraph.methods.registry import ablations_of
    assert ablations_of("AdaptiveGraph") == ["AdaptiveGraph-noDiffusion", "AdaptiveGraph-noChronological",
                                             "AdaptiveGraph-noFileSeeding"]  # not the two-component pair
    assert ablation_columns("BM25") == {}


def test_intervals_hold_the_mean_change_and_n(result):
    from taggraph.studies.ablation import ablation_intervals

    intervals = ablation_intervals(result).set_index(["dataset", "removed"])
    for table in result.table.to_dict("records"):
        for col in ABLATION_COLUMNS.values():
            row = intervals.loc[(table["dataset"], col)]
            assert row["n"] == table["n"] and abs(row["MRR change"] - table[col]) < 1e-12
            assert row["CI low"] <= row["MRR change"] <= row["CI high"]
            assert (row["p"], row["p_holm"], row["p_bh"]) == tuple(table[f"{col} {p}"] for p in ("p", "p_holm", "p_bh"))


def test_verdicts_say_plainly_whether_a_component_earns_its_keep():
    from taggraph.evaluation.verdicts import verdict
    assert verdict("-Graph", -0.012, -0.02, -0.004, 0.01, 0.02).endswith("It earns its keep.")
    assert "does not earn its keep" in verdict("-Graph", -0.012, -0.03, +0.004, 0.2, 0.4)  # not significant
    assert "does not earn its keep" in verdict("-Graph", -0.002, -0.004, -0.001, 0.01, 0.01)  # significant, too small
    assert "removing it helps" in verdict("-Diffusion", +0.03, +0.01, +0.05, 0.001, 0.002)
    assert verdict("-Requests", 0.0, 0.0, 0.0, 1.0, 1.0) == ("Without the requests component: no question's "
                                                             "reciprocal rank changes. It does not earn its keep here.")
    assert verdict("-File seeding", -0.1, -0.2, -0.05, 0.001, 0.001).startswith(
        "Without the file seeding component: MRR -0.100")
    held = verdict("-Graph", -0.05, -0.09, -0.01, 0.034, 0.374)  # significant alone, not among eleven ablations
    assert "p = 0.034, p_holm = 0.374" in held and "does not earn its keep" in held


def test_verdicts_rest_on_the_p_adjusted_over_the_ablations_compared():
    import pandas as pd

    from taggraph.evaluation.significance import compare
    from taggraph.evaluation.verdicts import component_verdicts
    rr = {FULL: [1.0] * 20, "AdaptiveGraph-noDiffusion": [0.5] * 6 + [1.0] * 14,
          "AdaptiveGraph-noChronological": [1.0] * 20}
    rankings = pd.DataFrame([{"question_id": f"q{i}", "method": m, "RR": r} for m, rrs in rr.items()
                             for i, r in enumerate(rrs)])
    tests = compare(rankings, FULL).set_index("method").loc["AdaptiveGraph-noDiffusion"]
    assert tests["p_value"] < 0.05 < tests["p_holm"]
    diffusion, _ = component_verdicts(rankings)[FULL]
    assert f"p_holm = {tests['p_holm']:.3f}" in diffusion and "does not earn its keep" in diffusion


def test_run_report_carries_a_verdict_per_ablation():
    from taggraph._infra.config import DEMO_DATA
    from taggraph.datasets import load_dataset
    from taggraph.evaluation.verdicts import component_verdicts
    from taggraph.runs.bench import run_bench
    from taggraph.viz.report_md import markdown_report
    result = run_bench(load_dataset(DEMO_DATA), ["BM25", "AdaptiveGraph", "AdaptiveGraph-noDiffusion"],
                       extractor="none", backend=None)
    verdicts = component_verdicts(result.rankings)
    assert list(verdicts) == ["AdaptiveGraph"] and len(verdicts["AdaptiveGraph"]) == 1
    assert verdicts["AdaptiveGraph"][0].startswith("Without the diffusion component: MRR ")
    report = markdown_report(result, "demo", "demo", None)
    assert "## Does each component of AdaptiveGraph earn its keep?" in report and verdicts["AdaptiveGraph"][0] in report


def test_a_method_without_ablations_is_refused_up_front():
    """05 with METHOD="BM25" once ran BM25 alone and failed cells later on a NaN n; now one line names the
    methods that declare ablations, before any question runs."""
    from taggraph.errors import ConfigError
    with pytest.raises(ConfigError, match=r"^BM25 declares no ablations; methods that do: AdaptiveGraph, "
                                          r"TagGraph-Fusion"):
        component_ablation(load_dataset(DEMO_DATA)[:1], extractor="none", method="BM25")
