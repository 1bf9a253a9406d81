"""The end of a job in its history ad: CompletionDate (0 for a removed job, as HTCondor's
schedd sets it only when a job completes) and LastJobStatus (its status before the last
change), in condor_history and condor_q alike; and qacct -j 0 (no job asked for)."""

import os

from condortools import history, submit, wait_status
from conftest import wait_for
from qtools import jid_of, wait_state
from test_qacct import FIXTURE, qacct

SLEEP = "executable = /bin/sleep\narguments = 300\n"


def _ad(cell, jid, *attrs):
    """The values of ``attrs`` in the history ad of ``jid``, once it is there."""
    wait_for(lambda: history(cell, jid, "-af", "ClusterId").strip(), timeout=20)
    return history(cell, jid, "-af", *attrs).split()


def _live(cell, jid, *attrs):
    return cell.run("condor_q", jid, "-af", *attrs).stdout.split()


def test_removed_jobs_have_completion_date_0(cell, workdir):
    done = jid_of(cell.qsub("-b", "y", "true", cwd=workdir))
    completed = int(_ad(cell, f"{done}.0", "CompletionDate")[0])
    assert completed > 0
    assert history(cell, "-completedsince", str(completed - 1), "-af", "ClusterId").split() == [str(done)]
    running = jid_of(cell.qsub("-b", "y", "sleep", "300", cwd=workdir))
    wait_state(cell, running, "r")
    cell.run("qdel", str(running), check=True)
    # its record is written once its process is reaped: wait for it, so the history's
    # order (newest first, by when each record was written) is the order of the removals
    _ad(cell, f"{running}.0", "ClusterId")
    held = jid_of(cell.qsub("-h", "-b", "y", "sleep", "300", cwd=workdir))
    cell.run("qdel", str(held), check=True)
    _ad(cell, f"{held}.0", "ClusterId")
    idle = submit(cell, SLEEP + "requirements = false\nqueue\n", cwd=workdir)
    wait_status(cell, f"{idle}.0", 1)
    cell.run("condor_rm", str(idle), check=True)
    for jid in (f"{running}.0", f"{held}.0", f"{idle}.0"):
        assert _ad(cell, jid, "JobStatus", "CompletionDate") == ["3", "0"]
        # when it was removed is still known: when it entered its last status
        entered, qdate = (int(v) for v in _ad(cell, jid, "EnteredCurrentStatus", "QDate"))
        assert entered >= qdate > 0
    # the banner says 0 too, and the table's COMPLETED column shows the epoch (TZ=UTC)
    with open(os.path.join(cell.root, "spool", "history")) as fh:
        assert f'ClusterId = {running} Owner = "root" CompletionDate = 0\n' in fh.read()
    row = next(line for line in history(cell).splitlines() if line.startswith(f"{running}.0 "))
    assert row.split()[5:8] == ["X", "1/1", "00:00"], row
    # -completedsince stops at the newest removed job, as the man page says
    assert history(cell, "-af", "ClusterId").split() == [str(idle), str(held), str(running), str(done)]
    assert history(cell, "-completedsince", str(completed - 1), "-af", "ClusterId") == ""
    assert history(cell, "-since", f"CompletionDate <= {completed - 1}", "-af", "ClusterId") == ""


def test_last_job_status_in_queue_and_history(cell, workdir):
    done = jid_of(cell.qsub("-b", "y", "true", cwd=workdir))
    assert _ad(cell, f"{done}.0", "JobStatus", "LastJobStatus") == ["4", "2"]
    # a qsub job removed while it ran
    running = jid_of(cell.qsub("-b", "y", "sleep", "300", cwd=workdir))
    wait_state(cell, running, "r")
    assert _live(cell, f"{running}.0", "JobStatus", "LastJobStatus") == ["2", "1"]
    cell.run("qdel", str(running), check=True)
    # a qsub job submitted on hold (its status never changed), then removed
    held = jid_of(cell.qsub("-h", "-b", "y", "sleep", "300", cwd=workdir))
    assert _live(cell, f"{held}.0", "JobStatus", "LastJobStatus") == ["5", "undefined"]
    cell.run("qdel", str(held), check=True)
    # HTCondor procs that cannot run: one held (from idle), one left idle, both removed
    cluster = submit(cell, SLEEP + "requirements = false\nqueue 2\n", cwd=workdir)
    assert _live(cell, f"{cluster}.1", "JobStatus", "LastJobStatus") == ["1", "undefined"]
    cell.run("condor_hold", f"{cluster}.0", check=True)
    wait_status(cell, f"{cluster}.0", 5)
    assert _live(cell, f"{cluster}.0", "JobStatus", "LastJobStatus") == ["5", "1"]
    cell.run("condor_rm", str(cluster), check=True)
    # an HTCondor proc removed while it ran
    ran = submit(cell, SLEEP + "queue\n", cwd=workdir)
    wait_status(cell, f"{ran}.0", 2)
    cell.run("condor_rm", str(ran), check=True)

    attrs = ("JobStatus", "LastJobStatus")
    assert _ad(cell, f"{running}.0", *attrs) == ["3", "2"]
    assert _ad(cell, f"{held}.0", *attrs) == ["3", "5"]
    assert _ad(cell, f"{cluster}.0", *attrs) == ["3", "5"]
    assert _ad(cell, f"{cluster}.1", *attrs) == ["3", "1"]
    assert _ad(cell, f"{ran}.0", *attrs) == ["3", "2"]
    held_ones = history(cell, "-af", "ClusterId", "ProcId", "-constraint", "LastJobStatus == 5").splitlines()
    assert held_ones == [f"{cluster} 0", f"{held} 0"]


def test_qacct_job_zero_is_no_job():
    """Job number 0 asks for no job: Grid Engine's qacct prints the summary, exit 0."""
    summary = qacct("-f", FIXTURE)
    assert summary.returncode == 0 and summary.stdout
    for value in ("0", "00", "0x"):
        result = qacct("-j", value, "-f", FIXTURE)
        assert (result.returncode, result.stdout, result.stderr) == (0, summary.stdout, "")
    # a later -j 0 undoes an earlier job number
    result = qacct("-j", "2", "-j", "0", "-f", FIXTURE)
    assert (result.returncode, result.stdout, result.stderr) == (0, summary.stdout, "")
    # ... but a bare -j still lists every record
    assert qacct("-j", "-j", "0", "-f", FIXTURE).stdout == qacct("-j", "-f", FIXTURE).stdout
