"""condor_status of a host whose queue instances cannot take a job now (disabled, suspended,
in load alarm): their free slots are Owner/Idle, entered when that began, with Start false
(the default table, -avail, -total, -af), and Unclaimed again, entered anew, once it ends;
a claimed slot stays Claimed."""

import re
import time

import pytest

from conftest import wait_for
from qtools import jid_of

#: what makes all.q take no job, and what undoes it
CLOSINGS = {
    "disabled": (("qmod", "-d", "all.q"), ("qmod", "-e", "all.q")),
    "suspended": (("qmod", "-s", "all.q"), ("qmod", "-us", "all.q")),
    "load alarm": (("qconf", "-mattr", "queue", "load_thresholds", "np_load_avg=0", "all.q"),
                   ("qconf", "-rattr", "queue", "load_thresholds", "NONE", "all.q")),
}


def slots(cell, *more):
    """slot name -> (State, Activity, EnteredCurrentState, EnteredCurrentActivity, Start)."""
    out = cell.run("condor_status", *more, "-af", "Name", "State", "Activity", "EnteredCurrentState",
                   "EnteredCurrentActivity", "Start", check=True).stdout
    found = {}
    for line in out.splitlines():
        name, state, activity, entered, since, start = line.split()
        found[name] = (state, activity, int(entered), int(since), start)
    return found


def states(cell):
    return {name: row[:2] for name, row in slots(cell).items()}


def a_second_after(moment):
    """Wait until the clock is past ``moment`` (whole seconds, as EnteredCurrentState)."""
    wait_for(lambda: int(time.time()) > moment, timeout=5)


def summary_total(text):
    """The numbers of the summary's Total line: Total Owner Claimed Unclaimed ..."""
    line = [ln for ln in text.splitlines() if ln.split()[:1] == ["Total"] and ln.split()[1:2] != ["Owner"]]
    return [int(n) for n in line[-1].split()[1:]]


@pytest.mark.parametrize("closing", sorted(CLOSINGS))
def test_free_slots_of_a_queue_that_takes_no_job_are_owner_until_it_does(cell, closing):
    close, reopen = CLOSINGS[closing]
    both = ["slot1@testhost", "slot2@testhost"]
    wait_for(lambda: states(cell) == dict.fromkeys(both, ("Unclaimed", "Idle")))
    began = max(row[2] for row in slots(cell).values())
    a_second_after(began)
    cell.run(*close, check=True)
    wait_for(lambda: states(cell) == dict.fromkeys(both, ("Owner", "Idle")), timeout=20)
    shown = slots(cell)
    for name in both:
        state, activity, entered, since, start = shown[name]
        assert entered > began and since == entered and start == "false", (name, shown[name])
    table = cell.run("condor_status", check=True).stdout
    rows = [ln for ln in table.splitlines() if ln.startswith("slot")]
    assert len(rows) == 2 and all(re.search(r" Owner +Idle ", row) for row in rows), table
    assert summary_total(table) == [2, 2, 0, 0, 0, 0, 0, 0, 0]
    assert summary_total(cell.run("condor_status", "-total", check=True).stdout) == [2, 2, 0, 0, 0, 0, 0, 0, 0]
    assert cell.run("condor_status", "-avail", check=True).stdout == ""
    assert cell.run("condor_status", "-cons", 'State == "Unclaimed"', "-af", "Name", check=True).stdout == ""
    owned = max(row[2] for row in shown.values())
    a_second_after(owned)
    cell.run(*reopen, check=True)
    wait_for(lambda: states(cell) == dict.fromkeys(both, ("Unclaimed", "Idle")), timeout=20)
    shown = slots(cell)
    for name in both:
        state, activity, entered, since, start = shown[name]
        assert entered > owned and start == "true", (name, shown[name])
    assert [ln.split()[0] for ln in cell.run("condor_status", "-avail", check=True).stdout.splitlines()
            if ln.startswith("slot")] == both
    assert summary_total(cell.run("condor_status", "-total", check=True).stdout) == [2, 0, 0, 2, 0, 0, 0, 0, 0]


def test_a_running_job_keeps_its_slot_claimed_and_the_slot_it_leaves_is_owner(cell):
    """Disabling a queue stops no running job: its slot stays Claimed/Busy while the free
    one is Owner; the slot the job leaves is Owner too while the queue stays disabled."""
    jid = jid_of(cell.qsub("-b", "y", "sleep", "60", check=True))
    wait_for(lambda: sorted(states(cell).values()) == [("Claimed", "Busy"), ("Unclaimed", "Idle")], timeout=20)
    busy = next(n for n, row in states(cell).items() if row[0] == "Claimed")
    free = next(n for n in states(cell) if n != busy)
    began = max(row[2] for row in slots(cell).values())
    a_second_after(began)
    cell.run("qmod", "-d", "all.q", check=True)
    wait_for(lambda: states(cell) == {busy: ("Claimed", "Busy"), free: ("Owner", "Idle")}, timeout=20)
    shown = slots(cell)
    assert shown[free][2] > began and shown[free][4] == "false" and shown[busy][2] <= began, shown
    assert summary_total(cell.run("condor_status", "-total", check=True).stdout) == [2, 1, 1, 0, 0, 0, 0, 0, 0]
    cell.run("qdel", str(jid), check=True)
    wait_for(lambda: states(cell) == {busy: ("Owner", "Idle"), free: ("Owner", "Idle")}, timeout=20)
    assert cell.run("condor_status", "-avail", check=True).stdout == ""
    cell.run("qmod", "-e", "all.q", check=True)
    wait_for(lambda: states(cell) == {busy: ("Unclaimed", "Idle"), free: ("Unclaimed", "Idle")}, timeout=20)
