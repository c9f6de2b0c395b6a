"""Run the per-case joblib jobs on a Dask cluster.

    with dask_backend(dask_scheduler="tcp://scheduler:8786"):
        result = run_bench(cases, backend="dask")
        sweep = distractor_sweep(cases, backend="dask")

``backend="dask"`` runs on the Dask client of this process: the one `dask_backend` connects, or a
``dask.distributed.Client(...)`` made before (`dask_jobs`); `parallel_map` then hands joblib
``backend=None`` inside ``parallel_config(backend="dask")``, because joblib 1.6 given the string
"dask" builds a second backend whose ``nesting_level`` leaks into the task call (TypeError in
``Batch.__call__``). The command line's ``--dask-scheduler`` is `dask_backend`'s ``dask_scheduler``. Workers must have
taggraph (and the spaCy model, for the offline extractor) installed. Cases are
independent, so rankings equal those of a local run. Needs
``pip install "dask[distributed]"``.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from typing import Any

from joblib import parallel_config

from taggraph.errors import ConfigError, ServerError

CONNECT_TIMEOUT = "10s"  # a closed port or a silent host ends the command in one line after this


@contextmanager
def dask_backend(dask_scheduler: str) -> Iterator:
    """Connect a dask.distributed Client to `dask_scheduler` (yielded) and make "dask" joblib's backend; a
    malformed address is a ConfigError, a scheduler not reached within CONNECT_TIMEOUT a ServerError."""
    try:
        from dask.distributed import Client
    except ImportError as exc:
        raise ImportError('the dask backend needs: pip install "dask[distributed]"') from exc
    # a client an earlier failed connection left behind is finalized now: its __del__, run by the garbage collector
    # while a new client starts, waits on the loop runner the new one holds (a hang seen in the test suite)
    gc.collect()
    try:
        client = Client(dask_scheduler, timeout=CONNECT_TIMEOUT)
    except ValueError as exc:  # not an address
        raise ConfigError(f"--dask-scheduler {dask_scheduler!r}: {exc}") from None
    except (OSError, TimeoutError) as exc:  # closed port, no such host, no answer
        raise ServerError(f"--dask-scheduler {dask_scheduler}: cannot connect ({exc}); is the scheduler "
                          f"running (dask scheduler) and the address tcp://HOST:PORT?") from None
    except AssertionError:  # distributed's client thread did not start within its fixed 10 s (a starved CPU)
        raise ServerError(f"--dask-scheduler {dask_scheduler}: cannot connect (the Dask client's IO loop did not "
                          f"start within 10 s: is the machine overloaded?)") from None
    with client, parallel_config(backend="dask"):
        yield client


def dask_jobs(workers: int) -> tuple[Any, int]:
    """(context, workers) that run joblib jobs on the Dask client of this process (every cluster worker when
    `workers` is 1); no client is a ConfigError saying how to make one."""
    try:
        from dask.distributed import get_client
    except ImportError:
        raise ConfigError('backend="dask" needs: pip install "dask[distributed]"') from None
    try:
        get_client()
    except ValueError:  # distributed's "no global client found"
        raise ConfigError('backend="dask" needs a Dask client: run inside `with dask_backend(dask_scheduler='
                          '"tcp://HOST:PORT"):`, or make one first (dask.distributed.Client(...))') from None
    return parallel_config(backend="dask"), -1 if workers == 1 else workers


def scale_out(workers: int, scheduler: str | None):
    """(context, workers, backend): a Dask cluster when `scheduler` is given, else local loky."""
    if scheduler:
        return dask_backend(scheduler), -1, None
    return nullcontext(), workers, "loky"
