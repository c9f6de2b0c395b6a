"""The method contract's refactoring changed no ranking: per-method checksums of what each built-in
method ranks (benchmarks/ranking_checksums.py: sha256 over question id, ranked note ids and ranked
session ids), recorded from the code before the contract (commit 4431e70) on the demo's first ten
questions and on the first 30 questions of LongMemEval-S dev. TagGraph-Fusion and its ablations were
re-recorded when its weights were refitted and its time rules replaced, again when its weights were bagged,
and when the joint protocol gave it z-scores, the stemmed lists and the turn parts (the lab log holds each). Its
default embedder became minilm-int8 on 2026-12-06: its variants that embed are checked with float32 minilm against
what was recorded before, and with the default against `DEMO_INT8`."""

from __future__ import annotations

import os

import pytest

from taggraph._infra.config import DEMO_DATA
from taggraph.datasets import load_dataset
from taggraph.runs.bench import run_bench
from taggraph.runs.folders import write_csv

from benchmarks import ranking_checksums
from tests.helpers.stores import SHARED_DATA

DEMO_QUESTIONS = [f"demo_q{i:02d}" for i in range(1, 10)] + ["demo_q10_abs"]
DEMO = {
    "BM25": "ba6589fccb55e1d3532aaef848cebfea768f976679dc7aa6b115777ee32d1c76",
    "TagGraph-Basic": "e0349f1c0b3cdc0344a23fc6c31865393d7f36d5ccb241e95549ade146c204d8",
    "TagGraph-Stopwords": "66f793f64d45cdd214f6de3f52964c2a07c96c9f40ab022ac17bcf42124280ad",
    "TagGraph-TFIDF": "f4b57bf25bf8810cd98d2957a0beabf26e581882108ea98c366e54926f50697a",
    "AdaptiveGraph": "db0a661d916992ef1dba8df9c1425a138e0c67b0919bcca1dbe0d291f50f863d",
    "OpenClaw": "56015480dddf3bc37ef11d1b52058c271b137f6d0fdc593c45941bf8e43d3582",
    "OC-notes": "a0268c8ef600b7470586db53bdb319f6b2037e7c9645396cc03bc10809337d8a",
    "TagGraph-Fusion": "e64cf4e638c05334a3cbfdc86c0a40734e0672eeaee700b72ca905cad18dcab9",
    "AdaptiveGraph-noDiffusion": "35cb6c0009cdba8a75af04c6e51b43c641910790470f829ccd9db156fa584523",
    "AdaptiveGraph-noChronological": "932a6f2428816ea56c5a679759e393d5c950f50df895c18ee8127126ab244312",
    "AdaptiveGraph-noFileSeeding": "abbb6b578ae91a7ad9722c0355a53a1f5e6c33b60406595cbd447077bf226ad5",
    "AdaptiveGraph-noFileSeeding-noDiffusion": "99bed4d58d5e1d14d70fe6864fcc283d1f7d6676c9d9ce603c26c93a245ffe32",
    "TagGraph-TFIDF-boundTopLevel": "a5a7c8572ea4533ee1bfab9c44189d40c1e8b4b15a16e8ba7d3360b979f43d9c",
    "TagGraph-Fusion-noGraph": "220b65d6beebaaa739d7cd417180169dba0b1bb4bcd9fc1494f7913f720e8526",
    "TagGraph-Fusion-noDense": "c81d7b0ee9d013e182aebffdded0e16390d3c71aece0dd96cb86efbc2fb449ef",
    "TagGraph-Fusion-noRaw": "0498a2f27ad08ff79e4aef0f5434c17a5d8cc47b07991beb6a2089d33aeaf486",
    "TagGraph-Fusion-noSession": "cdaa86fd76a21356a92be9e959311a89d5e10c800dd845c765e043e2cd7d956e",
    "TagGraph-Fusion-noTime": "ca6be377a3d96e07119d717873d322e30af13be74f1957c3aea425cbc1fd3612",
    "TagGraph-Fusion-noRequests": "cbc7cdf80871632b66220c9546b8bcd2c42e0bd9aead727d62908f1c23bc153b",
}
# TagGraph-Fusion's variants that embed, as recorded with float32 minilm (DEMO) and with the int8 default
MINILM = {m: {"embedder": "minilm"} for m in DEMO if m.startswith("TagGraph-Fusion") and m != "TagGraph-Fusion-noDense"}
DEMO_INT8 = {
    "TagGraph-Fusion": "a989bfbbd205ad191be46b1ce2de765e3c2c1c220ca3630c581f07a627b10290",
    "TagGraph-Fusion-noGraph": "49b397ef6cd34bf5f13d8ef26fcdf7d002168376096cd9e941c7bfafb50ea154",
    "TagGraph-Fusion-noRaw": "6807384b53df20f8d6eca0c51f4e089c3e54c7a41f46dd3114aa238163dd19a4",
    "TagGraph-Fusion-noSession": "8a05da5ee19fce558a89be6ede0a9c9869aad120953f7e061aa0fa444adf147f",
    "TagGraph-Fusion-noTime": "d870d3bc4e9c84ba4db3cd05600e4992d15ef1df9b2acd97668e718d6fb5f1a9",
    "TagGraph-Fusion-noRequests": "bf967477e607e9c15b0e299973dd02053dd156a49d3a4a0eb4b370c5705dd2f9",
}
# S dev, first 30 questions. The methods that embed (OpenClaw, OC-notes, TagGraph-Fusion and its
# dense ablations) were checked once with MiniLM (BENCHMARKS.md, section "Method contract"); a cold
# MiniLM pass over 30 S haystacks takes too long for CI, so only the rest run here.
S_DEV_30 = {
    "BM25": "bafb5b1175205f350f897eaf60648d1a2b54969209943fa6e08bfe7342e5f9aa",
    "TagGraph-Basic": "1d77bc536104589b2e1eba382ad78771d774e9fe040dd34bab30879cd8a50c75",
    "TagGraph-Stopwords": "686622171f2ad4e5bf92e6e6f7eab5a6cabd319477488662b1b0e640fb1d207c",
    "TagGraph-TFIDF": "b0a5e0d6b5e42f3a923fe00ac4f2fbd9585210f8b98b94395960cad1af7700f3",
    "AdaptiveGraph": "456cc0243f87d8890ee30cbdfd0e6498e0d0b9c459c74722a5832c06db1c556a",
    "AdaptiveGraph-noDiffusion": "bb6c349bf17284b6bde45f7b45ae69ba44e54fb069545f1c33cdbcd4171f8f50",
    "AdaptiveGraph-noChronological": "b86db8124ce83516823c0bf8c882ccaa5da835f1bb5ac3e22bef6c18980cba61",
    "AdaptiveGraph-noFileSeeding": "a5cc0b6192517f6f045dbc4ef5f7f49997a6d21a1d1032370852e8582df33817",
    "AdaptiveGraph-noFileSeeding-noDiffusion": "f476bc7d307aff9d5129ab83816bb44009171ab3c84612e3da7cf903e10cf8a2",
    "TagGraph-TFIDF-boundTopLevel": "d6c34012677397bc7714f074a349311e6d7a3b54f2ac026abbc9a11d1b7ddf95",
    "TagGraph-Fusion-noDense": "8e18f3c070b69203b8dae57cf2efcf77ef575f70c67bf27c344acb789da3120c",
}


def checksums_of(cases, methods, tmp_path, **kwargs) -> dict[str, str]:
    result = run_bench(cases, methods, **kwargs)
    write_csv(result.rankings, tmp_path / "rankings.csv")
    return ranking_checksums.checksums(tmp_path)


@pytest.mark.slow  # every method and ablation over the demo questions, MiniLM loaded: ~70 s on 2 shared cores
def test_demo_rankings_are_unchanged(tmp_path):
    pytest.importorskip("sentence_transformers", reason="OpenClaw, OC-notes and TagGraph-Fusion embed with MiniLM")
    cases = [c for c in load_dataset(DEMO_DATA) if c.case_id in DEMO_QUESTIONS]
    assert [c.case_id for c in cases] == DEMO_QUESTIONS
    assert checksums_of(cases, list(DEMO), tmp_path, method_params=MINILM) == DEMO


@pytest.mark.skipif("avx512_vnni" not in open("/proc/cpuinfo").read() if os.path.exists("/proc/cpuinfo") else True,
                    reason="minilm-int8's rankings were recorded on AVX-512 VNNI; other CPUs take another int8 path")
def test_demo_rankings_of_fusion_with_its_int8_default_are_unchanged(tmp_path):
    pytest.importorskip("onnxruntime", reason="TagGraph-Fusion's default embedder, minilm-int8, needs taggraph[int8]")
    cases = [c for c in load_dataset(DEMO_DATA) if c.case_id in DEMO_QUESTIONS]
    assert checksums_of(cases, list(DEMO_INT8), tmp_path) == DEMO_INT8


@pytest.mark.slow  # the slowest check of the suite: a cold offline-v2 extraction of 30 S haystacks (~80-110 s)
@pytest.mark.realdata
@pytest.mark.skipif(not (SHARED_DATA / "longmemeval_s_dev.json.gz").exists(),
                    reason=f"needs LongMemEval-S dev in {SHARED_DATA} (set TAGGRAPH_DATA)")
def test_s_dev_rankings_are_unchanged(tmp_path):
    cases = load_dataset(SHARED_DATA / "longmemeval_s_dev.json.gz", limit=30)
    workers = min(2, os.cpu_count() or 1)
    assert checksums_of(cases, list(S_DEV_30), tmp_path, workers=workers) == S_DEV_30
