"""The dispatcher obeys the queue attributes that decide where and whether jobs run.

slots, hostlist, seq_no, qtype, user_lists/xuser_lists, projects/xprojects,
initial_state, complex_values (fixed and consumable), load_thresholds and
suspend_thresholds (with nsuspend and suspend_interval); calendars and
subordinate queues are in test_queue_calendars.py.
"""

import os
import re
import time

import pytest

from conftest import REPO, destroy_cell, make_cell, wait_for
from qtools import (add_complex, add_object, add_queue, jid_of, job_pid, queue_letters, reasons,
                    running, set_attr, state_of, stopped, wait_state)

Q = "all.q@testhost"


def sleeper(cell, workdir, *extra, user=None):
    return jid_of(cell.qsub("-b", "y", *extra, "sleep", "300", cwd=workdir, user=user))


def queue_of(cell, jid):
    for line in cell.run("qstat", "-u", "*").stdout.splitlines()[2:]:
        fields = line.split()
        if fields and fields[0] == str(jid) and len(fields) > 7 and "@" in fields[7]:
            return fields[7]
    return None


def test_slots(cell, workdir):
    set_attr(cell, "all.q", "slots", "1")
    first, second = sleeper(cell, workdir), sleeper(cell, workdir)
    wait_state(cell, first, "r")
    wait_for(lambda: f'queue instance "{Q}" dropped because it is full' in reasons(cell, second))
    assert state_of(cell, second) == "qw"
    set_attr(cell, "all.q", "slots", "2")
    wait_state(cell, second, "r")


def test_hostlist_and_seq_no_with_seqno_sorting():
    cell = make_cell(hosts=["testhost", "otherhost"])
    try:
        workdir = cell.root
        sconf = cell.run("qconf", "-ssconf", check=True).stdout
        add_object(cell, "-Msconf", sconf.replace("queue_sort_method                 load",
                                                  "queue_sort_method                 seqno"))
        set_attr(cell, "all.q", "seq_no", "30")
        add_queue(cell, "a.q", hostlist="otherhost", seq_no="20")
        add_queue(cell, "b.q", hostlist="testhost", seq_no="10")
        assert queue_letters(cell, "a.q@otherhost") == "" and queue_letters(cell, "b.q@testhost") == ""
        assert cell.run("qstat", "-f", "-q", "a.q@testhost").stdout.strip() == ""
        jid = sleeper(cell, workdir)
        wait_for(lambda: queue_of(cell, jid) == "b.q@testhost")
        set_attr(cell, "b.q", "seq_no", "40")
        other = sleeper(cell, workdir)
        wait_for(lambda: queue_of(cell, other) == "a.q@otherhost")
        pinned = sleeper(cell, workdir, "-q", "a.q")
        wait_for(lambda: queue_of(cell, pinned) == "a.q@otherhost")
    finally:
        destroy_cell(cell)


def test_qtype(cell, workdir):
    set_attr(cell, "all.q", "qtype", "INTERACTIVE")
    jid = jid_of(cell.qsub("-b", "y", "true", cwd=workdir))
    wait_for(lambda: f'cannot run in queue instance "{Q}" because it is not of type batch'
             in reasons(cell, jid))
    set_attr(cell, "all.q", "qtype", "BATCH")
    cell.wait_finished(jid)


def test_qtype_none_with_a_pe_list_takes_parallel_jobs(cell, workdir):
    """A parallel-only queue as queue_conf(5) describes it (qtype NONE and a pe_list)
    runs parallel jobs and refuses the others."""
    set_attr(cell, "all.q", "qtype", "NONE")
    set_attr(cell, "all.q", "pe_list", "smp")
    verified = cell.qsub("-w", "v", "-pe", "smp", "2", "-b", "y", "true", cwd=workdir)
    assert (verified.returncode, verified.stdout) == (0, "verification: found suitable queue(s)\n")
    cell.wait_finished(jid_of(cell.qsub("-pe", "smp", "2", "-b", "y", "true", cwd=workdir)))
    serial = cell.qsub("-w", "v", "-b", "y", "true", cwd=workdir)
    assert serial.returncode == 1
    assert f'cannot run in queue instance "{Q}" because it is not of type batch' in serial.stderr


def test_immediate_jobs_run_only_in_interactive_queues(cell, workdir):
    """qsub -now y: refused by a BATCH-only queue, run by an INTERACTIVE-only one."""
    set_attr(cell, "all.q", "qtype", "BATCH")
    refused = cell.qsub("-now", "y", "-b", "y", "true", cwd=workdir)
    assert refused.returncode == 1
    assert refused.stderr.endswith('Your "qsub" request could not be scheduled, try again later.\n')
    why = cell.qsub("-w", "v", "-now", "y", "-b", "y", "true", cwd=workdir)
    assert why.returncode == 1
    assert f'cannot run in queue "{Q}" because it is not of type interactive' in why.stderr
    set_attr(cell, "all.q", "qtype", "INTERACTIVE")
    ran = cell.qsub("-now", "y", "-b", "y", "true", cwd=workdir)
    assert ran.returncode == 0 and "has been successfully scheduled." in ran.stderr
    cell.wait_finished(jid_of(ran))


def test_user_lists_and_xuser_lists(cell, users, workdir):
    cell.run("qconf", "-au", "gtalice", "gtallowed", check=True)
    set_attr(cell, "all.q", "user_lists", "gtallowed")
    bobs = jid_of(cell.qsub("-b", "y", "true", cwd=workdir, user="gtbob"))
    alices = jid_of(cell.qsub("-b", "y", "true", cwd=workdir, user="gtalice"))
    cell.wait_finished(alices)
    wait_for(lambda: f'has no permission for queue "{Q}"' in reasons(cell, bobs))
    set_attr(cell, "all.q", "user_lists", "NONE")
    set_attr(cell, "all.q", "xuser_lists", "gtallowed")
    cell.wait_finished(bobs)
    alices = jid_of(cell.qsub("-b", "y", "true", cwd=workdir, user="gtalice"))
    wait_for(lambda: f'has no permission for queue "{Q}"' in reasons(cell, alices))


def test_projects_and_xprojects(cell, workdir):
    for name in ("proj1", "proj2"):
        add_object(cell, "-Aprj", f"name {name}\noticket 0\nfshare 0\nacl NONE\nxacl NONE\n")
    set_attr(cell, "all.q", "projects", "proj1")
    none = jid_of(cell.qsub("-b", "y", "true", cwd=workdir))
    wrong = jid_of(cell.qsub("-P", "proj2", "-b", "y", "true", cwd=workdir))
    right = jid_of(cell.qsub("-P", "proj1", "-b", "y", "true", cwd=workdir))
    cell.wait_finished(right)
    wait_for(lambda: f'(no project) does not have the correct project to run in queue "{Q}"'
             in reasons(cell, none) and
             f'(project proj2) does not have the correct project to run in queue "{Q}"'
             in reasons(cell, wrong))
    set_attr(cell, "all.q", "projects", "NONE")
    set_attr(cell, "all.q", "xprojects", "proj1")
    cell.wait_finished(none)
    cell.wait_finished(wrong)
    excluded = jid_of(cell.qsub("-P", "proj1", "-b", "y", "true", cwd=workdir))
    wait_for(lambda: f'(project proj1) is not allowed to run in queue "{Q}" based on the excluded '
             'project list' in reasons(cell, excluded))


def test_initial_state(cell, workdir):
    add_queue(cell, "new.q", initial_state="disabled")
    wait_for(lambda: queue_letters(cell, "new.q@testhost") == "d")
    jid = jid_of(cell.qsub("-q", "new.q", "-b", "y", "true", cwd=workdir))
    wait_for(lambda: 'queue instance "new.q@testhost" dropped because it is disabled' in reasons(cell, jid))
    cell.run("qmod", "-e", "new.q", check=True)
    cell.wait_finished(jid)
    set_attr(cell, "all.q", "initial_state", "enabled")
    cell.run("qmod", "-d", "all.q", check=True)
    cell.stop_daemon()
    cell.start_daemon()
    wait_for(lambda: queue_letters(cell, "new.q@testhost") == "d")     # disabled at every start
    assert queue_letters(cell, Q) == ""                                  # enabled at every start


def test_complex_values_fixed_and_consumable(cell, workdir):
    add_complex(cell, "bigmem              bm         BOOL      ==    YES         NO         FALSE    0")
    add_complex(cell, "license             lic        INT       <=    YES         YES        0        0")
    add_queue(cell, "big.q", complex_values="bigmem=TRUE")
    fixed = sleeper(cell, workdir, "-l", "bigmem=TRUE")
    wait_for(lambda: queue_of(cell, fixed) == "big.q@testhost")
    cell.run("qdel", str(fixed), check=True)
    set_attr(cell, "all.q", "slots", "4")
    set_attr(cell, "all.q", "complex_values", "license=2")
    jobs = [sleeper(cell, workdir, "-q", "all.q", "-l", "license=1") for _ in range(3)]
    wait_state(cell, jobs[0], "r")
    wait_state(cell, jobs[1], "r")
    wait_for(lambda: any(r.startswith("(-l license=1) cannot run") and "qc:license=0" in r
                         for r in reasons(cell, jobs[2])))
    assert state_of(cell, jobs[2]) == "qw"
    assert "qc:license=0" in cell.run("qstat", "-F", "license", "-q", "all.q").stdout
    cell.run("qdel", str(jobs[0]), check=True)
    wait_state(cell, jobs[2], "r")


def test_load_thresholds_put_the_queue_in_alarm(cell, workdir):
    set_attr(cell, "all.q", "load_thresholds", "np_load_avg=0")
    wait_for(lambda: queue_letters(cell, Q) == "a")
    jid = jid_of(cell.qsub("-b", "y", "true", cwd=workdir))
    wait_for(lambda: any(r.startswith(f'queue instance "{Q}" dropped because it is overloaded: np_load_avg=')
                         for r in reasons(cell, jid)))
    explained = cell.run("qstat", "-f", "-explain", "a").stdout.splitlines()
    line = explained[explained.index(next(x for x in explained if x.startswith(Q))) + 1]
    assert line.startswith("\talarm hl:np_load_avg=") and line.endswith(" load-threshold=0")
    assert state_of(cell, jid) == "qw"
    set_attr(cell, "all.q", "load_thresholds", "NONE")
    cell.wait_finished(jid)


def _captured_alarm():
    """The alarm line of capture qstat-j-pending-alarm.txt, and a pattern of it where the
    load values, the fading factor and the processors may differ."""
    path = os.path.join(REPO, "tests", "data", "reference", "sge", "qstat-j-pending-alarm.txt")
    with open(path) as fh:
        line = next(x for x in fh if x.startswith("scheduling info:"))
    text = line.split(":", 1)[1].strip().replace("localhost", "testhost")
    pattern = re.escape(text)
    for number in ("0.378564", "0.153564", "0.900000"):
        pattern = pattern.replace(re.escape(number), r"\d+\.\d{6}")
    return text, re.compile(pattern.replace("nproc=2", r"nproc=\d+"))


def test_a_suspend_alarm_shows_the_load_adjustment_of_recent_starts(cell, workdir):
    """As in capture qstat-j-pending-alarm.txt: a job started lately adds job_load_adjustments
    (np_load_avg=0.50 per slot, fading over load_adjustment_decay_time, divided by the
    processors) to the load a threshold sees, and the reason shows the sum."""
    captured, shape = _captured_alarm()
    assert shape.fullmatch(captured)
    started = sleeper(cell, workdir)
    wait_state(cell, started, "r")
    set_attr(cell, "all.q", "suspend_thresholds", "np_load_avg=0.001")
    waiting = jid_of(cell.qsub("-b", "y", "true", cwd=workdir))
    wait_for(lambda: any(shape.fullmatch(r) for r in reasons(cell, waiting)))
    set_attr(cell, "all.q", "suspend_thresholds", "NONE")


def test_suspend_thresholds_suspend_nsuspend_jobs_per_interval(cell, workdir):
    jobs = [sleeper(cell, workdir), sleeper(cell, workdir)]
    for jid in jobs:
        wait_state(cell, jid, "r")
    pids = [job_pid(cell, jid) for jid in jobs]
    set_attr(cell, "all.q", "slots", "3")
    set_attr(cell, "all.q", "nsuspend", "1")
    set_attr(cell, "all.q", "suspend_interval", "0:0:4")    # (2 s of it left to noticing each step late)
    began = time.time()
    set_attr(cell, "all.q", "suspend_thresholds", "np_load_avg=0")
    wait_for(lambda: "A" in queue_letters(cell, Q))
    wait_for(lambda: sorted(state_of(cell, j) for j in jobs) == ["T", "r"])
    first = time.time()
    assert first - began < 3                      # the first one at once
    wait_for(lambda: [state_of(cell, j) for j in jobs] == ["T", "T"])
    assert time.time() - first > 2                # the next one a suspend_interval later
    wait_for(lambda: all(stopped(p) for p in pids))
    explained = cell.run("qstat", "-f", "-explain", "A").stdout
    assert "\talarm hl:np_load_avg=" in explained and " suspend-threshold=0\n" in explained
    waiting = jid_of(cell.qsub("-b", "y", "true", cwd=workdir))
    wait_for(lambda: any(r.startswith(f'queue instance "{Q}" is in suspend alarm: np_load_avg=')
                         for r in reasons(cell, waiting)))
    set_attr(cell, "all.q", "suspend_thresholds", "np_load_avg=1000")   # the load falls below it
    wait_for(lambda: sorted(state_of(cell, j) for j in jobs) == ["T", "r"])
    first = time.time()
    wait_for(lambda: [state_of(cell, j) for j in jobs] == ["r", "r"])
    assert time.time() - first > 2
    wait_for(lambda: all(running(p) for p in pids))
    assert "A" not in queue_letters(cell, Q)
    set_attr(cell, "all.q", "suspend_thresholds", "NONE")


@pytest.mark.parametrize("explicit", [True])
def test_a_threshold_does_not_resume_a_job_suspended_by_qmod(cell, workdir, explicit):
    jid = sleeper(cell, workdir)
    wait_state(cell, jid, "r")
    pid = job_pid(cell, jid)
    set_attr(cell, "all.q", "suspend_interval", "0:0:1")
    set_attr(cell, "all.q", "suspend_thresholds", "np_load_avg=0")
    wait_state(cell, jid, "T")
    assert cell.run("qmod", "-usj", str(jid)).stdout == (
        f"root - job {jid} is not suspended by administrator - modify suspend threshold list of "
        "queue to remove suspend state\n")
    assert cell.run("qmod", "-f", "-usj", str(jid)).stdout == (
        f"root - job {jid} is not suspended by administrator - modify suspend threshold list of "
        "queue to remove suspend state\n")
    assert state_of(cell, jid) == "T" and stopped(pid)
    cell.run("qmod", "-sj", str(jid), check=True)
    set_attr(cell, "all.q", "suspend_thresholds", "NONE")
    wait_for(lambda: "T" not in (cell.job_state(jid)["tasks"]["1"].get("suspended") or ""))
    # (the spool has it before the dispatcher publishes it)
    wait_for(lambda: state_of(cell, jid) == "s")
    assert state_of(cell, jid) == "s" and stopped(pid)


def test_an_ambiguous_configuration_closes_the_queue_instance(cell, workdir):
    for group in ("@g1", "@g2"):
        add_object(cell, "-Ahgrp", f"group_name {group}\nhostlist testhost\n")
    text = cell.run("qconf", "-sq", "all.q", check=True).stdout
    lines = [("slots 2,[@g1=3],[@g2=4]" if line.startswith("slots ") else line) for line in text.splitlines()]
    add_object(cell, "-Mq", "\n".join(lines) + "\n")
    wait_for(lambda: queue_letters(cell, Q) == "c")
    explained = cell.run("qstat", "-f", "-explain", "c").stdout
    assert f'\tqueue instance "{Q}": attribute "slots" has ambiguous value ("3", "4")\n' in explained
    jid = jid_of(cell.qsub("-b", "y", "true", cwd=workdir))
    wait_for(lambda: f'queue instance "{Q}" dropped because it is in configuration ambiguous state'
             in reasons(cell, jid))
    add_object(cell, "-Mq", text)
    cell.wait_finished(jid)


def test_a_queue_instance_that_left_the_configuration_is_orphaned(cell, workdir):
    jid = sleeper(cell, workdir)
    wait_state(cell, jid, "r")
    set_attr(cell, "all.q", "hostlist", "NONE")
    wait_for(lambda: queue_letters(cell, Q) == "o")
    assert state_of(cell, jid) == "r"
    cell.run("qdel", str(jid), check=True)
    cell.wait_finished(jid)
    wait_for(lambda: f"{Q} " not in cell.run("qstat", "-f").stdout)
