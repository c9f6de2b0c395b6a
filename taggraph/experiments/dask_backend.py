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


@contextmanager
def dask_backend(scheduler_address: str) -> Iterator:
    """Connect a dask.distributed Client to `scheduler_address` (yielded) and make "dask" joblib's backend."""
    try:
        from dask.distributed import Client
    except ImportError as exc:
        raise ImportError('the dask backend needs: pip install "dask[distributed]"') from exc
    with Client(scheduler_address) as client, parallel_config(backend="dask"):
        yield client


def scale_out(workers: int, scheduler: str | None):
    """(context, workers, backend): a Dask cluster when `scheduler` is given, else local loky."""
    if scheduler:
        return dask_backend(scheduler), -1, None
    return nullcontext(), workers, "loky"
