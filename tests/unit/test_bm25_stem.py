"""BM25-stem: scores equal bm25s's own BM25 on the same tokens, for every variant; stemming,
stopwords, incremental indexing, parameter checks and the registry."""

import bm25s
import numpy as np
import pytest
from typer.testing import CliRunner

from taggraph.cli import app
from taggraph.errors import ConfigError
from taggraph.extractors.base import Extraction
from taggraph.methods import make_retriever
from taggraph.methods.bm25_stem import make_tokenizer
from taggraph.core.store import Interaction, MemoryStore

from tests.helpers.stores import make_store

VARIANTS = ["robertson", "lucene", "atire", "bm25l", "bm25+"]
WORDS = ["garden", "tomato", "paint", "run", "climb", "cook", "travel", "read", "guitar", "bake", "swim", "hike",
         "camera", "budget", "flight", "recipe", "puppy", "kitten", "market", "concert", "museum", "train"]
ENDINGS = ["", "s", "ing", "ed", "er"]
NAMES = ["Priya", "Tomasz", "Amara", "Kenji", "Lucia"]
FILLER = ["the", "a", "of", "and", "to", "in", "is", "my", "with", "for", "it", "was", "we", "last", "about"]
QUERIES = ["running with Priya in May 5", "cooked tomatoes and baked", "guitar concert tickets the of",
           "hiking hiking trail", "zzzz qqqq", "budgets for flights 2023"]


def generated_rows(n: int, seed: int = 7) -> list[tuple]:
    """`n` interactions written here from a fixed seed: inflected topic words, names, dates and filler,
    with tags; long enough a corpus (hundreds of notes) that idf and lengths vary as in a real haystack."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        words = [w + rng.choice(ENDINGS) for w in rng.choice(WORDS, size=rng.integers(3, 12))]
        words += list(rng.choice(FILLER, size=rng.integers(2, 15)))
        if rng.random() < 0.4:
            words.append(str(rng.choice(NAMES)))
        if rng.random() < 0.3:
            words += ["May", str(rng.integers(1, 31)), "2023"]
        rng.shuffle(words)
        topic = str(rng.choice(WORDS))
        rows.append((f"s{i // 10}", " ".join(words) + ".", f"Sounds good about the {topic}!",
                     {"who": ["user"], "what": [f"activity/{topic}"]}))
    return rows


@pytest.fixture(scope="module")
def big_store():
    return make_store(generated_rows(400), "gen")


def bm25s_scores(store, query, variant, stem=True, stopwords=True, k1=1.5, b=0.75, delta=0.5):
    """bm25s's own BM25 indexed over the same tokens (bm25s's tokenizer) of every note's full text."""
    tok = make_tokenizer(stem, stopwords)
    corpus = tok.tokenize([n.to_markdown() for n in store], update_vocab=True, return_as="string",
                          show_progress=False, allow_empty=False)
    ref = bm25s.BM25(method=variant, k1=k1, b=b, delta=delta)
    ref.index(corpus, show_progress=False)
    query_tokens = tok.tokenize([query], update_vocab=False, return_as="string", show_progress=False,
                                allow_empty=False)[0]
    return ref.get_scores(query_tokens) if query_tokens else np.zeros(len(store))


def assert_same_as_bm25s(ours: dict[int, float], ref: np.ndarray) -> None:
    """Each note we score has bm25s's score; every note we leave out has bm25s's lowest, the floor every
    note gets (0, or BM25L/BM25+'s non-occurrence score), and no note we score is below it."""
    got = sorted(ours)
    np.testing.assert_allclose([ours[i] for i in got], ref[got], rtol=1e-5)
    left_out = np.setdiff1d(np.arange(len(ref)), got)
    if len(left_out):
        np.testing.assert_allclose(ref[left_out], ref[left_out].min(), rtol=1e-6)
        assert all(ours[i] > ref[left_out].min() for i in got)


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("stem", [True, False])
def test_parity_with_bm25s(big_store, variant, stem):
    method = make_retriever("BM25-stem", big_store, variant=variant, stem=stem, k1=1.2, b=0.6, delta=0.8)
    reached = 0
    for query in QUERIES:
        ours = method.score(query)
        ref = bm25s_scores(big_store, query, variant, stem=stem, k1=1.2, b=0.6, delta=0.8)
        if not ours:
            assert not ref.any() or np.ptp(ref) == 0  # nothing matched: bm25s gives every note the same
            continue
        reached += len(ours) > 20
        assert_same_as_bm25s(ours, ref)
    assert reached >= 3  # a real comparison: several queries reach many notes


@pytest.mark.parametrize("variant", VARIANTS)
def test_session_as_one_document_equals_bm25s_over_the_joined_session(big_store, variant):
    """`group_scores` (TagGraph-Fusion's session_stem) is bm25s over each session's notes joined into one text."""
    method = make_retriever("BM25-stem", big_store, variant=variant, k1=1.2, b=0.6, delta=0.8)
    sessions = list(dict.fromkeys(n.session_id for n in big_store))
    code = np.array([sessions.index(n.session_id) for n in big_store])
    tok = make_tokenizer()
    joined = ["\n".join(n.to_markdown() for n in big_store if n.session_id == s) for s in sessions]
    ref_index = bm25s.BM25(method=variant, k1=1.2, b=0.6, delta=0.8)
    ref_index.index(tok.tokenize(joined, update_vocab=True, return_as="string", show_progress=False,
                                 allow_empty=False), show_progress=False)
    for query in QUERIES:
        ours = method.group_scores(query, code, len(sessions))
        terms = tok.tokenize([query], update_vocab=False, return_as="string", show_progress=False,
                             allow_empty=False)[0]
        ref = ref_index.get_scores(terms) if terms else np.zeros(len(sessions))
        floor = (ref - ours)[0] if variant in ("bm25l", "bm25+") else 0.0  # what every session gets is left out,
        np.testing.assert_allclose(ours, ref - floor, rtol=1e-5, atol=1e-6)  # as in `score`: one constant
    if variant == "lucene":  # idf > 0 for a term in every session: a real comparison, most sessions reached
        assert (method.group_scores("guitar tomato", code, len(sessions)) > 0).sum() > 20


def test_parity_without_stopwords(big_store):
    ours = make_retriever("BM25-stem", big_store, variant="lucene", stopwords=False).score("the guitar of the concert")
    assert_same_as_bm25s(ours, bm25s_scores(big_store, "the guitar of the concert", "lucene", stopwords=False))


def test_stemming_makes_running_meet_runs():
    # three notes: robertson's idf is 0 for a term in half the notes or more (bm25s clips it there)
    store = make_store([("s0", "I runs every day.", "Ok.", {}), ("s1", "Paint the fence.", "Ok.", {}),
                        ("s2", "Bought new shoes.", "Ok.", {})])
    assert set(make_retriever("BM25-stem", store).score("running")) == {0}
    assert make_retriever("BM25-stem", store, stem=False).score("running") == {}
    exp = make_retriever("BM25-stem", store).explain("running", "s0#0")
    assert list(exp.details["matched_stems"]) == ["run"] and exp.rank == 1


def test_stopwords_are_dropped_and_names_and_dates_kept():
    tok = make_tokenizer()
    words = tok.tokenize(["The trip with Priya was on May 5 and it is 2023"], return_as="string",
                         show_progress=False, allow_empty=False)[0]
    assert {"the", "with", "was", "on", "and", "it", "is"}.isdisjoint(words)
    assert {"trip", "priya", "may", "5", "2023"} <= set(words)
    store = make_store([("s0", "The the the of of.", "A an.", {}), ("s1", "Lunch with Priya on May 5.", "Ok.", {}),
                        ("s2", "Bought new shoes.", "Ok.", {})])
    assert make_retriever("BM25-stem", store).score("the of a an") == {}
    assert set(make_retriever("BM25-stem", store, stopwords=False).score("the of")) == {0}
    # not "what": every note's tag line holds it ("#what:")
    assert set(make_retriever("BM25-stem", store).score("Priya, on the 5")) == {1}


def test_incremental_add_equals_batch_build():
    rows = generated_rows(300, seed=11)
    grown = make_store(rows[:120], "grow")
    methods = {v: make_retriever("BM25-stem", grown, variant=v) for v in VARIANTS}
    for v, m in methods.items():
        m.score(QUERIES[0])  # scored between adds: nothing may stay stale
    for sid, user, assistant, tags in rows[120:]:
        grown.remember(Interaction(sid, user, assistant), Extraction(**tags))
        if len(grown) % 60 == 0:
            methods["lucene"].score(QUERIES[1])
    batch = make_store(rows, "batch")
    for v, m in methods.items():
        rebuilt = make_retriever("BM25-stem", batch, variant=v)
        for q in QUERIES:
            assert m.score(q) == pytest.approx(rebuilt.score(q), rel=1e-12)


@pytest.mark.parametrize("bad, rule", [({"variant": "okapi"}, "variant = 'okapi'"), ({"k1": 0.0}, "k1 = 0.0"),
                                       ({"b": 1.5}, "b = 1.5"), ({"delta": -1.0}, "delta = -1.0"),
                                       ({"stem": 1}, "'stem' must be bool"), ({"k1": float("nan")}, "k1 = nan"),
                                       ({"lang": "de"}, "no parameter 'lang'")])
def test_bad_params_are_one_line_config_errors(bad, rule):
    with pytest.raises(ConfigError) as err:
        make_retriever("BM25-stem", MemoryStore(), **bad)
    assert rule in str(err.value) and "\n" not in str(err.value)


def test_listed_by_taggraph_methods():
    res = CliRunner().invoke(app, ["methods"])
    assert res.exit_code == 0 and "BM25-stem" in res.output.split()
    res = CliRunner().invoke(app, ["methods", "BM25-stem"])
    assert res.exit_code == 0 and "variant = " in res.output and "stopwords = True" in res.output


def test_empty_store_and_hostile_queries():
    assert make_retriever("BM25-stem", MemoryStore()).query("anything") == []
    store = make_store(generated_rows(20))
    for query in ["", "🙂", "東京 日本", "x" * 20_000, "\x00", "_ __ ___"]:
        assert isinstance(make_retriever("BM25-stem", store).query(query), list)


@pytest.mark.parametrize("stem", [True, False])
def test_evidence_names_each_stem_it_scores_and_follows_adds(stem):
    rows = generated_rows(200, seed=5)
    store = make_store(rows[:150], "names")
    method = make_retriever("BM25-stem", store, stem=stem)
    for batch in (rows[150:170], rows[170:]):
        for q in QUERIES:
            scores = method.score(q)
            inverse = {i: token for token, i in method.tokenizer.get_vocab_dict().items()}
            for index, value in zip(scores.index[:5].tolist(), scores.value[:5].tolist()):
                ev = method.evidence(q, store.notes[index])
                assert set(ev.detail["matched_stems"]) <= {inverse[i] for i in method.tokens(q, grow=False)}
                assert sum(ev.detail["matched_stems"].values()) == pytest.approx(value, abs=1e-3)  # rounded parts
        for sid, user, assistant, tags in batch:  # new words: the names grow, the memo is cleared
            store.remember(Interaction(sid, user + " zebracorn", assistant), Extraction(**tags))
    hit = method.evidence("zebracorn", store.notes[-1]).detail["matched_stems"]
    assert list(hit) == ["zebracorn"] and hit["zebracorn"] > 0
