"""Downstream answer accuracy from retrieved notes (paper, section 5.4 and appendix F.2).

Each method's first k (= 5) ranked notes go to a generator; the answer is scored
against the gold answer by token F1 and containment (`taggraph.evaluation.answer_metrics`).
Rankings cut shallower than k are refused (``taggraph answers`` ranks max(40, k) deep).

Questions without a gold answer and abstention questions are left out, counted and warned of
(`AnswersLeftOutWarning`; the summary's ``left_out``, ``config["left_out"]``): ``n_answerable`` and the
summary's MRR are over the questions scored, not over bench's questions. LoCoMo's adversarial questions
(category 5) are among those left out: they hold only an ``adversarial_answer``, the answer to the question's
false premise (what the other speaker did), which a right reply should not give, so it is not scored as gold.
Every output row names its generator; the offline baseline is labelled ``offline-baseline (not an LLM)``.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import pandas as pd

from taggraph.datasets import Case
from taggraph.errors import ConfigError
from taggraph.evaluation.answer_metrics import containment, token_f1
from taggraph.core.notes import Note
from taggraph._infra.progress import progress
from taggraph.methods import check_k
from taggraph._infra.model_clients import GENERATION_TIMEOUT, chat_content, check_timeout, ollama_call, ollama_client
from taggraph.core.store import MemoryStore
from taggraph.core.text import tokenize

OFFLINE_LABEL = "offline-baseline (not an LLM)"
SYSTEM_PROMPT = ("You answer questions about a user's past conversations. Use only the notes provided. "
                 "If the notes do not contain the answer, reply: I don't know. Answer in one short sentence.")
MAX_NOTE_CHARS = 2000  # per note in the prompt; LongMemEval assistant turns can run to pages
_THINK = re.compile(r"<think>.*?</think>", re.S)


class AnswersLeftOutWarning(UserWarning):
    """Questions the answer accuracy leaves out (no gold answer, abstention), with their count."""


class Generator(Protocol):
    label: str

    def answer(self, question: str, notes: Sequence[Note], question_date: str = "") -> str: ...


def note_block(notes: Sequence[Note]) -> str:
    return "\n\n".join(f"[Note {i} | {n.timestamp}]\n{n.raw_text[:MAX_NOTE_CHARS]}" for i, n in enumerate(notes, 1))


class OllamaGenerator:
    """An Ollama chat model at temperature 0 (host: `host`, else $OLLAMA_HOST, else the client default).

    `timeout` is a total deadline per answer and the reply is capped (`taggraph._infra.model_clients.ollama_call`); a failed
    request raises ServerError naming the model and the host.
    """

    def __init__(self, model: str, host: str | None = None, timeout: float = GENERATION_TIMEOUT) -> None:
        self.model = model
        self.label = f"ollama:{model}"
        self.timeout = check_timeout(timeout, self.label)
        self.client = ollama_client(host, self.timeout)

    def answer(self, question: str, notes: Sequence[Note], question_date: str = "") -> str:
        date = f"\nThe question is asked on {question_date}." if question_date else ""
        user = f"Notes:\n{note_block(notes)}\n{date}\nQuestion: {question}\nAnswer:"
        body = {"model": self.model, "stream": False, "options": {"temperature": 0},
                "messages": [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": user}]}
        content = ollama_call(self.client, "/api/chat", body, self.timeout, chat_content)
        return _THINK.sub("", content).strip()


class ExtractiveBaseline:
    """Not an LLM: returns the sentence of the given notes sharing the most content words with the question.

    Sentences are split at ``.!?`` and line breaks, user text before assistant text,
    notes in rank order; content words are tokens minus spaCy's English stop
    words; ties go to the earlier sentence; no notes -> "".
    """

    label = OFFLINE_LABEL

    def __init__(self) -> None:
        from spacy.lang.en.stop_words import STOP_WORDS

        self.stop = STOP_WORDS

    def answer(self, question: str, notes: Sequence[Note], question_date: str = "") -> str:
        wanted = set(tokenize(question)) - self.stop
        best, best_score = "", -1
        for note in notes:
            for sentence in re.split(r"(?<=[.!?])\s+|\n+", f"{note.user}\n{note.assistant}"):
                score = len(wanted & set(tokenize(sentence)))
                if sentence.strip() and score > best_score:
                    best, best_score = sentence.strip(), score
        return best


def case_notes(case: Case) -> MemoryStore:
    """The case's notes without extraction (note ids and texts do not depend on the extractor)."""
    store = MemoryStore(case.case_id)
    store.remember_many(case.interactions)
    return store


@dataclass
class AnswerResult:
    rows: pd.DataFrame  # question x method: prediction, token_f1, containment
    summary: pd.DataFrame  # method: n_answerable, left_out, MRR (over the n_answerable), token_f1, containment
    config: dict[str, Any]  # with left_out: reason -> question ids
    warnings: list[str]  # the left-out questions' count and why (also warned as AnswersLeftOutWarning)


def left_out(cases: Sequence[Case]) -> dict[str, list[str]]:
    """Questions answer accuracy does not score, by reason: ``adversarial`` (only an ``adversarial_answer``,
    LoCoMo category 5), ``no_answer`` (no gold answer otherwise) and ``abstention``."""
    out: dict[str, list[str]] = {"adversarial": [], "no_answer": [], "abstention": []}
    for case in cases:
        if case.is_abstention:
            out["abstention"].append(case.case_id)
        elif not case.answer:
            out["adversarial" if getattr(case, "adversarial_answer", "") else "no_answer"].append(case.case_id)
    return out


def left_out_message(out: Mapping[str, list[str]], total: int) -> str | None:
    """One line: how many of `total` questions `left_out` found, why, and the first of each reason."""
    reasons = {"adversarial": "adversarial (only an adversarial_answer: the question's premise is false, "
                              "no gold answer to score)",
               "no_answer": "without a gold answer", "abstention": "abstention questions (no answer in the history)"}
    parts = [f"{len(ids)} {reasons[kind]}, first {ids[0]}" for kind, ids in out.items() if ids]
    if not parts:
        return None
    n = sum(len(ids) for ids in out.values())
    return (f"answers: {n} of {total} questions left out of n_answerable, MRR, token F1 and containment: "
            + "; ".join(parts) + " (bench's n and MRR count the judged ones)")


def answer_accuracy(cases: Sequence[Case], rankings: pd.DataFrame, generator: Generator, k: int = 5,
                    methods: Sequence[str] | None = None) -> AnswerResult:
    """Generate an answer from each method's top-k notes for every answerable case and score it."""
    k = check_k(k)
    deepest = rankings["ranked_note_ids"].map(len).max() if len(rankings) else k
    if deepest < k and "notes" in rankings and (rankings["notes"] > deepest).any():  # cut shallower than k: the generator would get fewer
        raise ConfigError(f"k={k} notes asked for, but the rankings are at most {deepest} notes deep: rank at "
                          f"least k deep (run_bench(..., depth=k))")
    methods = list(methods or rankings["method"].unique())
    ranked = {(r.question_id, r.method): (r.ranked_note_ids, r.RR)
              for r in rankings.itertuples(index=False)}
    out = left_out(cases)
    skipped = {qid for ids in out.values() for qid in ids}
    message = left_out_message(out, len(cases))
    if message:
        warnings.warn(message, AnswersLeftOutWarning, stacklevel=2)
    rows = []
    for case in progress([c for c in cases if c.case_id not in skipped], desc="answers", unit="case"):
        store = case_notes(case)
        for method in methods:
            note_ids, rr = ranked[(case.case_id, method)]
            prediction = generator.answer(case.question, [store.by_id[n] for n in note_ids[:k]], case.question_date)
            rows.append({"question_id": case.case_id, "question_type": case.question_type, "method": method,
                         "generator": generator.label, "gold": case.answer, "prediction": prediction,
                         "RR": rr, "token_f1": token_f1(prediction, case.answer),
                         "containment": containment(prediction, case.answer)})
    df = pd.DataFrame(rows, columns=["question_id", "question_type", "method", "generator", "gold", "prediction",
                                     "RR", "token_f1", "containment"])
    summary = (df.groupby(["method", "generator"], sort=False)
               .agg(n_answerable=("question_id", "size"), MRR=("RR", "mean"), token_f1=("token_f1", "mean"),
                    containment=("containment", "mean")).reset_index())
    summary.insert(3, "left_out", len(skipped))
    return AnswerResult(df, summary, {"experiment": "answer_accuracy", "generator": generator.label, "k": k,
                                      "methods": methods, "max_note_chars": MAX_NOTE_CHARS,
                                      "system_prompt": SYSTEM_PROMPT, "questions": len(cases),
                                      "left_out": {kind: ids for kind, ids in out.items() if ids}},
                        [message] if message else [])
