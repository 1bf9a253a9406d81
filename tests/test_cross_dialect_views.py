"""One queue, two dialects: what condor_q, condor_release, condor_history and the user
log show of jobs that the Grid Engine commands changed (and the other way round)."""

import os
import re

import pytest

from conftest import wait_for
from condortools import statuses, submit, wait_events, wait_status, write

from gridtools.cli.condor import queue as Q
from gridtools.spool import listing


# ---------------------------------------------------------------- JobStatus of every qstat state

def _expected(state):
    if "d" in state:
        return Q.REMOVED
    if set(state) & set("sST"):
        return Q.SUSPENDED
    return Q.RUNNING


@pytest.mark.parametrize("state", listing.ACTIVE)
def test_every_state_of_a_task_on_a_slot_has_its_job_status(state):
    """Every state ``spool.rows.running_state`` gives (Ss, ds, dS, STs, hr ...): removed
    while deleted, suspended for any cause, else running (an SGE hold, hr, leaves it
    running); never idle."""
    hold = "u" if "h" in state else ""
    assert Q._status(state, {}, 1, hold) == _expected(state)


@pytest.mark.parametrize("state", [s for s in listing.ACTIVE if "h" in s])
def test_a_running_task_a_hold_is_stopping_is_held(state):
    """condor_hold of a running task notes its hold while its run is being stopped: that
    task is held at once, as HTCondor's condor_hold makes it (unless deleted or
    suspended, which the letters say first)."""
    book = {"tasks": {"1": {"hold": ["via condor_hold (by user root)", 1, 0, 1]}}}
    wanted = _expected(state)
    assert Q._status(state, book, 1, "u") == (Q.HELD if wanted == Q.RUNNING else wanted)


@pytest.mark.parametrize("state, hold, wanted", [
    ("hqw", "", Q.IDLE), ("hRq", "", Q.IDLE), ("hqw", "u", Q.HELD), ("hqw", "s", Q.HELD),
    ("hqw", "o", Q.HELD), ("Eqw", "", Q.HELD), ("qw", "", Q.IDLE), ("Rq", "", Q.IDLE)])
def test_a_waiting_task_is_held_by_holds_not_by_dependencies(state, hold, wanted):
    assert Q._status(state, {}, 1, hold) == wanted


# ---------------------------------------------------------------- a live cell

def _af(cell, *args):
    proc = cell.run("condor_q", "-allusers", *args)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def _qstat_state(cell, jid):
    out = cell.run("qstat", "-u", "*").stdout
    for line in out.splitlines():
        fields = line.split()
        if fields and fields[0] == str(jid):
            return fields[4]
    return None


def _jid(proc):
    assert proc.returncode == 0, proc.stderr
    return int(re.search(r"Your job (\d+)", proc.stdout).group(1))


def test_suspended_tasks_and_sge_holds_of_running_tasks(cell, workdir):
    """A task suspended by its user in a suspended queue (Ss) is suspended (7); a running
    task held by qhold (hr) runs on: JobStatus 2, listed by -run, not by -hold, its ad
    without a HoldReason, also after an earlier condor_hold that qrls ended; -run,
    -hold and -idle filter -af, -format and -l too."""
    blocker = _jid(cell.qsub("-b", "y", "/bin/sleep", "300", cwd=workdir))
    wait_status(cell, f"{blocker}.0", 2, timeout=60)
    dep = _jid(cell.qsub("-b", "y", "-hold_jid", str(blocker), "/bin/sleep", "300", cwd=workdir))
    wait_for(lambda: _qstat_state(cell, dep) == "hqw", timeout=30)
    # a job that waits only for its predecessor is idle, never held
    assert statuses(cell, str(dep)) == {f"{dep}.0": 1}
    assert str(dep) not in _af(cell, "-hold", "-af", "ClusterId").split()
    assert f"{dep} 1" in _af(cell, "-idle", "-af", "ClusterId", "JobStatus").splitlines()
    # condor_hold of it, then qrls: the hold has ended, its reason with it
    assert cell.run("condor_hold", str(dep)).returncode == 0
    wait_status(cell, f"{dep}.0", 5, timeout=30)
    assert "via condor_hold" in _af(cell, str(dep), "-af", "HoldReason")
    assert cell.run("qrls", str(dep)).returncode == 0
    wait_status(cell, f"{dep}.0", 1, timeout=30)
    # its predecessor goes: it runs; qhold leaves it running (hr)
    assert cell.run("qdel", "-f", str(blocker)).returncode == 0
    wait_status(cell, f"{dep}.0", 2, timeout=60)
    assert cell.run("qhold", str(dep)).returncode == 0
    wait_for(lambda: _qstat_state(cell, dep) == "hr", timeout=30)
    assert statuses(cell, str(dep)) == {f"{dep}.0": 2}
    long = _af(cell, "-l", str(dep))
    assert "JobStatus = 2" in long and "HoldReason" not in long
    assert str(dep) in _af(cell, "-run", "-af", "ClusterId").split()
    assert str(dep) not in _af(cell, "-hold", "-af", "ClusterId").split()
    assert str(dep) not in _af(cell, "-hold", "-l").split()
    assert _af(cell, "-hold", "-format", "%d\n", "ClusterId").split() == []
    # -run keeps its filter with -af, -format and -l: running and suspended procs only
    waiting = _jid(cell.qsub("-h", "-b", "y", "/bin/true", cwd=workdir))
    wait_for(lambda: _qstat_state(cell, waiting) == "hqw", timeout=30)
    assert str(waiting) not in _af(cell, "-run", "-af", "ClusterId").split()
    assert set(_af(cell, "-run", "-format", "%d\n", "JobStatus").split()) <= {"2", "7"}
    assert set(re.findall(r"^JobStatus = (\d+)$", _af(cell, "-run", "-l"), re.M)) <= {"2", "7"}
    assert set(re.findall(r"^JobStatus = (\d+)$", _af(cell, "-hold", "-l"), re.M)) == {"5"}
    assert "HoldReason = " in _af(cell, "-hold", "-l")
    # suspended by its user (s) in a suspended queue (S): Ss, suspended
    assert cell.run("qrls", str(dep)).returncode == 0
    assert cell.run("qmod", "-sj", str(dep)).returncode == 0
    assert cell.run("qmod", "-s", "all.q").returncode == 0
    try:
        wait_for(lambda: _qstat_state(cell, dep) == "Ss", timeout=30)
        assert statuses(cell, str(dep)) == {f"{dep}.0": 7}
        assert str(dep) in _af(cell, "-run", "-af", "ClusterId").split()
    finally:
        cell.run("qmod", "-us", "all.q")
    cell.run("qdel", "-f", str(dep), str(waiting))


def test_cmd_of_a_qsub_job_is_an_absolute_path(cell, workdir):
    """Cmd of a qsub script is its path resolved against the folder qsub read it from (no
    -cwd: Iwd is the home folder); a -b y command is itself, a relative path resolved
    against the working directory, a bare name left bare."""
    write(os.path.join(workdir, "sl.sh"), "#!/bin/sh\nsleep ${1:-300}\n", 0o755)
    script = _jid(cell.qsub("-h", "-N", "plain", "sl.sh", cwd=workdir))
    binary = _jid(cell.qsub("-h", "-b", "y", "sleep", "100", cwd=workdir))
    relative = _jid(cell.qsub("-h", "-cwd", "-b", "y", "./sl.sh", cwd=workdir))
    out = _af(cell, str(script), str(binary), str(relative), "-af", "ClusterId", "Cmd").splitlines()
    assert f"{script} {os.path.join(workdir, 'sl.sh')}" in out
    assert f"{binary} sleep" in out
    assert f"{relative} {os.path.join(workdir, 'sl.sh')}" in out
    cell.run("qdel", str(script), str(binary), str(relative))


def test_release_that_leaves_procs_held_and_removal_reasons(cell, users, workdir):
    """condor_release of a cluster whose procs stay held by a hold their owner may not
    lift (qhold -h s) releases nothing: "Couldn't find/release all jobs in cluster N",
    exit 1. qrls of a condor job is logged as qrls's; condor_rm of one proc and qdel of
    the others give each proc its own RemoveReason, in its history and its log."""
    owner = users[1]
    desc = ("executable = /bin/sleep\narguments = 300\nhold = true\nlog = job.log\n"
            'requirements = (TARGET.Machine == "nohost.invalid")\nqueue 3\n')     # (it never runs)
    cluster = submit(cell, desc, cwd=workdir, user=owner)
    assert cell.run("qhold", "-h", "s", str(cluster)).returncode == 0
    wait_for(lambda: "s" in (cell.job_state(cluster) or {}).get("hold", ""), timeout=30)
    proc = cell.run("condor_release", str(cluster), user=owner)
    assert (proc.returncode, proc.stderr.strip()) == (1, f"Couldn't find/release all jobs in cluster {cluster}")
    assert "have been released" not in proc.stdout
    assert set(statuses(cell, str(cluster)).values()) == {5}
    # root lifts the system hold; the owner's qrls releases proc 0, logged as a qrls
    assert cell.run("qrls", "-h", "s", str(cluster)).returncode == 0
    assert cell.run("qrls", f"{cluster}.1", user=owner).returncode == 0
    log = os.path.join(workdir, "job.log")
    wait_events(log, f"{cluster}.0", [0, 12, 13])
    with open(log) as fh:
        text = fh.read()
    assert f"via qrls (by user {owner})" in text
    assert "via condor_release" not in text
    # condor_rm of proc 1, then qdel of the cluster: each proc's own reason
    assert cell.run("condor_rm", f"{cluster}.1", user=owner).returncode == 0
    assert cell.run("qdel", str(cluster), user=owner).returncode == 0

    def reasons():
        out = cell.run("condor_history", str(cluster), "-af", "ProcId", "RemoveReason").stdout
        found = dict(line.split(None, 1) for line in out.splitlines() if line.strip())
        return found if len(found) == 3 else None
    found = wait_for(reasons, timeout=60)
    assert found["1"] == f"via condor_rm (by user {owner})"
    assert found["0"] == found["2"] == f"via qdel (by user {owner})"
    wait_events(log, f"{cluster}.2", [0, 12, 9])
    wait_events(log, f"{cluster}.0", [0, 12, 13, 9])
    with open(log) as fh:
        text = fh.read()
    assert f"via qdel (by user {owner})" in text
