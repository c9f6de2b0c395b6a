"""taggraph: tag-augmented graph retrieval over LLM agent memories (the TagGraph paper).

The public face::

    import taggraph as tg
    memory = tg.Memory()                        # remember / query / explain / save / load
    tg.method_names()                           # the method names: built in, registered, installed
    @tg.register_method("MyMethod")             # your own: a tg.Retriever subclass (the method contract)
    tg.make_retriever("AdaptiveGraph", memory.store)
    tg.get_extractor("offline-v2")             # or "offline", "none", "ollama:MODEL", "openai:MODEL",
                                               # "package.module:Class"; tg.Memory(extractor=obj) takes any
                                               # tg.Extractor object; tg.register_extractor names one
    tg.fuse_runs(["runs/a:BM25", "runs/b:TagGraph-TFIDF"], "runs/fused", method="rrf")  # taggraph fuse

Rooms, imports running one way (top to bottom): cli -> viz -> experiments ->
evaluation / datasets / memory -> retrieval / extraction -> store -> graph, fivew
(the 5W+Extra record), atomic -> notes / ontology -> errors, text, config.
"""

from taggraph.datasets import load_cases, register_format
from taggraph.extraction import Extraction, Extractor, get_extractor, register_extractor
from taggraph.memory import Memory
from taggraph.notes import Note
from taggraph.retrieval import (DEFAULT_DEPTH, Evidence, Explanation, Result, Retriever, make_retriever, method_names,
                                register_method)
from taggraph.store import Interaction, MemoryStore

__version__ = "0.1.0"
__all__ = ["DEFAULT_DEPTH", "Evidence", "Explanation", "Interaction", "Memory", "MemoryStore", "Note", "Result",
           "Retriever", "__version__", "get_extractor", "make_retriever", "method_names", "register_method"]
__all__ += ["Extraction", "Extractor", "register_extractor"]  # extractors given as objects or names (issue 21)
__all__ += ["load_cases", "register_format"]  # datasets of any registered format, yours included (issue 21)
__all__ += ["fuse_runs"]  # runs fused (RRF, CombSUM, CombMNZ, weighted sum) into a scored run folder (issue 31)


def __getattr__(name: str):
    """`fuse_runs`, imported when first used (it brings the experiments room, slow to import)."""
    if name == "fuse_runs":
        from taggraph.experiments.fuse import fuse_runs
        return fuse_runs
    raise AttributeError(f"module 'taggraph' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), "fuse_runs"})
