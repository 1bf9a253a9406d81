"""Third-party clients of the HTCondor commands (see the project's clients notes).

The replay tests run the exact command lines dask-jobqueue's HTCondorCluster,
parsl's CondorProvider and ipyparallel use, and parse the output as they
do; they always run. The last two tests run the unmodified clients when
they are installed (the ``test`` extra installs them).
"""

import os
import re

import pytest

from clienttools import client_env, parsl_adds, worker_init
from condortools import statuses, wait_status, write
from conftest import wait_for

DASK_FILE = """#!/usr/bin/env condor_submit

MY.DaskWorkerName = "htcondor--$F(MY.JobId)--"
batch_name = HTCondorCluster-0
RequestCpus = MY.DaskWorkerCores
RequestMemory = floor(MY.DaskWorkerMemory / 1048576)
RequestDisk = floor(MY.DaskWorkerDisk / 1024)
MY.JobId = "$(ClusterId).$(ProcId)"
MY.DaskWorkerCores = 1
MY.DaskWorkerMemory = 1073741824
MY.DaskWorkerDisk = 1073741824
LogDirectory = {logdir}
Output = $(LogDirectory)/worker-$F(MY.JobId).out
Error = $(LogDirectory)/worker-$F(MY.JobId).err
Log = $(LogDirectory)/worker-$(ClusterId).log
Stream_Output = True
Stream_Error = True
+MyProject = "gridtools"

Arguments = "-c 'echo worker up; exec sleep 300'"
Executable = /bin/sh

Queue
"""

PARSL_FILE = """universe                = vanilla
should_transfer_files   = YES
when_to_transfer_output = ON_EXIT_OR_EVICT
Transfer_Executable     = false
transfer_input_files    = {script}
machine_count           = 1
output                  = {base}.stdout
error                   = {base}.stderr
log                     = {base}.log
executable              = /bin/bash
arguments               = {script_name}
requirements            =
+projectname            =
leave_in_queue          = TRUE
environment             = "GRIDTOOLS_MARK='it works' JOBNAME='parsl.parsl.test.block-0.1'"

RequestMemory = 512.0
RequestCpus = 1

queue
"""


def test_dask_jobqueue_command_lines(cell, workdir):
    logdir = os.path.join(workdir, "logs")
    os.mkdir(logdir)
    path = write(os.path.join(workdir, "tmpdask.sh"), DASK_FILE.format(logdir=logdir))
    proc = cell.run("condor_submit", path, cwd=workdir)
    assert proc.returncode == 0, proc.stderr
    os.unlink(path)                                        # dask deletes its file at once
    job_id = re.search(r"submitted to cluster (\d+)", proc.stdout).group(1) + ".0"
    wait_for(lambda: os.path.exists(os.path.join(logdir, f"worker-{job_id}.out")) and
             open(os.path.join(logdir, f"worker-{job_id}.out")).read() == "worker up\n")
    ad = cell.run("condor_q", job_id, "-af", "RequestCpus", "RequestMemory", "RequestDisk",
                  "DaskWorkerName", "MyProject", "StreamOut").stdout
    assert ad == f"1 1024 1048576 htcondor--{job_id}-- gridtools true\n"
    assert "HTCondorCluster-0" in cell.run("condor_q", "-batch").stdout
    assert cell.run("condor_q", "-af", "jobpid").stdout.strip().isdigit()    # (the running worker's pid)
    wrong = cell.run("condor_rm", "-name", "wrong.docker", job_id)
    assert wrong.returncode != 0
    assert cell.run("condor_rm", job_id).returncode == 0
    wait_for(lambda: job_id not in statuses(cell, job_id))
    empty = cell.run("condor_rm", "-all")
    assert empty.returncode == 0 and empty.stderr == "condor_rm:0:There are no jobs in the queue\n"


def test_parsl_command_lines(cell, workdir):
    script = write(os.path.join(workdir, "parsl.parsl.test.block-0.1.script"),
                   'echo "$GRIDTOOLS_MARK $JOBNAME" > marker\nsleep 300\n')
    base = os.path.join(workdir, "parsl.parsl.test.block-0.1")
    submit_file = write(base + ".submit", PARSL_FILE.format(script=script, base=base,
                                                             script_name=os.path.basename(script)))
    proc = cell.run("sh", "-c", f"condor_submit {submit_file}", cwd=workdir)
    assert proc.returncode == 0, proc.stderr
    job_ids = []
    for line in proc.stdout.split("\n"):
        if re.match("^[0-9]", line):
            cluster = line.split(" ")[5]
            job_ids += [cluster + str(i) for i in range(int(line[0]))]
    assert len(job_ids) == 1 and re.match(r"^\d+\.0$", job_ids[0])
    jid = job_ids[0]

    def status():
        out = cell.run("sh", "-c", f"condor_q {jid} -af:jr JobStatus").stdout
        found = {}
        for line in out.split("\n"):
            parts = line.split()
            if parts:
                found[parts[0]] = parts[1]
        return found.get(jid)
    wait_for(lambda: status() == "2")
    cancel = cell.run("sh", "-c", f"condor_rm {jid}; condor_rm -forcex {jid}")
    assert cancel.returncode == 0, cancel.stderr
    wait_for(lambda: status() is None)


def test_parsl_leave_in_queue_keeps_a_completed_job(cell, workdir):
    script = write(os.path.join(workdir, "quick.script"), "echo done\n")
    base = os.path.join(workdir, "quick")
    submit_file = write(base + ".submit", PARSL_FILE.format(script=script, base=base, script_name="quick.script"))
    proc = cell.run("condor_submit", submit_file, cwd=workdir)
    jid = proc.stdout.strip().split("\n")[-1].split(" ")[5] + "0"
    wait_status(cell, jid, 4)
    assert open(base + ".stdout").read() == "done\n"
    cancel = cell.run("sh", "-c", f"condor_rm {jid}; condor_rm -forcex {jid}")
    assert cancel.returncode == 0, cancel.stderr
    wait_for(lambda: jid not in statuses(cell, jid))


def test_ipyparallel_command_lines(cell, workdir):
    path = write(os.path.join(workdir, "engines.sub"), "executable = /bin/sleep\narguments = 300\nqueue 2\n")
    proc = cell.run("condor_submit", path, cwd=workdir)
    match = re.search(r"(\d+)\.$", proc.stdout)             # no MULTILINE: the output ends with "<N>."
    assert match, proc.stdout
    assert cell.run("condor_rm", match.group(1)).returncode == 0
    wait_for(lambda: not statuses(cell, match.group(1)))


# ---------------------------------------------------------------- the clients themselves

def test_dask_htcondor_cluster_runs_a_computation(cell, workdir, monkeypatch):
    dask_jobqueue = pytest.importorskip("dask_jobqueue")
    distributed = pytest.importorskip("distributed")
    client_env(cell, monkeypatch)
    cluster = dask_jobqueue.HTCondorCluster(
        cores=1, memory="1GiB", disk="1GiB", log_directory=os.path.join(workdir, "logs"),
        scheduler_options={"interface": "lo"}, worker_extra_args=["--interface", "lo"],
        job_extra_directives={"+MyProject": '"gridtools"'})
    try:
        cluster.scale(jobs=1)
        with distributed.Client(cluster) as client:
            client.wait_for_workers(1, timeout=60)
            assert client.submit(lambda x: x + 1, 41).result(timeout=60) == 42
    finally:
        cluster.close()
    wait_for(lambda: not statuses(cell), timeout=30)


def test_parsl_cancel_of_pending_blocks_succeeds(cell, workdir, monkeypatch):
    """parsl's CondorProvider.cancel (condor_rm ids; condor_rm -forcex ids) of blocks that
    wait or are held reports success, and the jobs leave condor_q."""
    pytest.importorskip("parsl")
    from parsl.providers import CondorProvider
    client_env(cell, monkeypatch)
    monkeypatch.chdir(workdir)
    ids = []
    for extra in ("requirements = False\n", "hold = true\n"):
        path = write(os.path.join(workdir, f"b{len(ids)}.submit"),
                     f"executable = /bin/sleep\narguments = 300\n{extra}queue\n")
        out = cell.run("condor_submit", path, cwd=workdir, check=True).stdout
        ids.append(out.strip().split("\n")[-1].split(" ")[5] + "0")
    wait_for(lambda: set(statuses(cell, *ids).values()) == {1, 5})
    provider = CondorProvider(cmd_timeout=30)
    assert provider.cancel(ids) == [True, True]
    assert not statuses(cell, *ids)


def test_parsl_condor_provider_runs_a_computation(cell, workdir, monkeypatch):
    parsl = pytest.importorskip("parsl")
    from parsl.config import Config
    from parsl.executors import HighThroughputExecutor
    from parsl.launchers import SingleNodeLauncher
    from parsl.providers import CondorProvider
    client_env(cell, monkeypatch)
    monkeypatch.chdir(workdir)
    config = Config(executors=[HighThroughputExecutor(
        label="condor", address="127.0.0.1", max_workers_per_node=1,
        provider=CondorProvider(init_blocks=1, min_blocks=0, max_blocks=1, launcher=SingleNodeLauncher(),
                                worker_init=worker_init(), cmd_timeout=60))],
        run_dir=os.path.join(workdir, "runinfo"), strategy="none")
    parsl_adds(parsl, config)
    wait_for(lambda: not statuses(cell), timeout=30)
