"""Execution daemons serving one host from the shared spool."""

import os
import subprocess
import time

import psutil

from conftest import destroy_cell, make_cell, wait_for
from qtools import hold_execd_lock, report_load


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


def _qhost_row(cell, host):
    rows = [line.split() for line in cell.run("qhost").stdout.splitlines()[3:]]
    return next((row for row in rows if row and row[0] == host), None)




def test_an_execd_reports_the_load_of_its_machine():
    cell = make_cell(hosts=["testhost", "node2"])
    try:
        cell.start_execds(["node2"])
        report = os.path.join(cell.root, "spool", "execd", "node2", "load")
        wait_for(lambda: os.path.exists(report))
        import json
        with open(report) as fh:
            data = json.load(fh)
        assert abs(data["time"] - time.time()) < 30 and data["values"]["num_proc"] == os.cpu_count()
    finally:
        destroy_cell(cell)


def test_a_host_shows_the_load_its_execd_reported_and_is_unknown_once_unheard():
    """qhost shows node2's load values as its execution daemon reported them; past
    max_unheard without a report its queue instance is unknown (u), and a new report
    brings it back; once its execution daemon is gone, qhost shows its static values
    (num_proc ...) alone."""
    from qtools import queue_letters
    cell = make_cell(hosts=["testhost", "node2"])
    fd = hold_execd_lock(cell, "node2")
    try:
        report_load(cell, "node2", num_proc=3, load_avg=7.5)
        wait_for(lambda: (_qhost_row(cell, "node2") or [""] * 7)[2:7:4] == ["3", "7.50"], timeout=20)
        assert _qhost_row(cell, "testhost")[2] == str(os.cpu_count())
        edit = cell.run("qconf", "-mconf", env={"EDITOR": "sed -i 's/^max_unheard .*/max_unheard 0:0:5/'"})
        assert edit.returncode == 0, edit.stderr
        assert "u" not in queue_letters(cell, "all.q@node2")
        report_load(cell, "node2", age=60.0, num_proc=3, load_avg=7.5)
        wait_for(lambda: "u" in queue_letters(cell, "all.q@node2"), timeout=20)
        assert "u" not in queue_letters(cell, "all.q@testhost")
        report_load(cell, "node2", num_proc=3, load_avg=7.5)
        wait_for(lambda: "u" not in queue_letters(cell, "all.q@node2"), timeout=20)
        os.close(fd)                                    # its execution daemon is gone:
        fd = None                                       # no changing load values are shown
        wait_for(lambda: (_qhost_row(cell, "node2") or [""] * 7)[2:7:4] == ["3", "-"], timeout=20)
    finally:
        if fd is not None:
            os.close(fd)
        destroy_cell(cell)
