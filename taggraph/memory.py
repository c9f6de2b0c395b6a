"""`Memory`: one agent's memory behind five calls - remember, query, explain, save, load.

    import taggraph as tg
    memory = tg.Memory()                                   # the offline-v2 extractor: no model, no server
    memory.remember("I adopted my dog Miso, a Shiba Inu.", "Congratulations!", session="s1")
    memory.remember_many([{"user": "I walk Miso at dawn.", "session": "s2"}])  # many at once: batched, faster
    hits = memory.query("what breed is my dog?", k=3)      # [Result(note_id, score, session_id, rank, ...)]
    memory.explain("what breed is my dog?", hits[0].note_id).reason

Each method's index is built on its first query and then grows with every `remember` (nothing is rebuilt);
after `load`, the term and concept indexes the methods share are read from the snapshots `save` kept beside the
notes instead of built. The notes, tags and ontology are those of a
`MemoryStore`; `memory.store` gives the store itself to the rest of the library.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any
from datetime import date
from pathlib import Path

from taggraph._infra.config import DEFAULT_EXTRACTOR
from taggraph.errors import ConfigError, InputError, TaggraphError
from taggraph.extractors import Extractor, get_extractor, rebuild_extractor
from taggraph.core.notes import Note
from taggraph.methods import Explanation, Result, Retriever, check_methods, check_params, make_retriever
from taggraph.methods.base import question_date
from taggraph.methods.index import concept_matcher, term_index
from taggraph.core.store import Interaction, MemoryStore
from taggraph.core.snapshot import FOLDER as INDEX_FOLDER
from taggraph.embedders import saved

# Free choice: BM25 is the default method because it needs no tuning and no model, and is the strongest
# of the paper's methods on LongMemEval-S dev (README, "Results"; TagGraph-Fusion, ours, is 0.04 MRR
# better cross-validated but needs MiniLM); pass method= for any registered method.
DEFAULT_METHOD = "BM25"
DEFAULT_K = 5
REMEMBER_KEYS = ("user", "assistant", "session", "timestamp")  # `Memory.remember`'s arguments


class Memory:
    """Remember user/assistant interactions as tagged notes; query and explain them with any method.

    `remember_many` stores a batch (a history, a log) in one call: the same notes as `remember` one at a time,
    extracted in chunks, with a progress bar on long work."""

    def __init__(self, extractor: str | Extractor = DEFAULT_EXTRACTOR, name: str = "memory",
                 method: str = DEFAULT_METHOD, *, store: MemoryStore | None = None,
                 method_params: Mapping[str, Mapping[str, Any]] | None = None) -> None:
        """`extractor`: a name (`taggraph.get_extractor`'s forms, e.g. "offline-v2", "openai:MODEL",
        "package.module:Class") or an object with the `taggraph.Extractor` interface. `method_params`: each
        method's parameters over its defaults, {method: {key: value}}, e.g. ``{"TagGraph-Fusion": {"embed_on_add":
        True}}`` for a long-lived memory that embeds each note as it comes (checked here: a ConfigError names a
        wrong one)."""
        self.store = store if store is not None else MemoryStore(name, get_extractor(extractor))
        self.method = check_methods([method])[0]
        named = {check_methods([m])[0]: dict(p) for m, p in (method_params or {}).items()}
        self.method_params = {m: check_params(m, p) for m, p in named.items()}
        self._retrievers: dict[str, Retriever] = {}
        self._saved_vectors: dict[tuple[Path, str], Any] = {}  # (folder, model) -> `saved.read` of its vectors

    def __len__(self) -> int:
        return len(self.store)

    @property
    def notes(self) -> list[Note]:
        return self.store.notes

    def remember(self, user: str, assistant: str = "", *, session: str = "default", timestamp: str = "") -> Note:
        """Store one interaction as the newest note (tags extracted now); returns the note."""
        return self.store.remember(Interaction(session, user, assistant, timestamp))

    def remember_many(self, interactions: Iterable[Mapping[str, str] | tuple[str, str] | Interaction], *,
                      progress: bool | None = None) -> list[Note]:
        """Store interactions as the newest notes, in order: the same notes as calling `remember` with each, in
        less time. Each item holds `remember`'s arguments: a dict of them (``{"user": ..., "assistant": ...,
        "session": ..., "timestamp": ...}``, only "user" required, defaults as in `remember`), a (user,
        assistant) pair, or an `Interaction`. `progress`: a progress bar; None (the default) shows one when
        the batch is long (stderr a terminal, TQDM_DISABLE unset). A malformed item is an InputError naming it,
        raised before anything is stored."""
        batch = [_interaction(item, i) for i, item in enumerate(interactions)]
        return self.store.remember_many(batch, progress=progress)

    def retriever(self, method: str | None = None) -> Retriever:
        """The method's retriever over this memory, built once and kept current."""
        name = check_methods([method or self.method])[0]
        if name not in self._retrievers:
            retriever = make_retriever(name, self.store, indexed=False, **self.method_params.get(name, {}))
            embedder = getattr(retriever, "embedder", None)
            if embedder is not None and self.store.origin is not None:  # before indexing: a method may embed then
                key = (self.store.origin, embedder.cache_key)
                if key not in self._saved_vectors:  # read once, however many methods share the model
                    self._saved_vectors[key] = saved.read(self.store.origin / INDEX_FOLDER, embedder.cache_key)
                if self._saved_vectors[key] is not None:
                    embedder.preload(*self._saved_vectors[key])
            retriever.sync()
            self._retrievers[name] = retriever
        return self._retrievers[name]

    def query(self, text: str, method: str | None = None, k: int = DEFAULT_K, *,
              asked_on: str | date | None = None) -> list[Result]:
        """The `k` best notes for `text` under `method` (default: the memory's method), asked on date
        `asked_on` (a string such as "2023/05/30 (Tue) 23:40" or ISO 8601, a datetime.date or a datetime.datetime;
        methods with time rules use it); a string that names no date is a ConfigError."""
        return self.retriever(method).query(text, k=k, asked_on=question_date(asked_on, strict=True))

    def explain(self, text: str, note_id: str, method: str | None = None, k: int = DEFAULT_K, *,
                asked_on: str | date | None = None) -> Explanation:
        """Why `note_id` was (not) among the `k` best notes for `text` under `method`, asked on `asked_on`."""
        return self.retriever(method).explain(text, note_id, k=k, asked_on=question_date(asked_on, strict=True))

    def save(self, path: str | Path) -> Path:
        """Write the memory to the folder `path` (a store folder: notes, manifest, ontology.md). A folder holding
        another memory, or a file, is refused (StoreError, WriteError); so is the folder this memory was loaded
        from or saved to once another copy saved there since (StoreError; nothing is merged or lost). Only the
        memory's own files are written, with snapshots of the indexes the built-in methods share, so that a loaded
        memory's first query reads them instead of building them, and the vectors its methods embedded
        (`taggraph.embedders.saved`), so that it embeds them never again."""
        folder = self.store.save(path, keep=(term_index, concept_matcher))
        by_model: dict[str, tuple[Any, list]] = {}  # cache key -> (embedder, what each method embedded with it)
        for retriever in self._retrievers.values():
            embedder = getattr(retriever, "embedder", None)
            if embedder is not None and hasattr(retriever, "embedded"):
                by_model.setdefault(embedder.cache_key, (embedder, []))[1].append(retriever.embedded())
        for embedder, embedded in by_model.values():  # after the commit: the vectors are a cache, as snapshots are
            saved.write(folder / INDEX_FOLDER, embedder, embedded)
        self.store.close()
        return folder

    @classmethod
    def load(cls, path: str | Path, extractor: str | Extractor | None = None,
             method: str = DEFAULT_METHOD, *, method_params: Mapping[str, Mapping[str, Any]] | None = None) -> "Memory":
        """A memory saved with `save`; new notes use `extractor` (a name or an object; default: the one
        recorded in the folder, built from its name). The folder holds no method: `method` and `method_params`
        are the loaded memory's, as in the constructor."""
        store = MemoryStore.load(path)
        if extractor is not None:
            store.extractor = get_extractor(extractor)
            return cls(method=method, store=store, method_params=method_params)
        recorded = store.recorded_extractor or DEFAULT_EXTRACTOR
        try:
            if recorded.startswith("gguf:") and _magic(Path(recorded[5:])) != b"GGUF":
                raise ValueError("the file is no GGUF model")  # a manifest is input: never load any file as a model
            store.extractor = rebuild_extractor(recorded, str(path))
        except (ImportError, OSError, ValueError, RuntimeError) as exc:  # e.g. gguf:PATH without llama-cpp or file
            if isinstance(exc, TaggraphError):
                raise
            raise ConfigError(f"{path}: recorded extractor {recorded!r} cannot be built ({exc}); pass one, e.g. "
                              f"Memory.load(folder, extractor='offline-v2')") from None
        return cls(method=method, store=store, method_params=method_params)


def _interaction(item: object, i: int) -> Interaction:
    """Item `i` of `Memory.remember_many`'s input as an `Interaction`."""
    if isinstance(item, Interaction):
        return item
    if isinstance(item, Mapping):
        unknown = [key for key in item if key not in REMEMBER_KEYS]
        if unknown or "user" not in item:
            problem = f"unknown key {unknown[0]!r}" if unknown else "no key 'user'"
            raise InputError(f"interactions[{i}]: {problem}; the keys are remember's arguments: "
                             f"{', '.join(REMEMBER_KEYS)} (user required)")
        return Interaction(item.get("session", "default"), item["user"], item.get("assistant", ""),
                           item.get("timestamp", ""))
    if isinstance(item, tuple) and len(item) == 2:
        return Interaction("default", *item)
    raise InputError(f"interactions[{i}]: expected a dict of remember's arguments, a (user, assistant) pair or an "
                     f"Interaction, got {type(item).__name__}")


def _magic(file: Path) -> bytes:
    """The first 4 bytes of `file` (b"" when it cannot be read)."""
    try:
        with open(file, "rb") as fh:
            return fh.read(4)
    except OSError:
        return b""
