"""An HTCondor job's policy at its exit, run by the daemon: the periodic expressions
(the job's and the system's) come before on_exit_hold and on_exit_remove, as
HTCondor's shadow evaluates them; the exit attributes a job held on its exit keeps;
ExitCode against ExitSignal; the hold of a job removed while held; the execute event
of a job with a deferral time given as an expression."""

import os
import time

from condortools import events, history, submit, wait_events, wait_status
from conftest import wait_for
from gridtools.formats.condor.userlog import EventType, parse_events


def _sh(command):
    return f"executable = /bin/sh\narguments = \"-c '{command}'\"\n"


def _config(cell, text):
    with open(os.path.join(cell.root, "etc", "condor_config"), "a") as fh:
        fh.write(text)
    assert cell.run("condor_reconfig").returncode == 0


def _history(cell, jid, *attrs):
    """The attributes of a proc's final ad, once condor_history has it."""
    wait_for(lambda: history(cell, jid, "-af", "ProcId"), timeout=20)
    return history(cell, jid, "-af", *attrs)


def test_periodic_hold_and_remove_on_the_exit_come_before_the_exit_expressions(cell, workdir):
    """A periodic_hold on ExitCode holds the job as it exits (012, JobPolicy's code and
    HTCondor's sentence), although PERIODIC_EXPR_INTERVAL is a minute away; a
    periodic_remove on ExitCode removes it (009, no 005), before its on_exit_hold."""
    held = submit(cell, _sh("exit 3") + "log = h.log\nperiodic_hold = ExitCode =!= UNDEFINED && ExitCode != 0\n"
                  "on_exit_remove = true\nqueue\n", cwd=workdir)
    removed = submit(cell, _sh("exit 3") + "log = r.log\nperiodic_remove = ExitCode == 3\n"
                     "on_exit_hold = true\nqueue\n", cwd=workdir)
    jid = f"{held}.0"
    wait_events(os.path.join(workdir, "h.log"), jid, [0, 1, 12])
    wait_status(cell, jid, 5)
    reason, code, rest = cell.run("condor_q", jid, "-af:,", "HoldReason", "HoldReasonCode",
                                  "ExitCode").stdout.rstrip("\n").split(", ")
    assert reason.startswith("The job attribute PeriodicHold expression 'ExitCode =!= ")
    assert reason.endswith("evaluated to TRUE")
    assert (code, rest) == ("3", "3")
    rid = f"{removed}.0"
    wait_events(os.path.join(workdir, "r.log"), rid, [0, 1, 9])
    assert 5 not in events(os.path.join(workdir, "r.log"))[rid]
    assert "Job was aborted.\n\tThe job attribute PeriodicRemove expression 'ExitCode == 3' evaluated to TRUE\n" \
        in open(os.path.join(workdir, "r.log")).read()
    assert _history(cell, rid, "JobStatus", "ExitCode", "RemoveReason") == \
        "3 3 The job attribute PeriodicRemove expression 'ExitCode == 3' evaluated to TRUE\n"
    assert cell.run("condor_rm", jid).returncode == 0


def test_system_periodic_hold_on_the_exit(cell, workdir):
    """SYSTEM_PERIODIC_HOLD on the exit attributes holds a job as it exits, with its reason
    and SystemPolicy's code, not the job's own on_exit_remove."""
    _config(cell, "SYSTEM_PERIODIC_HOLD = ExitCode =?= 4\nSYSTEM_PERIODIC_HOLD_REASON = \"exit four\"\n"
                  "SYSTEM_PERIODIC_HOLD_SUBCODE = ExitCode\n")
    cluster = submit(cell, _sh("exit 4") + "log = s.log\nqueue\n", cwd=workdir)
    jid = f"{cluster}.0"
    wait_events(os.path.join(workdir, "s.log"), jid, [0, 1, 12])
    wait_status(cell, jid, 5)
    assert cell.run("condor_q", jid, "-af", "HoldReasonCode", "HoldReasonSubCode", "ExitCode",
                    "HoldReason").stdout == "26 4 4 exit four\n"
    assert cell.run("condor_rm", jid).returncode == 0


def test_a_job_held_on_its_exit_keeps_its_exit_and_its_removal_keeps_the_hold(cell, workdir):
    """on_exit_hold: the held job's ad has ExitCode (or ExitBySignal and ExitSignal of a
    signal death); condor_rm of it moves its hold to LastHoldReason, LastHoldReasonCode
    and LastHoldReasonSubCode, which condor_history shows."""
    code = submit(cell, _sh("exit 5") + "log = c.log\non_exit_hold = ExitCode == 5\n"
                  'on_exit_hold_reason = "exit five"\non_exit_hold_subcode = ExitCode\nqueue\n', cwd=workdir)
    killed = submit(cell, _sh("kill -TERM $$") + "log = k.log\non_exit_hold = ExitBySignal\n"
                    "on_exit_hold_subcode = ExitSignal\nqueue\n", cwd=workdir)
    jid, kid = f"{code}.0", f"{killed}.0"
    wait_status(cell, jid, 5)
    wait_status(cell, kid, 5)
    attrs = ("JobStatus", "HoldReasonCode", "HoldReasonSubCode", "ExitCode", "ExitBySignal", "ExitSignal")
    assert cell.run("condor_q", jid, "-af", *attrs).stdout == "5 3 5 5 false undefined\n"
    assert cell.run("condor_q", kid, "-af", *attrs).stdout == "5 3 15 undefined true 15\n"
    assert cell.run("condor_rm", jid).returncode == 0
    wait_events(os.path.join(workdir, "c.log"), jid, [0, 1, 12, 9])
    assert _history(cell, jid, "JobStatus", "HoldReason", "LastHoldReason", "LastHoldReasonCode",
                    "LastHoldReasonSubCode", "ExitCode") == "3 undefined exit five 3 5 5\n"
    assert cell.run("condor_rm", kid).returncode == 0


def test_an_exit_status_above_128_is_an_exit_code_not_a_signal(cell, workdir):
    """exit 130 is ExitCode 130, ExitBySignal false in the final ad (as in the 005 event);
    only a death by a signal is ExitBySignal true with its ExitSignal."""
    exited = submit(cell, _sh("exit 130") + "log = e.log\non_exit_hold = ExitBySignal\nqueue\n", cwd=workdir)
    killed = submit(cell, _sh("kill -KILL $$") + "log = k.log\nqueue\n", cwd=workdir)
    eid, kid = f"{exited}.0", f"{killed}.0"
    wait_events(os.path.join(workdir, "e.log"), eid, [0, 1, 5])
    assert "(1) Normal termination (return value 130)" in open(os.path.join(workdir, "e.log")).read()
    assert _history(cell, eid, "ExitCode", "ExitBySignal", "ExitSignal", "JobStatus") == "130 false undefined 4\n"
    wait_events(os.path.join(workdir, "k.log"), kid, [0, 1, 5])
    assert _history(cell, kid, "ExitCode", "ExitBySignal", "ExitSignal") == "undefined true 9\n"


def test_the_execute_event_of_a_deferral_time_expression_is_dated_when_the_job_began(cell, workdir):
    """deferral_time = time() + 4, evaluated once as the starter does: the 001 event is
    dated when the job began (JobCurrentStartExecutingDate), before its 005."""
    submitted = time.time()
    cluster = submit(cell, _sh("exit 0") + "log = d.log\ndeferral_time = time() + 4\nqueue\n", cwd=workdir)
    jid = f"{cluster}.0"
    log = os.path.join(workdir, "d.log")
    wait_events(log, jid, [0, 1, 5], timeout=30)
    found = {e.type: e.timestamp for e in parse_events(open(log).read())}
    began = int(_history(cell, jid, "JobCurrentStartExecutingDate"))
    assert found[EventType.EXECUTE] <= found[EventType.JOB_TERMINATED]
    assert abs(found[EventType.EXECUTE] - began) <= 1
    assert submitted + 3 <= found[EventType.EXECUTE] <= submitted + 8


def test_removing_a_job_submitted_on_hold_keeps_its_hold_as_the_last(cell, workdir):
    """condor_rm of a job held since its submission: its history says the hold it had as
    LastHoldReason, LastHoldReasonCode and LastHoldReasonSubCode (SubmittedOnHold)."""
    cluster = submit(cell, "executable = /bin/true\nhold = true\nlog = o.log\nqueue\n", cwd=workdir)
    jid = f"{cluster}.0"
    wait_status(cell, jid, 5)
    assert cell.run("condor_rm", jid).returncode == 0
    assert _history(cell, jid, "JobStatus", "HoldReasonCode", "LastHoldReasonCode", "LastHoldReasonSubCode") == \
        "3 undefined 15 0\n"
