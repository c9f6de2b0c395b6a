"""TagGraph-Fusion's `keyword_overlap` (lab study 41): what it reads, its shares, growth, and its place in the sum."""

from __future__ import annotations

import numpy as np

from taggraph.core.notes import Note
from taggraph.core.store import Interaction
from taggraph.extractors.base import Extraction
from taggraph.methods.fusion.peer_cues import KEYWORD_OVERLAP, keyword_overlap, keywords, people_turns
from taggraph.methods.fusion.signals import SESSION_FEATURES, fused_parts
from tests.helpers.fusion import DATED, dated_store, fusion

OVERLAP = SESSION_FEATURES.index("keyword_overlap")


def test_keywords_drop_stop_words_and_short_words():
    assert keywords("What did I buy for my sister at the art fair?") == {"did", "buy", "sister", "art", "fair"}  # "did" is no scikit-learn stop word


def test_people_turns_are_the_users_or_both_named_speakers():
    assert people_turns(Note("n", "s", "I ride a Bike", "Nice bike.")) == ["i ride a bike"]
    assert people_turns(Note("n", "s", "Caroline: I ride", "Melanie: Me too")) == ["i ride", "me too"]


def test_a_keyword_counts_where_it_starts_a_word_of_what_the_people_said():
    store = dated_store([("a", "I started painting.", "The art fair opens.", "2023/01/10 10:00"),
                         ("b", "My art class and the fair.", "Nice.", "2023/01/11 10:00"),
                         ("c", "Artists paint.", "Sure.", "2023/01/12 10:00")])
    f = fusion(store)
    shares = keyword_overlap(f, "the art fair", f.session_code, len(f.sessions))
    # a: "art" only in the assistant's turn and inside "started"; b: both; c: "artists" starts with "art"
    assert shares.tolist() == [0.0, 1.0, 0.5]


def test_documents_grow_with_the_store_as_a_rebuild_reads_them():
    grown = dated_store(DATED[:4])
    f = fusion(grown)
    f.signals("road bike sauce", None)
    keyword_overlap(f, "road bike", f.session_code, len(f.sessions))
    for sid, user, assistant, ts in DATED[4:] + [("a", "Pasta and a bike ride.", "Ok.", "2023/01/11 10:00")]:
        grown.remember(Interaction(sid, user, assistant, timestamp=ts), Extraction(what=["sport/cycling"]))
    rebuilt = fusion(dated_store(DATED + [("a", "Pasta and a bike ride.", "Ok.", "2023/01/11 10:00")]))
    for text in ("tomato pasta", "road bike", "cat luna"):
        assert np.array_equal(keyword_overlap(f, text, f.session_code, len(f.sessions)),
                              keyword_overlap(rebuilt, text, rebuilt.session_code, len(rebuilt.sessions)))


def test_weighted_it_adds_its_share_inside_the_time_factor_and_at_0_it_is_not_computed():
    store = dated_store()
    plain, preset = fusion(store), fusion(store, weights=KEYWORD_OVERLAP)
    text = "Which road bike did I buy with tomato sauce?"
    ev = plain.signals(text, None)
    assert not ev.session_features[:, OVERLAP].any()  # weight 0: not computed
    rel, bonus, features, factor = fused_parts(ev, plain.weights)
    share = keyword_overlap(preset, text, preset.session_code, len(preset.sessions))[preset.session_code]
    expected = (rel + bonus + features + KEYWORD_OVERLAP["keyword_overlap"] * share) * factor
    assert np.allclose(preset.score(text).value, expected)
    assert preset.signals(text, None).session_features[:, OVERLAP].tolist() == share.tolist()
