"""The project's own error types: what the CLI reports in one line (exit status 2).

Anything else raised inside taggraph is a bug and keeps its traceback.
"""

from __future__ import annotations


class TaggraphError(Exception):
    """Base of every expected failure; the message says what and where."""


class InputError(TaggraphError, ValueError):
    """Bad input data: a dataset, store, note or run file that cannot be read as it is."""


class ConfigError(TaggraphError, ValueError):
    """A bad setting: an unknown method, extractor or parameter, an option out of range."""


class ServerError(TaggraphError, RuntimeError):
    """A model server (Ollama) that cannot be reached or answers with something unusable."""


class WriteError(TaggraphError, OSError):
    """A file that cannot be written (read-only folder, full disk); names the path."""
