"""condor_q -group-by and -autocluster with a print-format file that does not aggregate
and asks for SUMMARY STANDARD print the totals line condor_q makes of the ads its schedd
sends (no summary ad comes with aggregates): each ad with a ProcId counted once by its
JobStatus, so the groups of -group-by (a job each) and no autocluster. The aggregate ads
carry JobIds as HTCondor's schedd writes them: the first id, the second only when it is
the last, "..." for those between, the last."""

from condortools import submit, write
from conftest import unanswered, wait_for

from gridtools.classad import parse_ad
from gridtools.cli.condor import qautocluster

SLEEPER = "executable = /bin/sleep\narguments = 300\nrequirements = false\n"

#: a print-format file that does not aggregate, with the standard summary
PER_JOB = """SELECT
   ClusterId AS ID
   ProcId AS PROC
SUMMARY STANDARD
"""


def _queued(cell, workdir):
    """Cluster 1: three idle procs; cluster 2: two held ones; cluster 3: one idle proc
    asking for more memory."""
    submit(cell, SLEEPER + "queue 3\n", cwd=workdir, name="a.sub")
    submit(cell, SLEEPER + "hold = true\nqueue 2\n", cwd=workdir, name="b.sub")
    submit(cell, SLEEPER + "request_memory = 2048\nqueue\n", cwd=workdir, name="c.sub")
    wait_for(lambda: not unanswered(cell.root), timeout=30)


def test_group_by_with_a_per_job_file_prints_the_totals_of_the_groups(cell, workdir):
    _queued(cell, workdir)
    pf = write(f"{workdir}/per_job.pf", PER_JOB)
    shown = cell.run("condor_q", "-group-by", "-pr", pf)
    assert (shown.returncode, shown.stderr) == (0, "")
    lines = shown.stdout.split("\n")
    assert lines[:2] == ["", ""] and lines[2].startswith("-- Schedd: ")
    assert lines[3:] == ["ID PROC", "1  0   ", "1  1   ", "1  2   ", "2  0   ", "2  1   ", "3  0   ", "",
                         "6 jobs; 0 completed, 0 removed, 4 idle, 0 running, 2 held, 0 suspended", ""]
    # -constraint chooses the jobs grouped, and so what the line counts
    held = cell.run("condor_q", "-group-by", "-pr", pf, "-constraint", "JobStatus == 5")
    assert held.stdout.split("\n")[3:] == ["ID PROC", "2  0   ", "2  1   ", "",
                                           "2 jobs; 0 completed, 0 removed, 0 idle, 0 running, 2 held, 0 suspended",
                                           ""]


def test_autocluster_with_a_per_job_file_counts_no_autocluster(cell, workdir):
    _queued(cell, workdir)
    shown = cell.run("condor_q", "-autocluster", "-pr", write(f"{workdir}/per_job.pf", PER_JOB))
    assert (shown.returncode, shown.stderr) == (0, "")
    # the autocluster ads (clusters 1 and 2 alike, cluster 3 apart) have no ProcId: none counted
    assert shown.stdout.split("\n")[3:] == ["ID PROC", "undefined undefined", "undefined undefined", "",
                                            "0 jobs; 0 completed, 0 removed, 0 idle, 0 running, 0 held, 0 suspended",
                                            ""]


def test_an_aggregating_file_still_leaves_two_empty_lines(cell, workdir):
    _queued(cell, workdir)
    unique = write(f"{workdir}/unique.pf", "SELECT UNIQUE\n   JobStatus AS ST\n   JobCount AS N\nSUMMARY STANDARD\n")
    shown = cell.run("condor_q", "-pr", unique)
    assert (shown.returncode, shown.stderr) == (0, "")
    assert shown.stdout.split("\n")[3:] == ["ST N", "1  4", "5  2", "", "", ""]


def test_group_ads_carry_the_ids_of_their_jobs(cell, workdir):
    _queued(cell, workdir)
    groups = cell.run("condor_q", "-group-by", "-af", "JobStatus", "JobCount", "JobIds")
    assert (groups.returncode, groups.stderr) == (0, "")
    assert groups.stdout == "1 4 1.0 ... 3.0\n5 2 2.0 2.1\n"
    autoclusters = cell.run("condor_q", "-autocluster", "-af", "AutoClusterId", "JobCount", "JobIds")
    assert autoclusters.stdout == "1 5 1.0 ... 2.1\n2 1 3.0\n"
    # in the ads' long form too
    long = cell.run("condor_q", "-autocluster", "-long").stdout.split("\n\n")
    assert 'JobIds = "1.0 ... 2.1"' in long[0].split("\n") and 'JobIds = "3.0"' in long[1].split("\n")
    # -constraint may test it, as the schedd tests its query on the aggregate ads
    one = cell.run("condor_q", "-autocluster", "-af", "AutoClusterId", "-constraint", 'JobIds == "3.0"')
    assert one.stdout == "2\n"


def test_job_ids_as_the_schedd_writes_them():
    def jobs(*ids):
        return [parse_ad(f"ClusterId = {c}\nProcId = {p}") for c, p in ids]
    assert qautocluster.job_ids(jobs((4, 0))) == "4.0"
    assert qautocluster.job_ids(jobs((4, 1), (4, 0))) == "4.0 4.1"
    assert qautocluster.job_ids(jobs((10, 0), (9, 2), (9, 1), (12, 0))) == "9.1 ... 12.0"
    assert qautocluster.job_ids(jobs((1, 0), (1, 1), (1, 2)), limit=3) == "1.0 1.1 1.2"
    assert qautocluster.job_ids(jobs((1, 0), (1, 1), (1, 2), (1, 3)), limit=3) == "1.0 1.1 ... 1.3"
