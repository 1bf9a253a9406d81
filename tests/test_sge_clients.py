"""Third-party clients of the Grid Engine commands, unmodified (see the project's clients
notes): dask-jobqueue's SGECluster (``qsub <script>``, ``qdel <id>``; the script
deleted as soon as qsub returns; ``-o``/``-e`` folders; ``-j y``) and parsl's
GridEngineProvider (``qsub -terse``, a plain ``qstat`` parsed by its columns,
``qdel`` of its blocks at shutdown). They run when installed (the ``test`` extra
installs them)."""

import glob
import os

import pytest

from clienttools import client_env, parsl_adds, worker_init
from conftest import wait_for


def _listed(cell):
    """The job ids a plain qstat lists (as parsl reads it: field 0 of each job line)."""
    proc = cell.run("qstat")
    assert proc.returncode == 0, proc.stderr
    return [line.split()[0] for line in proc.stdout.splitlines()
            if line.strip() and not line.lower().startswith("job-id") and not line.startswith("----")]


def test_dask_sge_cluster_runs_a_computation(cell, workdir, monkeypatch):
    dask_jobqueue = pytest.importorskip("dask_jobqueue")
    distributed = pytest.importorskip("distributed")
    client_env(cell, monkeypatch)
    monkeypatch.chdir(workdir)
    logs = os.path.join(workdir, "logs")
    cluster = dask_jobqueue.SGECluster(
        cores=1, processes=1, memory="1GiB", walltime="00:10:00", log_directory=logs,
        scheduler_options={"interface": "lo"}, worker_extra_args=["--interface", "lo"])
    try:
        cluster.scale(jobs=1)
        with distributed.Client(cluster) as client:
            client.wait_for_workers(1, timeout=60)
            assert client.submit(lambda x: x + 1, 41).result(timeout=60) == 42
            listed = _listed(cell)
            assert len(listed) == 1
    finally:
        cluster.close()
    wait_for(lambda: not _listed(cell), timeout=30)
    # -o and -e name the log folder, -j y merges: <logs>/dask-worker.o<id>, no .e file
    job_id = listed[0]
    out = os.path.join(logs, f"dask-worker.o{job_id}")
    assert os.path.isfile(out)
    assert "Start worker" in open(out).read()
    assert glob.glob(os.path.join(logs, "*.e*")) == []
    acct = cell.run("qacct", "-j", job_id)
    assert acct.returncode == 0, acct.stderr
    assert "jobname      dask-worker" in acct.stdout


def test_parsl_grid_engine_provider_runs_a_computation(cell, workdir, monkeypatch):
    parsl = pytest.importorskip("parsl")
    from parsl.config import Config
    from parsl.executors import HighThroughputExecutor
    from parsl.launchers import SingleNodeLauncher
    from parsl.providers import GridEngineProvider
    client_env(cell, monkeypatch)
    monkeypatch.chdir(workdir)
    provider = GridEngineProvider(init_blocks=1, min_blocks=0, max_blocks=1, launcher=SingleNodeLauncher(),
                                  walltime="00:10:00", worker_init=worker_init(), cmd_timeout=60)
    config = Config(executors=[HighThroughputExecutor(
        label="sge", address="127.0.0.1", max_workers_per_node=1, provider=provider)],
        run_dir=os.path.join(workdir, "runinfo"), strategy="none")
    blocks = []

    def running():
        blocks.extend(provider.resources)          # the ids qsub -terse printed
        assert _listed(cell) == blocks
        assert [s.state.name for s in provider.status(blocks)] == ["RUNNING"]
    parsl_adds(parsl, config, running)
    wait_for(lambda: not _listed(cell), timeout=30)        # qdel at shutdown
    # the block's streams are the absolute files the template names with -o and -e
    assert glob.glob(os.path.join(workdir, "runinfo", "*", "submit_scripts", "*.submit.stdout"))
