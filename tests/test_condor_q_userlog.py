"""condor_q -userlog and condor_history -userlog: the jobs of a job event log, rebuilt
from its events, in condor_q's and condor_history's layouts."""

import json
import os
import re

import pytest

from condortools import submit, wait_events

SLEEP = "executable = /bin/sleep\narguments = 300\n"


def _run(cell, *args, user=None):
    proc = cell.run(*args, user=user)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


@pytest.fixture
def logged(cell, workdir):
    """A log of jobs in every state: 1.0 completed (exit 3), 2.0 held, 2.1 removed,
    2.2 running, 3.0 idle (no machine is ever good for it)."""
    log = os.path.join(workdir, "jobs.log")
    head = f"log = {log}\n"
    done = submit(cell, head + "executable = /bin/sh\narguments = \"-c 'exit 3'\"\nqueue\n", cwd=workdir)
    wait_events(log, f"{done}.0", [0, 1, 5])
    sleeps = submit(cell, head + SLEEP + "queue 3\n", cwd=workdir, name="sleep.sub")
    wait_events(log, f"{sleeps}.0", [0, 1])
    wait_events(log, f"{sleeps}.1", [0, 1])
    _run(cell, "condor_rm", f"{sleeps}.1")
    wait_events(log, f"{sleeps}.1", [0, 1, 9])
    wait_events(log, f"{sleeps}.2", [0, 1])             # in the slot 2.1 left
    _run(cell, "condor_hold", "-reason", "wait", f"{sleeps}.0")
    wait_events(log, f"{sleeps}.0", [0, 1, 12])
    idle = submit(cell, head + 'executable = /bin/true\nrequirements = (Machine == "nosuch")\nqueue\n',
                  cwd=workdir, name="idle.sub")
    wait_events(log, f"{idle}.0", [0])
    assert (done, sleeps, idle) == (1, 2, 3)
    return log


def test_condor_q_shows_every_job_of_the_log_with_its_state(cell, logged):
    lines = _run(cell, "condor_q", "-userlog", logged, "-nobatch").split("\n")
    assert lines[:2] == ["", ""]
    assert re.match(rf"^-- Userlog: {re.escape(logged)} @ \d\d/\d\d/\d\d \d\d:\d\d:\d\d$", lines[2])
    assert lines[3] == " ID      OWNER            SUBMITTED     RUN_TIME ST PRI SIZE CMD"
    rows = [re.match(r"^ +(\d+\.\d+) +root +\d+/\d+ +\d\d:\d\d +0\+00:00:00 (\S) +0 +0\.0 \?\?\?$", ln)
            for ln in lines[4:9]]
    assert [(m.group(1), m.group(2)) for m in rows] == \
        [("1.0", "C"), ("2.0", "H"), ("2.1", "X"), ("2.2", "R"), ("3.0", "I")]
    assert lines[9:] == ["", "5 jobs; 1 completed, 1 removed, 1 idle, 1 running, 1 held, 0 suspended", ""]
    batch = _run(cell, "condor_q", "-userlog", logged).split("\n")
    assert batch[3] == "OWNER    BATCH_NAME    SUBMITTED   DONE   RUN    IDLE   HOLD  TOTAL JOB_IDS"
    assert re.match(r"^root     ID: 2 +\d+/\d+ +\d\d:\d\d +_ +1 +_ +1 +_ 2\.0-2$", batch[5])
    assert re.match(r"^root     ID: 3 +\d+/\d+ +\d\d:\d\d +_ +_ +1 +_ +_ 3\.0$", batch[6])


def test_condor_q_views_and_selections_over_the_log(cell, logged):
    run = _run(cell, "condor_q", "-userlog", logged, "-run").split("\n")
    assert run[3] == " ID      OWNER            SUBMITTED     RUN_TIME HOST(S)"
    # the execute host, shown by the name of its address, as HTCondor's condor_q renders it
    import socket
    try:
        name = socket.getnameinfo(("127.0.0.1", 0), socket.NI_NAMEREQD)[0]
    except OSError:
        name = "??"
    assert re.match(rf"^ +2\.2 +root .* {re.escape(name)}$", run[4]) and run[5:] == [""]
    held = _run(cell, "condor_q", "-userlog", logged, "-hold").split("\n")
    assert re.match(r"^ +2\.0 +root +\d+/\d+ +\d\d:\d\d +1/0   wait \(by user root\)$", held[4])
    assert held[5:] == ["", "1 jobs; 0 completed, 0 removed, 0 idle, 0 running, 1 held, 0 suspended", ""]
    idle = _run(cell, "condor_q", "-userlog", logged, "-idle").split("\n")
    assert idle[4].split()[:2] == ["3.0", "root"] and idle[5:] == [""]
    assert _run(cell, "condor_q", "-userlog", logged, "-totals").split("\n")[3:] == \
        ["", "5 jobs; 1 completed, 1 removed, 1 idle, 1 running, 1 held, 0 suspended", ""]
    af = _run(cell, "condor_q", "-userlog", logged, "-af:j", "JobStatus", "ExitCode", "HoldReason", "Cmd")
    assert af.splitlines() == ["1.0 4 3 undefined ???", "2.0 5 undefined wait (by user root) ???",
                               "2.1 3 undefined undefined ???", "2.2 2 undefined undefined ???",
                               "3.0 1 undefined undefined ???"]
    assert re.match(rf"^<127\.0\.0\.1:0\?alias=testhost> 1 {re.escape(logged)}\n$",
                    _run(cell, "condor_q", "-userlog", logged, "2", "-constraint", "JobStatus == 2",
                         "-af", "RemoteHost", "NumJobStarts", "UserLog"))
    # -limit bounds what a schedd sends; HTCondor's condor_q shows every job of a log
    assert _run(cell, "condor_q", "-userlog", logged, "-limit", "2", "-af", "ProcId") == "0\n0\n1\n2\n0\n"
    assert _run(cell, "condor_q", "-userlog", logged, "-limit", "1", "-nobatch").count(" root ") == 5
    assert _run(cell, "condor_q", "-userlog", logged, "-format", "%d.", "ClusterId",
                "-format", "%d\n", "ProcId", "-constraint", "JobStatus == 5") == "2.0\n"
    long = _run(cell, "condor_q", "-userlog", logged, "-l", "1.0")
    assert 'Owner = "root"\n' in long and "JobStatus = 4\n" in long and "ExitCode = 3\n" in long
    assert re.search(r'^LastRemoteHost = "<127\.0\.0\.1:0\?alias=testhost>"$', long, re.M)
    assert "CompletionDate = " in long and "RemoteHost = " not in long.replace("LastRemoteHost", "")
    assert 'StartdIpAddr = "<127.0.0.1:0?alias=testhost>"\n' in long
    assert re.search(r'^GlobalJobId = "localhost#1\.0#\d+"$', long, re.M) and long.endswith("\n\n")
    [ad] = json.loads(_run(cell, "condor_q", "-userlog", logged, "-json", "2.1"))
    assert (ad["JobStatus"], ad["RemoveReason"]) == (3, "via condor_rm (by user root)")
    analysis = _run(cell, "condor_q", "-userlog", logged, "3.0", "-better-analyze")
    assert analysis.startswith(f"\n\n-- Userlog: {logged}\n") and "003.000:  Run analysis summary." in analysis


def test_condor_history_shows_the_jobs_of_the_log(cell, logged):
    lines = _run(cell, "condor_history", "-userlog", logged).splitlines()
    assert lines[0] == " ID          OWNER            SUBMITTED   RUN_TIME   ST   COMPLETED CMD"
    assert [ln.split()[0] + " " + ln.split()[5] for ln in lines[1:]] == \
        ["1.0 C", "2.0 H", "2.1 X", "2.2 R", "3.0 I"]
    done = _run(cell, "condor_history", "-userlog", logged, "-constraint", "JobStatus == 4 || JobStatus == 3",
                "-af", "ClusterId", "ProcId", "JobStatus", "ExitCode", "CompletionDate > 0")
    assert done.splitlines() == ["1 0 4 3 true", "2 1 3 undefined false"]
    # the bounds of a history file's scan do not apply to a log: every job is printed
    assert _run(cell, "condor_history", "-userlog", logged, "-limit", "2", "-af", "ProcId") == "0\n0\n1\n2\n0\n"
    assert _run(cell, "condor_history", "-userlog", logged, "-match", "1", "-scanlimit", "1", "-since", "2.0",
                "-af", "ClusterId") == "1\n2\n2\n2\n3\n"
    assert _run(cell, "condor_history", "-userlog", logged, "-limit", "1", "2", "-af", "ProcId") == "0\n1\n2\n"
    long = _run(cell, "condor_history", "-userlog", logged, "-l", "1")
    assert "ExitCode = 3\n" in long and "ExitBySignal = false\n" in long and long.count("\n\n") == 1
    [ad] = json.loads(_run(cell, "condor_history", "-userlog", logged, "-json", "2.1"))
    assert ad["RemoveReason"] == "via condor_rm (by user root)"


def test_a_log_that_cannot_be_read(cell, workdir, logged, users):
    missing = os.path.join(workdir, "none.log")
    proc = cell.run("condor_q", "-userlog", missing)
    assert (proc.returncode, proc.stdout, proc.stderr) == (1, "", f"\nCan't open user log: {missing}\n")
    proc = cell.run("condor_history", "-userlog", missing)
    # (HTCondor's condor_history prints its heading before it opens the log)
    assert (proc.returncode, proc.stdout, proc.stderr) == (
        1, " ID          OWNER            SUBMITTED   RUN_TIME   ST   COMPLETED CMD\n",
        f"Error: Can't open userlog {missing}\n")
    proc = cell.run("condor_q", "-userlog")
    assert (proc.returncode, proc.stderr) == (1, "Error: -userlog requires a filename\n")   # (queue.cpp)
    # read with the caller's own rights: another user may not read root's private log
    os.chmod(logged, 0o600)
    proc = cell.run("condor_q", "-userlog", logged, user=users[0])
    assert (proc.returncode, proc.stderr) == (1, f"\nCan't open user log: {logged}\n")
    os.chmod(logged, 0o644)
    assert "5 jobs; 1 completed" in _run(cell, "condor_q", "-userlog", logged, "-nobatch", user=users[0])
