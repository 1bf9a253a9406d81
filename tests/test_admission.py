"""Grid Engine's admission rules at submit, end to end: projects and their access lists,
enforce_project, enforce_user (auto creates users), default projects, max_u_jobs,
max_jobs and deadlineusers; qsub refuses with Grid Engine's words and the daemon
refuses what reaches it anyway."""

import os
import re

from attack_tools import forge_submit
from conftest import wait_for
from qtools import add_object, jid_of, set_global

REFUSED = "Unable to run job: job rejected: {}\nExiting.\n"


def add_project(cell, name, acl="NONE", xacl="NONE"):
    add_object(cell, "-Aprj", f"name {name}\noticket 0\nfshare 0\nacl {acl}\nxacl {xacl}\n")


def add_list(cell, name, *users):
    for user in users:
        cell.run("qconf", "-au", user, name, check=True)


def test_project_access_lists(cell, users, workdir):
    add_list(cell, "team", "gtalice")
    add_list(cell, "outcasts", "gtbob")
    add_project(cell, "projA", acl="team")
    add_project(cell, "projB", xacl="outcasts")
    ok = cell.qsub("-P", "projA", "-b", "y", "true", user="gtalice", cwd=workdir)
    assert ok.returncode == 0, ok.stderr
    carol = cell.qsub("-P", "projA", "-b", "y", "true", user="gtcarol", cwd=workdir)
    assert (carol.returncode, carol.stderr) == (
        1, REFUSED.format('no access to project "projA" for user "gtcarol"'))
    bob = cell.qsub("-P", "projB", "-b", "y", "true", user="gtbob", cwd=workdir)
    assert bob.stderr == REFUSED.format('no access to project "projB" for user "gtbob"')
    assert cell.qsub("-P", "projB", "-b", "y", "true", user="gtcarol", cwd=workdir).returncode == 0


def test_enforce_project_and_default_project(cell, users, workdir):
    add_project(cell, "projA")
    set_global(cell, enforce_project="true")
    none = cell.qsub("-b", "y", "true", user="gtalice", cwd=workdir)
    assert (none.returncode, none.stderr) == (1, REFUSED.format("no project assigned to job"))
    add_object(cell, "-Auser", "name gtalice\noticket 0\nfshare 0\ndelete_time 0\ndefault_project projA\n")
    job = jid_of(cell.qsub("-b", "y", "true", user="gtalice", cwd=workdir))
    assert wait_for(lambda: "project:                    projA" in cell.run("qstat", "-j", str(job)).stdout
                    or cell.finished(job))
    cell.wait_finished(job)
    assert [r[31] for r in cell.accounting() if r[5] == str(job)] == ["projA"]


def test_enforce_user_auto_creates_users_and_true_refuses_unknown(cell, users, workdir):
    set_global(cell, auto_user_fshare="7", auto_user_oticket="3", auto_user_delete_time="0")
    assert cell.run("qconf", "-suser", "gtcarol").returncode != 0
    cell.wait_finished(jid_of(cell.qsub("-b", "y", "true", user="gtcarol", cwd=workdir)))
    shown = wait_for(lambda: cell.run("qconf", "-suser", "gtcarol").stdout)
    assert shown == "name gtcarol\noticket 3\nfshare 7\ndelete_time 0\ndefault_project NONE\n"
    set_global(cell, enforce_user="true")
    refused = cell.qsub("-b", "y", "true", user="gtbob", cwd=workdir)
    assert refused.stderr == REFUSED.format('the user "gtbob" does not exist')
    assert cell.qsub("-b", "y", "true", user="gtcarol", cwd=workdir).returncode == 0


def test_max_u_jobs_counts_jobs_in_the_cell(cell, users, workdir):
    set_global(cell, max_u_jobs="2")
    for _ in range(2):
        jid_of(cell.qsub("-b", "y", "sleep", "60", user="gtalice", cwd=workdir))
    third = cell.qsub("-b", "y", "sleep", "60", user="gtalice", cwd=workdir)
    assert (third.returncode, third.stderr) == (
        1, REFUSED.format("Only 2 jobs are allowed per user (current job count: 2)"))
    assert cell.qsub("-b", "y", "true", user="gtbob", cwd=workdir).returncode == 0


def test_deadline_needs_deadlineusers(cell, users, workdir):
    refused = cell.qsub("-dl", "203001010000", "-b", "y", "true", user="gtalice", cwd=workdir)
    assert refused.stderr == REFUSED.format('the user "gtalice" is no deadline initiation user')
    add_list(cell, "deadlineusers", "gtalice")
    assert cell.qsub("-dl", "203001010000", "-b", "y", "true", user="gtalice", cwd=workdir).returncode == 0


def test_the_daemon_refuses_a_request_that_skipped_the_checks(cell, users, workdir):
    """A submit request written without qsub's checks is refused by the daemon: nothing
    is queued, and the answer says why in qsub's words."""
    add_list(cell, "team", "gtalice")
    add_project(cell, "projA", acl="team")
    job = jid_of(cell.qsub("-P", "projA", "-b", "y", "sleep", "1", user="gtalice", cwd=workdir))
    cell.wait_finished(job)
    # bob queues a request by hand, as a hostile client could
    sneaked, _name, answer = forge_submit(cell, "gtbob", {"project": "projA"}, reply=True)
    assert answer == [1, "", REFUSED.format('no access to project "projA" for user "gtbob"')]
    line = f'job {sneaked} of gtbob refused: job rejected: no access to project "projA" for user "gtbob"'
    assert line in open(os.path.join(cell.root, "spool", "messages")).read()
    assert not os.path.exists(os.path.join(cell.root, "spool", "jobs", str(sneaked)))
    assert not [r for r in cell.accounting() if r[5] == str(sneaked)]     # it never ran


def test_condor_submit_waits_for_the_admission_rules(cell, users, workdir):
    """While Grid Engine's admission rules are set, the daemon marks that it checks them,
    and condor_submit (which does not check them itself) waits for its word: a cluster
    max_u_jobs turns away is said refused, exit 1, and nothing is queued."""
    mark = os.path.join(cell.root, "spool", "submit_checks")
    assert not os.path.exists(mark)
    set_global(cell, max_u_jobs="1")
    assert wait_for(lambda: os.path.exists(mark))
    with open(os.path.join(workdir, "one.sub"), "w") as fh:
        fh.write("executable = /bin/true\nhold = true\nqueue\n")
    first = cell.run("condor_submit", "one.sub", user="gtalice", cwd=workdir)
    assert first.returncode == 0, first.stderr
    second = cell.run("condor_submit", "one.sub", user="gtalice", cwd=workdir)
    assert (second.returncode, second.stderr) == (
        1, "\nERROR: Failed to commit job submission into the queue.\n"
           "ERROR: job rejected: Only 1 jobs are allowed per user (current job count: 1)\n")
    assert "submitted to cluster" not in second.stdout
    held = cell.run("condor_q", "gtalice", "-af", "ClusterId").stdout.split()
    assert held == [re.search(r"cluster (\d+)", first.stdout).group(1)]
    set_global(cell, max_u_jobs="0")
    assert wait_for(lambda: not os.path.exists(mark))
    assert cell.run("condor_submit", "one.sub", user="gtalice", cwd=workdir).returncode == 0


PRIORITY = REFUSED.format("positive submission priority requires operator privileges")


def test_a_positive_priority_needs_an_operator(cell, users, workdir):
    alice = users[0]
    for command in (("qsub", "-p", "5", "-b", "y", "true"), ("qrsh", "-p", "1", "true")):
        proc = cell.run(*command, user=alice, cwd=workdir)
        assert (proc.returncode, proc.stdout, proc.stderr) == (1, "", PRIORITY)
    assert cell.run("qstat", "-u", "*").stdout == ""                  # nothing was queued
    lowered = jid_of(cell.qsub("-p", "-5", "-h", "-b", "y", "true", user=alice, cwd=workdir))
    proc = cell.run("qalter", "-p", "5", str(lowered), user=alice, cwd=workdir)
    assert (proc.returncode, proc.stdout) == (1, f'denied: "{alice}" must be operator to increase job priority\n')
    raised = jid_of(cell.qsub("-p", "5", "-h", "-b", "y", "true", cwd=workdir))      # root
    cell.run("qconf", "-ao", alice, check=True)
    mine = jid_of(cell.qsub("-p", "7", "-h", "-b", "y", "true", user=alice, cwd=workdir))
    for jid, value in ((lowered, "-5"), (raised, "5"), (mine, "7")):
        line = next(l for l in cell.run("qstat", "-j", str(jid)).stdout.splitlines() if l.startswith("priority:"))
        assert line.split()[1] == value


def test_the_daemon_refuses_a_positive_priority_that_skipped_the_check(cell, users):
    claimed, _name, answer = forge_submit(cell, users[0], {"priority": 5}, reply=True)
    assert answer == [1, "", PRIORITY]
    assert not os.path.exists(os.path.join(cell.root, "spool", "jobs", str(claimed)))
    wait_for(lambda: cell.run("qstat", "-u", "*").stdout == "")   # once the request is removed


def test_department_is_the_first_dept_userset_naming_the_owner_or_group(cell, users, workdir):
    add_object(cell, "-Au", "name dept1\ntype DEPT\nfshare 0\noticket 0\nentries gtalice\n")
    add_object(cell, "-Au", "name dept2\ntype DEPT\nfshare 0\noticket 0\nentries @gtbob\n")
    add_object(cell, "-Au", "name dept3\ntype DEPT\nfshare 0\noticket 0\nentries gtbob,@gtalice\n")
    jobs = {user: jid_of(cell.qsub("-h", "-b", "y", "true", user=user, cwd=workdir))
            for user in ("gtalice", "gtbob", "gtcarol")}
    expected = {"gtalice": "dept1", "gtbob": "dept3", "gtcarol": "defaultdepartment"}

    def shown():
        rows = cell.run("qstat", "-ext", "-u", "*").stdout.splitlines()[2:]
        return {row.split()[4]: row.split()[6] for row in rows}
    wait_for(lambda: len(shown()) == 3)
    assert shown() == {u: d[:10] for u, d in expected.items()}
    cell.run("qrls", *map(str, jobs.values()), check=True)
    for job in jobs.values():
        cell.wait_finished(job)
    assert {r[3]: r[32] for r in cell.accounting() if int(r[5]) in jobs.values()} == expected


def test_the_clusters_access_lists_say_who_may_submit(cell, users, workdir):
    """The global configuration's user_lists/xuser_lists (seed 004: access lists of the
    cluster configuration): Grid Engine's qmaster refuses a job of a user they keep out."""
    add_list(cell, "outcasts", "gtbob")
    set_global(cell, xuser_lists="outcasts")
    bob = cell.qsub("-b", "y", "true", user="gtbob", cwd=workdir)
    assert re.fullmatch(REFUSED.format(r"gtbob@\S+ is not allowed to submit jobs").replace(".\n", r"\.\n"),
                        bob.stderr), bob.stderr
    assert bob.returncode == 1
    assert cell.qsub("-b", "y", "true", user="gtalice", cwd=workdir).returncode == 0
    add_list(cell, "members", "gtalice")
    set_global(cell, xuser_lists="NONE", user_lists="members")
    assert cell.qsub("-b", "y", "true", user="gtalice", cwd=workdir).returncode == 0
    carol = cell.qsub("-b", "y", "true", user="gtcarol", cwd=workdir)
    assert carol.returncode == 1 and "gtcarol@" in carol.stderr
