"""A full disk under the spool: a submitted job is either safely queued or refused with
an error, and no outcome is lost. The spool sits on a real, small tmpfs."""

import collections
import os
import select
import subprocess
import time

import pytest

from conftest import make_cell, destroy_cell, wait_for
from faulttools import fill, small_spool


@pytest.fixture
def small_cell():
    cell = make_cell(start=False)
    try:
        with small_spool(cell, 1024) as spool:
            cell.start_daemon()
            cell.spool = spool
            yield cell
    finally:
        destroy_cell(cell)


def _script(path, kb, status):
    with open(path, "w") as fh:
        fh.write(f"#!/bin/sh\nexit {status}\n")
        line = "#" + "x" * 99 + "\n"
        fh.write(line * (kb * 1024 // len(line)))
    return path


def _daemon_alive(cell):
    return cell.run("gridtools", "daemon", "status").returncode == 0


def test_a_job_that_does_not_fit_is_refused_with_an_error_and_leaves_nothing(small_cell, workdir):
    cell = small_cell
    filler = fill(os.path.join(cell.spool, "filler"), leave_kb=60)
    script = _script(os.path.join(workdir, "big.sh"), 120, 0)
    proc = cell.qsub("-terse", script, cwd=workdir)
    assert proc.returncode != 0 and proc.stdout == ""
    assert "No space left on device" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    assert os.listdir(os.path.join(cell.spool, "requests")) == []
    os.unlink(filler)
    assert _daemon_alive(cell)


def test_a_job_the_daemon_cannot_store_yet_is_kept_and_runs_when_space_frees(small_cell, workdir):
    cell = small_cell
    script = _script(os.path.join(workdir, "big.sh"), 150, 3)
    filler = fill(os.path.join(cell.spool, "filler"), leave_kb=250)
    sync = subprocess.Popen(["qsub", "-sync", "y", "-o", "/dev/null", "-j", "y", script], env=cell.env,
                            cwd=workdir, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    jid = int(wait_for(lambda: sync.stdout.readline().split()[2]))
    # the waiting client says why its job is not stored yet
    ready, _, _ = select.select([sync.stderr], [], [], 30)
    notice = sync.stderr.readline() if ready else ""
    assert "waits to be stored" in notice and "No space left on device" in notice, notice
    # queued (its request is kept), shown by qstat with the reason, never dropped
    qstat = cell.run("qstat")
    assert f"{jid} " in qstat.stdout and " qw " in qstat.stdout, qstat.stdout
    assert "No space left on device" in qstat.stderr, qstat.stderr
    assert _daemon_alive(cell)
    assert sync.poll() is None
    os.unlink(filler)
    out, err = sync.communicate(timeout=60)
    assert sync.returncode == 3, err
    assert f"Job {jid} exited with exit code 3." in err
    cell.wait_finished(jid)
    acct = [r for r in cell.accounting() if int(r[5]) == jid]
    assert len(acct) == 1 and acct[0][11] == "0" and acct[0][12] == "3"


def test_a_job_that_ends_while_the_disk_is_full_keeps_its_exit_status(small_cell, workdir):
    cell = small_cell
    flag = os.path.join(workdir, "go")
    done = os.path.join(workdir, "done")
    jid = int(cell.qsub("-terse", "-b", "y", "-o", "/dev/null", "-j", "y", "sh", "-c",
                        f"'while [ ! -e {flag} ]; do sleep 0.05; done; touch {done}; exit 7'",
                        cwd=workdir, check=True).stdout)
    wait_for(lambda: cell.task_states(jid).get(1) == "running")
    wait_for(lambda: os.path.exists(os.path.join(cell.spool, "jobs", str(jid), "1", "job_pid")))
    filler = fill(os.path.join(cell.spool, "filler"), leave_kb=0)
    open(flag, "w").close()
    wait_for(lambda: os.path.exists(done))
    wait_for(lambda: os.path.exists(os.path.join(cell.spool, "jobs", str(jid), "1", "result.yaml")))
    assert _daemon_alive(cell)
    os.unlink(filler)
    cell.wait_finished(jid, timeout=30)
    acct = [r for r in cell.accounting() if int(r[5]) == jid]
    assert len(acct) == 1, acct
    assert acct[0][11] == "0" and acct[0][12] == "7", acct[0]


def test_jobs_keep_flowing_through_a_full_disk_none_lost_or_doubled(small_cell, workdir):
    cell = small_cell
    log = os.path.join(workdir, "ran.log")
    ids = []
    for i in range(10):
        ids.append(int(cell.qsub("-terse", "-b", "y", "-o", "/dev/null", "-j", "y", "sh", "-c",
                                 f"'echo $JOB_ID >> {log}'", cwd=workdir, check=True).stdout))
    filler = fill(os.path.join(cell.spool, "filler"), leave_kb=24)
    refused = 0
    for i in range(10):
        proc = cell.qsub("-terse", "-b", "y", "-o", "/dev/null", "-j", "y", "sh", "-c",
                         f"'echo $JOB_ID >> {log}'", cwd=workdir)
        if proc.returncode == 0:
            ids.append(int(proc.stdout))
        else:
            refused += 1
            assert "No space left on device" in proc.stderr
    time.sleep(1.0)
    assert _daemon_alive(cell)
    os.unlink(filler)
    for jid in ids:
        cell.wait_finished(jid, timeout=60)
    ran = collections.Counter(int(x) for x in open(log).read().split())
    assert sorted(ran) == sorted(ids) and set(ran.values()) == {1}
    acct = collections.Counter(int(r[5]) for r in cell.accounting())
    assert sorted(acct) == sorted(ids) and set(acct.values()) == {1}


def test_an_ending_waits_while_its_accounting_record_cannot_be_written(cell, workdir):
    """The daemon side: a task's end is applied only once its record is written."""
    flag = os.path.join(workdir, "go")
    jid = int(cell.qsub("-terse", "-b", "y", "-o", "/dev/null", "-j", "y", "sh", "-c",
                        f"'while [ ! -e {flag} ]; do sleep 0.05; done; exit 5'",
                        cwd=workdir, check=True).stdout)
    wait_for(lambda: cell.task_states(jid).get(1) == "running")
    acct = os.path.join(cell.root, "spool", "accounting")
    if os.path.exists(acct):
        os.rename(acct, acct + ".away")
    os.mkdir(acct)                                  # cannot be appended to
    open(flag, "w").close()
    wait_for(lambda: os.path.exists(os.path.join(cell.root, "spool", "jobs", str(jid), "1", "result.yaml")))
    wait_for(lambda: "cannot write accounting records" in cell.run("qstat").stderr)
    assert cell.task_states(jid).get(1) == "running"
    assert _daemon_alive(cell)
    os.rmdir(acct)
    if os.path.exists(acct + ".away"):
        os.rename(acct + ".away", acct)
    cell.wait_finished(jid, timeout=30)
    records = [r for r in cell.accounting() if int(r[5]) == jid]
    assert len(records) == 1 and records[0][11] == "0" and records[0][12] == "5"
    # (the fault is cleared before the end is written to the spool, and published after)
    wait_for(lambda: cell.run("qstat").stderr == "")
    assert cell.run("qstat").stderr == ""


def test_a_job_that_never_fits_is_refused_and_lets_the_others_through(workdir, monkeypatch):
    """A job too large for the space left holds up the requests after it (their order
    is kept) for STORE_PATIENCE seconds at most: then it is refused, with the reason in
    the messages file, and a small job queued after it is taken in."""
    from fakeexec import FakeExecution
    from gridtools.daemon import intake
    from gridtools.daemon.loop import Daemon
    from gridtools.spool import inbox
    cell = make_cell(start=False)
    try:
        with small_spool(cell, 1024) as spool:
            monkeypatch.setenv("GRIDTOOLS_ROOT", cell.root)
            monkeypatch.setenv("GRIDTOOLS_HOST", cell.host)
            monkeypatch.setattr(intake, "STORE_PATIENCE", 1.0)
            daemon = Daemon(execution=FakeExecution())
            daemon.open()
            try:
                filler = fill(os.path.join(spool, "filler"), leave_kb=250)
                env = dict(cell.env, GRIDTOOLS_NO_AUTOSTART="1")
                big = int(subprocess.run(["qsub", "-terse", _script(os.path.join(workdir, "big.sh"), 150, 0)],
                                         env=env, cwd=workdir, capture_output=True, text=True, check=True).stdout)
                small = int(subprocess.run(["qsub", "-terse", "-b", "y", "true"], env=env, cwd=workdir,
                                           capture_output=True, text=True, check=True).stdout)
                daemon.tick()
                assert big not in daemon.state.jobs and small not in daemon.state.jobs    # (order kept)
                time.sleep(1.1)
                for _ in range(5):
                    daemon.tick()
                assert small in daemon.state.jobs and big not in daemon.state.jobs
                assert inbox.pending() == []
                messages = open(os.path.join(spool, "messages")).read()
                assert f"job {big} of root refused: the job could not be stored: " in messages
                os.unlink(filler)
            finally:
                daemon.close()
    finally:
        destroy_cell(cell)
