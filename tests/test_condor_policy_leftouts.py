"""HTCondor job policy in the daemon: a TimerRemove that is no number (the schedd leaves
an idle or held job alone and looks at none of its other periodic expressions; a running
job is held, JobPolicyUndefined); a cluster whose first proc is submitted held and a
later one not (each proc is held or idle on its own); qrls under SYSTEM_MAX_RELEASES
(condor_release's limit and refusal); a NextJobStartDelay that reads the slot (TARGET)."""

import os

from condortools import af, configure_now, statuses, submit, wait_status, write
from conftest import unanswered, wait_for

FAST = "PERIODIC_EXPR_INTERVAL = 1\n"


def test_a_timer_remove_that_is_no_number_stops_the_idle_and_held_jobs_policy(cell, workdir):
    configure_now(cell, FAST)
    idle = submit(cell, "executable = /bin/sleep\narguments = 300\nrequirements = false\n"
                        "+TimerRemove = \"soon\"\nperiodic_remove = true\nqueue\n", cwd=workdir, name="i.sub")
    held = submit(cell, "executable = /bin/sleep\narguments = 300\nrequirements = false\nhold = true\n"
                        "+TimerRemove = undefined\nperiodic_release = true\nqueue\n", cwd=workdir, name="h.sub")
    # the same policies without the TimerRemove: the periodic evaluation comes and acts
    gone = submit(cell, "executable = /bin/sleep\narguments = 300\nrequirements = false\n"
                        "periodic_remove = true\nqueue\n", cwd=workdir, name="g.sub")
    freed = submit(cell, "executable = /bin/sleep\narguments = 300\nrequirements = false\nhold = true\n"
                         "periodic_release = true\nqueue\n", cwd=workdir, name="f.sub")
    wait_for(lambda: f"{gone}.0" not in statuses(cell, str(gone)), timeout=30)
    wait_status(cell, f"{freed}.0", 1, timeout=30)
    assert statuses(cell, str(idle), str(held)) == {f"{idle}.0": 1, f"{held}.0": 5}
    assert af(cell, f"{held}.0", "HoldReasonCode") == "15\n"


def test_a_running_job_whose_timer_remove_is_no_number_is_held(cell, workdir):
    configure_now(cell, FAST)
    write(os.path.join(workdir, "run.sh"), "#!/bin/sh\necho started > ready\nexec sleep 300\n", 0o755)
    cluster = submit(cell, "executable = run.sh\n+TimerRemove = \"soon\"\nqueue\n", cwd=workdir)
    jid = f"{cluster}.0"
    wait_for(lambda: os.path.exists(os.path.join(workdir, "ready")), timeout=30)
    wait_status(cell, jid, 5, timeout=30)
    assert af(cell, jid, "HoldReasonCode", "HoldReasonSubCode", "HoldReason") == \
        "5, 0, The job attribute TimerRemove expression '\"soon\"' evaluated to UNDEFINED\n"


def test_a_job_whose_timer_remove_is_no_number_is_held_at_its_exit(cell, workdir):
    cluster = submit(cell, "executable = /bin/true\n+TimerRemove = undefined\nqueue\n", cwd=workdir)
    jid = f"{cluster}.0"
    wait_status(cell, jid, 5, timeout=30)
    assert af(cell, jid, "HoldReasonCode", "HoldReason") == \
        "5, The job attribute TimerRemove expression 'undefined' evaluated to UNDEFINED\n"


def test_each_proc_is_held_or_idle_as_its_own_ad_says(cell, workdir):
    first = submit(cell, "executable = /bin/sleep\narguments = 300\nrequirements = false\n"
                         "hold = true\nqueue\nhold = false\nqueue 2\n", cwd=workdir, name="a.sub")
    other = submit(cell, "executable = /bin/sleep\narguments = 300\nrequirements = false\n"
                         "hold = $(Process) == 0\nqueue 2\n", cwd=workdir, name="b.sub")
    wait_for(lambda: not unanswered(cell.root), timeout=30)
    assert statuses(cell, str(first), str(other)) == {
        f"{first}.0": 5, f"{first}.1": 1, f"{first}.2": 1, f"{other}.0": 5, f"{other}.1": 1}
    assert af(cell, f"{first}.0", "HoldReasonCode", "HoldReason") == \
        "15, submitted on hold at user's request\n"
    # the held proc is released on its own; the others were never held
    assert cell.run("condor_release", f"{first}.0").returncode == 0
    assert statuses(cell, str(first)) == {f"{first}.0": 1, f"{first}.1": 1, f"{first}.2": 1}
    assert af(cell, f"{first}.1", "NumHolds") == "undefined\n"


def test_qrls_is_held_to_system_max_releases_as_condor_release(cell, workdir, users):
    configure_now(cell, "SYSTEM_MAX_RELEASES = 1\n")
    user = users[0]
    cluster = submit(cell, "executable = /bin/sleep\narguments = 300\nrequirements = false\n"
                           "hold = true\nqueue\n", cwd=workdir, user=user)
    jid = f"{cluster}.0"
    wait_status(cell, jid, 5)
    first = cell.run("qrls", str(cluster), user=user)               # NumHolds 1: not above 1
    assert first.returncode == 0, first.stderr
    wait_status(cell, jid, 1)
    assert cell.run("qhold", str(cluster), user=user).returncode == 0
    wait_for(lambda: af(cell, jid, "JobStatus", "NumHolds") == "5, 2\n")
    refused = cell.run("qrls", str(cluster), user=user)
    assert refused.returncode == 1
    assert refused.stderr == f"Job {jid} cannot be released again, has reached SYSTEM_PERIODIC_RELEASES limit\n"
    assert statuses(cell, jid) == {jid: 5}
    # as condor_release's, in the same words
    again = cell.run("condor_release", jid, user=user)
    assert (again.returncode, again.stderr.strip()) == (1, refused.stderr.strip())
    # a queue super user (root) is not held to it
    assert cell.run("qrls", str(cluster)).returncode == 0
    wait_status(cell, jid, 1)


def test_a_next_job_start_delay_that_reads_the_slot_holds_back_the_next_start(cell, workdir):
    write(os.path.join(workdir, "run.sh"), "#!/bin/sh\necho started > ready\nexec sleep 300\n", 0o755)
    first = submit(cell, "executable = run.sh\nnext_job_start_delay = TARGET.Cpus * 100\nqueue\n",
                   cwd=workdir, name="a.sub")
    wait_for(lambda: os.path.exists(os.path.join(workdir, "ready")), timeout=30)
    second = submit(cell, "executable = /bin/sleep\narguments = 300\nqueue\n", cwd=workdir, name="b.sub")
    messages = os.path.join(cell.root, "spool", "messages")
    wait_for(lambda: "holds back the next start" in open(messages).read(), timeout=30)
    line = next(t for t in open(messages).read().splitlines() if "holds back the next start" in t)
    assert f"job {first}.1 holds back" in line and "for 100 seconds (NextJobStartDelay)" in line
    # (the analysis reads what the daemon publishes, up to a moment after the message)
    wait_for(lambda: "next_job_start_delay" in cell.run("condor_q", f"{second}.0", "-better-analyze").stdout)
    assert statuses(cell, str(second)) == {f"{second}.0": 1}
