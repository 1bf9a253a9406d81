"""TimerRemove: a job whose TimerRemove time has passed is removed by the schedd's
periodic policy, idle, held or running, with HTCondor's RemoveReason, its abort event
and its history record; and condor_config_val's defaults of the start throttles."""

import os

from condortools import events, statuses, submit, wait_events, write
from conftest import wait_for

FAST = "PERIODIC_EXPR_INTERVAL = 1\n"


def _fast_periodic(cell):
    with open(os.path.join(cell.root, "etc", "condor_config"), "a") as fh:
        fh.write(FAST)


def _reason(expr):
    return f"The job attribute TimerRemove expression '{expr}' evaluated to TRUE"


def _removed(cell, jid, expr):
    """The job left the queue removed by its TimerRemove: its history says so."""
    wait_for(lambda: jid not in statuses(cell, jid.split(".")[0]), timeout=30)
    wait_for(lambda: cell.run("condor_history", jid, "-af", "JobStatus", "RemoveReason").stdout, timeout=10)
    assert cell.run("condor_history", jid, "-af:,", "JobStatus", "RemoveReason").stdout == \
        f"3, {_reason(expr)}\n"


def test_an_idle_and_a_held_job_are_removed_when_their_time_passes(cell, workdir):
    _fast_periodic(cell)
    # (idle: no host runs it, its requirements match none)
    idle = submit(cell, "executable = /bin/sleep\narguments = 300\nrequirements = false\n"
                        "+TimerRemove = QDate + 3\nlog = i.log\nqueue\n", cwd=workdir, name="i.sub")
    held = submit(cell, "executable = /bin/sleep\narguments = 300\nhold = true\n"
                        "+TimerRemove = QDate + 3\nlog = h.log\nqueue\n", cwd=workdir, name="h.sub")
    assert statuses(cell, str(idle), str(held)) == {f"{idle}.0": 1, f"{held}.0": 5}
    _removed(cell, f"{idle}.0", "QDate + 3")
    _removed(cell, f"{held}.0", "QDate + 3")
    wait_events(os.path.join(workdir, "i.log"), f"{idle}.0", [0, 9])
    wait_events(os.path.join(workdir, "h.log"), f"{held}.0", [0, 12, 9])
    text = open(os.path.join(workdir, "i.log")).read()
    assert f"Job was aborted.\n\t{_reason('QDate + 3')}\n" in text


def test_a_running_job_is_removed_and_killed_when_its_time_passes(cell, workdir):
    _fast_periodic(cell)
    write(os.path.join(workdir, "run.sh"), "#!/bin/sh\necho started > ready\nexec sleep 300\n", 0o755)
    cluster = submit(cell, "executable = run.sh\n+TimerRemove = JobCurrentStartDate + 3\n"
                           "log = r.log\nqueue\n", cwd=workdir)
    jid = f"{cluster}.0"
    wait_for(lambda: os.path.exists(os.path.join(workdir, "ready")), timeout=30)
    _removed(cell, jid, "JobCurrentStartDate + 3")
    wait_events(os.path.join(workdir, "r.log"), jid, [0, 1, 9])
    assert 5 not in events(os.path.join(workdir, "r.log"))[jid]


def test_a_time_to_come_or_below_zero_removes_nothing(cell, workdir):
    _fast_periodic(cell)
    later = submit(cell, "executable = /bin/sleep\narguments = 300\nhold = true\n"
                         "+TimerRemove = QDate + 100000\nqueue\n", cwd=workdir, name="l.sub")
    never = submit(cell, "executable = /bin/sleep\narguments = 300\nhold = true\n"
                         "+TimerRemove = -1\nqueue\n", cwd=workdir, name="n.sub")
    # one that is removed shows the periodic evaluation came; the others are still held
    gone = submit(cell, "executable = /bin/sleep\narguments = 300\nhold = true\n"
                        "+TimerRemove = 1\nqueue\n", cwd=workdir, name="g.sub")
    _removed(cell, f"{gone}.0", "1")
    assert statuses(cell, str(later), str(never)) == {f"{later}.0": 5, f"{never}.0": 5}


def test_condor_config_val_gives_the_start_throttles_defaults(cell):
    result = cell.run("condor_config_val", "MAX_NEXT_JOB_START_DELAY")
    assert (result.returncode, result.stdout) == (0, "600\n"), result.stderr
    verbose = cell.run("condor_config_val", "-v", "MAX_NEXT_JOB_START_DELAY").stdout
    assert verbose == "MAX_NEXT_JOB_START_DELAY = 600\n # at: <Default>\n # raw: MAX_NEXT_JOB_START_DELAY = 600\n\n"
    assert "MAX_NEXT_JOB_START_DELAY = 600" in cell.run("condor_config_val", "-dump").stdout.splitlines()
    assert cell.run("condor_config_val", "-default", "MAX_NEXT_JOB_START_DELAY").stdout == "600\n"
    # MAX_STARTERS has none: a host without it runs as many jobs as its slots take
    result = cell.run("condor_config_val", "MAX_STARTERS")
    assert result.returncode == 1 and "Not defined: MAX_STARTERS" in result.stderr
    assert not any(line.startswith("MAX_STARTERS ") for line in
                   cell.run("condor_config_val", "-dump").stdout.splitlines())
