"""benchmarks/time_profile.py: totals, shares and medians from a run folder's timings.csv."""

import pandas as pd

from benchmarks import time_profile


def test_profile_sums_per_stage_and_method(tmp_path):
    pd.DataFrame([
        {"question_id": "q1", "stage": "extract+store", "method": "", "seconds": 3.0},
        {"question_id": "q1", "stage": "index", "method": "BM25", "seconds": 1.0},
        {"question_id": "q2", "stage": "extract+store", "method": "", "seconds": 5.0},
        {"question_id": "q2", "stage": "index", "method": "BM25", "seconds": 1.0},
    ]).to_csv(tmp_path / "timings.csv", index=False)
    table = time_profile.profile(tmp_path)
    assert table.values.tolist() == [["extract+store", "", 8.0, 4.0, "80.0%"],
                                     ["index", "BM25", 2.0, 1.0, "20.0%"]]
