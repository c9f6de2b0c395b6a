"""One embedder beside another on this machine and a dataset (``taggraph check-embedder``): their cost, their
vectors and TagGraph-Fusion's rankings with each.

- cost: the CPU seconds (`time.process_time`) each embedder takes per 100 of the dataset's note texts (its turns
  as TagGraph-Fusion embeds them, a sample of at most `texts`, fixed seed), on CPU and one thread (`one_thread`:
  torch's and onnxruntime's idle threads spin, which would count as work), with the disk cache off, after a
  warm-up text (model loads and builds are not counted), and their ratio;
- vectors: the mean and least cosine between the two embedders' vectors of those texts (NaN when their lengths
  differ);
- rankings: TagGraph-Fusion through `taggraph.runs.bench.bench` (what ``taggraph bench`` runs) with each
  embedder: both MRRs, their paired difference and p-value (`taggraph.evaluation.significance.paired_test`),
  and the share of questions whose top-5 sessions are the same, in the same order.

The machine (CPU, the instruction sets int8 and float kernels take: ISA_FLAGS) and the onnxruntime and torch
versions are recorded beside them: minilm-int8's speed and vectors depend on both.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import random
import time
from collections.abc import Iterator
from collections.abc import Sequence
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from typing import Any

import numpy as np
import pandas as pd

from taggraph._infra.config import DEFAULT_EXTRACTOR
from taggraph.datasets import Case
from taggraph.embedders.base import get_embedder
from taggraph.errors import InputError
from taggraph.evaluation.metrics import without_abstention
from taggraph.evaluation.significance import PairedTest, paired_test
from taggraph.methods.fusion.signals import DENSE_CHARS
from taggraph.runs.bench import bench
from taggraph.runs.provenance import cpu_model_and_flags, machine

METHOD = "TagGraph-Fusion"
TEXTS = 300  # at most this many note texts are timed
TOP = 5
ISA_FLAGS = ("avx512_vnni", "avx_vnni", "avx2", "amx_int8", "amx_bf16")  # the int8 and bfloat16 kernels' paths
VERSIONS = ("onnxruntime", "torch")


@dataclass
class EmbedderCheck:
    """What `check_embedder` measured: `embedder` beside `against`."""

    embedder: str
    against: str
    machine: dict[str, Any]  # `provenance.machine()` and each of ISA_FLAGS: present or not
    versions: dict[str, str]  # onnxruntime's and torch's ("not installed")
    texts: int  # note texts timed
    cpu_per_100: tuple[float, float]  # CPU seconds per 100 texts of `embedder`, of `against`
    cosine_mean: float
    cosine_min: float
    questions: pd.DataFrame  # question_id, RR_embedder and RR_against (NaN: not judged), same_top5
    test: PairedTest  # RR with `embedder` - RR with `against`, over the judged questions
    mrr: tuple[float, float]  # TagGraph-Fusion's MRR with `embedder`, with `against`

    @property
    def cpu_ratio(self) -> float:
        """`embedder`'s CPU seconds over `against`'s (below 1: `embedder` is cheaper)."""
        return self.cpu_per_100[0] / self.cpu_per_100[1]

    @property
    def same_top5(self) -> float:
        """The share of questions whose top-5 sessions are the same with both embedders."""
        return float(self.questions["same_top5"].mean())

    def table(self) -> pd.DataFrame:
        """One row per measure: measure, value."""
        e, a = self.embedder, self.against
        rows = [(f"CPU s per 100 texts, {e}", self.cpu_per_100[0]), (f"CPU s per 100 texts, {a}", self.cpu_per_100[1]),
                (f"CPU ratio {e} / {a}", self.cpu_ratio), ("texts timed", self.texts),
                ("cosine mean", self.cosine_mean), ("cosine min", self.cosine_min),
                (f"{METHOD} MRR, {e}", self.mrr[0]), (f"{METHOD} MRR, {a}", self.mrr[1]),
                (f"MRR difference {e} - {a}", self.test.mean_diff), ("p (paired randomization)", self.test.p_value),
                ("judged questions", int(self.questions["RR_embedder"].notna().sum())),
                (f"share of questions with the same top-{TOP} sessions", self.same_top5)]
        return pd.DataFrame(rows, columns=["measure", "value"])


def note_texts(cases: Sequence[Case], count: int = TEXTS, seed: int = 0) -> list[str]:
    """At most `count` distinct turns of the cases' histories, each cut as TagGraph-Fusion embeds it, sampled
    with `seed`."""
    turns = dict.fromkeys(t[:DENSE_CHARS] for case in cases for i in case.interactions
                          for t in (i.user, i.assistant) if t.strip())
    texts = list(turns)
    return random.Random(seed).sample(texts, min(count, len(texts)))


@contextlib.contextmanager
def one_thread() -> Iterator[None]:
    """torch and onnxruntime (minilm-int8 reads OMP_NUM_THREADS at each call) on one thread inside; their
    settings restored after."""
    torch = importlib.import_module("torch") if importlib.util.find_spec("torch") else None
    threads, before = torch.get_num_threads() if torch else 0, os.environ.get("OMP_NUM_THREADS")
    os.environ["OMP_NUM_THREADS"] = "1"
    if torch:
        torch.set_num_threads(1)
    try:
        yield
    finally:
        if torch:
            torch.set_num_threads(threads)
        if before is None:
            del os.environ["OMP_NUM_THREADS"]
        else:
            os.environ["OMP_NUM_THREADS"] = before


def embedding_cost(name: str, texts: list[str]) -> tuple[float, np.ndarray]:
    """(CPU seconds, vectors) of embedder `name` over `texts` on CPU and one thread, the disk cache off, after a
    warm-up."""
    embedder = get_embedder(name, "cpu")
    embedder.cache = False
    with one_thread():
        embedder.embed(["a warm-up text, not timed"])
        start = time.process_time()
        vectors = embedder.embed(texts)
        return time.process_time() - start, vectors


def fusion_rankings(cases: Sequence[Case], embedder: str, extractor: str) -> pd.DataFrame:
    """TagGraph-Fusion's rankings over `cases` with `embedder`, as `taggraph bench` computes them."""
    return bench(cases, [METHOD], baseline=None, extractor=extractor,
                 method_params={METHOD: {"embedder": embedder}}).rankings


def check_embedder(cases: Sequence[Case], embedder: str = "minilm-int8", against: str = "minilm",
                   texts: int = TEXTS, extractor: str = DEFAULT_EXTRACTOR) -> EmbedderCheck:
    """`embedder` beside `against` on `cases` (the module docstring)."""
    sample = note_texts(cases, texts)
    if not sample:
        raise InputError("the questions' histories hold no note text to embed")
    (cpu_a, vectors_a), (cpu_b, vectors_b) = (embedding_cost(name, sample) for name in (embedder, against))
    cosines = ((vectors_a * vectors_b).sum(axis=1) if vectors_a.shape == vectors_b.shape
               else np.full(len(sample), np.nan))
    ranked = {name: fusion_rankings(cases, name, extractor).set_index("question_id")
              for name in dict.fromkeys((embedder, against))}
    a, b = ranked[embedder], ranked[against]
    judged = set(without_abstention(a).index)
    rr_a, rr_b = "RR_embedder", "RR_against"
    questions = pd.DataFrame({
        "question_id": a.index,
        rr_a: [a.at[q, "RR"] if q in judged else np.nan for q in a.index],
        rr_b: [b.at[q, "RR"] if q in judged else np.nan for q in a.index],
        "same_top5": [list(a.at[q, "ranked_session_ids"])[:TOP] == list(b.at[q, "ranked_session_ids"])[:TOP]
                      for q in a.index]})
    pairs = questions.dropna(subset=[rr_a, rr_b])
    test = (paired_test(pairs[rr_a], pairs[rr_b]) if len(pairs) >= 2
            else PairedTest(float("nan"), float("nan"), float("nan"), float("nan")))
    _, flags = cpu_model_and_flags()
    return EmbedderCheck(
        embedder, against, {**machine(), **{flag: flag in flags for flag in ISA_FLAGS}},
        {package: _version(package) for package in VERSIONS}, len(sample),
        (100 * cpu_a / len(sample), 100 * cpu_b / len(sample)), float(cosines.mean()), float(cosines.min()),
        questions, test, (float(pairs[rr_a].mean()), float(pairs[rr_b].mean())))


def _version(package: str) -> str:
    try:
        return version(package)
    except PackageNotFoundError:
        return "not installed"
