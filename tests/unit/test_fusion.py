"""TagGraph-Fusion (taggraph.methods.fusion.method) and its CV script (benchmarks/history/fusion_cv.py)."""

from __future__ import annotations

from dataclasses import asdict, replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from taggraph._infra.config import DEMO_DATA
from taggraph.datasets.longmemeval import load_longmemeval
from taggraph.evaluation import dedupe_sessions
from taggraph.evaluation.metrics import score_rankings
from taggraph.runs.runner import build_store
from taggraph.extractors.base import Extraction
from taggraph.methods import make_retriever
from taggraph.methods.base import question_date
from taggraph.errors import ConfigError
from taggraph.methods.registry import ablations_of, method
from taggraph.methods.fusion.method import TagGraphFusion
from taggraph.methods.fusion.features import (dense_text, evidence_vector as _evidence, note_day, request_text,
                                              session_turns, turn_texts)
from taggraph.methods.fusion.signals import (COMPONENTS, REQUEST_WEIGHTS, SESSION_FEATURES, FusionWeights, Signals,
                                               fuse, is_request, normalized, time_features)
from taggraph.core.text import parse_timestamp
from taggraph.core.store import Interaction, MemoryStore

from benchmarks.history import fusion_cv
from tests.helpers.stores import HAND_ROWS, make_store
from tests.helpers.embedders import BagOfWords
from tests.helpers.fusion import DATED, dated_store, fusion

column, feature = COMPONENTS.index, SESSION_FEATURES.index  # columns by signal name, never by position


NOW = "2023/05/30 (Tue) 23:40"
def test_each_ablation_switches_one_component_off():
    store = make_store(HAND_ROWS)
    full = make_retriever("TagGraph-Fusion", store, embedder=BagOfWords()).config()
    ablations = ablations_of("TagGraph-Fusion")
    assert len(ablations) == 8
    switches = [k for k, v in full.items() if v is True]
    for name in ablations:
        config = make_retriever(name, store, embedder=BagOfWords()).config()
        assert [k for k in switches if config[k] is False] == [k for k in switches if config[k] != full[k]], name
        assert sum(config[k] is False for k in switches) == 1, name


def test_strong_lexical_and_tag_evidence_ranks_first():
    store = make_store(HAND_ROWS)
    r = fusion(store)
    res = r.query("What breed is my dog?")
    assert res[0].note_id == "s2#0"
    values = {x.name: x.value for x in r.explain("What breed is my dog?", "s2#0").evidence.signals}
    ev = r.signals("What breed is my dog?")
    for part in ("note_bm25", "graph"):  # the gold note's z-score is the question's highest
        assert values[part] == pytest.approx(ev.components[:, column(part)].max(), abs=1e-4)


EVERY = FusionWeights(note_stem=1.0, raw_stem=1.0, turns=1.0, speaker=1.0, best_turn=1.0, top2_turns=1.0,
                      keyword_overlap=1.0)


def test_switches_change_the_evidence():
    store = make_store(HAND_ROWS)
    text = "dog yoga morning"
    full = fusion(store, weights=EVERY).signals(text)
    speaker = column("speaker")  # no turn here is headed by a name (see test_named_speaker_...)
    assert (full.components > 0).any(axis=0).tolist() == [j != speaker for j in range(len(COMPONENTS))]
    assert (full.session_features > 0).any(axis=0).all()
    for switch, name in [("raw_turns", "raw_bm25"), ("dense", "dense"), ("graph", "graph"), ("stems", "note_stem"),
                         ("stems", "raw_stem"), ("dense", "turns")]:
        ev = fusion(store, weights=EVERY, **{switch: False}).signals(text)
        assert not ev.components[:, column(name)].any(), switch
    unturned = fusion(store, weights={**vars(EVERY), "turns": 0, "speaker": 0, "best_turn": 0, "top2_turns": 0,
                                            "keyword_overlap": 0})
    ev = unturned.signals(text)  # the turn signals (and the one other session feature) at weight 0: not computed
    assert not ev.components[:, [column("turns"), column("speaker")]].any() and not ev.session_features.any()
    no_dense = BagOfWords()
    fusion(store, embedder=no_dense, dense=False).query(text)
    assert no_dense.calls == []
    assert fusion(store).score(text) != fusion(store, graph=False).score(text)


def test_dense_only_embeds_the_candidate_pool():
    rows = HAND_ROWS + [(f"x{i}", f"Filler chat number {i} about weather.", "Ok.", {}) for i in range(20)]
    store = make_store(rows)
    emb = BagOfWords()
    r = fusion(store, embedder=emb, pool=2, turns=False)  # the dense list alone: turns embed more per note
    r.query("dog beagle")
    embedded = [t for call in emb.calls for t in call]
    assert 1 < len(embedded) <= 3 * 2 + 1  # at most `pool` notes from each of three lists, plus the query
    assert dense_text(store.by_id["s2#0"]) in embedded
    assert not any("weather" in t for t in embedded)  # notes without any evidence are never embedded
    calls = len(emb.calls)
    r.query("dog beagle?")  # same tokens, so the same pool
    assert emb.calls[calls:] == [["dog beagle?"]]  # note vectors are kept: a new query embeds only itself


def test_embed_on_add_embeds_at_index_time_and_ranks_the_same():
    store = make_store(HAND_ROWS)
    lazy, eager_emb = fusion(store), BagOfWords()
    eager = fusion(store, embedder=eager_emb, embed_on_add=True)
    raw_turns = [request_text(n) for n in store.notes]
    each_turn = [t for n in store.notes for t in turn_texts(n)]
    # one batch per kind at index time: user turns (the pool, when it reads them), raw turns (requests), each turn
    assert eager_emb.calls == [[dense_text(n) for n in store.notes], raw_turns, each_turn]
    store.remember(Interaction("s6", "My puppy chews shoes.", "Try chew toys."), Extraction(what=["pet/dog"]))
    new_turn = ["User: My puppy chews shoes.\nAssistant: Try chew toys."]
    new_turns = ["My puppy chews shoes.", "Try chew toys."]
    expected = [["My puppy chews shoes."], new_turn, new_turns]
    assert eager_emb.calls[-len(expected):] == expected
    calls = len(eager_emb.calls)
    queries = ["What breed is my dog?", "dog yoga morning", "puppy shoes", "Any tips for my puppy?"]
    for text in queries:
        assert [r.note_id for r in eager.query(text)] == [r.note_id for r in lazy.query(text)]
    assert all(len(call) == 1 and call[0] in queries for call in eager_emb.calls[calls:])  # queries embed only themselves


def test_is_request_catches_requests_not_recalls():
    for text in ["Can you recommend a show or movie for me to watch tonight?", "My kitchen is a mess. Any tips?",
                 "Do you have any ideas on how I can find new inspiration?", "Any suggestions for new recipes?"]:
        assert is_request(text), text
    for text in ["What was the name of that hiking trail you recommended?", "Can you remind me what sealant you "
                 "suggested?", "What breed is my dog?", "How many days ago did I buy the bike?",
                 "Can you remind me of the tips you gave me for my garden?",
                 "In our previous conversation, what ideas did we list for the party?"]:
        assert not is_request(text), text


def test_a_request_is_scored_by_meaning_over_every_note():
    rows = HAND_ROWS + [(f"x{i}", f"Filler chat number {i} about rainy weather.", "Ok.", {}) for i in range(12)]
    store = make_store(rows)
    emb = BagOfWords()
    r = fusion(store, embedder=emb, pool=1)
    text = "Any tips for rainy weather?"
    ev = r.signals(text)
    assert ev.request and not np.isnan(ev.raw[:, column("dense")]).any()  # a cosine for every note, beyond the 1-note pools
    assert [request_text(n) for n in store.notes] in emb.calls  # raw turns, every note, in one batch
    expected = REQUEST_WEIGHTS.dense * ev.components[:, column("dense")] + REQUEST_WEIGHTS.raw_bm25 * ev.components[
        :, column("raw_bm25")]
    assert list(r.score(text).values()) == pytest.approx(expected.tolist())  # OpenClaw's 0.7 / 0.3, nothing else
    routed_off = fusion(store, pool=1, requests=False).signals(text)
    assert not routed_off.request and (~np.isnan(routed_off.raw[:, column("dense")])).sum() <= 3  # the pool only
    top = r.query(text, k=1)[0]
    reason = r.explain(text, top.note_id).reason
    assert "a request for suggestions" in reason


def test_incremental_add_equals_batch_build():
    batch = fusion(dated_store())
    store = MemoryStore("t")
    grown = fusion(store)
    for sid, user, assistant, ts in DATED:  # the same notes and tags as dated_store, one at a time
        store.remember(Interaction(sid, user, assistant, timestamp=ts), Extraction(what=["sport/cycling"]))
        grown.query("road bike", asked_on=NOW)  # queries between additions: no cache may go stale
    for text in ["road bike", "What is my most recent road bike?", "cat Luna"]:
        assert grown.score(text) == pytest.approx(batch.score(text))
        assert [r.note_id for r in grown.query(text, asked_on=NOW)] == [r.note_id for r in batch.query(text, asked_on=NOW)]


def test_session_aggregation_has_diminishing_returns():
    w = FusionWeights(note_bm25=1.0, raw_bm25=0, dense=0, graph=0, session=1.0, target=0, recent=0, early=0,
                     note_stem=0, raw_stem=0, turns=0, speaker=0, best_turn=0, top2_turns=0)

    def best_of_session(n_notes: int) -> float:
        comps = np.zeros((n_notes + 1, len(COMPONENTS)))
        comps[:, column("note_bm25")] = 0.5
        ev = Signals(np.arange(n_notes + 1), np.array([0] * n_notes + [1]), comps, np.zeros((n_notes + 1, 3)))
        return float(fuse(ev, w)[0])

    one, two, three, four = (best_of_session(n) for n in (1, 2, 3, 4))
    assert one == pytest.approx(0.5)  # a lone note gets no bonus
    assert two - one > three - two > four - three > 0
    assert four < 2 * one  # geometric weights: bounded by twice the best note
    no_session = replace(w, session=0.0)
    comps = np.full((3, len(COMPONENTS)), 0.5)
    ev = Signals(np.arange(3), np.zeros(3, dtype=int), comps, np.zeros((3, 3)))
    assert fuse(ev, no_session).tolist() == pytest.approx([0.5, 0.5, 0.5])  # only note_bm25 weighs; no bonus


def test_session_switch_removes_the_bonus():
    rows = [("t1", "dog walk", "ok", {}), ("t1", "dog food", "ok", {}), ("t2", "dog dog toy", "ok", {}),
            *HAND_ROWS]
    store = make_store(rows)
    with_session, without = fusion(store), fusion(store, session=False)
    assert with_session.score("dog")[0] > without.score("dog")[0]
    assert with_session.score("dog")[2] == pytest.approx(without.score("dog")[2])  # lone note: no bonus


def demo_runs(weights: FusionWeights = FusionWeights()) -> list[tuple[TagGraphFusion, object, tuple]]:
    """(retriever, case, CV item) for every judged question of the bundled demo, fake embedder."""
    out = []
    for case in load_longmemeval(DEMO_DATA):
        if not case.gold_session_ids:
            continue
        r = fusion(build_store(case), weights=weights)
        ev = r.signals(case.question, case.asked_on)
        gold = np.array([s in case.gold_session_ids for s in r.sessions])
        out.append((r, case, (case.case_id, case.question_type, ev, gold)))
    return out


@pytest.mark.parametrize("weights", [FusionWeights(), replace(EVERY, session=0.5, graph=0.5, target=1.0, recent=0.5,
                                                                   early=0.5)])
def test_cv_metric_matches_the_bench_metric(weights):
    runs = demo_runs(weights)
    rows = []
    for r, case, _ in runs:
        results = r.query(case.question, asked_on=case.question_date)
        rows.append({"question_id": case.case_id, "question_type": case.question_type, "method": r.name,
                     "ranked_session_ids": dedupe_sessions([x.session_id for x in results]),
                     "gold_session_ids": case.gold_session_ids, "ranked_note_ids": [], "abstention": False})
    bench_rr = score_rankings(pd.DataFrame(rows))["RR"].to_numpy()
    cv_rr, _ = fusion_cv.reciprocal_ranks([item for *_, item in runs], weights)
    np.testing.assert_allclose(cv_rr, bench_rr)


def test_cv_fit_never_lowers_training_mrr():
    items = [item for *_, item in demo_runs()]
    start = FusionWeights(raw_bm25=0, dense=0, graph=0, session=0, target=0, recent=0, early=0)
    fitted = fusion_cv.fit(items, start)
    assert fusion_cv.reciprocal_ranks(items, fitted)[0].mean() >= fusion_cv.reciprocal_ranks(items, start)[0].mean()


def test_explanation_names_the_weighted_evidence(hand_store):
    r = make_retriever("TagGraph-Fusion", hand_store, embedder=BagOfWords())
    top = r.query("dog beagle", k=1)[0]
    reason = r.explain("dog beagle", top.note_id).reason
    assert reason.startswith("ranked 1 of 5 notes: weighted evidence (turns 7.5 + ") and "note_bm25 1 + " in reason


def test_views_ask_on_the_case_date_as_the_bench_does():
    """explain pages, the graph view and the notebooks pass the case's question date as the bench does."""
    from taggraph.methods import build_retrievers
    from taggraph.runs.retrieval import explanations, retrieve_all
    store = dated_store()
    text = "Which road bike did I buy in March?"
    bench = [r.note_id for r in fusion(store).query(text, asked_on=NOW)]
    undated = [r.note_id for r in fusion(store).query(text)]
    assert bench[0] == "c#0" and undated != bench  # the date rule decides here
    view = build_retrievers(store, {"TagGraph-Fusion": fusion(store)})
    assert [r.note_id for r in retrieve_all(store, text, view, asked_on=NOW)["TagGraph-Fusion"]] == bench
    assert explanations(store, text, "c#0", view, asked_on=NOW)["TagGraph-Fusion"].rank == 1
    named = build_retrievers(store, ["BM25"])  # methods without time rules take the date and ignore it
    assert [r.note_id for r in retrieve_all(store, text, named, asked_on=NOW)["BM25"]] == \
        [r.note_id for r in make_retriever("BM25", store).query(text)]


def test_the_same_defaults_run_on_locomo_and_atant():
    """No per-dataset switch: the default Fusion ranks the evidence first on the LoCoMo and ATANT fixtures, whose
    questions carry no question date (the date-relative rules stay silent)."""
    from taggraph.datasets.atant import load_atant
    from taggraph.datasets.locomo import load_locomo
    fixtures = Path(__file__).parents[1] / "fixtures"
    locomo = {c.case_id: c for c in load_locomo(fixtures / "locomo" / "locomo_tiny.json")}["conv-t1:q0"]
    atant = {c.case_id: c for c in load_atant(fixtures / "atant" / "r2", split="R2")}["learn04q1"]
    for case, expected in [(locomo, {"D1:1"}), (atant, {"learn04:b1", "learn04:b2"})]:
        r = fusion(build_store(case, "none"))
        top = r.query(case.question, k=1, asked_on=case.question_date)[0]
        assert {top.note_id, top.session_id} & expected, case.case_id
        assert not r.signals(case.question, case.asked_on).time[:, 0].any()


def test_bagged_fit_averages_fits_on_bootstrap_resamples():
    items = [item for *_, item in demo_runs()]
    rng = np.random.default_rng(7)
    one = [fusion_cv.fit([items[i] for i in rng.integers(0, len(items), len(items))], fusion_cv.START, "before")
           for _ in range(2)]
    bagged = fusion_cv.bagged_fit(items, "before", bags=2, seed=7)
    assert bagged.dense == pytest.approx((one[0].dense + one[1].dense) / 2)
    assert bagged.graph == pytest.approx((one[0].graph + one[1].graph) / 2)
    assert bagged.note_stem == bagged.turns == 0.0  # outside the choice


def test_the_request_route_weighs_only_raw_bm25_and_dense():
    weights = asdict(REQUEST_WEIGHTS)
    assert {k: v for k, v in weights.items() if v} == {"raw_bm25": 0.3, "dense": 0.7}


# -- turns, speakers, LoCoMo dates, normalizations ---------------------------------------

TALK = [  # LoCoMo's shape: two people, each turn headed by its speaker, LoCoMo's dates
    ("c:1", "Caroline: I went to a pottery class yesterday.", "Melanie: Pottery sounds relaxing!",
     "1:56 pm on 8 May, 2023"),
    ("c:1", "Melanie: I ran a charity race for mental health.", "Caroline: That is so inspiring.",
     "1:56 pm on 8 May, 2023"),
    ("c:2", "Caroline: The adoption agency called me back.", "Melanie: Great news about the agency.",
     "7:00 pm on 20 June, 2023"),
    ("c:3", "Melanie: My kids loved the camping trip.", "Caroline: Camping with kids is the best.",
     "9:15 am on 2 July, 2023"),
    ("c:3", "Note: nothing here.", "Caroline: Okay.", "9:15 am on 2 July, 2023"),
    ("c:3", "Caroline: See you soon.", "Melanie: Bye for now!", "9:15 am on 2 July, 2023"),
]
TURNS = FusionWeights(turns=1.0, speaker=1.0, best_turn=1.0, top2_turns=1.0)


def test_each_turn_is_embedded_on_its_own_and_the_named_speaker_is_a_soft_signal():
    emb = BagOfWords()
    r = fusion(dated_store(TALK), embedder=emb, weights=TURNS)
    assert r.speakers() == {"Caroline", "Melanie"}  # "Note:" heads one turn in twelve: not a speaker
    question = "What did Melanie say about the charity race?"
    ev = r.signals(question)
    embedded = {t for call in emb.calls for t in call}
    assert "Caroline: That is so inspiring." in embedded  # a reply is embedded apart from its opening turn
    turns, speaker = column("turns"), column("speaker")
    q = emb.embed([question])[0]
    cos = {t: float(emb.embed([t])[0] @ q) for row in TALK for t in row[1:3]}
    for i, (_, opening, reply, _) in enumerate(TALK):
        assert ev.raw[i, turns] == pytest.approx(max(cos[opening], cos[reply]))  # max-sim over the note's turns
        by_melanie = [cos[t] for t in (opening, reply) if t.startswith("Melanie:")]
        assert (ev.raw[i, speaker] == pytest.approx(max(by_melanie))) if by_melanie else np.isnan(ev.raw[i, speaker])
    assert ev.components[:, speaker].max() > 0
    unnamed = r.signals("Who ran a charity race?")
    assert not unnamed.components[:, speaker].any() and unnamed.components[:, turns].any()
    best = int(ev.components[:, speaker].argmax())
    explained = {x.name: x.value for x in r.explain(question, r.store.notes[best].note_id).evidence.signals}
    assert explained["speaker"] == ev.components[best, speaker]


def test_turns_off_embeds_no_reply_and_leaves_the_defaults_alone():
    emb = BagOfWords()
    r = fusion(dated_store(TALK), embedder=emb, weights=TURNS, turns=False)
    ev = r.signals("What did Melanie say about the charity race?")
    assert not ev.components[:, [column(c) for c in ("turns", "speaker")]].any()
    assert not ev.session_features[:, [feature(c) for c in ("best_turn", "top2_turns")]].any()
    assert "Caroline: That is so inspiring." not in {t for call in emb.calls for t in call}
    assert not fusion(dated_store(TALK), weights=replace(TURNS, turns=0)).uses("turns")  # weight 0: not computed


def test_session_max_sim_and_top_two_mean():
    turns = np.array([0.2, 0.9, 0.5, 0.0, 0.7, 0.1])
    out = session_turns(turns, np.array([0, 0, 0, 1, 2, 2]), 4)
    assert np.allclose(out, [[0.9, 0.7], [0.0, 0.0], [0.7, 0.4], [0.0, 0.0]])
    assert session_turns(np.array([0.6]), np.array([0]), 1).tolist() == [[0.6, 0.6]]  # one note: itself


def test_locomo_dates_reach_the_time_rules():
    assert note_day("1:56 pm on 8 May, 2023") == pytest.approx(parse_timestamp("2023/05/08 13:56"))
    assert note_day("not a date") is None
    r = fusion(dated_store(TALK))
    assert not np.isnan(r.days).any()
    recent = r.signals("What did Caroline do most recently?").time[:, 1]
    assert recent.argmax() in (3, 4) and recent[0] == 0.0  # the July session is the newest, May the oldest


def test_normalizations():
    raw = np.array([np.nan, 2.0, 1.0, 4.0])
    assert normalized(raw, "max", dense_like=False).tolist() == [0.0, 0.5, 0.25, 1.0]
    assert normalized(raw, "minmax", dense_like=False).tolist() == [0.0, 1 / 3, 0.0, 1.0]
    assert normalized(raw, "max", dense_like=True).tolist() == [0.0, 1 / 3, 0.0, 1.0]  # cosines: min-max, as before
    assert normalized(raw, "zscore", dense_like=False).tolist() == pytest.approx([0.0, 1 / np.std([2, 1, 4]), 0.0,
                                                                                 3 / np.std([2, 1, 4])])
    assert normalized(raw, "rrf", dense_like=False).tolist() == pytest.approx([0.0, 60 / 62, 60 / 63, 60 / 61])
    assert normalized(np.full(3, np.nan), "zscore", dense_like=False).tolist() == [0.0, 0.0, 0.0]
    with pytest.raises(ValueError, match="unknown normalization 'z'"):
        normalized(raw, "z", dense_like=False)
    scores = {0: 3.0, 2: -1.0, 3: 1.5}  # a negative BM25 score is no evidence
    assert normalized(_evidence(scores, 4), "max", dense_like=False).tolist() == [1.0, 0.0, 0.0, 0.5]


def test_the_explanation_says_when_a_note_was_outside_the_dense_pool():
    store = MemoryStore("t")
    for sid, user in [("a", "Dog walk, dog walk: the dog loves its walk."), ("c", "I walk every morning."),
                      *[(f"f{i}", f"The weather is nice today, number {i}.") for i in range(4)]]:
        store.remember(Interaction(sid, user, "Ok."), Extraction(what=[f"thing/{sid}"]))
    question = "How often does the dog walk?"
    r = fusion(store, pool=1)
    inside, outside = (r.evidence(question, store.by_id[n]) for n in ("a#0", "c#0"))
    assert inside.detail["in_dense_pool"] and "dense pool" not in inside.summary
    assert not outside.detail["in_dense_pool"] and outside.summary.startswith("weighted evidence")
    assert outside.summary.endswith("; outside the dense pool, so test-bow never read it (the pool: the 1 best "
                                    "notes of each lexical list and of a first PPR)")


@pytest.mark.parametrize("text", ["Which road bike did I buy in March?", "What bike did I buy most recently?",
                                  "road bike Trek Canyon"])
def test_every_notes_listed_parts_add_up_to_its_score(text):
    """The signals of every note add up to its score: nothing of the score unlisted, the time rule's share too."""
    store = dated_store([*DATED, ("a", "I rode the Trek bike to work.", "Nice.", "2023/01/11 10:00")])
    method = fusion(store)
    for hit in method.query(text, k=len(store), asked_on=NOW):
        signals = method.explain(text, hit.note_id, asked_on=NOW).evidence.signals
        assert sum(x.contribution for x in signals) == pytest.approx(hit.score, rel=1e-9, abs=1e-12), hit.note_id
    explained = [method.explain(text, h.note_id, asked_on=NOW).evidence.signals for h in method.query(text)]
    assert any(x.name == "session" and x.contribution for signals in explained for x in signals)


def test_the_weights_parameter_lists_only_the_signals_it_weighs_and_reads_a_dict_over_them():
    params = method("TagGraph-Fusion").parameters()
    weights = params[0]["value"]
    assert params[0]["name"] == "weights" and all(v > 0 for v in weights.values()) and len(weights) == 12
    assert all(p["description"] for p in params), [p["name"] for p in params if not p["description"]]
    tuned = method("TagGraph-Fusion").params(weights={"graph": 0.0, "dense": 0.5}).weights
    assert tuned == {**weights, "graph": 0.0, "dense": 0.5}  # a default switched off stays listed, at 0
    assert method("TagGraph-Fusion").params(weights={"dense": 0.0}).weights == weights
    assert method("TagGraph-Fusion-e5").params().weights["dense"] == 0.5
    for bad, says in (({"graph": True}, "a weight is a number"), ({"grpah": 1.0}, "grpah"), ({"graph": -1}, "greater than or equal to 0")):
        with pytest.raises(ConfigError, match=says):
            method("TagGraph-Fusion").params(weights=bad)


def test_a_weight_of_a_signal_that_left_fusion_is_refused_by_name():
    """A run.json of before 2026-12-07 may weigh `chunks`: rebuilt from it, the method says which weight is unknown."""
    with pytest.raises(ConfigError, match=r"weights\.chunks.*Input should be 'note_bm25'"):
        make_retriever("TagGraph-Fusion", make_store(HAND_ROWS), embedder=BagOfWords(), weights={"chunks": 0.5})
