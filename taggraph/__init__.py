"""taggraph: tag-augmented graph retrieval over LLM agent memories (the TagGraph paper).

The public face::

    import taggraph as tg
    memory = tg.Memory()                        # remember / query / explain / save / load
    tg.method_names()                           # the method names: built in, registered, installed
    @tg.register_method("MyMethod")             # your own: a tg.Retriever subclass (the method contract)
    tg.register("embedder", "mine", MyEmbedder)  # any kind: "method", "format", "extractor", "embedder"
    tg.make_retriever("AdaptiveGraph", memory.store)
    tg.get_extractor("offline-v2")             # or "offline", "none", "ollama:MODEL", "openai:MODEL",
                                               # "package.module:Class"; tg.Memory(extractor=obj) takes any
                                               # tg.Extractor object; tg.register_extractor names one
    data = tg.load("tests/fixtures/generic")    # any registered format (a tg.DatasetFormat), detected
    result = tg.bench(data, ["BM25", "AdaptiveGraph"], out="runs/a")  # taggraph bench: result.summary, .rankings
    tg.score(["runs/a", "other.trec"], data)     # taggraph score: another system's rankings beside ours
    tg.compare([result], ["BM25=AdaptiveGraph"])  # taggraph compare: run folders or bench results
    print(tg.explain("data.json", "q1"))        # taggraph explain: why each method (did not) rank a note
    tg.fuse_runs(["runs/a:BM25", "runs/b:TagGraph-TFIDF"], "runs/fused", method="rrf")  # taggraph fuse
    tg.views.gold_rank_chart(...)               # what the notebooks show (charts, tables, pages, panels)

Rooms, imports running one way (top to bottom; docs/architecture.md): cli -> views -> viz -> studies -> runs ->
evaluation / datasets / memory -> methods / extractors -> embedders -> core (store -> graph, fivew -> notes,
ontology -> text) -> registry -> _infra, errors.
"""

import importlib

from taggraph.datasets import Case, Dataset, DatasetFormat, load, register_format
from taggraph.extractors import Extraction, Extractor, get_extractor, register_extractor
from taggraph.memory import Memory
from taggraph.core.notes import Note
from taggraph.core.ontology import Ontology
from taggraph.methods import (DEFAULT_DEPTH, Contrast, Evidence, Explanation, Result, Retriever, Scores, Signal, make_retriever,
                                method_names, register_method)
from taggraph.core.store import Interaction, MemoryStore
from taggraph.registry import register

__version__ = "0.1.0"
__all__ = ["DEFAULT_DEPTH", "Evidence", "Explanation", "Interaction", "Memory", "MemoryStore", "Note", "Ontology",
           "Result", "Retriever", "Scores", "__version__", "get_extractor", "make_retriever", "method_names", "register",
           "register_method"]
__all__ += ["Contrast", "Signal"]  # a score in parts that add up to it, and a note beside those ranked above it
__all__ += ["Extraction", "Extractor", "register_extractor"]  # extractors given as objects or names
__all__ += ["Case", "Dataset", "DatasetFormat", "load", "register_format"]  # one loader, any registered format

# Imported when first used: they bring the runs, studies and viz rooms, seconds to import.
_LAZY = {
    "bench": "taggraph.views:bench",  # with out=: the run folder and reports, as taggraph bench
    "score": "taggraph.views:score",
    "BenchResult": "taggraph.runs.bench:BenchResult",
    "compare": "taggraph.runs.compare:compare_runs",
    "explain": "taggraph.views:explain",
    "open_question": "taggraph.runs.question:open_question",  # a question's store and methods, for the views
    "OpenQuestions": "taggraph.runs.question:OpenQuestions",
    "fuse_runs": "taggraph.runs.fuse_runs:fuse_runs",
    "build_store": "taggraph.runs.runner:build_store",
    "store_vocabulary": "taggraph.core.store_stats:store_vocabulary",
    "vocabulary_stats": "taggraph.studies.vocabulary:vocabulary_stats",
    "ABLATION_COLUMNS": "taggraph.evaluation.verdicts:ABLATION_COLUMNS",
    "ablation_columns": "taggraph.evaluation.verdicts:ablation_columns",
    "component_ablation": "taggraph.studies.ablation:component_ablation",
    "ablation_intervals": "taggraph.studies.ablation:ablation_intervals",
    "depth_sweep": "taggraph.studies.sweeps:depth_sweep",
    "distractor_sweep": "taggraph.studies.sweeps:distractor_sweep",
    "GRAPH_METHODS": "taggraph.studies.diagnostics:GRAPH_METHODS",
    "failure_diagnostics": "taggraph.studies.diagnostics:failure_diagnostics",
    "longmemeval_evidence_notes": "taggraph.studies.diagnostics:longmemeval_evidence_notes",
    "pool_case_ids": "taggraph.studies.diagnostics:pool_case_ids",
    "ExtractiveBaseline": "taggraph.studies.answers:ExtractiveBaseline",
    "answer_accuracy": "taggraph.studies.answers:answer_accuracy",
    "views": "taggraph.views",  # what the notebooks show: charts, tables, pages, panels
}
__all__ += list(_LAZY)


def __getattr__(name: str):
    """A name of `_LAZY`, imported when first used."""
    if name not in _LAZY:
        raise AttributeError(f"module 'taggraph' has no attribute {name!r}")
    module, _, attr = _LAZY[name].partition(":")
    return getattr(importlib.import_module(module), attr) if attr else importlib.import_module(module)


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})
