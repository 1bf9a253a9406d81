"""condor_status of a host whose queue instances cannot take a job now, the cases
test_condor_status_owner_state does not cover: a queue instance closed by its calendar
(disabled or suspended) or subordinated by a busier queue leaves its free slots
Owner/Idle with Start false, Unclaimed again when that ends (the calendar opens, the
superior's job ends); a host whose execution daemon went unheard (its instances
unknown) is Down, and its slots are left out until a report comes. Then a host whose
startd policy cannot be read (a START that does not parse, a local configuration file
that does not read): HTCondor's startd does not run then (ResMgr's configInsert stops
it), so the host takes no job: its free slots are Owner with Start false, the daemon's
messages say why once, and they are Unclaimed again once the policy reads."""

import datetime
import os
import re
import time
import zoneinfo

import pytest

from condortools import configure_now
from conftest import destroy_cell, make_cell, wait_for
from passwait import pass_after
from qtools import (add_object, add_queue, hold_execd_lock, jid_of, queue_letters, report_load, set_attr, state_of,
                    wait_state)

BOTH = ("slot1@testhost", "slot2@testhost")


def slots(cell):
    """slot name -> (State, Activity, EnteredCurrentState, Start), from condor_status -af."""
    out = cell.run("condor_status", "-af", "Name", "State", "Activity", "EnteredCurrentState", "Start",
                   check=True).stdout
    found = {}
    for line in out.splitlines():
        name, state, activity, entered, start = line.split(None, 4)
        found[name] = (state, activity, int(entered), start)
    return found


def states(cell, names=None):
    """slot name -> (State, Activity), of ``names`` alone when given."""
    return {name: row[:2] for name, row in slots(cell).items() if names is None or name in names}


def starts(cell):
    return {name: row[3] for name, row in slots(cell).items()}


def table_states(cell):
    """slot name -> (State, Activity) as condor_status's default table shows them."""
    found = {}
    for line in cell.run("condor_status", check=True).stdout.splitlines():
        match = re.match(r"(slot\S+) +\S+ +\S+ +(\S+) +(\S+) ", line)
        if match:
            found[match[1]] = (match[2], match[3])
    return found


def add_calendar_text(cell, name, year="NONE", week="NONE"):
    add_object(cell, "-Acal", f"calendar_name {name}\nyear {year}\nweek {week}\n")


def summary_total(text):
    """The numbers of the summary's Total line: Total Owner Claimed Unclaimed ..."""
    line = [ln for ln in text.splitlines() if ln.split()[:1] == ["Total"] and ln.split()[1:2] != ["Owner"]]
    return [int(n) for n in line[-1].split()[1:]]


def a_second_after(moment):
    """Wait until the clock is past ``moment`` (whole seconds, as EnteredCurrentState)."""
    wait_for(lambda: int(time.time()) > moment, timeout=5)


def owner_everywhere(cell, names):
    """Wait until every slot of ``names`` is Owner/Idle with Start false, in condor_status's
    -af and its default table; returns the -af rows."""
    wait_for(lambda: states(cell, names) == dict.fromkeys(names, ("Owner", "Idle")), timeout=20)
    shown = slots(cell)
    assert all(shown[name][3] == "false" for name in names), shown
    assert {n: r for n, r in table_states(cell).items() if n in names} == dict.fromkeys(names, ("Owner", "Idle"))
    return shown


def unclaimed_again(cell, names, after):
    """Wait until every slot of ``names`` is Unclaimed/Idle with Start true, entered after
    ``after``."""
    wait_for(lambda: states(cell, names) == dict.fromkeys(names, ("Unclaimed", "Idle")), timeout=20)
    shown = slots(cell)
    assert all(shown[n][2] > after and shown[n][3] == "true" for n in names), shown
    assert {n: r for n, r in table_states(cell).items() if n in names} == dict.fromkeys(names, ("Unclaimed", "Idle"))
    return shown


def settled(cell, names):
    """Wait until ``names`` are Unclaimed/Idle and the clock is past their entering it."""
    wait_for(lambda: states(cell) == dict.fromkeys(names, ("Unclaimed", "Idle")), timeout=20)
    began = max(row[2] for row in slots(cell).values())
    a_second_after(began)
    return began


# ---------------------------------------------------------------- calendars

@pytest.mark.parametrize("period, letter", [("off", "D"), ("suspended", "C")])
def test_a_calendar_that_closes_the_queue_makes_its_free_slots_owner(cell, period, letter):
    began = settled(cell, BOTH)
    add_calendar_text(cell, "closing", week=f"mon-sun={period}")
    set_attr(cell, "all.q", "calendar", "closing")
    wait_for(lambda: queue_letters(cell, "all.q@testhost") == letter)
    shown = owner_everywhere(cell, BOTH)
    assert all(row[2] > began for row in shown.values()), shown
    assert cell.run("condor_status", "-avail", check=True).stdout == ""
    owned = max(row[2] for row in shown.values())
    a_second_after(owned)
    set_attr(cell, "all.q", "calendar", "NONE")
    unclaimed_again(cell, BOTH, owned)


def test_the_slots_are_unclaimed_again_when_the_calendar_opens_the_queue(cell):
    """A calendar's closed period that ends by itself: the slots go back to Unclaimed at
    its end, nothing but the calendar waking the daemon."""
    zone = zoneinfo.ZoneInfo(cell.env["TZ"])
    now = datetime.datetime.now(zone)
    end = now + datetime.timedelta(seconds=15)
    start = now - datetime.timedelta(seconds=60)
    if end.date() != now.date() or start.date() != now.date():
        pytest.skip("too close to midnight for a window within one day")
    began = settled(cell, BOTH)
    add_calendar_text(cell, "window", year=f"{now:%d.%m.%Y}={start:%H:%M:%S}-{end:%H:%M:%S}=off")
    set_attr(cell, "all.q", "calendar", "window")
    shown = owner_everywhere(cell, BOTH)
    assert all(row[2] > began for row in shown.values()), shown
    opened = int(end.replace(microsecond=0).timestamp())
    wait_for(lambda: states(cell) == dict.fromkeys(BOTH, ("Unclaimed", "Idle")), timeout=40)
    shown = slots(cell)
    assert all(opened <= row[2] < opened + 10 and row[3] == "true" for row in shown.values()), (opened, shown)
    assert queue_letters(cell, "all.q@testhost") == ""


# ---------------------------------------------------------------- subordination

def test_a_subordinated_queue_s_free_slots_are_owner_until_the_superior_s_job_ends(cell, workdir):
    """all.q subordinates low.q once one of its slots is busy: of the host's four slots
    (two of each queue) one runs all.q's job; all.q has one free slot, so the first free
    slot stays Unclaimed, and the two others, beyond what all.q can take while low.q is
    suspended (S), are Owner. When the job ends low.q is no longer suspended and every
    slot is Unclaimed, those that were Owner entered anew."""
    add_queue(cell, "low.q")
    set_attr(cell, "all.q", "subordinate_list", "low.q=1")
    four = tuple(f"slot{n}@testhost" for n in range(1, 5))
    began = settled(cell, four)
    jid = jid_of(cell.qsub("-q", "all.q", "-b", "y", "sleep", "300", cwd=workdir))
    wait_state(cell, jid, "r")
    wait_for(lambda: queue_letters(cell, "low.q@testhost") == "S")
    wait_for(lambda: sorted(states(cell).values()) == [("Claimed", "Busy"), ("Owner", "Idle"),
                                                       ("Owner", "Idle"), ("Unclaimed", "Idle")], timeout=20)
    shown = slots(cell)
    free = sorted((n for n, row in shown.items() if row[0] != "Claimed"), key=lambda n: int(n[4:n.index("@")]))
    assert shown[free[0]][:2] == ("Unclaimed", "Idle") and shown[free[0]][3] == "true", shown
    for name in free[1:]:
        assert shown[name][2] > began and shown[name][3] == "false", shown
    assert [ln.split()[0] for ln in cell.run("condor_status", "-avail", check=True).stdout.splitlines()
            if ln.startswith("slot")] == free[:1]
    owned = max(row[2] for row in shown.values())
    a_second_after(owned)
    cell.run("qdel", str(jid), check=True)
    wait_for(lambda: queue_letters(cell, "low.q@testhost") == "")
    wait_for(lambda: states(cell) == dict.fromkeys(four, ("Unclaimed", "Idle")), timeout=20)
    shown = slots(cell)
    assert all(shown[n][2] > owned and shown[n][3] == "true" for n in free[1:]), shown
    assert shown[free[0]][2] <= owned, shown


# ---------------------------------------------------------------- an unknown host



@pytest.fixture
def two_hosts():
    cell = make_cell(hosts=["testhost", "node2"])
    try:
        yield cell
    finally:
        destroy_cell(cell)


def test_an_unknown_host_s_slots_are_left_out_and_back_unclaimed_when_it_is_heard_again(two_hosts):
    """A host whose execution daemon went unheard is unknown (u) to Grid Engine and Down:
    its startd is gone, and so are its slot ads (HTCondor's collector drops them), in
    every form of condor_status, while the other host's slots stay as they were. A report
    brings it back: its slots are Unclaimed/Idle with Start true, entered anew."""
    cell = two_hosts
    mine = ("slot1@node2", "slot2@node2")
    fd = hold_execd_lock(cell, "node2")
    try:
        report_load(cell, "node2")
        edit = cell.run("qconf", "-mconf", env={"EDITOR": "sed -i 's/^max_unheard .*/max_unheard 0:0:5/'"})
        assert edit.returncode == 0, edit.stderr
        began = settled(cell, BOTH + mine)
        report_load(cell, "node2", age=60.0)
        wait_for(lambda: "u" in queue_letters(cell, "all.q@node2"), timeout=20)
        wait_for(lambda: sorted(states(cell)) == list(BOTH), timeout=20)
        shown = slots(cell)
        assert all(shown[n][:2] == ("Unclaimed", "Idle") and shown[n][2] <= began for n in BOTH), shown
        assert sorted(table_states(cell)) == list(BOTH)
        assert summary_total(cell.run("condor_status", "-total", check=True).stdout) == [2, 0, 0, 2, 0, 0, 0, 0, 0]
        gone = int(time.time())
        a_second_after(gone)
        report_load(cell, "node2")
        wait_for(lambda: "u" not in queue_letters(cell, "all.q@node2"), timeout=20)
        wait_for(lambda: sorted(states(cell)) == sorted(BOTH + mine), timeout=20)
        shown = unclaimed_again(cell, mine, gone)
        assert all(shown[n][2] <= began for n in BOTH), shown
    finally:
        os.close(fd)


# ---------------------------------------------------------------- a policy that cannot be read

def unread_messages(cell, host):
    with open(os.path.join(cell.root, "spool", "messages"), encoding="utf-8", errors="replace") as fh:
        return [ln for ln in fh.read().splitlines()
                if f"|E|the startd of {host} cannot read its policy, its slots take no job: " in ln]


def test_a_start_that_does_not_parse_leaves_the_host_s_slots_owner_and_says_so_once(cell, workdir):
    """HTCondor's startd does not run with a START that does not parse ("Syntax error in
    START expression"): the host takes no job. Its slots are Owner with Start false, no
    job starts there, and the daemon's messages say why once; once START reads again
    the slots are Unclaimed and the job runs."""
    config = os.path.join(cell.root, "etc", "condor_config")
    with open(config) as fh:
        good = fh.read()
    began = settled(cell, BOTH)
    configure_now(cell, "START = a ==\n")
    shown = owner_everywhere(cell, BOTH)
    assert all(row[2] > began for row in shown.values()), shown
    assert cell.run("condor_status", "-avail", check=True).stdout == ""
    assert summary_total(cell.run("condor_status", "-total", check=True).stdout) == [2, 2, 0, 0, 0, 0, 0, 0, 0]
    jid = jid_of(cell.qsub("-b", "y", "true", cwd=workdir))
    pass_after(cell)
    pass_after(cell)
    assert state_of(cell, jid) == "qw"
    said = unread_messages(cell, "testhost")
    assert len(said) == 1 and said[0].endswith("Syntax error in START expression: 'a =='"), said
    assert "cannot be evaluated" not in open(os.path.join(cell.root, "spool", "messages")).read()
    owned = max(row[2] for row in shown.values())
    a_second_after(owned)
    with open(config, "w") as fh:
        fh.write(good)
    cell.run("condor_reconfig", check=True)
    cell.wait_finished(jid, timeout=30)
    unclaimed_again(cell, BOTH, owned)
    assert len(unread_messages(cell, "testhost")) == 1


@pytest.fixture
def local_configs():
    """Hosts testhost and node2, each reading its own etc/hosts/<host>.local; node2's does
    not read (a line that is no setting)."""
    cell = make_cell(hosts=["testhost", "node2"], start=False,
                     condor_config="LOCAL_CONFIG_FILE = $(ETC)/hosts/$(HOSTNAME).local\n"
                                   "REQUIRE_LOCAL_CONFIG_FILE = false\n")
    try:
        folder = os.path.join(cell.root, "etc", "hosts")
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, "testhost.local"), "w") as fh:
            fh.write("START = true\n")
        with open(os.path.join(folder, "node2.local"), "w") as fh:
            fh.write("START = true\nthis is not a setting\n")
        cell.start_daemon()
        yield cell
    finally:
        destroy_cell(cell)


def test_a_host_whose_own_configuration_does_not_read_takes_no_job(local_configs, workdir):
    """node2's local configuration file does not read: its startd would not run. Its
    slots are Owner with Start false (testhost's are Unclaimed), the daemon's messages
    say why once, no job goes there; once the file reads, they are Unclaimed."""
    cell = local_configs
    mine = ("slot1@node2", "slot2@node2")
    shown = owner_everywhere(cell, mine)
    assert all(shown[n][:2] == ("Unclaimed", "Idle") and shown[n][3] == "true" for n in BOTH), shown
    assert [ln.split()[0] for ln in cell.run("condor_status", "-avail", check=True).stdout.splitlines()
            if ln.startswith("slot")] == list(BOTH)
    jids = [jid_of(cell.qsub("-b", "y", "sleep", "60", cwd=workdir)) for _ in range(3)]
    wait_for(lambda: sorted(state_of(cell, j) for j in jids) == ["qw", "r", "r"], timeout=20)
    pass_after(cell)
    assert sorted(state_of(cell, j) for j in jids) == ["qw", "r", "r"]
    said = unread_messages(cell, "node2")
    assert len(said) == 1 and "node2.local" in said[0] and "this is not a setting" in said[0], said
    assert unread_messages(cell, "testhost") == []
    owned = max(shown[n][2] for n in mine)
    a_second_after(owned)
    with open(os.path.join(cell.root, "etc", "hosts", "node2.local"), "w") as fh:
        fh.write("START = true\n")
    cell.run("condor_reconfig", check=True)
    wait_for(lambda: sorted(state_of(cell, j) for j in jids) == ["r", "r", "r"], timeout=20)
    for jid in jids:
        cell.run("qdel", str(jid), check=True)
    unclaimed_again(cell, mine, owned)
    assert len(unread_messages(cell, "node2")) == 1
