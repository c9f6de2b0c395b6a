"""Progress bars (tqdm), silent when CI or TQDM_DISABLE is set or output is not a terminal.

Our bars are tqdm's plain text bar. In a Jupyter kernel without ipywidgets, a library that
imports ``tqdm.auto`` (sentence-transformers, transformers) prints a red ``TqdmWarning:
IProgress not found`` and then uses that same plain bar; `quiet_tqdm_auto` imports
``tqdm.autonotebook`` once with that warning silenced, so later imports reuse it quietly.
"""

from __future__ import annotations

import os
import sys
import warnings

from tqdm.std import TqdmWarning, tqdm


def quiet_tqdm_auto() -> None:
    """Import ``tqdm.autonotebook`` without its IProgress warning (it falls back to the plain bar)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TqdmWarning)
        import tqdm.autonotebook  # noqa: F401


def progress(iterable=None, **kwargs):
    quiet = bool(os.environ.get("CI") or os.environ.get("TQDM_DISABLE")) or not sys.stderr.isatty()
    return tqdm(iterable, disable=quiet, **kwargs)
