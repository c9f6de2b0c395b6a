"""Each memory built once: the bench over a LoCoMo-shaped file, sharing stores vs rebuilding per question.

    python benchmarks/shared_memories.py [--conversations 10 --sessions 19 --turns 30 --questions 199]

LoCoMo itself is not on this machine, so the script writes a synthetic file of the same
shape into a temporary folder (10 conversations of ~570 turns and ~199 questions each,
as locomo10.json has; words drawn from a fixed vocabulary with a seeded generator, each
question naming the content words of one evidence turn). It warms the offline
extraction cache, then times `run_bench` with BM25, TagGraph-TFIDF and AdaptiveGraph
twice in one process, `share_memories=False` (the old way: a store and every index per
question) and `share_memories=True`, checks the rankings are identical and prints
both wall times and their ratio.
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
from pathlib import Path

from taggraph.datasets import load_dataset
from taggraph.runs.bench import run_bench
from taggraph.runs.runner import build_store, group_by_history

METHODS = ["BM25", "TagGraph-TFIDF", "AdaptiveGraph"]
WORDS = ("pottery garden bakery violin marathon kayak museum recipe puppy guitar novel painting hiking "
         "yoga camera bicycle festival library chess soccer concert beach market coffee tennis climbing "
         "piano sculpture theatre vineyard lantern harbor meadow orchard canyon glacier island village "
         "studio workshop gallery stadium temple bridge castle tower forest river valley desert").split()
FILLER = "I we really think today yesterday went saw tried loved made with my our the a at to and".split()


def synthetic_locomo(conversations: int, sessions: int, turns: int, questions: int, seed: int = 0) -> list[dict]:
    """LoCoMo-shaped samples (the fields `taggraph.datasets.locomo` reads)."""
    rng = random.Random(seed)
    samples = []
    for c in range(conversations):
        a, b = f"Speaker{c}A", f"Speaker{c}B"
        conv: dict = {"speaker_a": a, "speaker_b": b}
        texts = {}
        for s in range(1, sessions + 1):
            conv[f"session_{s}_date_time"] = f"1:{s:02d} pm on {s} May, 2023"
            conv[f"session_{s}"] = []
            for t in range(1, turns + 1):
                words = rng.sample(WORDS, 3) + rng.sample(FILLER, 6)
                rng.shuffle(words)
                dia = f"D{s}:{t}"
                texts[dia] = words
                conv[f"session_{s}"].append({"speaker": a if t % 2 else b, "dia_id": dia, "text": " ".join(words)})
        qa = []
        for _ in range(questions):
            dia = rng.choice(list(texts))
            content = [w for w in texts[dia] if w in WORDS]
            qa.append({"question": f"When did we talk about the {' and the '.join(content)}?", "answer": dia,
                       "evidence": [dia], "category": rng.randint(1, 4)})
        samples.append({"sample_id": f"synthetic-{c}", "conversation": conv, "qa": qa})
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, default=10)
    parser.add_argument("--sessions", type=int, default=19)
    parser.add_argument("--turns", type=int, default=30)
    parser.add_argument("--questions", type=int, default=199)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "locomo_synthetic.json"
        path.write_text(json.dumps(synthetic_locomo(args.conversations, args.sessions, args.turns, args.questions)))
        cases = load_dataset(path)
    groups = group_by_history(cases)
    for group in groups:  # warm the offline extraction cache so both runs pay the same extraction
        build_store(group[0], "offline")
    times, rankings = {}, {}
    for share in (False, True):
        t0 = time.perf_counter()
        result = run_bench(cases, METHODS, extractor="offline", share_memories=share)
        times[share] = time.perf_counter() - t0
        rankings[share] = result.rankings[["question_id", "method", "ranked_note_ids"]]
    identical = rankings[False].equals(rankings[True])
    print(f"{len(cases)} questions over {len(groups)} memories "
          f"({sum(len(g[0].interactions) for g in groups) / len(groups):.0f} notes each), methods {', '.join(METHODS)}")
    print("| share_memories | wall s | ratio |\n|---|---|---|")
    print(f"| False (a store per question) | {times[False]:.1f} | 1.0 |")
    print(f"| True (a store per memory) | {times[True]:.1f} | {times[False] / times[True]:.1f}x faster |")
    print(f"identical rankings: {identical}")
    if not identical:
        raise SystemExit("rankings differ between shared and per-question memories")


if __name__ == "__main__":
    main()
