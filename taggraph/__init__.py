"""taggraph: tag-augmented graph retrieval over LLM agent memories.

Rooms: notes / ontology / store (memory), extraction (5W+Extra taggers),
graph (base tag-topic-file graph), retrieval (methods, one registry),
datasets (LongMemEval, demo), evaluation (metrics), experiments (bench runs),
viz (reports, graph view), cli.
"""

from taggraph.notes import Note
from taggraph.store import Interaction, MemoryStore

__version__ = "0.1.0"
__all__ = ["Interaction", "MemoryStore", "Note", "__version__"]
