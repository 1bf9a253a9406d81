"""A running task is deleted once: the daemon tells its shepherd once (again only when
it was not listening yet, or a long while later), the shepherd ends the job once
however often it is told, and collects the job as soon as it is gone while deletes
keep coming (qdel, condor_rm)."""

import os
import select
import signal
import subprocess
import sys
import time

from condortools import read, submit as condor_submit, write
from conftest import REPO, wait_for
from qtools import jid_of, set_attr, wait_state
from test_daemon_tick import ask


# ---------------------------------------------------------------- the shepherd

#: a shepherd supervising a ``sleep 300`` of its own; ending the job takes 50 ms, as
#: on a loaded host. It says "ready" once it obeys signals, then, when it collected
#: the job: the job's wait status, how often it ended the job, and the result's "deleted".
SHEPHERD = r"""
import os, sys, time
from gridtools.exec import procedure
from gridtools.exec import shepherd as sh

ended = []
real = procedure.terminate


def slow_terminate(plan, pid):
    ended.append(pid)
    real(plan, pid)
    time.sleep(0.05)


procedure.terminate = slow_terminate
folder = sys.argv[1]
job = os.fork()
if job == 0:
    os.setpgid(0, 0)
    os.execvp("sleep", ["sleep", "300"])
try:
    os.setpgid(job, job)
except OSError:
    pass
shepherd = sh.Shepherd({"job_id": 1, "task": 1, "cwd": folder, "uid": os.getuid(), "gid": os.getgid()},
                       folder)
shepherd._install_handlers()
print("ready", flush=True)
status, _rusage, _left = shepherd._supervise(job)
print(status, len(ended), shepherd.result["deleted"], flush=True)
"""


def test_the_shepherd_collects_its_job_while_deletes_keep_coming(tmp_path):
    """SIGTERM every few milliseconds, faster than the job can be ended: the shepherd
    ends the job once and reports it gone while the signals still come."""
    env = dict(os.environ, PYTHONPATH=os.path.join(REPO, "src"))
    proc = subprocess.Popen([sys.executable, "-c", SHEPHERD, str(tmp_path)], stdout=subprocess.PIPE,
                            text=True, env=env)
    try:
        assert proc.stdout.readline() == "ready\n"
        sent, line = 0, ""
        end = time.monotonic() + 60
        while time.monotonic() < end and proc.poll() is None:
            os.kill(proc.pid, signal.SIGTERM)
            sent += 1
            if select.select([proc.stdout], [], [], 0.002)[0]:
                line = proc.stdout.readline()
                break
        assert line, f"the job was not collected while {sent} deletes came"
        status, ended, deleted = line.split()
        assert os.WIFSIGNALED(int(status)) and os.WTERMSIG(int(status)) == signal.SIGKILL
        assert (int(ended), deleted) == (1, "True")
        assert sent > 1
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()


def test_repeated_control_signals_are_carried_out_once():
    from gridtools.exec.shepherd import _coalesced
    usr1, usr2, term, sigint = signal.SIGUSR1, signal.SIGUSR2, signal.SIGTERM, signal.SIGINT
    assert _coalesced([usr1, usr1, usr2, term, term, usr1, sigint, term]) == [usr1, usr2, term, usr1]
    assert _coalesced([usr1, usr2, usr1]) == [usr1, usr2, usr1]       # (each change counts)


# ---------------------------------------------------------------- the daemon

def _submit(cell):
    proc = cell.run("qsub", "-terse", "-b", "y", "true", cwd="/tmp")
    assert proc.returncode == 0, proc.stderr
    return int(proc.stdout)


def test_one_qdel_tells_the_shepherd_once(ticking):
    cell, daemon, fake = ticking
    jid = _submit(cell)
    daemon.tick()
    assert "has registered the job" in ask(cell, daemon, "qdel", str(jid))
    for _ in range(20):
        daemon.tick()
    assert fake.signals == [(jid, 1, signal.SIGTERM)]
    assert not daemon.retry_deletes                 # (nothing to try again soon)
    for _ in range(3):                              # qdel again: already being deleted
        ask(cell, daemon, "qdel", str(jid))
    assert fake.signals == [(jid, 1, signal.SIGTERM)]
    daemon.tick(now=time.time() + 61)               # a long while later: told again, once
    daemon.tick()
    assert fake.signals == [(jid, 1, signal.SIGTERM)] * 2
    fake.finish(jid, 1, exit_status=143)
    daemon.tick()
    assert cell.task_states(jid) == {1: "finished"}
    assert not daemon.dispatcher.deletes_sent


def test_a_shepherd_not_listening_yet_is_told_once_it_listens(ticking):
    cell, daemon, fake = ticking
    jid = _submit(cell)
    daemon.tick()
    held = fake.locks.pop((jid, 1))                 # started, but not listening yet
    ask(cell, daemon, "qdel", str(jid))
    daemon.tick()
    assert fake.signals == [] and daemon.retry_deletes
    fake.locks[(jid, 1)] = held
    for _ in range(10):
        daemon.tick()
    assert fake.signals == [(jid, 1, signal.SIGTERM)]
    assert not daemon.retry_deletes


# ---------------------------------------------------------------- what the job gets

def _counting_job(workdir):
    """A job that notes each SIGTERM it gets and exits 3 s after the first one."""
    return write(os.path.join(workdir, "counting.sh"),
                 "#!/bin/sh\nleft=-1\ntrap 'echo term >> terms; left=30' TERM\necho up > started\n"
                 "while [ \"$left\" != 0 ]; do\n  sleep 0.1\n"
                 "  [ \"$left\" -gt 0 ] && left=$((left - 1))\ndone\nexit 0\n", 0o755)


def test_one_qdel_sends_the_terminate_signal_once(cell, workdir):
    """With the queue's terminate_method SIGTERM, a job that goes on after it gets one
    SIGTERM from one qdel, however long it takes to end."""
    set_attr(cell, "all.q", "terminate_method", "SIGTERM")
    jid = jid_of(cell.qsub("-cwd", "-o", "/dev/null", "-j", "y", _counting_job(workdir), cwd=workdir))
    wait_state(cell, jid, "r", timeout=60)
    wait_for(lambda: os.path.exists(os.path.join(workdir, "started")), timeout=60)
    cell.run("qdel", str(jid), check=True)
    cell.wait_finished(jid, timeout=90)
    assert read(os.path.join(workdir, "terms")) == "term\n"
    assert cell.job_state(jid)["tasks"]["1"]["exit_status"] == 0      # (it ended on its own)


def test_one_condor_rm_sends_the_kill_signal_once(cell, workdir):
    """An HTCondor job gets its KillSig (SIGTERM) once from one condor_rm."""
    cluster = condor_submit(cell, f"executable = {_counting_job(workdir)}\nqueue\n", cwd=workdir)
    wait_for(lambda: os.path.exists(os.path.join(workdir, "started")), timeout=60)
    cell.run("condor_rm", str(cluster), check=True)
    cell.wait_finished(cluster, timeout=90)
    assert read(os.path.join(workdir, "terms")) == "term\n"
