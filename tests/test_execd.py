"""Execution daemons serving one host from the shared spool."""

import os
import subprocess
import time

import psutil

from conftest import destroy_cell, make_cell, wait_for


def test_execd_runs_the_jobs_of_its_host(workdir):
    cell = make_cell(hosts=["testhost", "node2"])
    execd = subprocess.Popen(["gridtools", "execd", "--host", "node2"], env=cell.env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        lock = os.path.join(cell.root, "spool", "execd", "node2", "execd.lock")
        wait_for(lambda: os.path.exists(lock))
        time.sleep(0.2)
        release = os.path.join(workdir, "release")     # the job runs until the test looked at it
        proc = cell.qsub("-terse", "-cwd", "-q", "all.q@node2", "-b", "y", "sh", "-c",
                         f"'echo $HOSTNAME; while [ ! -e {release} ]; do sleep 0.1; done'", cwd=workdir)
        jid = int(proc.stdout)
        wait_for(lambda: cell.task_states(jid).get(1) == "running")
        pidfile = os.path.join(cell.root, "spool", "jobs", str(jid), "1", "shepherd.lock")
        shepherd = int(wait_for(lambda: os.path.exists(pidfile) and open(pidfile).read().split() and open(pidfile).read().split()[0]))
        assert psutil.Process(shepherd).ppid() == execd.pid
        open(release, "w").close()
        cell.wait_finished(jid)
        with open(os.path.join(workdir, f"sh.o{jid}")) as fh:
            assert fh.read() == "node2\n"
        # a second execd for the same host is refused
        second = subprocess.run(["gridtools", "execd", "--host", "node2"], env=cell.env,
                                capture_output=True, text=True, timeout=10)
        assert second.returncode == 1 and "already serves host node2" in second.stderr
    finally:
        execd.terminate()
        execd.wait(timeout=10)
        destroy_cell(cell)


def test_without_execd_the_dispatcher_runs_every_host():
    cell = make_cell(hosts=["testhost", "node2"])
    try:
        proc = cell.qsub("-terse", "-q", "all.q@node2", "-b", "y", "true", cwd="/tmp")
        jid = int(proc.stdout)
        cell.wait_finished(jid)
        assert cell.job_state(jid)["tasks"]["1"]["host"] == "node2"
    finally:
        destroy_cell(cell)
