"""Dask from Python as docs/scaling-out.md says: ``run_bench(..., backend="dask")`` runs on the Dask
client of the process and gives the local rankings; without a client it is one line saying how; the scheduler
option has one name, ``--dask-scheduler`` / ``dask_scheduler``, in the CLI and the library."""

from __future__ import annotations

import inspect

import pytest
from typer.testing import CliRunner

from taggraph.cli import app
from taggraph._infra.config import DEMO_DATA
from taggraph.datasets import load_dataset
from taggraph.errors import ConfigError
from taggraph.runs.bench import run_bench

distributed = pytest.importorskip("dask.distributed", reason='needs pip install "dask[distributed]"')

from taggraph.runs.dask_backend import dask_backend  # noqa: E402


def test_run_bench_takes_backend_dask():
    cases = load_dataset(DEMO_DATA)[:4]
    local = run_bench(cases, ["BM25"], extractor="none")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster:
        with dask_backend(cluster.scheduler_address), distributed.get_task_stream() as tasks:
            remote = run_bench(cases, ["BM25"], extractor="none", backend="dask")
            two = run_bench(cases, ["BM25"], extractor="none", backend="dask", workers=2)
    assert tasks.data  # the cases ran as Dask tasks, not in this process
    cols = ["question_id", "method", "ranked_note_ids", "RR"]
    assert remote.rankings[cols].equals(local.rankings[cols]) and two.rankings[cols].equals(local.rankings[cols])


def test_backend_dask_without_a_client_says_how():
    with pytest.raises(ConfigError, match=r'backend="dask" needs a Dask client: run inside `with dask_backend'):
        run_bench(load_dataset(DEMO_DATA)[:2], ["BM25"], extractor="none", backend="dask")


@pytest.mark.parametrize("command", ["bench", "ablation", "sweep-distractors", "sweep-depth"])
def test_the_scheduler_option_has_one_name(command):
    shown = CliRunner().invoke(app, [command, "--help"], terminal_width=200).output
    assert "--dask-scheduler" in shown and "--scheduler" not in shown.replace("--dask-scheduler", "")
    assert list(inspect.signature(dask_backend).parameters) == ["dask_scheduler"]
