"""Progress bars (tqdm), silent when CI or TQDM_DISABLE is set or output is not a terminal."""

from __future__ import annotations

import os
import sys

from tqdm.auto import tqdm


def progress(iterable=None, **kwargs):
    quiet = bool(os.environ.get("CI") or os.environ.get("TQDM_DISABLE")) or not sys.stderr.isatty()
    return tqdm(iterable, disable=quiet, **kwargs)
