"""Who may use qmod and gridtools host: managers, operators, queue owners, job owners, others.

gtcarol is an operator, gtalice owns all.q (owner_list), gtbob is a plain
user; root is the manager.
"""

import pytest

from conftest import wait_for
from qtools import jid_of, queue_letters, set_attr, state_of, wait_state

Q = "all.q@testhost"


@pytest.fixture
def roles(cell, users):
    cell.run("qconf", "-ao", "gtcarol", check=True)
    set_attr(cell, "all.q", "owner_list", "gtalice")
    return cell


def sleeper(cell, user, workdir):
    jid = jid_of(cell.qsub("-b", "y", "sleep", "300", user=user, cwd=workdir))
    wait_state(cell, jid, "r")
    return jid


def qmod(cell, user, *args):
    return cell.run("qmod", *args, user=user)


@pytest.mark.parametrize("user", ["root", "gtcarol", "gtalice"])
def test_managers_operators_and_queue_owners_disable_and_suspend_queues(roles, user):
    cell = roles
    for option, word in (("-d", "disabled"), ("-e", "enabled"), ("-s", "suspended"),
                         ("-us", "unsuspended")):
        proc = qmod(cell, user, option, "all.q")
        assert (proc.returncode, proc.stdout) == (0, f'{user}@testhost changed state of "{Q}" ({word})\n')
    assert queue_letters(cell, Q) == ""


def test_a_plain_user_may_not_change_a_queue(roles):
    cell = roles
    for option in ("-d", "-s", "-e", "-us", "-cq"):
        proc = qmod(cell, "gtbob", option, "all.q")
        assert proc.returncode == 1
        assert proc.stdout == f'gtbob - you have no permission to modify queue "{Q}"\n'
    assert queue_letters(cell, Q) == ""


def test_queue_owners_clear_and_reschedule_their_queues(roles, workdir):
    """Grid Engine's master lets a queue's owners make every change of its state and
    reschedule its jobs (qmod(1): "Requires ownership, or manager/operator privileges")."""
    cell = roles
    for user in ("gtalice", "gtcarol"):
        proc = qmod(cell, user, "-cq", "all.q")
        assert (proc.returncode, proc.stdout) == (
            0, f'Queue instance "{Q}" is already in the specified state: no error\n')
    bobs = jid_of(cell.qsub("-r", "y", "-b", "y", "sleep", "300", user="gtbob", cwd=workdir))
    wait_state(cell, bobs, "r")
    proc = qmod(cell, "gtalice", "-rq", "all.q")
    assert (proc.returncode, proc.stdout) == (0, f"Pushed rescheduling of job {bobs} on host testhost\n")
    proc = qmod(cell, "gtbob", "-rq", "all.q")
    assert proc.returncode == 1
    assert proc.stdout == f'gtbob - you have no permission to reschedule jobs of queue instance "{Q}"\n'


def test_job_owners_operators_and_managers_suspend_jobs(roles, workdir):
    cell = roles
    bobs = sleeper(cell, "gtbob", workdir)
    for user in ("gtbob", "gtcarol", "root"):
        proc = qmod(cell, user, "-sj", str(bobs))
        assert (proc.returncode, proc.stdout) == (0, f"{user} - suspended job {bobs}\n")
        wait_state(cell, bobs, "s")
        proc = qmod(cell, user, "-usj", str(bobs))
        assert (proc.returncode, proc.stdout) == (0, f"{user} - unsuspended job {bobs}\n")
        wait_state(cell, bobs, "r")


def test_other_users_and_queue_owners_may_not_touch_a_job(roles, workdir):
    cell = roles
    bobs = sleeper(cell, "gtbob", workdir)
    for user in ("gtalice", "gtcarol"):
        if user == "gtcarol":
            cell.run("qconf", "-do", "gtcarol", check=True)
        for option in ("-sj", "-rj", "-cj"):
            proc = qmod(cell, user, option, str(bobs))
            assert proc.returncode == 1
            assert proc.stdout == f'{user} - you have no permission to modify job "{bobs}"\n'
    assert state_of(cell, bobs) == "r"


def test_force_needs_the_rights_of_the_change(roles, workdir):
    """Grid Engine's master checks -f against nothing more than the change it forces."""
    cell = roles
    bobs = sleeper(cell, "gtbob", workdir)
    proc = qmod(cell, "gtalice", "-f", "-sj", str(bobs))
    assert (proc.returncode, proc.stdout) == (1, f'gtalice - you have no permission to modify job "{bobs}"\n')
    proc = qmod(cell, "gtbob", "-f", "-sj", str(bobs))
    assert (proc.returncode, proc.stdout) == (0, f"gtbob - forced suspension of job {bobs}\n")
    proc = qmod(cell, "gtcarol", "-f", "-usj", str(bobs))
    assert (proc.returncode, proc.stdout) == (0, f"gtcarol@testhost forced unsuspension of job {bobs}\n")


def test_the_owner_clears_the_error_state_of_a_job(roles, workdir):
    cell = roles
    jid = jid_of(cell.qsub("-h", "-wd", "/nonexistent", "-b", "y", "true", user="gtbob", cwd=workdir))
    cell.run("qrls", str(jid), user="gtbob", check=True)
    wait_state(cell, jid, "Eqw")
    cell.run("qhold", str(jid), user="gtbob", check=True)
    assert qmod(cell, "gtalice", "-cj", str(jid)).returncode == 1
    proc = qmod(cell, "gtbob", "-cj", str(jid))
    # (Grid Engine's qmod exits 1 even when it cleared it: reference qmod-cj-as-owner)
    assert (proc.returncode, proc.stdout) == (1, f"gtbob@testhost cleared error state of job {jid}\n")
    wait_state(cell, jid, "hqw")


def test_host_states_need_an_operator(roles, workdir):
    cell = roles
    for user in ("gtbob", "gtalice"):
        proc = cell.run("llctl", "-h", "testhost", "drain", user=user)
        assert proc.returncode == 1
        assert proc.stderr == f'denied: "{user}" must be operator to drain execution hosts\n'
    proc = cell.run("llctl", "-h", "testhost", "drain", user="gtcarol")
    assert (proc.returncode, proc.stdout) == (0, 'gtcarol drained host "testhost"\n')
    wait_for(lambda: "Drained" in cell.run("qhost", "-st").stdout)
    proc = cell.run("llctl", "resume", user="gtcarol")
    assert proc.returncode == 0, proc.stderr
    wait_for(lambda: "Idle" in cell.run("qhost", "-st").stdout)
