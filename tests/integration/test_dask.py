import pytest

from taggraph._infra.config import DEMO_DATA
from taggraph.datasets import load_dataset
from taggraph.runs.bench import run_bench
from taggraph.studies.sweeps import distractor_sweep

distributed = pytest.importorskip("dask.distributed", reason='needs pip install "dask[distributed]"')

from taggraph.runs.dask_backend import dask_backend  # noqa: E402

METHODS = ["BM25", "TagGraph-TFIDF", "AdaptiveGraph"]


def test_dask_cluster_gives_the_local_rankings(monkeypatch):
    from taggraph.methods import registry

    monkeypatch.setattr(registry.METHODS, "_registered", {})  # only built-ins: a run-time registration left by another test
    cases = load_dataset(DEMO_DATA)
    local = run_bench(cases, METHODS, extractor="none")
    local_sweep = distractor_sweep(cases, counts=(0, 5), extractor="none")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                  dashboard_address=None) as cluster:
        with dask_backend(cluster.scheduler_address) as client:
            assert len(client.scheduler_info()["workers"]) == 2
            remote = run_bench(cases, METHODS, extractor="none", workers=2, backend=None)
            remote_sweep = distractor_sweep(cases, counts=(0, 5), extractor="none", workers=2, backend=None)
            ran_on = client.run(lambda: "taggraph.runs.bench" in __import__("sys").modules)
    assert any(ran_on.values())  # the cases really ran in the worker processes
    cols = ["question_id", "method", "ranked_note_ids", "ranked_session_ids", "RR"]
    assert remote.rankings[cols].equals(local.rankings[cols])
    assert remote.summary.equals(local.summary)
    assert remote_sweep.rankings[cols + ["distractors"]].equals(local_sweep.rankings[cols + ["distractors"]])


def test_a_notebook_method_runs_on_the_cluster(monkeypatch):
    """A method registered in this process (a class no worker can import) runs on Dask workers too."""
    from taggraph.methods import registry
    from tests.helpers.methods import USER_METHOD

    monkeypatch.setattr(registry.METHODS, "_registered", dict(registry.METHODS._registered))
    exec(compile(USER_METHOD, "cell", "exec", dont_inherit=True), {"__name__": "a_notebook_cell"})
    cases = load_dataset(DEMO_DATA)[:4]
    local = run_bench(cases, ["WordOverlap"], extractor="none")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                  dashboard_address=None) as cluster:
        with dask_backend(cluster.scheduler_address):
            remote = run_bench(cases, ["WordOverlap"], extractor="none", workers=2, backend=None)
    cols = ["question_id", "method", "ranked_note_ids", "RR"]
    assert remote.rankings[cols].equals(local.rankings[cols]) and set(local.rankings["method"]) == {"WordOverlap"}
