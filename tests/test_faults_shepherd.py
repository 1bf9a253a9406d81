"""A shepherd killed with SIGKILL: its job's processes are killed before the slot is
given to another job, and the loss is noticed at once (not after a grace period)."""

import os
import signal
import time

import pytest

from conftest import destroy_cell, make_cell, wait_for
from qtools import set_attr

NOTICE = 10.0     # seconds within which the loss must be handled (the old grace was 30)


@pytest.fixture
def one_slot():
    cell = make_cell(slots=1)
    try:
        yield cell
    finally:
        destroy_cell(cell)


def _shepherd(cell, jid, task=1):
    path = os.path.join(cell.root, "spool", "jobs", str(jid), str(task), "shepherd.lock")

    def read():
        try:
            return int(open(path).read().split()[0])
        except (OSError, ValueError, IndexError):
            return 0
    return wait_for(read, 15)


def _alive(pid):
    from qtools import process_state
    return process_state(pid) not in (None, "Z")


def _victim_and_successor(cell, workdir):
    apid = os.path.join(workdir, "a.pid")
    first = int(cell.qsub("-terse", "-b", "y", "-o", "/dev/null", "-j", "y", "sh", "-c",
                          f"'sleep 1000 & echo $! > {apid}; wait'", cwd=workdir, check=True).stdout)
    wait_for(lambda: os.path.exists(apid) and open(apid).read().strip())
    saw = os.path.join(workdir, "b.saw")
    second = int(cell.qsub("-terse", "-b", "y", "-o", "/dev/null", "-j", "y", "sh", "-c",
                           f"'s=$(cut -d\" \" -f3 /proc/$(cat {apid})/stat 2>/dev/null); "
                           f"if [ -n \"$s\" ] && [ \"$s\" != Z ]; then echo alive; else echo dead; fi > {saw}'",
                           cwd=workdir, check=True).stdout)
    return first, second, int(open(apid).read()), saw


def _check_handled(cell, first, second, child, saw, began):
    # (the successor's start, two process starts, is not timed: the end the daemon
    # records for the lost task, once its processes are gone, is)
    wait_for(lambda: os.path.exists(saw) and open(saw).read(), timeout=NOTICE + 20)
    assert open(saw).read() == "dead\n", "the slot was reused while the old job still ran"
    assert not _alive(child)
    cell.wait_finished(first)
    cell.wait_finished(second)
    records = [r for r in cell.accounting() if int(r[5]) == first]
    assert len(records) == 1 and records[0][11] != "0"
    assert int(records[0][10]) - began < NOTICE, "the lost shepherd was noticed too late"


def test_killed_shepherd_job_is_killed_before_its_slot_is_reused(one_slot, workdir):
    first, second, child, saw = _victim_and_successor(one_slot, workdir)
    began = time.time()
    os.kill(_shepherd(one_slot, first), signal.SIGKILL)
    _check_handled(one_slot, first, second, child, saw, began)


def test_killed_shepherd_of_a_job_started_by_an_earlier_daemon(one_slot, workdir):
    first, second, child, saw = _victim_and_successor(one_slot, workdir)
    one_slot.stop_daemon()
    one_slot.start_daemon()
    time.sleep(0.5)
    began = time.time()
    os.kill(_shepherd(one_slot, first), signal.SIGKILL)
    _check_handled(one_slot, first, second, child, saw, began)


def test_killed_shepherd_of_a_suspended_job(one_slot, workdir):
    first, second, child, saw = _victim_and_successor(one_slot, workdir)
    one_slot.run("qmod", "-sj", str(first), check=True)
    wait_for(lambda: open(f"/proc/{child}/stat").read().split(") ")[1][0] == "T")
    began = time.time()
    os.kill(_shepherd(one_slot, first), signal.SIGKILL)
    _check_handled(one_slot, first, second, child, saw, began)


def test_killed_shepherd_during_the_prolog(one_slot, workdir):
    ppid = os.path.join(workdir, "prolog.pid")
    prolog = os.path.join(workdir, "prolog.sh")
    with open(prolog, "w") as fh:
        fh.write(f"#!/bin/sh\nsleep 1000 &\necho $! > {ppid}\nwait\n")
    os.chmod(prolog, 0o755)
    set_attr(one_slot, "all.q", "prolog", prolog)
    first = int(one_slot.qsub("-terse", "-b", "y", "-o", "/dev/null", "-j", "y", "true",
                              cwd=workdir, check=True).stdout)
    wait_for(lambda: os.path.exists(ppid) and open(ppid).read().strip())
    child = int(open(ppid).read())
    set_attr(one_slot, "all.q", "prolog", "NONE")
    began = time.time()
    os.kill(_shepherd(one_slot, first), signal.SIGKILL)
    wait_for(lambda: not _alive(child), timeout=NOTICE + 5)
    assert time.time() - began < NOTICE
    one_slot.wait_finished(first)
