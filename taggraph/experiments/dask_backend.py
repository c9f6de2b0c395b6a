"""Run the per-case joblib jobs on a Dask cluster.

    with dask_backend("tcp://scheduler:8786"):
        result = run_bench(cases, workers=-1, backend=None)
        sweep = distractor_sweep(cases, workers=-1, backend=None)

``backend=None`` makes joblib use the backend set here. Do not pass the string
"dask" instead: joblib 1.6 then builds a second backend whose ``nesting_level``
leaks into the task call (TypeError in ``Batch.__call__``). Workers must have
taggraph (and the spaCy model, for the offline extractor) installed. Cases are
independent, so rankings equal those of a local run. Needs
``pip install "dask[distributed]"``.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager, nullcontext

from joblib import parallel_config

from taggraph.errors import ConfigError, ServerError

CONNECT_TIMEOUT = "10s"  # a closed port or a silent host ends the command in one line after this


@contextmanager
def dask_backend(scheduler_address: str) -> Iterator:
    """Connect a dask.distributed Client to `scheduler_address` (yielded) and make "dask" joblib's backend; a
    malformed address is a ConfigError, a scheduler not reached within CONNECT_TIMEOUT a ServerError."""
    try:
        from dask.distributed import Client
    except ImportError as exc:
        raise ImportError('the dask backend needs: pip install "dask[distributed]"') from exc
    try:
        client = Client(scheduler_address, timeout=CONNECT_TIMEOUT)
    except ValueError as exc:  # not an address
        raise ConfigError(f"--dask-scheduler {scheduler_address!r}: {exc}") from None
    except (OSError, TimeoutError) as exc:  # closed port, no such host, no answer
        raise ServerError(f"--dask-scheduler {scheduler_address}: cannot connect ({exc}); is the scheduler "
                          f"running (dask scheduler) and the address tcp://HOST:PORT?") from None
    with client, parallel_config(backend="dask"):
        yield client


def scale_out(workers: int, scheduler: str | None):
    """(context, workers, backend): a Dask cluster when `scheduler` is given, else local loky."""
    if scheduler:
        return dask_backend(scheduler), -1, None
    return nullcontext(), workers, "loky"
