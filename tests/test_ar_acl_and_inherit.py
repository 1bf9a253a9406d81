"""What a user is told when refused the use of another user's reservation or job, as
Grid Engine tells it.

- A job for an advance reservation whose users (``qrsub -u``) leave its owner out is
  not refused at submission by qsub or qalter (Grid Engine's qmaster checks only that
  the reservation is there and the job's h_rt fits its window): with ``-w n`` it is
  accepted and waits, ``qstat -j`` giving the scheduler's ``has no permission for
  advance_reservation``; the verification ``-ar`` implies (``-w e``) refuses it as a
  job that can never run, ``-w v`` / ``-w p`` report why, ``-w w`` warns.
- ``qrsh -inherit`` into a job the daemon does not start a task in (another user's,
  root's request for a user's, a job without a parallel environment, one whose
  environment does not control its slaves) is answered with Grid Engine's "execution
  daemon on host ... didn't accept task" only, the reason going to the messages file.
"""

import os
import re
import tempfile
import time

from conftest import wait_for
from qtools import jid_of, reasons, state_of, wait_state


def _reservation(cell, *args):
    got = cell.run("qrsub", "-d", "1:0:0", *args)
    found = re.fullmatch(r"Your advance reservation (\d+) has been granted\n", got.stdout)
    assert got.returncode == 0 and found, got.stdout + got.stderr
    return int(found.group(1))


def test_a_job_into_a_reservation_its_owner_may_not_use_is_accepted_and_waits(cell, users):
    alice = users[0]
    private = _reservation(cell, "-u", "gtbob")             # in its window from now on
    denied = f'has no permission for advance_reservation "{private}"'
    # -ar implies -w e: the verification finds the job can never run
    implied = cell.qsub("-ar", str(private), "-b", "y", "true", user=alice)
    assert (implied.returncode, implied.stderr) == (1, "Unable to run job: error: no suitable queues\nExiting.\n")
    # without the verification the job is accepted, and waits for ever with the reason
    waiting = cell.qsub("-w", "n", "-ar", str(private), "-b", "y", "true", user=alice)
    assert waiting.returncode == 0 and waiting.stderr == "", waiting.stderr
    job = jid_of(waiting)
    assert re.fullmatch(rf'Your job {job} \("true"\) has been submitted\n', waiting.stdout)
    wait_for(lambda: denied in reasons(cell, job))
    assert state_of(cell, job) == "qw"
    warned = cell.qsub("-w", "w", "-ar", str(private), "-b", "y", "true", user=alice)
    assert warned.returncode == 0 and warned.stderr == "warning: no suitable queues\n"
    assert wait_for(lambda: denied in reasons(cell, jid_of(warned)))
    # -w v and -w p tell why, as the other reasons of a verification
    for mode in ("v", "p"):
        told = cell.qsub("-w", mode, "-ar", str(private), "-b", "y", "true", user=alice)
        assert told.returncode == 1
        assert re.fullmatch(rf"Unable to run job: Job \d+ {re.escape(denied)}\n"
                            r"verification: no suitable queues\nExiting\.\n", told.stderr), told.stderr
    # a reservation that is not there, or a run time beyond the window, is still refused
    absent = cell.qsub("-w", "n", "-ar", "77", "-b", "y", "true", user=alice)
    assert (absent.returncode, absent.stderr) == (
        1, "Unable to run job: the advance reservation id 77 is invalid\nExiting.\n")
    longer = cell.qsub("-w", "n", "-ar", str(private), "-l", "h_rt=2:0:0", "-b", "y", "true", user=alice)
    assert (longer.returncode, longer.stderr) == (
        1, "Unable to run job: the job duration is longer than duration of the advance reservation "
           f"id {private}\nExiting.\n")
    # the users of the reservation run in it
    mine = jid_of(cell.qsub("-ar", str(private), "-b", "y", "sleep", "30", user="gtbob"))
    wait_state(cell, mine, "r")
    assert state_of(cell, job) == "qw"


def test_qalter_moves_a_job_into_a_reservation_its_owner_may_not_use(cell, users):
    alice = users[0]
    private = _reservation(cell, "-u", "gtbob")
    held = jid_of(cell.qsub("-h", "-b", "y", "true", user=alice))
    moved = cell.run("qalter", "-ar", str(private), str(held), user=alice)
    assert (moved.returncode, moved.stderr) == (0, "")
    assert moved.stdout == f"{alice}@{cell.host} sets job advance reservation of job {held} to {private}\n"
    assert re.search(rf"^ar_id: +{private}$", cell.run("qstat", "-j", str(held)).stdout, re.M)
    cell.run("qrls", str(held), user=alice, check=True)
    wait_for(lambda: f'has no permission for advance_reservation "{private}"' in reasons(cell, held))
    assert state_of(cell, held) == "qw"
    # with a verification the move of a waiting job (not held: a held one is not verified)
    # is refused as one into a reservation it can never run in
    later = time.strftime("%Y%m%d%H%M", time.localtime(time.time() + 86400))
    other = jid_of(cell.qsub("-a", later, "-b", "y", "true", user=alice))
    checked = cell.run("qalter", "-w", "e", "-ar", str(private), str(other), user=alice)
    assert checked.returncode == 1 and "error: no suitable queues" in checked.stderr
    assert "ar_id" not in cell.run("qstat", "-j", str(other)).stdout
    assert cell.run("qalter", "-ar", "77", str(other), user=alice).returncode == 1


def _hostfile(cell):
    fd, path = tempfile.mkstemp(prefix="gthf-", dir="/tmp")
    with os.fdopen(fd, "w") as fh:
        fh.write(f"{cell.host} 1 all.q@{cell.host} UNDEFINED\n")
    os.chmod(path, 0o644)
    return path


def _messages(cell):
    try:
        with open(os.path.join(cell.root, "spool", "messages"), encoding="utf-8") as fh:
            return fh.read()
    except FileNotFoundError:
        return ""


def test_qrsh_inherit_refusals_say_only_that_the_task_was_not_accepted(cell, users, workdir):
    alice, bob = users[0], users[1]
    hostfile = _hostfile(cell)
    try:
        pe_job = jid_of(cell.qsub("-pe", "make", "1", "-o", "/dev/null", "-j", "y", "-b", "y", "sleep", "300",
                                  user=bob, cwd=workdir))
        plain = jid_of(cell.qsub("-o", "/dev/null", "-j", "y", "-b", "y", "sleep", "300", user=alice, cwd=workdir))
        wait_state(cell, pe_job, "r")
        wait_state(cell, plain, "r")

        def inherit(job, user=None):
            return cell.run("qrsh", "-inherit", cell.host, "touch", f"{workdir}/ran.{job}.{user}", user=user,
                            cwd=workdir, env={"JOB_ID": str(job), "PE_HOSTFILE": hostfile})

        def refused(job):
            return (f"error: executing task of job {job} failed: execution daemon on host "
                    f'"{cell.host}" didn\'t accept task\n')
        # another user's job, also for root: owners compare strictly
        for user in (alice, None):
            got = inherit(pe_job, user)
            assert (got.returncode, got.stdout, got.stderr) == (1, "", refused(pe_job))
            assert bob not in got.stderr
        wait_for(lambda: f'denied request of user "{alice}" to start a pe task in job of user "{bob}"'
                 in _messages(cell))
        wait_for(lambda: f'denied request of user "root" to start a pe task in job of user "{bob}"'
                 in _messages(cell))
        # the owner's job without a parallel environment
        got = inherit(plain, alice)
        assert (got.returncode, got.stdout, got.stderr) == (1, "", refused(plain))
        wait_for(lambda: f"received task belongs to job {plain} but this job is not suited for starting tasks"
                 in _messages(cell))
        # nothing ran: none of them made its file
        assert [n for n in os.listdir(workdir) if n.startswith("ran.")] == []
        # the owner of the parallel job still starts its tasks
        got = inherit(pe_job, bob)
        assert got.returncode == 0, got.stderr
        assert os.path.exists(f"{workdir}/ran.{pe_job}.{bob}")
    finally:
        os.unlink(hostfile)


def test_qrsh_inherit_into_a_job_whose_pe_does_not_control_slaves(cell, users, workdir):
    alice = users[0]
    hostfile = _hostfile(cell)
    try:
        job = jid_of(cell.qsub("-pe", "mpi", "1", "-o", "/dev/null", "-j", "y", "-b", "y", "sleep", "300",
                               user=alice, cwd=workdir))
        wait_state(cell, job, "r")
        got = cell.run("qrsh", "-inherit", cell.host, "true", user=alice, cwd=workdir,
                       env={"JOB_ID": str(job), "PE_HOSTFILE": hostfile})
        assert (got.returncode, got.stdout, got.stderr) == (
            1, "", f"error: executing task of job {job} failed: execution daemon on host "
                   f'"{cell.host}" didn\'t accept task\n')
        wait_for(lambda: f"received task belongs to job {job} but this job is not suited for starting tasks"
                 in _messages(cell))
    finally:
        os.unlink(hostfile)
