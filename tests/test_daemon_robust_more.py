"""The daemon when a task's shepherd cannot start (its folder takes no data: a full
disk) and when its lock file is removed while it runs."""

import contextlib
import os
import subprocess
import time

import pytest

from conftest import wait_for
from faulttools import daemon_pid, messages


@contextlib.contextmanager
def full_folder(path):
    """A full tmpfs of one page mounted at ``path`` (made if missing) for the duration;
    skips the test when mounting is not permitted."""
    os.makedirs(path, exist_ok=True)
    proc = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4k,mode=0755", "tmpfs", path],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        pytest.skip(f"cannot mount a small file system: {proc.stderr.strip()}")
    mounted = [True]
    try:
        fd = os.open(os.path.join(path, "filler"), os.O_WRONLY | os.O_CREAT, 0o600)
        try:
            while os.write(fd, b"\0" * 4096):
                pass
        except OSError:
            pass
        finally:
            os.close(fd)

        def unmount():
            if mounted[0] and subprocess.run(["umount", path], capture_output=True).returncode == 0:
                mounted[0] = False
            return not mounted[0]
        yield unmount
    finally:
        if mounted[0]:
            subprocess.run(["umount", "-l", path], capture_output=True)


def _qstat_state(cell, jid):
    """The state letters qstat shows for job ``jid`` ("" when it lists it not)."""
    for line in cell.run("qstat").stdout.splitlines():
        fields = line.split()
        if fields and fields[0] == str(jid):
            return fields[4]
    return ""


def test_a_task_whose_shepherd_cannot_start_waits_and_the_messages_say_why(cell, workdir):
    jid = int(cell.qsub("-terse", "-h", "-b", "y", "-o", "/dev/null", "-j", "y", "/bin/true",
                        cwd=workdir, check=True).stdout)
    task_dir = os.path.join(cell.root, "spool", "jobs", str(jid), "1")
    with full_folder(task_dir) as unmount:
        cell.run("qrls", str(jid), check=True)
        line = wait_for(lambda: [m for m in messages(cell) if f"job {jid}.1 could not be started" in m],
                        timeout=30)
        assert "No space left on device" in line[0] and "waits to be started again" in line[0], line
        # shown waiting, not running with a start time, for as long as its start fails
        wait_for(lambda: _qstat_state(cell, jid) == "qw", timeout=10)
        wait_for(lambda: len([n for n in os.listdir(task_dir) if n.startswith("withdrawn.")]) >= 2,
                 timeout=30)
        # (a try in flight shows r for the moment it takes to fail: it is back to qw at once)
        wait_for(lambda: _qstat_state(cell, jid) == "qw", timeout=10)
        assert cell.task_states(jid).get(1) != "finished"
        # once per run of failures, not once per try
        assert len([m for m in messages(cell) if f"job {jid}.1 could not be started" in m]) == 1
        freed = time.time()
        assert wait_for(unmount)
    cell.wait_finished(jid, timeout=30)
    acct = [r for r in cell.accounting() if int(r[5]) == jid]
    assert len(acct) == 1 and acct[0][11] == "0" and acct[0][12] == "0", acct
    assert int(acct[0][9]) >= int(freed), (acct[0][9], freed)
    # (how many tries failed before it depends on the machine: a shepherd may take its lock
    # before the full disk stops it, which counts as a start that then failed)
    # (the messages of a pass are written after its accounting records: wait for the line)
    try:
        wait_for(lambda: any(f"job {jid}.1 started on host" in m and "failed start" in m
                             for m in messages(cell)), timeout=30)
    except AssertionError:
        raise AssertionError([m for m in messages(cell) if f"job {jid}.1 " in m]) from None


def test_a_removed_daemon_lock_lets_no_second_daemon_start(cell):
    first = daemon_pid(cell)
    os.unlink(os.path.join(cell.root, "spool", "daemon.lock"))
    proc = cell.run("gridtools", "daemon", "start")
    assert proc.returncode == 0 and proc.stdout.strip() == f"daemon already running (pid {first})", proc
    assert daemon_pid(cell) == first
    assert cell.run("gridtools", "daemon", "status").returncode == 0
    # the daemon locks its lock file again, and goes on: jobs still run
    wait_for(lambda: any("daemon.lock was removed or replaced while the daemon ran" in m
                         for m in messages(cell)), timeout=30)
    jid = int(cell.qsub("-terse", "-b", "y", "-o", "/dev/null", "-j", "y", "/bin/true", check=True).stdout)
    cell.wait_finished(jid)
    assert daemon_pid(cell) == first
    proc = cell.run("gridtools", "daemon", "start")
    assert proc.stdout.strip() == f"daemon already running (pid {first})", proc
    # it stops as asked, and says so; it never took the spool for gone
    assert cell.run("gridtools", "daemon", "stop").returncode == 0
    assert "daemon stopped" in messages(cell)[-1]
    with open(os.path.join(cell.root, "spool", "daemon.out")) as fh:
        assert "is gone" not in fh.read()


def test_a_daemon_started_beside_one_whose_lock_was_removed_refuses(cell):
    """Even when the start does not look first: the new daemon finds the running one by
    the pid file and leaves the cell to it."""
    first = daemon_pid(cell)
    os.unlink(os.path.join(cell.root, "spool", "daemon.lock"))
    proc = cell.run("gridtools", "daemon", "run", timeout=30)
    assert proc.returncode != 0
    assert f"already running for this cell (pid {first})" in proc.stdout + proc.stderr, proc
    assert daemon_pid(cell) == first
    jid = int(cell.qsub("-terse", "-b", "y", "-o", "/dev/null", "-j", "y", "/bin/true", check=True).stdout)
    cell.wait_finished(jid)
    assert not any("is gone" in m for m in messages(cell))
