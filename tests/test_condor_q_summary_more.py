"""condor_q's totals lines as HTCondor 24's condor_q prints them: the line of the
caller's own jobs only for a query of them (none for a queue super user, with
-allusers, an owner or a job id), scheduler universe jobs (the DAGMan job) left
out of every count, the all-users line kept under -limit; and -af's qualifier
letters as HTCondor 24 reads them (T and Y unknown, so ignored; o is r), in
condor_q and condor_status alike."""

import os

from conftest import destroy_cell, make_cell, wait_for
from condortools import submit, wait_status

HELD = "executable = /bin/sleep\narguments = 300\nhold = true\n"


def _totals(cell, *args, user=None):
    """The totals lines at the end of condor_q's output."""
    proc = cell.run("condor_q", *args, user=user)
    assert proc.returncode == 0, proc.stderr
    return [line for line in proc.stdout.split("\n") if line.startswith("Total for ")]


def _counts(jobs, held=0, running=0, idle=0):
    return f"{jobs} jobs; 0 completed, 0 removed, {idle} idle, {running} running, {held} held, 0 suspended"


def _listed(cell, held, user=None):
    """Wait until the job listing the batch view and the totals read (published after
    the job ads -af reads) has ``held`` held jobs in all, as ``user`` sees it: root also
    counts clusters the daemon has not taken in yet, which another user sees only once
    they are published."""
    wait_for(lambda: f" {held} held, " in _totals(cell, "-totals", user=user)[-1])


def test_only_a_query_of_the_callers_own_jobs_has_their_line(cell, users, workdir):
    submit(cell, HELD + "queue 2\n", cwd=workdir, user="gtalice", name="a.sub")
    bob = submit(cell, HELD + "queue\n", cwd=workdir, user="gtbob", name="b.sub")
    wait_status(cell, f"{bob}.0", 5)
    _listed(cell, 3, user="gtalice")
    mine = [f"Total for query: {_counts(2, held=2)} ", f"Total for gtalice: {_counts(2, held=2)} ",
            f"Total for all users: {_counts(3, held=3)}"]
    for view in ((), ("-nobatch",), ("-totals",), ("-hold",), ("-constraint", "true"), ("-nobatch", "-dag")):
        assert _totals(cell, *view, user="gtalice") == mine, view
    everyone = [f"Total for query: {_counts(3, held=3)} ", f"Total for all users: {_counts(3, held=3)}"]
    only_bob = [f"Total for query: {_counts(1, held=1)} ", f"Total for all users: {_counts(3, held=3)}"]
    for args, wanted in ((("-allusers",), everyone), (("-allusers", "-nobatch"), everyone),
                         (("-totals", "-allusers"), everyone), (("gtbob",), only_bob),
                         (("gtbob", "-nobatch"), only_bob), ((str(bob),), only_bob),
                         ((f"{bob}.0", "-nobatch"), only_bob),
                         (("gtalice",), [f"Total for query: {_counts(2, held=2)} ", everyone[1]])):
        assert _totals(cell, *args, user="gtalice") == wanted, args
    # root is a queue super user: its query is for everyone's jobs, without a line of its own
    for view in ((), ("-nobatch",), ("-totals",), ("-hold",), ("-constraint", "true")):
        assert _totals(cell, *view) == everyone, view
    # a user with no jobs still has the line of their own (all zeros)
    assert _totals(cell, user="gtcarol") == [f"Total for query: {_counts(0)} ", f"Total for gtcarol: {_counts(0)} ",
                                             f"Total for all users: {_counts(3, held=3)}"]


def test_a_queue_super_user_of_the_configuration_sees_everyone_without_a_line_of_their_own(users, workdir):
    cell = make_cell(condor_config="QUEUE_SUPER_USERS = root, condor, gtbob\n")
    try:
        alice = submit(cell, HELD + "queue 2\n", cwd=workdir, user="gtalice", name="a.sub")
        wait_status(cell, f"{alice}.1", 5)
        _listed(cell, 2)
        everyone = [f"Total for query: {_counts(2, held=2)} ", f"Total for all users: {_counts(2, held=2)}"]
        for view in ((), ("-nobatch",), ("-totals",)):
            assert _totals(cell, *view, user="gtbob") == everyone, view
        rows = cell.run("condor_q", "-nobatch", "-af", "Owner", user="gtbob").stdout
        assert rows == "gtalice\ngtalice\n"
        assert _totals(cell, user="gtcarol") == [f"Total for query: {_counts(0)} ",
                                                 f"Total for gtcarol: {_counts(0)} ",
                                                 f"Total for all users: {_counts(2, held=2)}"]
    finally:
        destroy_cell(cell)


def test_the_dagman_job_is_counted_in_no_totals_line(cell, users, workdir):
    with open(os.path.join(workdir, "node.sub"), "w") as fh:
        fh.write(HELD + "queue\n")
    with open(os.path.join(workdir, "d.dag"), "w") as fh:
        fh.write("JOB A node.sub\n")
    os.chmod(os.path.join(workdir, "node.sub"), 0o644)
    os.chmod(os.path.join(workdir, "d.dag"), 0o644)
    proc = cell.run("condor_submit_dag", "d.dag", cwd=workdir, user="gtbob")
    assert proc.returncode == 0, proc.stderr + proc.stdout

    def node_held():
        out = cell.run("condor_q", "-allusers", "-af", "JobUniverse", "JobStatus").stdout.split("\n")
        return sorted(out) == ["", "5 5", "7 2"]
    wait_for(node_held, timeout=60)
    _listed(cell, 1)
    one = [f"Total for query: {_counts(1, held=1)} ", f"Total for gtbob: {_counts(1, held=1)} ",
           f"Total for all users: {_counts(1, held=1)}"]
    for view in ((), ("-nobatch",), ("-totals",), ("-nobatch", "-dag"), ("-constraint", "true"),
                 ("-totals", "-constraint", "true")):
        assert _totals(cell, *view, user="gtbob") == one, view
    # the DAGMan job alone: listed, but counted nowhere
    dagman = cell.run("condor_q", "-af", "ClusterId", "-constraint", "JobUniverse == 7", user="gtbob").stdout.strip()
    assert _totals(cell, dagman, "-nobatch", user="gtbob") == [f"Total for query: {_counts(0)} ",
                                                                f"Total for all users: {_counts(1, held=1)}"]
    assert _totals(cell, "-allusers", "-totals") == [f"Total for query: {_counts(1, held=1)} ",
                                                     f"Total for all users: {_counts(1, held=1)}"]


def test_limit_keeps_the_all_users_line_in_every_view(cell, users, workdir):
    submit(cell, HELD + "queue 2\n", cwd=workdir, user="gtalice", name="a.sub")
    bob = submit(cell, HELD + "queue 2\n", cwd=workdir, user="gtbob", name="b.sub")
    wait_status(cell, f"{bob}.1", 5)
    _listed(cell, 4)
    every = f"Total for all users: {_counts(4, held=4)}"
    for view in ((), ("-nobatch",), ("-hold",), ("-totals",), ("-constraint", "true")):
        assert _totals(cell, "-limit", "1", *view) == [f"Total for query: {_counts(1, held=1)} ", every], view
        assert _totals(cell, "-limit", "1", *view, user="gtalice") == [
            f"Total for query: {_counts(1, held=1)} ", f"Total for gtalice: {_counts(2, held=2)} ", every], view
        assert _totals(cell, "-limit", "3", "-allusers", *view, user="gtalice") == [
            f"Total for query: {_counts(3, held=3)} ", every], view


def test_af_reads_the_qualifier_letters_of_htcondor_24(cell, workdir):
    cluster = submit(cell, HELD + "queue\n", cwd=workdir)
    job = f"{cluster}.0"

    def af(*args, tool="condor_q"):
        proc = cell.run(tool, *args)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout
    plain = af(job, "-af", "QDate", "RemoteWallClockTime")
    assert plain.split()[0].isdigit()
    # T and Y (elapsed times and dates in later HTCondor) are unknown to 24: plain values
    for letters in ("T", "Y", "TY", "jT"):
        wanted = f"{job} {plain}" if "j" in letters else plain
        assert af(job, f"-af:{letters}", "QDate", "RemoteWallClockTime") == wanted, letters
    # o is r: the expression as written
    assert af(job, "-af:o", "Requirements") == af(job, "-af:r", "Requirements") != af(job, "-af", "Requirements")
    # condor_status reads the letters alike: T and Y ignored, not refused
    names = af("-af", "Name", tool="condor_status")
    assert names and af("-af:TY", "Name", tool="condor_status") == names
    assert af("-af:o", "Start", tool="condor_status") == af("-af:r", "Start", tool="condor_status")
