"""What a dispatcher killed at its crash points leaves behind, and how the next one
takes it up: cases the kill -9 harness (test_crash_harness) met by chance, driven here
at the exact crash point."""

import os
import signal
import subprocess

import pytest

from attack_tools import daemon_pid
from conftest import wait_for


def _set_global(cell, attr, value):
    path = os.path.join(cell.root, "etc", "conf", "global")
    with open(path) as fh:
        lines = [line for line in fh.read().splitlines() if line.split()[:1] != [attr]]
    with open(path, "w") as fh:
        fh.write("\n".join(lines + [f"{attr} {value}"]) + "\n")


def _dead(pid):
    return not os.path.exists(f"/proc/{pid}") or open(f"/proc/{pid}/stat").read().rpartition(")")[2].split()[0] == "Z"


def test_sync_client_of_a_job_taken_in_before_a_crash_returns_once_it_is_purged(cell, workdir):
    """The daemon stored a submitted job and was killed before its intake was committed
    (intake's first crash point): the next daemon applies the request again and finds
    the job taken in. The job's id claim must go then, as after any intake: a
    ``qsub -sync y`` that looks again only after the job ended and was purged (no
    finished job is kept) finds the job gone and reports its exit code from the
    accounting, instead of waiting for ever for a job that is not coming."""
    cell.stop_daemon()
    _set_global(cell, "finished_jobs", "0")
    qsub = subprocess.Popen(["qsub", "-sync", "y", "-h", "-b", "y", "sh", "-c", "'exit 3'"], env=cell.env,
                            cwd=workdir, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        # its request is queued before the daemon starts: the first request its first
        # intake applies (a client that may not start a daemon waits for one a few seconds)
        wait_for(lambda: any(n.endswith(".submit") for n in os.listdir(os.path.join(cell.root, "spool",
                                                                                   "requests"))))
        # the daemon takes it in at once: during its start-up (whose command then says it
        # was killed) or right after it
        started = cell.run("gridtools", "daemon", "start", env={"GRIDTOOLS_CRASH_AT": "intake:1"})
        if started.returncode == 0:
            pid = daemon_pid(cell)
            wait_for(lambda: _dead(pid))
        else:
            assert "killed by signal 9 during start-up" in started.stderr, started.stderr
        assert os.listdir(os.path.join(cell.root, "spool", "taken")), "the submit was not taken in"
        cell.start_daemon()
        said = qsub.stdout.readline()           # (printed once the restarted daemon answered)
        assert said.startswith("Your job "), said
        jid = int(said.split()[2])
        qsub.send_signal(signal.SIGSTOP)        # it looks again only once the job is purged
        cell.run("qrls", str(jid), check=True)
        wait_for(lambda: not os.path.isdir(os.path.join(cell.root, "spool", "jobs", str(jid))), timeout=30)
        qsub.send_signal(signal.SIGCONT)
        try:
            out, err = qsub.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            claim = os.path.lexists(os.path.join(cell.root, "spool", "jobids", str(jid)))
            pytest.fail(f"qsub -sync y of job {jid} did not return once the job was purged "
                        f"(its id claim {'was left' if claim else 'is gone'})")
    finally:
        if qsub.poll() is None:
            qsub.send_signal(signal.SIGCONT)
            qsub.kill()
            qsub.communicate()
    assert qsub.returncode == 3, (out, err)
    assert f"Job {jid} exited with exit code 3." in err
    assert [rec[5] for rec in cell.accounting()].count(str(jid)) == 1
    assert not os.path.lexists(os.path.join(cell.root, "spool", "jobids", str(jid)))
