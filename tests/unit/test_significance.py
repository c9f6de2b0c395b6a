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


def test_compare_pairs_by_question_and_marks_significance():
    import pandas as pd
    from taggraph.evaluation.significance import compare
    rows = [{"question_id": f"q{i}", "method": m, "RR": rr, "abstention": False}
            for i in range(40) for m, rr in (("base", 0.5), ("better", 1.0), ("same", 0.5))]
    rows.append({"question_id": "q_abs", "method": "better", "RR": float("nan"), "abstention": True})
    table = compare(pd.DataFrame(rows), "base").set_index("method")
    assert table.loc["better", "n"] == 40 and table.loc["better", "diff"] == pytest.approx(0.5)
    assert table.loc["better", "sig"] == "*" and table.loc["same", "sig"] == "" and table.loc["same", "p_value"] == 1.0


def three_methods_each_better_on_6_of_40_questions():
    """Each method gains 0.5 RR over `base` on 6 questions of its own: p = 2 / 2**6 ~ 0.031 alone, 3 x that by Holm."""
    import pandas as pd
    rows = [{"question_id": f"q{i}", "method": "base", "RR": 0.5, "abstention": False} for i in range(40)]
    rows += [{"question_id": f"q{i}", "method": m, "RR": 1.0 if 6 * k <= i < 6 * k + 6 else 0.5, "abstention": False}
             for k, m in enumerate(["a", "b", "c"]) for i in range(40)]
    return pd.DataFrame(rows)


def test_the_star_is_holm_adjusted_over_every_method_compared():
    from taggraph.evaluation.significance import adjusted_p_values, compare
    table = compare(three_methods_each_better_on_6_of_40_questions(), "base")
    assert (table["p_value"] < 0.05).all() and (table["p_holm"] > 0.05).all()
    assert (table["sig"] == "").all()  # an unadjusted star would mark all three
    adjusted = adjusted_p_values(table["p_value"])
    assert table["p_holm"].tolist() == adjusted["holm"].tolist() and table["p_bh"].tolist() == adjusted["bh"].tolist()


def test_bench_s_summary_gives_the_adjusted_p_and_says_which_the_star_uses():
    import pandas as pd
    from taggraph.runs.bench import BenchResult, add_significance
    from taggraph.viz.report_tables import significance_note, summary_view
    rankings = three_methods_each_better_on_6_of_40_questions()
    summary = rankings.groupby("method", sort=False)["RR"].agg(n="size", MRR="mean").reset_index()
    result = add_significance(BenchResult(rankings, summary, pd.DataFrame(), pd.DataFrame(), pd.DataFrame(), {}),
                              "base")
    shown = summary_view(result).set_index("method")
    assert shown.columns[2:8].tolist() == ["MRR 95% CI", "ΔMRR vs base", "p", "p_holm", "p_bh", "sig"]
    assert (result.summary.set_index("method").loc[["a", "b", "c"], "sig"] == "").all()
    assert result.extra["significance"][["p_holm", "p_bh"]].notna().all().all()
    assert significance_note(result).endswith(
        "adjust it for the 3 method(s) compared with base (Holm: family-wise error; Benjamini-Hochberg: false "
        "discovery rate). sig * : p_holm < 0.05.")
