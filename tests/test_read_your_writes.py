"""Read your writes: a job shows in qstat and qstat -j the moment qsub returned, and
what qdel, qhold and qrls print is what the daemon did, already visible when they return."""

import os
import re
import signal
import subprocess
import time

import pytest

from conftest import unanswered, wait_for
from faulttools import daemon_pid
from qtools import jid_of

TRIES = 25


@pytest.fixture
def busy(cell, workdir):
    """The cell with an array of short tasks keeping its daemon busy."""
    jid = jid_of(cell.qsub("-b", "y", "-o", "/dev/null", "-j", "y", "-t", "1-75000", "true", cwd=workdir))
    wait_for(lambda: "r" in (cell.task_states(jid) or {}).values() or
             any(v == "finished" for v in cell.task_states(jid).values()))
    yield cell
    cell.run("qdel", "-f", str(jid))


def _row(cell, jid, *args):
    for line in cell.run("qstat", *args).stdout.splitlines()[2:]:
        fields = line.split()
        if fields and fields[0] == str(jid):
            return fields
    return None


def test_a_submitted_job_shows_at_once_in_qstat_and_qstat_j(busy, workdir):
    misses = []
    for _ in range(TRIES):
        jid = int(busy.qsub("-terse", "-h", "-b", "y", "true", cwd=workdir, check=True).stdout)
        if _row(busy, jid) is None:
            misses.append(("qstat", jid))
        proc = busy.run("qstat", "-j", str(jid))
        if proc.returncode != 0 or f"job_number:                 {jid}" not in proc.stdout:
            misses.append(("qstat -j", jid))
    assert misses == []


def test_qdel_qhold_qrls_have_acted_when_they_return(busy, workdir):
    wrong = []
    for _ in range(TRIES):
        jid = int(busy.qsub("-terse", "-h", "-b", "y", "true", cwd=workdir, check=True).stdout)
        out = busy.run("qrls", str(jid), check=True).stdout
        if out.strip() != f"modified hold of job {jid}":
            wrong.append(("qrls says", out))
        row = _row(busy, jid)
        if row is not None and row[4] == "hqw":
            wrong.append(("qrls", jid, row))
        out = busy.run("qhold", str(jid), check=True).stdout
        row = _row(busy, jid)
        if row is not None and row[4] not in ("hqw", "r", "t"):
            wrong.append(("qhold", jid, row))
        out = busy.run("qdel", str(jid), check=True).stdout
        row = _row(busy, jid)
        if "has deleted job" in out and row is not None:
            wrong.append(("qdel said deleted but qstat shows", jid, row))
        if "registered the job" in out and (row is None or row[4] not in ("dr", "dt")) and \
                busy.task_states(jid).get(1) != "finished":
            wrong.append(("qdel said registered", jid, row))
        state = busy.job_state(jid)
        if "has deleted job" in out and (state is None or state["tasks"]["1"]["state"] != "finished"):
            wrong.append(("qdel said deleted but the spool says", jid, state))
    assert wrong == []


def test_qdel_of_a_running_job_says_so_and_the_job_ends(cell, workdir):
    jid = int(cell.qsub("-terse", "-b", "y", "sleep", "100", cwd=workdir, check=True).stdout)
    wait_for(lambda: cell.task_states(jid).get(1) == "running")
    proc = cell.run("qdel", str(jid))
    assert proc.returncode == 0
    assert proc.stdout == f"root has registered the job {jid} for deletion\n"
    cell.wait_finished(jid)


def test_qdel_waits_for_the_daemon(cell, workdir):
    jid = int(cell.qsub("-terse", "-h", "-b", "y", "true", cwd=workdir, check=True).stdout)
    wait_for(lambda: _row(cell, jid) is not None)
    pid = daemon_pid(cell)
    os.kill(pid, signal.SIGSTOP)
    try:
        proc = subprocess.Popen(["qdel", str(jid)], env=cell.env, stdout=subprocess.PIPE, text=True)
        time.sleep(1.0)
        assert proc.poll() is None, "qdel returned before the daemon acted"
    finally:
        os.kill(pid, signal.SIGCONT)
    out, _ = proc.communicate(timeout=30)
    assert proc.returncode == 0 and out == f"root has deleted job {jid}\n"
    assert _row(cell, jid) is None
    assert cell.task_states(jid).get(1) == "finished"


def test_qhold_answer_comes_from_the_daemon_for_another_users_job(cell, workdir, users):
    jid = int(cell.qsub("-terse", "-h", "-b", "y", "true", cwd="/tmp", user="gtalice", check=True).stdout)
    proc = cell.run("qrls", str(jid), user="gtbob")
    assert proc.returncode != 0 and "modified" not in proc.stdout
    assert "hqw" in cell.run("qstat", "-u", "*").stdout


def test_a_job_taken_in_late_is_dated_when_it_was_submitted(cell, workdir):
    """A daemon that takes a submission in seconds late dates it when it was submitted:
    its QDate and its submit event (000) name that time, not the later one."""
    from condortools import submit, wait_events
    from gridtools.formats.condor.userlog import parse_events
    pid = daemon_pid(cell)
    os.kill(pid, signal.SIGSTOP)
    try:
        before = time.time()
        cluster = submit(cell, "executable = /bin/true\nhold = true\nlog = late.log\nqueue\n", cwd=workdir)
        after = time.time()
        wait_for(lambda: time.time() >= after + 1.5)        # (the daemon takes it in seconds later)
    finally:
        os.kill(pid, signal.SIGCONT)
    log = os.path.join(workdir, "late.log")
    wait_events(log, f"{cluster}.0", [0])
    qdate = int(cell.run("condor_q", str(cluster), "-af", "QDate", check=True).stdout)
    assert int(before) <= qdate <= after
    with open(log) as fh:
        assert int(parse_events(fh.read())[0].timestamp) == qdate


def test_a_job_the_daemon_has_not_taken_in_yet_shows_as_it_will_be(cell, workdir):
    """With the daemon stopped, a job just submitted on hold lists as held (hqw, hold
    letter u) and qalter -w v says it is held, as once the daemon has taken it in."""
    pid = daemon_pid(cell)
    os.kill(pid, signal.SIGSTOP)
    try:
        held = int(cell.qsub("-terse", "-h", "-b", "y", "true", cwd=workdir, check=True).stdout)
        free = int(cell.qsub("-terse", "-b", "y", "true", cwd=workdir, check=True).stdout)
        assert _row(cell, held)[4] == "hqw"
        assert _row(cell, held, "-s", "hu") is not None and _row(cell, free, "-s", "hu") is None
        verified = cell.run("qalter", "-w", "v", str(held))
        assert verified.stdout == "verification: job is already running or is held\n"
        assert cell.run("qalter", "-w", "v", str(free)).stdout == "verification: found suitable queue(s)\n"
        wide = int(cell.qsub("-terse", "-h", "-N", "wide", "-l", "h_vmem=1G", "-v", "A=1", "-cwd",
                             "-b", "y", "echo", "a", "b", cwd=workdir, check=True).stdout)
        before = cell.run("qstat", "-j", str(wide), check=True).stdout
        submitted = re.search(r"^submission_time: +(.*)$", before, re.M).group(1)
        # the daemon takes it in a later second than the one its submission time names
        wait_for(lambda: time.asctime() != submitted)
    finally:
        os.kill(pid, signal.SIGCONT)
    assert "job_args:                   a,b\n" in before and "uid:                        " in before
    wait_for(lambda: unanswered(cell.root) == [])
    after = cell.run("qstat", "-j", str(wide), check=True).stdout
    assert before == "".join(line for line in after.splitlines(True) if not line.startswith("scheduling info:"))
