"""condor_userprio as HTCondor 24.0's: the Submitter Floor and Ceiling columns and their
edits, the footer's activity cut-off, -setaccum and -setprio limits, -getreslist,
-inputfile, -name/-pool, the display options, and the usage on stderr."""

import os
import re
import time

import pytest

from conftest import cell_fixture, wait_for
from gridtools.accounting.userprio import Accountant, Settings
from gridtools.cli.condor import userprio_table
from gridtools.cli.condor.userprio import USAGE


cell = cell_fixture(scope="module", condor_config="UID_DOMAIN = example.org\n")


def userprio(cell, *args, code=0):
    proc = cell.run("condor_userprio", *args)
    assert proc.returncode == code, proc.stderr + proc.stdout
    return proc


def _row(text, name):
    return next(ln for ln in text.splitlines() if ln.startswith(name))


def test_floor_and_ceiling_are_set_and_shown(cell):
    assert userprio(cell, "-setfloor", "gtcarol@example.org", "3").stdout == \
        "The floor of gtcarol@example.org was set to 3\n"
    assert userprio(cell, "-setceiling", "gtcarol@example.org", "5").stdout == \
        "The ceiling of gtcarol@example.org was set to 5\n"
    assert userprio(cell, "-setceiling", "gtcarol@example.org", "-2", code=1).stderr == \
        "ceiling must be greater than or equal to -1.\n"
    assert userprio(cell, "-setfloor", "gtcarol@example.org", "-1", code=1).stderr == \
        "floor must be greater than or equal to 0.\n"
    proc = userprio(cell, "-setfloor", "gtcarol", "3", code=1)
    assert proc.stderr == ("condor_userprio: You must specify the full name of the submittor you wish\n"
                           "\tto update the floor of (user@uid.domain or user@full.host.name) (not gtcarol)\n")
    userprio(cell, "-setfactor", "gtdave@example.org", "1")         # no floor, no ceiling
    for args in ((), ("-all",)):
        lines = userprio(cell, "-allusers", *args).stdout.splitlines()
        assert lines[1].endswith(" Submitter Submitter") and lines[2].endswith("   Floor    Ceiling")
        assert lines[3].endswith(" --------- ---------")
        assert _row("\n".join(lines), "gtcarol@example.org").endswith("      3.00      5.00")
        dave = _row("\n".join(lines), "gtdave@example.org")
        assert len(dave) < len(lines[3]) - 19            # blank cells (the line is cut after its last value)
    attrs = dict(ln.split(" = ", 1) for ln in userprio(cell, "-l", "-allusers").stdout.splitlines()
                 if ln and "gtcarol" not in ln)
    assert "Floor" in attrs and "Ceiling" in attrs
    out = userprio(cell, "-allusers", "-af", "Name", "Floor", "Ceiling").stdout
    assert "gtcarol@example.org 3 5\n" in out and "gtdave@example.org 0 -1\n" in out
    assert userprio(cell, "-setceiling", "gtcarol@example.org", "-1").stdout == \
        "The ceiling of gtcarol@example.org was set to -1\n"
    assert _row(userprio(cell, "-allusers").stdout, "gtcarol@example.org").endswith("      3.00")


def test_setaccum_refuses_negative_usage_and_setprio_sends_any_value(cell):
    proc = userprio(cell, "-setaccum", "gterin@example.org", "-5", code=1)
    assert (proc.stdout, proc.stderr) == ("", "Usage must be greater than 0 seconds\n")
    assert userprio(cell, "-setprio", "gterin@example.org", "-1").stdout == \
        "The priority of gterin@example.org was set to -1.000000\n"
    # the negotiator counts a priority under the best one (0.5) as the best
    row = _row(userprio(cell, "-allusers", "-priority").stdout, "gterin@example.org")
    assert row.split()[1:4] == ["0.50", "0.50", "1.00"]


def test_the_footer_shows_the_age_of_the_activity_cutoff(cell):
    userprio(cell, "-setlast", "gtfred@example.org", str(int(time.time()) - 3600))
    footer = userprio(cell).stdout.splitlines()[-1]
    assert re.search(r" (1\+00:00|0\+23:5\d)$", footer), footer
    for args in (("-allusers",), ("gtfred",)):
        footer = userprio(cell, *args).stdout.splitlines()[-1]
        assert re.fullmatch(r"Number of users: \d+ +0 +\d+\.\d\d", footer), footer
    # -activefrom: users active since the date, and its age in the footer
    out = userprio(cell, "-activefrom", "1", "1", "2000").stdout
    assert "gtfred@example.org" in out and "gtcarol@example.org" not in out
    assert re.search(r" +\d{4,}\+\d\d:\d\d$", out.splitlines()[-1])


def test_an_unknown_option_and_help_print_only_the_usage(cell):
    for args in (("-nosuchoption",), ("-help",), ("-activefactor", "2")):
        proc = userprio(cell, *args, code=1)
        assert proc.stdout == "" and proc.stderr == USAGE.format(prog="condor_userprio"), args
    assert "\t-setfloor <user> <val>\tSet floor for <user>\n" in USAGE


@pytest.mark.parametrize("args", [
    ("-grouporder",), ("-grouprollup",), ("-hierarchical",), ("-flat",), ("-legacy", "-l"),
    ("-modular", "-l"), ("-negotiator",), ("-collector",), ("-quotas",), ("-surplus",),
    ("-sortkey",), ("-groupid",), ("-order",), ("-activefrom", "1", "1", "2026"), ("-debug",),
    ("-debug:D_FULLDEBUG",)])
def test_htcondor_display_options_are_accepted(cell, args):
    proc = userprio(cell, "-allusers", *args)
    assert proc.stderr == ""
    if "-l" not in args:
        assert proc.stdout.startswith("Last Priority Update: ")


def test_display_options_change_the_table(cell):
    userprio(cell, "-setfloor", "gtcarol@example.org", "3")         # (a submitter to list)
    lines = userprio(cell, "-allusers", "-groupid", "-order", "-sortkey").stdout.splitlines()
    assert lines[1].split() == ["Group", "Group", "Group"] and lines[2].split() == ["User", "Name", "Id",
                                                                                    "Order", "Sort", "Key"]
    lines = userprio(cell, "-allusers", "-quotas").stdout.splitlines()
    assert lines[1].split() == ["Effective", "Config", "Use", "Subtree", "Weighted"]
    assert lines[2].split()[:2] == ["Group", "Name"]
    legacy = userprio(cell, "-allusers", "-l", "-legacy").stdout
    assert re.search(r"^Name1 = \"", legacy, re.M) and re.search(r"^NumSubmittors = \d+$", legacy, re.M)
    assert "\n\n" not in legacy.rstrip("\n")
    modular = userprio(cell, "-allusers", "-l", "-modular").stdout
    assert modular.startswith("\nAccountingGroup = ") and 'Name = "gtcarol@example.org"' in modular


def test_name_and_pool_must_be_this_cell(cell):
    assert userprio(cell, "-name", "localhost").returncode == 0
    assert userprio(cell, "-pool", "localhost:9618").returncode == 0
    proc = userprio(cell, "-name", "nosuchnegotiator", code=1)
    assert proc.stderr == "condor_userprio: Can't locate negotiator in local pool\n"
    proc = userprio(cell, "-pool", "nosuchpool.example", "-setfactor", "gtbob@example.org", "2", code=1)
    assert proc.stderr == "condor_userprio: Can't locate negotiator in nosuchpool.example\n"


def test_inputfile_reads_a_saved_long_output(cell, tmp_path):
    userprio(cell, "-setfloor", "gtcarol@example.org", "3")
    for form in ((), ("-legacy",)):
        saved = tmp_path / "prios"
        saved.write_text(userprio(cell, "-allusers", "-l", *form).stdout)
        os.chmod(tmp_path, 0o755)
        os.chmod(saved, 0o644)
        out = userprio(cell, "-inputfile", str(saved), "-allusers").stdout
        assert _row(out, "gtcarol@example.org").endswith("      3.00"), out
        assert out.splitlines()[1].endswith(" Submitter Submitter")
        assert userprio(cell, "-inputfile", str(saved), "-af", "Name", "Floor").stdout.count("gtcarol") == 1
    proc = userprio(cell, "-inputfile", str(tmp_path / "nope"), code=1)
    assert proc.stderr == f"Can't open file of userprio ads: {tmp_path / 'nope'}\n"


def test_getreslist_lists_the_slots_a_submitter_holds(cell):
    proc = userprio(cell, "-getreslist", "root", code=1)
    assert proc.stderr.startswith("condor_userprio: You must specify the full name of the submittor")
    empty = userprio(cell, "-getreslist", "gtnobody@example.org").stdout
    assert empty == ("Resource Name                    Start Time   Match Time\n"
                     "-------------                    ----------   ----------\n"
                     "-------------                   ------------  ------------\n"
                     "Number of Resources Used: 0\n")
    cell.qsub("-b", "y", "sleep", "60", check=True)

    def held():
        out = userprio(cell, "-getreslist", "root@example.org").stdout
        return out if out.endswith("Number of Resources Used: 1\n") else None
    out = wait_for(held, timeout=20)
    line = out.splitlines()[2]
    assert re.fullmatch(r"slot\d+@\S+ +[ \d]\d/[\d ]{2} \d\d:\d\d +0\+00:0\d:\d\d", line), line
    assert len(line) == 30 + 1 + 12 + 1 + 12
    long_form = userprio(cell, "-getreslist", "root@example.org", "-l").stdout
    assert re.search(r'^Name1 = "slot\d+@', long_form, re.M) and re.search(r"^StartTime1 = \d+$", long_form, re.M)


# ---------------------------------------------------------------- the table, pure

def test_floor_ceiling_and_cutoff_in_a_rendered_table():
    acc = Accountant(Settings())
    acc.update(1.7e9, {"alice": 2, "bob": 1})
    acc.set_floor("alice", 4)
    acc.set_ceiling("bob", 0)
    acc.update(1.7e9 + 3600, {"alice": 2, "bob": 1})
    now = acc.last_update
    view = userprio_table.View(cutoff=now - 86400)
    lines = userprio_table.render(acc.rows(now), acc, "x.org", now, (), view).splitlines()
    assert lines[1].split()[-2:] == ["Submitter", "Submitter"]
    assert lines[2].split()[-2:] == ["Floor", "Ceiling"]
    assert _row("\n".join(lines), "alice@x.org").endswith("<now>      4.00")
    assert _row("\n".join(lines), "bob@x.org").endswith("<now>                0.00")
    assert lines[-1].endswith("  1+00:00")
    blank = userprio_table.render(acc.rows(now), acc, "x.org", now, (), userprio_table.View())
    assert blank.splitlines()[-1].endswith("3.00")
