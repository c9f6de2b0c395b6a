"""Paired significance tests (taggraph.evaluation.significance)."""

import numpy as np
import pytest

from taggraph.evaluation.significance import paired_test, significant


def test_identical_inputs_are_not_significant():
    a = np.random.default_rng(0).random(50)
    assert paired_test(a, a) == (0.0, 0.0, 0.0, 1.0)
    assert not significant(paired_test(a, a))


def test_clear_difference_is_significant_and_inside_its_interval():
    rng = np.random.default_rng(1)
    b = rng.random(200)
    a = b + 0.1 + rng.normal(0, 0.05, 200)
    t = paired_test(a, b)
    assert t.p_value < 1e-3
    assert t.ci_low < t.mean_diff < t.ci_high and t.ci_low > 0.05 and t.ci_high < 0.15
    assert significant(t, min_diff=0.005) and not significant(t, min_diff=0.5)


def test_noise_alone_is_not_significant():
    rng = np.random.default_rng(2)
    b = rng.random(200)
    t = paired_test(b + rng.normal(0, 0.1, 200), b)
    assert t.p_value > 0.05 and t.ci_low < 0 < t.ci_high


def test_exact_sign_flip_p_value():
    # 4 questions, all better by 1..4: of the 2^4 sign flips only all-plus and all-minus reach |mean| 2.5
    t = paired_test([1.0, 2.0, 3.0, 4.0], [0.0, 0.0, 0.0, 0.0])
    assert t.mean_diff == 2.5 and t.p_value == pytest.approx(2 / 16)


def test_pairing_matters():
    # the same values unpaired would look alike; paired, each question gains 0.05
    b = np.linspace(0, 1, 100)
    t = paired_test(b + 0.05, b)
    assert t.p_value < 1e-3 and t.ci_low == pytest.approx(0.05) and t.ci_high == pytest.approx(0.05)


def test_swapping_the_arguments_flips_the_difference():
    rng = np.random.default_rng(3)
    a, b = rng.random(60), rng.random(60)
    ab, ba = paired_test(a, b), paired_test(b, a)
    assert ab.mean_diff == pytest.approx(-ba.mean_diff) and ab.p_value == pytest.approx(ba.p_value)


def test_rejects_unpaired_shapes():
    with pytest.raises(ValueError):
        paired_test([1.0, 2.0], [1.0, 2.0, 3.0])


def test_compare_script_pairs_questions_across_methods():
    import importlib.util

    import pandas as pd

    from taggraph.config import REPO_ROOT

    spec = importlib.util.spec_from_file_location("paired_significance",
                                                  REPO_ROOT / "benchmarks" / "paired_significance.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    rr = np.linspace(0.1, 1.0, 40)
    rows = [{"question_id": f"q{i}", "method": m, "reciprocal_rank": v, "abstention": False}
            for i, (a, b) in enumerate(zip(rr, rr[::-1])) for m, v in (("A", a), ("B", min(a + 0.2, 1.0)))]
    rows.append({"question_id": "q_abs", "method": "A", "reciprocal_rank": float("nan"), "abstention": True})
    rows.append({"question_id": "q_abs", "method": "B", "reciprocal_rank": float("nan"), "abstention": True})
    table = script.compare(pd.DataFrame(rows[::-1]), baseline="A")  # row order must not matter
    (row,) = table.to_dict("records")
    assert row["method"] == "B" and row["n"] == 40 and row["p < 0.05"] == "yes"
    assert row["diff vs A"] == pytest.approx(np.mean(np.minimum(rr + 0.2, 1.0) - rr), abs=1e-4)
