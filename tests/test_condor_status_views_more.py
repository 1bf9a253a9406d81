"""condor_status's built-in views as HTCondor prints them: LoadAv is the slot's
CondorLoadAvg (its job's load), the slot tables' Name column is 34 wide at least and
grows to the longest name (cut only to fit a terminal that is not wide), -collector and
-negotiator have a blank line after their heading and HTCondor's widths, -xml leaves a
blank line after each ad, and -schedd's totals have the line of the schedd's key."""

import os
import sys

import pytest

from conftest import cell_fixture, wait_for
from gridtools.cli.condor import status
from test_condor_status_opts import NOW, slot

LONG = "verylongexecutionhostname-number01.cluster.example.org"
#: a cell of partitionable slots (the live test's)
cell = cell_fixture(slots=2, condor_config="use FEATURE : PartitionableSlot\n")


def shown(*argv, snap):
    return status.render(status.parse_args(list(argv)), snap, NOW)


@pytest.fixture
def host_vm(monkeypatch):
    """The cell's daemon runs on host ``vm``."""
    monkeypatch.setenv("GRIDTOOLS_HOST", "vm")


class _Terminal:
    """A standard output that is a terminal of ``columns`` columns."""

    def __init__(self, columns):
        self.columns = columns

    def isatty(self):
        return True

    def fileno(self):
        return 1


@pytest.fixture
def terminal(monkeypatch):
    def use(columns):
        monkeypatch.setattr(sys, "stdout", _Terminal(columns))
        monkeypatch.setattr(os, "get_terminal_size", lambda fd=1: os.terminal_size((columns, 24)))
    return use


# ---------------------------------------------------------------- LoadAv

LOADS = {"slots": [slot("slot1@vm", "vm", LoadAvg=1.0, CondorLoadAvg=0.0),
                   slot("slot2@vm", "vm", "Claimed", "Busy", LoadAvg=1.0, CondorLoadAvg=0.75,
                        RemoteUser="alice@vm", ClientMachine="vm")]}


def test_loadav_is_the_slots_condor_load_avg_in_every_slot_table():
    """An idle slot of a loaded host shows 0.000 (its CondorLoadAvg), a busy one its
    job's load; -run's summary still averages LoadAvg."""
    rows = shown(snap=LOADS).split("\n")[2:4]
    assert [row.split()[5] for row in rows] == ["0.000", "0.750"]
    run = shown("-run", snap=LOADS).split("\n")
    assert run[2].split()[3] == "0.750"
    assert run[-2].split()[-1] == "1.000"               # (Total ... AvgLoadAvg: LoadAvg)
    assert [row.split()[3] for row in shown("-server", snap=LOADS).split("\n")[2:4]] == ["0.000", "0.750"]
    assert [row.split()[3] for row in shown("-state", snap=LOADS).split("\n")[2:4]] == ["0.000", "0.750"]


def test_a_busy_dynamic_slot_shows_the_load_of_its_job(cell, workdir):
    """A partitionable slot's dynamic slot running a job that keeps a CPU busy: its
    CondorLoadAvg, and so its LoadAv column, is that job's load; the partitionable
    slot left Unclaimed shows none of it."""
    from condortools import submit
    cluster = submit(cell, "executable = /bin/sh\narguments = \"-c 'while :; do :; done'\"\nqueue\n", cwd=workdir)

    def loads():
        lines = cell.run("condor_status").stdout.split("\n")
        return {line.split()[0]: float(line.split()[5]) for line in lines[2:] if line.startswith("slot")}
    try:
        assert wait_for(lambda: loads().get(f"slot1_1@{cell.host}", 0.0) >= 0.2, timeout=60)
        assert loads()[f"slot1@{cell.host}"] == 0.0
    finally:
        cell.run("condor_rm", str(cluster))


# ---------------------------------------------------------------- the Name column

NAMES = {"slots": [slot("slot1@vm", "vm", "Claimed", "Busy"), slot(f"slot1@{LONG}", LONG, "Claimed", "Busy"),
                   slot(f"slot1_1@{LONG}", LONG, "Claimed", "Busy")]}
SHORT = {"slots": [slot("slot1@vm", "vm"), slot("slot2@vm", "vm")]}
#: the longest name of NAMES
WIDTH = len(f"slot1_1@{LONG}")


@pytest.mark.parametrize("args", [(), ("-wide",), ("-run",), ("-server",), ("-state",), ("-wide", "-state")])
def test_name_column_is_34_wide_at_least_and_grows_to_the_longest_name(args):
    """HTCondor's WIDTH -34 FIT Name column: every name whole in a column as wide as the
    longest, short names padded to 34."""
    lines = shown(*args, snap=NAMES).split("\n")
    assert lines[0].startswith("Name".ljust(WIDTH) + " ") and lines[0][WIDTH + 1] != " "
    rows = lines[2:5]
    assert sorted(row[:WIDTH].rstrip() for row in rows) == sorted(s[0]["Name"] for s in NAMES["slots"])
    assert all(row[WIDTH] == " " and row[WIDTH + 1] != " " for row in rows)
    short = shown(*args, snap={"slots": [slot("slot1@vm", "vm", "Claimed", "Busy")]}).split("\n")
    assert short[0].startswith("Name".ljust(34) + " ") and short[0][35] != " "
    assert short[2].startswith("slot1@vm".ljust(34) + " ") and short[2][35] != " "


def test_piped_output_never_cuts_a_name(capsys):
    """Not a terminal, no -wide: HTCondor's is_piped display keeps every name whole."""
    out = shown(snap=NAMES)
    assert f"\nslot1_1@{LONG} LINUX " in out and f"\nslot1@{LONG}   LINUX " in out
    assert "\nslot1@vm" + " " * (WIDTH - 8) + " LINUX " in out


def test_a_terminal_that_is_not_wide_crops_the_name_column(terminal):
    """On a terminal (without -wide) the Name column gives up what the columns after it
    need, 12 wide at least, and the names are cut to it; -wide keeps them whole."""
    terminal(80)
    lines = shown(snap=NAMES).split("\n")
    assert lines[0].startswith("Name".ljust(14) + " OpSys")         # (79 - 65 left for Name)
    assert lines[3].startswith(f"slot1@{LONG}"[:14] + " LINUX")
    assert max(len(line) for line in lines[:6]) <= 79
    assert shown("-state", snap=NAMES).split("\n")[3].startswith(f"slot1@{LONG}"[:12] + " 1 ")
    wide = shown("-wide", snap=NAMES).split("\n")
    assert wide[3].startswith(f"slot1@{LONG}   LINUX")
    terminal(200)
    assert shown(snap=NAMES).split("\n")[4].startswith(f"slot1_1@{LONG} LINUX")
    assert shown(snap=SHORT).split("\n")[2].startswith("slot1@vm".ljust(34) + " LINUX")


# ---------------------------------------------------------------- -collector and -negotiator

NEGOTIATED = {"slots": [slot("slot1@vm", "vm")],
              "negotiator": {"cycle": {"end": NOW - 30, "duration": 2, "slots": 4, "submitters": 1, "jobs": 3,
                                       "matches": 2, "rejections": 1}}}


def test_negotiator_view_has_a_blank_line_after_its_heading_and_name_12_wide(host_vm):
    lines = shown("-negotiator", snap=NEGOTIATED).split("\n")
    assert lines[0] == "Name         LastCycleEnd (Sec)   Slots Submitrs Schedds    Jobs Matches Rejections"
    assert lines[1] == ""
    assert lines[2].startswith("vm".ljust(12) + " ") and lines[2][14] != " "     # (LastCycleEnd: 12, right)
    assert lines[2].split()[3:] == ["2", "4", "1", "1", "3", "2", "1"]
    assert lines[3:] == [""]
    assert shown("-negotiator", "-total", snap=NEGOTIATED) == ""


def test_negotiator_name_grows_and_is_cropped_only_on_a_terminal(monkeypatch, terminal):
    monkeypatch.setenv("GRIDTOOLS_HOST", LONG)
    lines = shown("-negotiator", snap=NEGOTIATED).split("\n")
    assert lines[0].startswith("Name".ljust(len(LONG)) + " LastCycleEnd") and lines[2].startswith(LONG + " ")
    terminal(80)        # (79 less the 63 of the columns after it: 16)
    lines = shown("-negotiator", snap=NEGOTIATED).split("\n")
    assert lines[0].startswith("Name".ljust(16) + " LastCycleEnd") and lines[2].startswith(LONG[:16] + " ")
    assert shown("-negotiator", "-wide", snap=NEGOTIATED).split("\n")[2].startswith(LONG + " ")


def test_collector_view_has_a_blank_line_after_its_heading_and_machine_18_wide(host_vm, terminal):
    lines = shown("-collector", snap=NEGOTIATED).split("\n")
    assert lines == ["Name         Machine            RunningJobs   IdleJobs HostsTotal", "",
                     "My Pool - vm vm                           0          0          1", ""]
    wide = shown("-collector", "-wide", snap=NEGOTIATED).split("\n")
    assert wide[0] == "Name         " + "Machine".ljust(34) + " RunningJobs   IdleJobs HostsTotal"
    assert wide[1] == "" and wide[2].startswith("My Pool - vm " + "vm".ljust(34) + "           0")
    terminal(120)       # (a wider terminal gives Machine a share of the columns beyond 80: 20 more)
    lines = shown("-collector", snap=NEGOTIATED).split("\n")
    assert lines[0] == "Name         " + "Machine".ljust(38) + " RunningJobs   IdleJobs HostsTotal"


def test_collector_machine_longer_than_its_column_overflows_it(monkeypatch):
    monkeypatch.setenv("GRIDTOOLS_HOST", LONG)
    lines = shown("-collector", snap=NEGOTIATED).split("\n")
    assert lines[0].startswith("Name".ljust(len(LONG) + 10) + " Machine            RunningJobs")
    assert lines[2] == f"My Pool - {LONG} {LONG}           0          0          1"


# ---------------------------------------------------------------- -xml and -schedd

def test_xml_leaves_a_blank_line_after_each_ad():
    out = shown("-xml", "-attributes", "Name,Cpus", snap=SHORT)
    assert out == ('<?xml version="1.0"?>\n<!DOCTYPE classads SYSTEM "classads.dtd">\n<classads>\n'
                   '<c>\n    <a n="Cpus"><i>1</i></a>\n    <a n="Name"><s>slot1@vm</s></a>\n</c>\n\n'
                   '<c>\n    <a n="Cpus"><i>1</i></a>\n    <a n="Name"><s>slot2@vm</s></a>\n</c>\n\n'
                   '</classads>\n')
    assert shown("-xml", "-constraint", "false", snap=SHORT).endswith("<classads>\n</classads>\n")


def test_condor_q_xml_keeps_no_blank_line_after_an_ad():
    from gridtools.classad import ClassAd
    from gridtools.cli.condor import adformat
    assert "</c>\n</classads>" in adformat.xml_form([ClassAd({"ClusterId": 1})])


def test_schedd_totals_have_the_line_of_the_schedds_key(host_vm):
    lines = shown("-schedd", snap={}).split("\n")
    assert lines[4:] == ["                TotalRunningJobs      TotalIdleJobs      TotalHeldJobs", "",
                         " " * 14, "         Total                 0                  0                  0", ""]
    assert shown("-schedd", "-total", snap={}).split("\n") == lines[4:]
    wide = shown("-schedd", "-wide", snap={}).split("\n")
    assert wide[4:] == [" " * 5 + "%18s %18s %18s" % ("TotalRunningJobs", "TotalIdleJobs", "TotalHeldJobs"), "",
                        " " * 5, "Total" + "%18d %18d %18d" % (0, 0, 0), ""]
