"""Queries that name nothing that exists: qstat and qselect with a -q list that matches
no queue or a -pe list of no parallel environment, and condor_prio -a, which names
every job in the queue."""

from condortools import submit
from conftest import wait_for

NO_PE = "error: no such parallel environment\n"
SLEEP = "executable = /bin/sleep\narguments = 300\nhold = true\n"


def _published(cell):
    wait_for(lambda: "all.q@" in cell.run("qstat", "-f").stdout)


def _result(proc):
    return proc.returncode, proc.stdout, proc.stderr


def test_qstat_and_qselect_refuse_a_pe_list_of_no_parallel_environment(cell, workdir):
    _published(cell)
    cell.qsub("-b", "y", "-h", "sleep", "100", cwd=workdir)
    for argv in (["qstat", "-pe", "nosuch", "-u", "*"], ["qstat", "-f", "-pe", "nosuch"],
                 ["qstat", "-pe", "nosuch,other*"], ["qstat", "-g", "c", "-pe", "nosuch"],
                 ["qstat", "-xml", "-pe", "nosuch"], ["qselect", "-pe", "nosuch"],
                 ["qselect", "-pe", "nosuch", "other"]):
        assert _result(cell.run(*argv)) == (1, "", NO_PE), argv
    # a list where some names are parallel environments uses those and passes over the rest
    assert cell.run("qselect", "-pe", "nosuch,smp").stdout == "all.q@testhost\n"
    shown = cell.run("qstat", "-f", "-pe", "nosuch,smp")
    assert shown.returncode == 0 and "all.q@testhost" in shown.stdout and shown.stderr == ""
    # a parallel environment no queue holds selects nothing: no error
    cell.run("qconf", "-rattr", "queue", "pe_list", "NONE", "all.q", check=True)
    assert _result(cell.run("qstat", "-f", "-pe", "smp")) == (0, "", "")
    assert _result(cell.run("qselect", "-pe", "smp")) == (1, "", "")


def test_qstat_exits_1_silently_for_a_queue_list_that_matches_nothing(cell, workdir):
    _published(cell)
    cell.qsub("-b", "y", "-h", "sleep", "100", cwd=workdir)
    for argv in (["qstat", "-q", "nosuch.q"], ["qstat", "-f", "-q", "nosuch.q"],
                 ["qstat", "-q", "all.q@nosuchhost", "-u", "*"], ["qstat", "-g", "c", "-q", "no*"],
                 ["qstat", "-xml", "-q", "nosuch.q"], ["qselect", "-q", "nosuch.q"]):
        assert _result(cell.run(*argv)) == (1, "", ""), argv
    # one entry that matches is enough; -q is looked at before -pe
    mixed = cell.run("qstat", "-f", "-q", "nosuch.q,all.q")
    assert mixed.returncode == 0 and "all.q@testhost" in mixed.stdout and mixed.stderr == ""
    assert _result(cell.run("qstat", "-q", "nosuch.q", "-pe", "nosuch")) == (1, "", "")
    assert _result(cell.run("qstat", "-q", "all.q", "-pe", "nosuch")) == (1, "", NO_PE)


def _prios(cell):
    out = cell.run("condor_q", "-allusers", "-af", "ClusterId", "ProcId", "Owner", "JobPrio").stdout
    return sorted(tuple(line.split()) for line in out.splitlines())


def test_condor_prio_a_is_every_job_in_the_queue(cell, workdir, users):
    alice, bob = users[0], users[1]
    a = submit(cell, SLEEP + "queue 2\n", cwd=workdir, user=alice, name="a.sub")
    b = submit(cell, SLEEP + "queue\n", cwd=workdir, user=bob, name="b.sub")
    # the queue super user changes every user's jobs
    root = cell.run("condor_prio", "-p", "4", "-a")
    assert _result(root) == (0, "", "")
    assert _prios(cell) == sorted([(str(a), "0", alice, "4"), (str(a), "1", alice, "4"), (str(b), "0", bob, "4")])
    # another user changes their own and is told of each job of another user; exit 0
    theirs = cell.run("condor_prio", "+3", "-a", user=bob)
    assert (theirs.returncode, theirs.stdout) == (0, "")
    assert theirs.stderr == f"Couldn't set new priority for {a}.0.\nCouldn't set new priority for {a}.1.\n"
    assert _prios(cell) == sorted([(str(a), "0", alice, "4"), (str(a), "1", alice, "4"), (str(b), "0", bob, "7")])
    # any word that starts with -a is -a, as in HTCondor
    assert _result(cell.run("condor_prio", "-p", "-2", "-all")) == (0, "", "")
    assert {row[3] for row in _prios(cell)} == {"-2"}
