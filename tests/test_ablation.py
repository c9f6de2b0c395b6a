from pathlib import Path

import pytest

from taggraph.config import DEMO_DATA
from taggraph.datasets import load_dataset
from taggraph.datasets.atant import load_atant
from taggraph.experiments.ablation import ABLATION_COLUMNS, FULL, component_ablation

ATANT = Path(__file__).parent / "fixtures" / "atant" / "core"


@pytest.fixture(scope="module")
def result():
    return component_ablation({"demo": load_dataset(DEMO_DATA), "atant": load_atant(ATANT)}, extractor="none")


def test_table_shape_and_deltas(result):
    assert list(result.table.columns) == ["dataset", "method", "n", "full", "-Diffusion", "-Diffusion p", "-Chronological",
                                          "-Chronological p", "-File seeding", "-File seeding p"]
    assert list(result.table["dataset"]) == ["demo", "atant"]
    for _, row in result.table.iterrows():
        mrr = result.summary[result.summary["dataset"] == row["dataset"]].set_index("method")["MRR"]
        assert row["full"] == pytest.approx(mrr[FULL])
        for method, column in ABLATION_COLUMNS.items():
            assert row[column] == pytest.approx(mrr[method] - mrr[FULL])
            assert 0 < row[f"{column} p"] <= 1 and (row[column] != 0 or row[f"{column} p"] == 1.0)


def test_question_counts_exclude_unjudged(result):
    n = result.table.set_index("dataset")["n"]
    assert n["demo"] == 9  # one abstention question out of ten
    assert n["atant"] == 7  # one question no batch strictly matches


def test_file_seeding_is_the_only_route_without_tags(result):
    # extractor "none": no concept seeds, so removing file seeding leaves plain PageRank
    demo = result.table.set_index("dataset").loc["demo"]
    assert demo["-File seeding"] < -0.3
    assert result.config["methods"]["AdaptiveGraph-noDiffusion"]["iterations"] == 0


def test_single_list_is_one_dataset():
    res = component_ablation(load_dataset(DEMO_DATA, limit=2), extractor="none", dataset="LongMemEval-S")
    assert res.table["dataset"].tolist() == ["LongMemEval-S"] and set(res.runs) == {"LongMemEval-S"}


def test_ablations_of_a_method_come_from_the_registry():
    from taggraph.experiments.ablation import ablation_columns
    from taggraph.retrieval.registry import ablations_of
    assert ablations_of("AdaptiveGraph") == ["AdaptiveGraph-noDiffusion", "AdaptiveGraph-noChronological",
                                             "AdaptiveGraph-noFileSeeding"]  # not the two-component pair
    assert ablation_columns("BM25") == {}


def test_intervals_hold_the_mean_change_and_n(result):
    from taggraph.experiments.ablation import ablation_intervals

    intervals = ablation_intervals(result).set_index(["dataset", "removed"])
    for table in result.table.to_dict("records"):
        for col in ABLATION_COLUMNS.values():
            row = intervals.loc[(table["dataset"], col)]
            assert row["n"] == table["n"] and abs(row["MRR change"] - table[col]) < 1e-12
            assert row["CI low"] <= row["MRR change"] <= row["CI high"]
