"""A running daemon is not held up by one job: expressions that would take exponential
time or memory are ERROR (the job matches no slot, condor_qedit is answered at once),
and a pass cut short by a job description that makes no sense is logged and the
daemon goes on (and stops when told)."""

import os
import re
import time

from condortools import statuses, submit, write
from conftest import wait_for

REDOS = 'regexp("^(a|aa)*$", "' + "a" * 100 + 'b")'

#: Requirements that cost too much: backtracking, attributes doubling each other that
#: cannot be remembered (A0 meets a cycle through B), a string doubling forty times
COSTLY = {
    "redos": f"requirements = {REDOS}\n",
    "doubling": "+B = A40\n+A0 = isUndefined(B) ? 1 : 1\n"
                + "".join(f"+A{k} = A{k - 1} + A{k - 1}\n" for k in range(1, 41))
                + "requirements = A40 > 0\n",
    "strcat": '+S0 = "' + "x" * 1024 + '"\n'
              + "".join(f"+S{k} = strcat(S{k - 1}, S{k - 1})\n" for k in range(1, 41))
              + "requirements = size(S40) > 0\n",
}


def daemon_pid(cell):
    with open(os.path.join(cell.root, "spool", "daemon.pid")) as fh:
        return int(fh.read())


def _ended(pid):
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


def stop_promptly(cell):
    """``gridtools daemon stop`` ends the daemon within a few seconds."""
    pid = daemon_pid(cell)
    began = time.monotonic()
    stopped = cell.run("gridtools", "daemon", "stop")
    assert stopped.returncode == 0 and "daemon stopped" in stopped.stdout, stopped.stdout + stopped.stderr
    wait_for(lambda: _ended(pid), timeout=10)
    assert time.monotonic() - began < 10
    assert cell.run("gridtools", "daemon", "status").returncode == 1


def test_costly_requirements_match_nothing_and_hold_up_no_other_job(cell, workdir):
    costly = {name: submit(cell, f"executable = /bin/true\n{text}queue\n", cwd=workdir, name=f"{name}.sub")
              for name, text in COSTLY.items()}
    ran = os.path.join(workdir, "ran")
    began = time.monotonic()
    proc = cell.run("qsub", "-terse", "-o", "/dev/null", "-e", "/dev/null", "-b", "y", "touch", ran, cwd=workdir)
    assert proc.returncode == 0, proc.stderr
    wait_for(lambda: os.path.exists(ran), timeout=20)
    assert time.monotonic() - began < 20
    # the costly ones wait (Idle)
    shown = statuses(cell, *(f"{c}.0" for c in costly.values()))
    assert shown == {f"{c}.0": 1 for c in costly.values()}
    # condor_qedit of a costly expression is answered promptly; its value is ERROR
    held = int(cell.run("qsub", "-terse", "-h", "-b", "y", "true", cwd=workdir).stdout)

    def prio():
        return cell.run("condor_q", f"{held}.0", "-af", "JobPrio").stdout.strip()
    assert cell.run("condor_qedit", str(held), "JobPrio", "5").returncode == 0 and prio() == "5"
    began = time.monotonic()
    edit = cell.run("condor_qedit", str(held), "JobPrio", f"ifThenElse({REDOS}, 1, 2)", timeout=30)
    assert edit.returncode == 0, edit.stderr
    assert prio() == "error"
    assert time.monotonic() - began < 10
    # another job still starts at once, and the daemon stops when told
    ran2 = os.path.join(workdir, "ran2")
    cell.run("qsub", "-o", "/dev/null", "-e", "/dev/null", "-b", "y", "touch", ran2, cwd=workdir)
    wait_for(lambda: os.path.exists(ran2), timeout=20)
    stop_promptly(cell)


def test_a_job_description_that_makes_no_sense_does_not_end_the_daemon(cell, workdir):
    held = int(cell.run("qsub", "-terse", "-h", "-b", "y", "true", cwd=workdir).stdout)
    cell.stop_daemon()
    path = os.path.join(cell.root, "spool", "jobs", str(held), "job.yaml")
    with open(path) as fh:
        text = re.sub(r"^user_hold: .*$", "user_hold: false", fh.read(), flags=re.M)
    write(path, re.sub(r"^pe: .*$", "pe: 7", text, flags=re.M), mode=0o600)
    cell.start_daemon()
    messages = os.path.join(cell.root, "spool", "messages")

    def logged():
        with open(messages) as fh:
            return [line for line in fh if "passes in a row were cut short" in line]
    wait_for(logged, timeout=20)                    # (after 2 passes that failed in a row)
    first = [line for line in open(messages) if "a pass was cut short, going on: TypeError" in line]
    assert first and re.search(r"\(at \S+\.py:\d+ \w+", first[0])
    status = cell.run("gridtools", "daemon", "status")
    assert status.returncode == 0 and "daemon running" in status.stdout
    stop_promptly(cell)
    with open(messages) as fh:
        assert "daemon stopped" in fh.read().splitlines()[-1]
