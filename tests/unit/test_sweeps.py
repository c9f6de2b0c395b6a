from dataclasses import replace

import pandas as pd
import plotly.graph_objects as go
import pytest

from taggraph.errors import ConfigError
from taggraph._infra.config import DEMO_DATA
from taggraph.datasets import first_per_type, load_dataset
from taggraph.runs.bench import run_bench
from taggraph.runs.runner import build_store
from taggraph.methods import make_retriever
from taggraph.core.text import parse_datetime
from taggraph.studies.sweeps import (COSTS, SIZE_PANELS, SWEEP_METHODS, depth_sweep, distractor_order,
                                         distractor_sweep, plot_depth_sweep, plot_diffusion_contribution,
                                         plot_distractor_sweep, plot_sweep_by_size, pooled_order, session_pool,
                                         substore)

CASES = load_dataset(DEMO_DATA)


def test_distractor_order_is_seeded_nested_and_excludes_gold():
    case = CASES[0]
    order = distractor_order(case, seed=0)
    sessions = list(dict.fromkeys(i.session_id for i in case.interactions))
    assert sorted(order) == sorted(s for s in sessions if s not in case.gold_session_ids)
    assert order == distractor_order(case, seed=0)
    assert order != distractor_order(case, seed=1)


def test_substore_keeps_chronological_order_and_tags(hand_store):
    sub = substore(hand_store, {"s4", "s2"})
    assert [n.note_id for n in sub.notes] == ["s2#0", "s4#0"] and [n.index for n in sub.notes] == [0, 1]
    assert sub.notes[0].tags == hand_store.by_id["s2#0"].tags and sub.notes[0] is not hand_store.by_id["s2#0"]
    assert len(hand_store) == 5


def test_combined_configuration_has_neither_seeding_nor_diffusion(hand_store):
    config = make_retriever("AdaptiveGraph-noFileSeeding-noDiffusion", hand_store).config()
    assert config["method"] == "AdaptiveGraph-noFileSeeding-noDiffusion"
    assert config["file_seeding"] is False and config["iterations"] == 0
    with pytest.raises(ConfigError, match="unknown method"):
        distractor_sweep(CASES[:1], methods=["NoSuchMethod"])


@pytest.fixture(scope="module")
def sweep():
    return distractor_sweep(CASES, counts=(0, 3, 100), seed=0, extractor="offline")


def test_sweep_sizes_and_full_haystack_parity(sweep):
    notes = sweep.summary.drop_duplicates("distractors").set_index("distractors")["notes/case"]
    assert notes[0] < notes[3] < notes[100]
    case = CASES[0]
    row = sweep.rankings[(sweep.rankings["question_id"] == case.case_id) & (sweep.rankings["distractors"] == 3)]
    kept = set(case.gold_session_ids) | set(distractor_order(case, 0)[:3])
    assert (row["notes"] == len(substore(build_store(case, "none"), kept))).all()
    full = run_bench(CASES, ["AdaptiveGraph"], extractor="offline")
    judged = {c.case_id for c in CASES if not c.is_abstention}  # notes/case counts the cases n and MRR count
    assert notes[100] == pytest.approx(full.stores[full.stores["question_id"].isin(judged)]["notes"].mean())
    assert len(judged) < len(CASES)  # the demo has an abstention question
    at_full = sweep.rankings[(sweep.rankings["distractors"] == 100) & (sweep.rankings["method"] == "AdaptiveGraph")]
    # notes extracted once over the full haystack: same rankings as the bench on the full store
    assert at_full["ranked_note_ids"].tolist() == full.rankings["ranked_note_ids"].tolist()


def test_a_count_beyond_the_haystack_says_how_many_it_added(sweep):
    """100 distractors on the demo's 13-session haystacks take every non-gold session: the summary says how
    many it added and a warning says it did not fill the count, instead of a line labelled 100."""
    judged = [c for c in CASES if not c.is_abstention]
    added = sweep.summary.drop_duplicates("distractors").set_index("distractors")["distractors/case"]
    assert added[3] == 3 and added[100] == pytest.approx(
        sum(len(distractor_order(c, 0)) for c in judged) / len(judged))
    assert added[100] < 100
    assert sweep.warnings == [f"100 distractors: {len(judged)} of {len(judged)} judged questions have fewer non-gold "
                              f"sessions and took them all ({added[100]:.1f} on average)"]


def test_gold_only_stores_rank_gold_first(sweep):
    gold_only = sweep.rankings[(sweep.rankings["distractors"] == 0) & ~sweep.rankings["abstention"]]
    for row in gold_only.itertuples():
        assert set(row.ranked_session_ids) <= set(row.gold_session_ids)
    mrr = sweep.summary.set_index(["distractors", "method"])["MRR"]
    assert mrr[(0, "AdaptiveGraph")] == 1.0


def test_contribution_is_the_mrr_difference(sweep):
    mrr = sweep.summary.set_index(["distractors", "method"])["MRR"]
    c = sweep.contribution.set_index("distractors")
    assert list(sweep.summary["method"].unique()) == list(SWEEP_METHODS)
    for n in (0, 3, 100):
        assert c.loc[n, "diffusion_with_seeding"] == pytest.approx(
            mrr[(n, "AdaptiveGraph")] - mrr[(n, "AdaptiveGraph-noDiffusion")])
        assert c.loc[n, "diffusion_without_seeding"] == pytest.approx(
            mrr[(n, "AdaptiveGraph-noFileSeeding")] - mrr[(n, "AdaptiveGraph-noFileSeeding-noDiffusion")])
    assert sweep.config["counts"] == [0, 3, 100] and sweep.config["seed"] == 0
    figs = [plot_distractor_sweep(sweep.summary), plot_diffusion_contribution(sweep.contribution)]
    assert all(isinstance(f, go.Figure) for f in figs) and len(figs[0].data) == 2 * len(SWEEP_METHODS)  # MRR, tieavg


def test_depth_sweep_prefixes_and_monotone_mrr():
    res = depth_sweep(CASES, ["BM25", "TagGraph-TFIDF"], depths=(2, 5, 40), extractor="none")
    r = res.rankings.set_index(["question_id", "method", "depth"])["ranked_note_ids"]
    for q in CASES:
        deep = r[(q.case_id, "BM25", 40)]
        assert r[(q.case_id, "BM25", 2)] == deep[:2] and r[(q.case_id, "BM25", 5)] == deep[:5]
    bm25 = res.summary[res.summary["method"] == "BM25"].set_index("depth")["MRR"]
    assert bm25[2] <= bm25[5] <= bm25[40]
    assert isinstance(plot_depth_sweep(res.summary), go.Figure)


@pytest.mark.parametrize("call, message", [
    (lambda: distractor_sweep(CASES[:1], counts=[0, -1], extractor="none"),
     "counts: each must be a whole number >= 0, got -1"),
    (lambda: distractor_sweep(CASES[:1], counts=[], extractor="none"), "counts: give at least one value"),
    (lambda: depth_sweep(CASES[:1], "BM25", depths=[0], extractor="none"), "depths: each must be a whole number >= 1"),
    (lambda: depth_sweep(CASES[:1], "BM25", depths=[1.5], extractor="none"), "got 1.5"),
])
def test_bad_sweep_settings_are_refused(call, message):
    with pytest.raises(ConfigError, match=message):
        call()


def test_a_setting_or_method_given_twice_is_asked_once():
    res = depth_sweep(CASES[:2], ["BM25", "BM25"], depths=[5, 5], extractor="none")
    assert len(res.rankings) == 2 and res.summary["n"].tolist() == [2]
    res = distractor_sweep(CASES[:2], counts=[3, 3], extractor="none", methods=["BM25"])
    assert len(res.rankings) == 2


def test_contribution_and_charts_show_the_tie_averaged_mrr_beside_the_papers(sweep):
    """Probe G #1: on LoCoMo, ties at score 0 put the (earliest) gold sessions first, so the strict MRR's
    contribution of diffusion can have the opposite sign of the tie-averaged one; both are shown, labelled."""
    mrr = sweep.summary.set_index(["distractors", "method"])["MRR_tieavg"]
    c = sweep.contribution.set_index("distractors")
    for n in (0, 3, 100):
        assert c.loc[n, "diffusion_with_seeding_tieavg"] == pytest.approx(
            mrr[(n, "AdaptiveGraph")] - mrr[(n, "AdaptiveGraph-noDiffusion")])
        assert c.loc[n, "diffusion_without_seeding_tieavg"] == pytest.approx(
            mrr[(n, "AdaptiveGraph-noFileSeeding")] - mrr[(n, "AdaptiveGraph-noFileSeeding-noDiffusion")])
    lines = plot_distractor_sweep(sweep.summary).data
    assert len(lines) == 2 * len(SWEEP_METHODS)
    assert {t.name.split(", ")[1] for t in lines} == {"MRR (paper: ties in note order)", "MRR_tieavg (ties averaged)"}
    gains = plot_diffusion_contribution(sweep.contribution).data
    assert sorted(t.name for t in gains) == sorted(
        f"diffusion_{s}, {m}" for s in ("with_seeding", "without_seeding")
        for m in ("MRR (paper: ties in note order)", "MRR_tieavg (ties averaged)"))


# --- the "dataset" pool: distractors past the case's own haystack (issue 65 item 4) ---------------------------

POOL = session_pool(CASES)


def test_session_pool_holds_each_session_once_with_all_its_turns():
    sessions = {i.session_id for c in CASES for i in c.interactions}
    assert set(POOL) == sessions
    for case in CASES:  # a session's turns are those of its first case, every turn of it
        for sid in {i.session_id for i in case.interactions}:
            assert len(POOL[sid]) == sum(i.session_id == sid for i in case.interactions)


def test_pooled_order_extends_the_own_order_with_other_questions_sessions_never_gold():
    for case in CASES:
        order, foreign = pooled_order(case, POOL, seed=0)
        own = distractor_order(case, seed=0)
        assert order[:len(own)] == own and order[len(own):] == foreign  # up to the haystack: the default's draws
        haystack = {i.session_id for i in case.interactions}
        assert foreign and not set(foreign) & (haystack | set(case.gold_session_ids))
        assert set(foreign) == set(POOL) - haystack and len(order) == len(set(order))
        assert (order, foreign) == pooled_order(case, POOL, seed=0)  # deterministic
        assert order != pooled_order(case, POOL, seed=1)[0]


def test_pooled_order_skips_a_gold_session_outside_the_haystack():
    """A gold session another question's haystack holds is never drawn as a distractor for this one."""
    case, other = CASES[0], CASES[1]
    elsewhere = next(s for s in POOL if s not in {i.session_id for i in case.interactions})
    gold_elsewhere = replace(case, gold_session_ids=[*case.gold_session_ids, elsewhere])
    _, foreign = pooled_order(gold_elsewhere, POOL, seed=0)
    assert elsewhere not in foreign and elsewhere in pooled_order(case, POOL, seed=0)[1]


def test_substore_merges_other_questions_notes_by_timestamp():
    case = CASES[0]
    _, foreign = pooled_order(case, POOL, seed=0)
    extra = [i for s in foreign[:5] for i in POOL[s]]
    store = build_store(replace(case, interactions=case.interactions + extra), "none")
    own = len(case.interactions)
    sub = substore(store, {n.session_id for n in store.notes}, own_notes=own)
    ids = [n.note_id for n in sub.notes]
    assert sorted(ids) == sorted(n.note_id for n in store.notes)
    assert [n.index for n in sub.notes] == list(range(len(ids)))
    assert [i for i in ids if store.by_id[i].index < own] == [n.note_id for n in store.notes[:own]]  # own order kept
    when = [parse_datetime(n.timestamp) for n in sub.notes]
    assert when == sorted(when) and ids != [n.note_id for n in store.notes]  # the demo's haystack is chronological


@pytest.fixture(scope="module")
def pooled():
    return distractor_sweep(CASES, counts=(0, 3, 30), seed=0, extractor="offline", pool="dataset")


def test_the_dataset_pool_fills_counts_past_the_haystack_from_other_questions(pooled, sweep):
    added = pooled.summary.drop_duplicates("distractors").set_index("distractors")["distractors/case"]
    assert added[30] == 30 and pooled.warnings == [] and pooled.config["pool"] == "dataset"
    assert sweep.config["pool"] == "own"
    for row in pooled.rankings[pooled.rankings["distractors"] == 30].itertuples():
        case = next(c for c in CASES if c.case_id == row.question_id)
        order, foreign = pooled_order(case, POOL, seed=0)
        kept = set(case.gold_session_ids) | set(order[:30])  # nested: every count's draws are this order's prefix
        assert set(row.ranked_session_ids) <= kept
    full = sweep.rankings[sweep.rankings["distractors"] == 100].set_index(["question_id", "method"])["notes"]
    at_30 = pooled.rankings[pooled.rankings["distractors"] == 30].set_index(["question_id", "method"])["notes"]
    assert (at_30 > full.reindex(at_30.index)).all()  # more notes than the whole own haystack
    haystacks = {c.case_id: {i.session_id for i in c.interactions} for c in CASES}
    foreign_ranked = [s for row in pooled.rankings[pooled.rankings["distractors"] == 30].itertuples()
                      for s in row.ranked_session_ids if s not in haystacks[row.question_id]]
    assert foreign_ranked  # other questions' sessions are in the stores, and ranked


def test_the_dataset_pool_within_the_haystack_is_the_default_sweep(pooled, sweep):
    """Up to a haystack's own distractors the pooled sweep draws and ranks exactly as the default."""
    columns = ["question_id", "method", "distractors", "notes", "ranked_note_ids", "ranked_scores"]
    for n in (0, 3):
        own = sweep.rankings[sweep.rankings["distractors"] == n][columns].reset_index(drop=True)
        assert pooled.rankings[pooled.rankings["distractors"] == n][columns].reset_index(drop=True).equals(own)


def test_a_sweep_row_holds_its_costs_and_the_summary_their_means(pooled):
    for column in COSTS:
        assert (pooled.rankings[column] >= 0).all() and column in pooled.summary


def test_an_unknown_pool_is_refused():
    with pytest.raises(ConfigError, match="pool: 'everything' is not one of own, dataset"):
        distractor_sweep(CASES[:1], pool="everything", extractor="none")


def test_the_size_chart_has_mrr_and_both_costs_per_method(pooled):
    fig = plot_sweep_by_size(pooled.summary)
    assert len(fig.data) == 3 * len(SWEEP_METHODS) and {a.text for a in fig.layout.annotations} == set(SIZE_PANELS)
    mrr = next(t for t in fig.data if t.name == "AdaptiveGraph" and t.xaxis == "x")
    assert list(mrr.y) == pooled.summary[pooled.summary["method"] == "AdaptiveGraph"]["MRR"].tolist()


def test_the_cli_asks_a_subset_and_pools_the_whole_dataset(tmp_path):
    import json

    from typer.testing import CliRunner

    from taggraph.cli import app
    out = tmp_path / "run"
    res = CliRunner().invoke(app, ["sweep-distractors", "--pool", "dataset", "--per-type", "1", "--counts", "0,30",
                                   "--methods", "BM25", "--extractor", "none", "--out", str(out)])
    assert res.exit_code == 0, res.output
    config = json.loads((out / "run.json").read_text())["config"]["none"]
    assert config["pool"] == "dataset" and config["pool_questions"] == len(CASES) and config["per_type"] == 1
    asked = {c.case_id for c in first_per_type(CASES, 1)}
    assert set(pd.read_csv(out / "rankings.csv")["question_id"]) == asked and len(asked) < len(CASES)
    assert (pd.read_csv(out / "summary.csv").set_index("distractors")["distractors/case"][30] == 30)
