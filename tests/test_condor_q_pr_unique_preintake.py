"""condor_q of a cluster the daemon has not taken in yet shows each proc's own hold
attributes, as it shows them once the daemon has; condor_q -pr with SELECT UNIQUE groups
the jobs on the projection HTCondor's condor_q makes of the file (the attributes its
PRINTAS functions look at too), and a custom SUMMARY of aggregated ads counts the ads
themselves, each one with a ProcId once by its JobStatus, as HTCondor's condor_q counts
what its schedd sends without a summary ad."""

import os

from condortools import submit, write
from conftest import unanswered, wait_for

SLEEPER = "executable = /bin/sleep\narguments = 300\nrequirements = false\n"

ATTRS = ("ProcId", "JobStatus", "HoldReasonCode", "HoldReason", "HoldReasonSubCode")


def test_later_procs_not_taken_in_yet_show_their_own_hold_attributes(cell, workdir):
    cell.stop_daemon()              # (nothing takes the request in until the daemon is back)
    cluster = submit(cell, SLEEPER + "hold = $(Process) == 0\nqueue 3\n", cwd=workdir, user="gtalice")
    assert unanswered(cell.root)
    before = cell.run("condor_q", str(cluster), "-af", *ATTRS, user="gtalice")
    assert (before.returncode, before.stdout) == (0, "0 5 15 submitted on hold at user's request undefined\n"
                                                     "1 1 undefined undefined undefined\n"
                                                     "2 1 undefined undefined undefined\n")
    cell.start_daemon()
    wait_for(lambda: not unanswered(cell.root), timeout=30)
    assert os.path.isdir(os.path.join(cell.root, "spool", "jobs", str(cluster)))
    after = cell.run("condor_q", str(cluster), "-af", *ATTRS, user="gtalice")
    assert (after.returncode, after.stdout) == (0, before.stdout)


BATCHES = """SELECT UNIQUE
   Cmd AS BATCH PRINTAS BATCH_NAME
   JobCount AS COUNT
SUMMARY STANDARD
"""

COUNTS = """SELECT UNIQUE
   ProcId AS PROC
   JobStatus AS ST PRINTAS JOB_STATUS
   JobCount AS COUNT
SUMMARY
   Jobs PRINTF "%d jobs;"
   Idle PRINTF "%d idle,"
   Held PRINTF "%d held"
"""

PER_JOB = """SELECT NOTITLE
   ClusterId AS ID
SUMMARY
   Jobs PRINTF "%d jobs;"
   Idle PRINTF "%d idle,"
   Held PRINTF "%d held"
"""


def _queued(cell, workdir):
    """Two idle procs in batch alpha, two idle and two held in batch beta."""
    submit(cell, SLEEPER + "batch_name = alpha\nqueue 2\n", cwd=workdir, name="a.sub")
    submit(cell, SLEEPER + "batch_name = beta\nqueue 2\n", cwd=workdir, name="b.sub")
    submit(cell, SLEEPER + "batch_name = beta\nhold = true\nqueue 2\n", cwd=workdir, name="c.sub")
    wait_for(lambda: not unanswered(cell.root), timeout=30)


def test_select_unique_groups_on_what_the_printas_functions_look_at(cell, workdir):
    _queued(cell, workdir)
    # BATCH_NAME looks at JobBatchName too: one group per batch, each shown by its name
    shown = cell.run("condor_q", "-pr", write(f"{workdir}/batches.pf", BATCHES))
    assert (shown.returncode, shown.stderr) == (0, "")
    assert shown.stdout.split("\n")[3:] == ["BATCH COUNT", "alpha 2    ", "beta  4    ", "", "", ""]


def test_a_custom_summary_of_aggregated_ads_counts_each_ad_once(cell, workdir):
    _queued(cell, workdir)
    # each group counted once, with its JobStatus: four groups of six jobs
    shown = cell.run("condor_q", "-pr", write(f"{workdir}/counts.pf", COUNTS))
    assert (shown.returncode, shown.stderr) == (0, "")
    assert shown.stdout.split("\n")[3:] == ["PROC ST COUNT", "0    I  2    ", "1    I  2    ", "0    H  1    ",
                                            "1    H  1    ", "Jobs   Idle   Held  ", "4 jobs;2 idle,2 held", ""]
    # a file that does not aggregate, grouped by -group-by: each job is a group with its
    # JobStatus (condor_q adds it for the summary), so every job is counted
    shown = cell.run("condor_q", "-group-by", "-pr", write(f"{workdir}/per_job.pf", PER_JOB))
    assert (shown.returncode, shown.stderr) == (0, "")
    assert shown.stdout.split("\n")[-3:] == ["Jobs   Idle   Held  ", "6 jobs;4 idle,2 held", ""]


def test_running_procs_of_a_cluster_submitted_partly_on_hold_carry_no_hold(cell, workdir):
    """Procs 1 and 2 of ``hold = $(Process) == 0`` run; only proc 0 shows the hold it was
    submitted with, as HTCondor's schedd keeps hold attributes on held jobs alone."""
    text = "executable = /bin/sleep\narguments = 60\nhold = $(Process) == 0\nqueue 3\n"
    cluster = submit(cell, text, cwd=workdir, user="gtalice")
    running = "0 5 15\n1 2 undefined\n2 2 undefined\n"
    shown = wait_for(lambda: (lambda out: out if out == running else None)(
        cell.run("condor_q", str(cluster), "-af", "ProcId", "JobStatus", "HoldReasonCode", user="gtalice").stdout),
        timeout=30)
    assert shown == running
    assert cell.run("condor_q", f"{cluster}.1", "-af", "HoldReason", "HoldReasonSubCode",
                    user="gtalice").stdout == "undefined undefined\n"
