"""Calendars and subordinate queues: queue instances that change state by themselves."""

import datetime
import time
import zoneinfo

import pytest

from conftest import wait_for
from passwait import pass_after
from qtools import (add_object, add_queue, jid_of, job_pid, queue_letters, reasons, running,
                    set_attr, state_of, stopped, wait_state)

Q = "all.q@testhost"
LOW = "low.q@testhost"


def add_calendar(cell, name, year="NONE", week="NONE"):
    add_object(cell, "-Acal", f"calendar_name {name}\nyear {year}\nweek {week}\n")


def sleeper(cell, workdir, *extra):
    return jid_of(cell.qsub("-b", "y", *extra, "sleep", "300", cwd=workdir))


def test_a_calendar_that_disables_the_queue_keeps_new_jobs_pending(cell, workdir):
    add_calendar(cell, "closed", week="mon-sun=off")
    set_attr(cell, "all.q", "calendar", "closed")
    wait_for(lambda: queue_letters(cell, Q) == "D")
    jid = jid_of(cell.qsub("-b", "y", "true", cwd=workdir))
    wait_for(lambda: f'queue instance "{Q}" dropped because it is disabled' in reasons(cell, jid))
    assert "scheduling info:" in cell.run("qstat", "-j", str(jid)).stdout
    assert state_of(cell, jid) == "qw"
    set_attr(cell, "all.q", "calendar", "NONE")
    cell.wait_finished(jid)


def test_a_job_that_would_run_into_a_coming_closed_period_waits(cell, workdir):
    """sched_conf(5): the scheduler books a calendar's coming closed periods as used slots;
    a job whose h_rt reaches into one is not started, a shorter one is."""
    zone = zoneinfo.ZoneInfo(cell.env["TZ"])
    now = datetime.datetime.now(zone)
    start, end = now + datetime.timedelta(seconds=120), now + datetime.timedelta(seconds=720)
    if end.date() != now.date():
        pytest.skip("too close to midnight for a window within one day")
    add_calendar(cell, "soon", week=f"mon-sun={start:%H:%M:%S}-{end:%H:%M:%S}=off")
    set_attr(cell, "all.q", "calendar", "soon")
    long_job = sleeper(cell, workdir, "-l", "h_rt=600")
    short_job = sleeper(cell, workdir, "-l", "h_rt=60")
    wait_state(cell, short_job, "r")
    wait_for(lambda: f'(-l slots=1) cannot run in queue "{Q}" because it offers only qc:slots=0.000000 '
                     "due to a reservation" in "\n".join(reasons(cell, long_job)))
    assert state_of(cell, long_job) == "qw"
    assert queue_letters(cell, Q) == ""
    set_attr(cell, "all.q", "calendar", "NONE")
    wait_state(cell, long_job, "r")


def test_the_daemon_wakes_up_when_the_calendar_opens_the_queue(cell, workdir):
    zone = zoneinfo.ZoneInfo(cell.env["TZ"])
    now = datetime.datetime.now(zone)
    # the queue stays closed long enough for the set-up below and the look at it, on a
    # busy machine too (they must happen while it is closed)
    end = now + datetime.timedelta(seconds=8)
    if end.date() != now.date() or now.hour == 0 and now.minute == 0:
        pytest.skip("too close to midnight for a window within one day")
    start = now - datetime.timedelta(seconds=60)
    if start.date() != now.date():
        start = now.replace(hour=0, minute=0, second=0)
    window = f"{now:%d.%m.%Y}={start:%H:%M:%S}-{end:%H:%M:%S}=off"
    add_calendar(cell, "window", year=window)
    set_attr(cell, "all.q", "calendar", "window")
    jid = jid_of(cell.qsub("-b", "y", "true", cwd=workdir))
    wait_for(lambda: queue_letters(cell, Q) == "D")
    assert state_of(cell, jid) == "qw"
    cell.wait_finished(jid, timeout=15)                   # nothing but the calendar wakes the daemon
    started = cell.job_state(jid)["tasks"]["1"]["start_time"]
    opened = end.replace(microsecond=0).timestamp()
    assert opened - 0.01 <= started < opened + 3
    # (the spool may show the job ended before the dispatcher has published the queue opened)
    wait_for(lambda: queue_letters(cell, Q) == "")
    assert queue_letters(cell, Q) == ""


def test_a_suspending_calendar_suspends_running_jobs(cell, workdir):
    jid = sleeper(cell, workdir)
    wait_state(cell, jid, "r")
    pid = job_pid(cell, jid)
    add_calendar(cell, "pause", week="mon-sun=suspended")
    set_attr(cell, "all.q", "calendar", "pause")
    wait_for(lambda: queue_letters(cell, Q) == "C")
    wait_state(cell, jid, "S")
    wait_for(lambda: stopped(pid))
    set_attr(cell, "all.q", "calendar", "NONE")
    wait_state(cell, jid, "r")
    wait_for(lambda: running(pid))


def test_a_subordinate_queue_is_suspended_while_its_superior_holds_the_threshold(cell, workdir):
    add_queue(cell, "low.q")
    set_attr(cell, "all.q", "subordinate_list", "low.q=1")
    low = sleeper(cell, workdir, "-q", "low.q")
    wait_state(cell, low, "r")
    pid = job_pid(cell, low)
    high = sleeper(cell, workdir, "-q", "all.q")
    wait_state(cell, high, "r")
    wait_for(lambda: queue_letters(cell, LOW) == "S")
    wait_state(cell, low, "S")
    wait_for(lambda: stopped(pid))
    waiting = jid_of(cell.qsub("-q", "low.q", "-b", "y", "true", cwd=workdir))
    wait_for(lambda: f'queue instance "{LOW}" dropped because it is suspended' in reasons(cell, waiting))
    cell.run("qdel", str(high), check=True)
    wait_state(cell, low, "r")
    wait_for(lambda: running(pid))
    assert queue_letters(cell, LOW) == ""
    cell.wait_finished(waiting)


def test_without_a_threshold_the_superior_must_be_full(cell, workdir):
    add_queue(cell, "low.q")
    set_attr(cell, "all.q", "subordinate_list", "low.q")
    low = sleeper(cell, workdir, "-q", "low.q")
    wait_state(cell, low, "r")
    first = sleeper(cell, workdir, "-q", "all.q")
    wait_state(cell, first, "r")
    pass_after(cell)                # (a pass after the start would have suspended it)
    assert state_of(cell, low) == "r"
    second = sleeper(cell, workdir, "-q", "all.q")
    wait_state(cell, second, "r")
    wait_state(cell, low, "S")
    cell.run("qdel", str(first), check=True)
    wait_state(cell, low, "r")


def test_slotwise_subordination_suspends_the_shortest_running_task(cell, workdir):
    add_queue(cell, "low.q")
    set_attr(cell, "all.q", "subordinate_list", "slots=2(low.q:1:sr)")
    older = sleeper(cell, workdir, "-q", "low.q")
    wait_state(cell, older, "r")
    time.sleep(1.1)
    newer = sleeper(cell, workdir, "-q", "low.q")
    wait_state(cell, newer, "r")
    high = sleeper(cell, workdir, "-q", "all.q")
    wait_state(cell, high, "r")
    wait_state(cell, newer, "S")
    assert state_of(cell, older) == "r"
    assert queue_letters(cell, LOW) == ""
    cell.run("qdel", str(high), check=True)
    wait_state(cell, newer, "r")
