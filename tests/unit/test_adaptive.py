import random

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp

from taggraph.extractors.base import Extraction
from taggraph.core.graph import concept_node, file_node
from taggraph.methods import make_retriever
from taggraph.methods.adaptive import personalized_pagerank
from taggraph.methods.walk import grown
from taggraph.core.store import Interaction

from tests.helpers.stores import HAND_ROWS, make_store


def seed_vector(ag, text):
    _, s = ag.scores_all(text)
    return s


@pytest.mark.parametrize("chronological", [True, False])
def test_ppr_matches_networkx_pagerank(chronological):
    rows = HAND_ROWS + [("s6", "Untagged small talk.", "Sure.", {})]  # untagged: dangling without chrono edges
    store = make_store(rows)
    ag = make_retriever("AdaptiveGraph", store, chronological=chronological, stopword_df=1.0)
    P, dangling = ag.transition()
    assert dangling.any() != chronological  # the untagged file is dangling only without chronological edges
    s = seed_vector(ag, "dog yoga morning sleep")
    assert s.sum() > 0
    ours = personalized_pagerank(P, dangling, s, iterations=None)
    np.testing.assert_allclose(ours, personalized_pagerank(P, dangling, s, iterations=None, solver=ag.exact_solver()))
    twenty = personalized_pagerank(P, dangling, s, iterations=20)
    assert np.abs(twenty - ours).sum() < 2 * 0.85 ** 20  # 20 steps are close to, not at, the fixed point
    g = store.graph.to_networkx(chronological=chronological)
    personalization = {node: float(s[i]) for node, i in ag.node_index.items()}
    ref = nx.pagerank(g, alpha=0.85, personalization=personalization, weight=None, tol=1e-13, max_iter=10_000)
    np.testing.assert_allclose(ours, [ref[n] for n in ag.node_index], atol=1e-6)
    assert ours.sum() == pytest.approx(1.0)


def test_all_zero_seed_falls_back_to_uniform():
    store = make_store(HAND_ROWS)
    ag = make_retriever("AdaptiveGraph", store)
    P, dangling = ag.transition()
    x = personalized_pagerank(P, dangling, np.zeros(P.shape[0]))
    assert np.isfinite(x).all() and x.sum() == pytest.approx(1.0)
    fallback = ag.query("qqq zzz")  # no evidence: plain PageRank order, no division by zero
    assert len(fallback) == len(store) and all(np.isfinite(r.score) for r in fallback)
    assert "plain PageRank" in ag.explain("qqq zzz", "s1#0").evidence.fallback
    unseeded = make_retriever("AdaptiveGraph-noDiffusion", store).query("qqq zzz")
    assert [r.score for r in unseeded] == [0.0] * len(store)  # all files, in note order, no NaN


def test_no_diffusion_ranks_by_teleport_vector():
    store = make_store(HAND_ROWS)
    ag = make_retriever("AdaptiveGraph-noDiffusion", store, stopword_df=1.0)
    # only file seeds rank files; the concept seed (pet/dog) cannot reach any file without diffusion
    res = ag.query("beagle")
    assert [r.note_id for r in res] == ["s2#0", "s1#0", "s3#0", "s4#0", "s5#0"]  # then zeros in note order
    assert res[0].score > 0 and all(r.score == 0 for r in res[1:])
    assert "no seed reaches" in ag.explain("beagle", "s4#0").reason


def test_file_seeding_switch():
    store = make_store(HAND_ROWS)
    off = make_retriever("AdaptiveGraph-noFileSeeding", store, stopword_df=1.0)
    on = make_retriever("AdaptiveGraph", store, stopword_df=1.0)
    s_off = seed_vector(off, "Max beagle")  # "max" is only in the text, "beagle" is also a tag
    s_on = seed_vector(on, "Max beagle")
    f2 = on.node_index[file_node("s2#0")]
    assert s_off[f2] == 0 and s_on[f2] > 0
    assert s_off[on.node_index[concept_node("breed/beagle")]] > 0


def test_diffusion_reaches_notes_through_tags_and_time():
    store = make_store(HAND_ROWS)
    ag = make_retriever("AdaptiveGraph", store, stopword_df=1.0)
    ranked = [r.note_id for r in ag.query("beagle")]
    assert ranked[0] == "s2#0" and len(ranked) == 5  # every file is reachable by diffusion
    exp = ag.explain("beagle", "s2#0")
    assert exp.details["main_paths"][0]["seed"] == "breed/beagle"
    assert exp.details["file_seed_mass"] > 0


def test_incremental_matrix_equals_rebuild():
    grown = make_store(HAND_ROWS[:1])
    ag = make_retriever("AdaptiveGraph", grown, stopword_df=1.0)
    ag.query("yoga")  # sync once, then grow
    for sid, u, a, tags in HAND_ROWS[1:]:
        grown.remember(Interaction(sid, u, a), Extraction(**tags))
        ag.query("dog")
    fresh = make_retriever("AdaptiveGraph", make_store(HAND_ROWS), stopword_df=1.0)
    for q in ["dog", "yoga morning", "san diego running", "luna"]:
        a, b = ag.query(q), fresh.query(q)
        assert [r.note_id for r in a] == [r.note_id for r in b]
        np.testing.assert_allclose([r.score for r in a], [r.score for r in b], atol=1e-12)


def rebuilt_transition(store, chronological):
    """P and the dangling mask built from every link at once (how AdaptiveGraph built them before it kept them
    current): the reference the incremental matrix must equal."""
    g = store.graph
    index = {n: i for i, n in enumerate(g.g.nodes)}
    links = [(a, b) for a, b, _ in g.edge_log] + (g.chronological_pairs() if chronological else [])
    ends = np.array([(index[a], index[b]) for a, b in links]).reshape(-1, 2)
    rows, cols, n = np.concatenate([ends[:, 0], ends[:, 1]]), np.concatenate([ends[:, 1], ends[:, 0]]), len(index)
    A = sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(n, n))
    A.data[:] = 1.0
    out = np.diff(A.indptr).astype(np.float64)
    return A.multiply(np.divide(1.0, out, out=np.zeros(n), where=out > 0)[:, None]).T.tocsr(), out == 0


def random_rows(count, seed):
    """`count` notes tagged from a small vocabulary (many shared frames and similar topics), some untagged."""
    rng = random.Random(seed)
    paths = ["user", "pet/dog", "pet/cat", "food/pasta", "food/pizza/margherita", "city/paris", "time/may", "a/b/c"]
    rows = []
    for i in range(count):
        tags = {c: rng.sample(paths, rng.randint(1, 3)) for c in ("who", "what", "where") if rng.random() < 0.8}
        rows.append((f"s{i // 3}", f"note {i} about {' '.join(p for ps in tags.values() for p in ps)}", "ok.", tags))
    return rows


@pytest.mark.parametrize("chronological", [True, False])
def test_the_matrix_kept_current_equals_one_built_from_every_link(chronological):
    """Grown note by note (a query after each add extends it) and in batches, P and the dangling mask are, array by
    array, the matrix built from all links at once, and a query's power iteration is the one over that P, bit for
    bit."""
    rows = random_rows(90, seed=7)
    grown_store = make_store(rows[:1])
    ag = make_retriever("AdaptiveGraph", grown_store, chronological=chronological, stopword_df=1.0)
    for i, (sid, u, a, tags) in enumerate(rows[1:], 1):
        grown_store.remember(Interaction(sid, u, a), Extraction(**tags))
        if i % 7:  # some adds come in batches
            ag.query("dog pasta")
    P, dangling = ag.transition()
    ref_P, ref_dangling = rebuilt_transition(grown_store, chronological)
    for part in ("data", "indices", "indptr"):
        np.testing.assert_array_equal(getattr(P, part), getattr(ref_P, part))
    np.testing.assert_array_equal(dangling, ref_dangling)
    for question in ["dog pasta", "margherita in paris", "qqq"]:
        x, s = ag.scores_all(question)
        np.testing.assert_array_equal(x, personalized_pagerank(ref_P, ref_dangling, s))
    x = np.random.default_rng(0).random(P.shape[0]) ** 8
    np.testing.assert_array_equal(ag.step(x), ref_P @ x)
    np.testing.assert_array_equal(ag.step_back(x), ref_P.T @ x)


def test_grown_adds_entries_anywhere_once():
    """`grown` over random batches, repeats and links between nodes it already had included: the csr structure of
    every entry at once."""
    rng = np.random.default_rng(3)
    indptr, indices, n, every = np.zeros(1, dtype=np.int32), np.zeros(0, dtype=np.int32), 0, []
    for _ in range(30):
        n += int(rng.integers(0, 4))
        if n == 0:
            continue
        rows, cols = rng.integers(0, n, 6), rng.integers(0, n, 6)
        every.append((rows, cols))
        indptr, indices = grown(indptr, indices, n, rows, cols)
        all_rows, all_cols = (np.concatenate(parts) for parts in zip(*every))
        ref = sp.csr_matrix((np.ones(len(all_rows)), (all_rows, all_cols)), shape=(n, n))
        ref.sum_duplicates()
        np.testing.assert_array_equal(indptr, ref.indptr)
        np.testing.assert_array_equal(indices, ref.indices)


def replayed_shares(ag, s, target):
    """Each seed's part of x[target], by replaying the power iteration for that seed alone with every step's
    dangling mass taken from the whole run (forward, one seed at a time: the reference for the backward pass)."""
    P, dangling = ag.transition()
    a, total = ag.params.alpha, s.sum()
    s_norm = s / total
    if ag.params.iterations is None:
        y = ag.exact_solver()(s_norm)
        return np.array([s_norm[j] * ag.exact_solver()(np.eye(len(s))[j])[target] / y.sum() if s[j] else 0.0
                         for j in range(len(s))]) / (y[target] / y.sum())
    x, factors = s_norm.copy(), []
    for _ in range(ag.params.iterations):
        factors.append(a * x[dangling].sum() + 1 - a)
        x = a * (P @ x) + factors[-1] * s_norm
    parts = np.zeros(len(s))
    for j in np.flatnonzero(s):
        part = np.zeros(len(s))
        part[j] = s_norm[j]
        seed = part.copy()
        for factor in factors:
            part = a * (P @ part) + factor * seed
        parts[j] = part[target]
    return parts / x[target]


@pytest.mark.parametrize("iterations", [20, 3, None])
@pytest.mark.parametrize("chronological", [True, False])
def test_the_seed_split_of_a_notes_mass_is_exact(iterations, chronological):
    rows = HAND_ROWS + [("s6", "Untagged small talk about my dog.", "Sure.", {})]  # dangling without chrono edges
    ag = make_retriever("AdaptiveGraph", make_store(rows), iterations=iterations, chronological=chronological,
                        stopword_df=1.0)
    for question in ["dog yoga morning sleep", "beagle", "running in San Diego"]:
        x, s = ag.scores_all(question)
        for note in ag.store.notes:
            at = ag.node_index[file_node(note.note_id)]
            shares = ag.seed_shares(s, at)
            if x[at] == 0:  # three steps do not reach every note
                assert not shares.any()
                continue
            assert shares.sum() == pytest.approx(1.0, abs=1e-9)
            np.testing.assert_allclose(shares, replayed_shares(ag, s, at), atol=1e-9)
            _, flows, teleport = ag.flow_walk(s, at)
            if len(flows) < 3:  # every in-edge listed: the last step's in-flows and teleport are the whole mass
                assert sum(f["share"] for f in flows) + teleport == pytest.approx(1.0, abs=1e-9)


def test_the_reason_splits_the_mass_as_it_came():
    store = make_store(HAND_ROWS)
    ag = make_retriever("AdaptiveGraph", store, stopword_df=1.0)
    exp = ag.explain("beagle", "s2#0")
    shares = exp.details["mass_by_seed"]
    own = shares.get(file_node("s2#0"), 0.0)
    tags = sum(v for k, v in shares.items() if k.startswith("concept:"))
    assert f"{own:.0%} from its own file seed" in exp.reason and f"{tags:.0%} from seed tags" in exp.reason
    assert "mainly" not in exp.reason


def test_a_query_without_seeds_says_what_ran():
    store = make_store(HAND_ROWS)
    # 'qqq' is kept and in no note; 'i' (3 of 5 notes) is dropped as a stopword: not "every token was dropped"
    ag = make_retriever("AdaptiveGraph", store, stopword_df=0.3)
    assert ag.seeds("i qqq")[2] == ["i"]
    fallback = ag.explain("i qqq", "s1#0").evidence.fallback
    assert "every query token was dropped" not in fallback and "(i dropped as stopwords)" in fallback
    assert "every query token was dropped" in ag.explain("i", "s1#0").evidence.fallback
    still = make_retriever("AdaptiveGraph-noDiffusion", store).explain("qqq zzz", "s1#0").evidence
    assert "no PPR ran and every note scores 0" in still.fallback and "plain PageRank" not in still.fallback
    assert all("plain PageRank" not in b["why"] for b in still.detail["walk_breaks"])


def test_a_tag_seeded_by_a_kept_token_is_no_break_though_a_dropped_token_matches_it_too():
    rows = [("m", "I ran the Chicago marathon.", "Well done.", {"what": ["event/chicago_marathon"]}),
            *[(f"t{i}", f"Marathon training, week {i}.", "Keep going.", {}) for i in range(5)]]
    ag = make_retriever("AdaptiveGraph", make_store(HAND_ROWS + rows), stopword_df=0.5)  # 'marathon': 6 of 11 notes
    concepts, _, dropped = ag.seeds("chicago marathon")
    assert dropped == ["marathon"] and "event/chicago_marathon" in concepts  # 'chicago' seeds the tag
    breaks = ag.explain("chicago marathon", "m#0").details["walk_breaks"]
    assert concept_node("event/chicago_marathon") not in [b["node"] for b in breaks]
