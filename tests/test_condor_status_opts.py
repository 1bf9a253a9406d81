"""condor_status's display and query options: -state, -server, -limit, -sort, -attributes,
-pool and -direct (as functions of the published slot ads, and against a daemon)."""

import json

import pytest

from gridtools.cli.condor import status
from gridtools.errors import GridError

NOW = 1_700_000_000


def slot(name, machine, state="Unclaimed", activity="Idle", cpus=1, memory=2048, **extra):
    values = {"Name": name, "Machine": machine, "OpSys": "LINUX", "Arch": "X86_64", "State": state,
              "Activity": activity, "Cpus": cpus, "Memory": memory, "LoadAvg": 0.25, "CondorLoadAvg": 0.25,
              "KeyboardIdle": 3725,
              "EnteredCurrentState": NOW - 90066, "EnteredCurrentActivity": NOW - 65, "LastHeardFrom": NOW - 5,
              "Disk": 1000, "Mips": 30000, "KFlops": 2000000}
    values.update(extra)
    return [{k: v for k, v in values.items() if v is not None}, {}]


SNAP = {"slots": [slot("slot1@hosta", "hosta", "Claimed", "Busy", memory=1024),
                  slot("slot2@hosta", "hosta"),
                  slot("slot1@hostb", "hostb", "Owner", "Idle", cpus=2)]}


def shown(*argv, snap=SNAP):
    return status.render(status.parse_args(list(argv)), snap, NOW)


def test_state_table_and_its_summary():
    assert shown("-state").split("\n") == [
        "Name".ljust(34) + " Cpu   Mem LoadAv      KbdIdle State      StateTime Activ   ActvtyTime",
        "",
        "slot1@hosta".ljust(34) + " 1    1024  0.250   0+01:02:05 Claimed   1+01:01:01 Busy    0+00:01:00",
        "slot2@hosta".ljust(34) + " 1    2048  0.250   0+01:02:05 Unclaimed   1+01:01:01 Idle    0+00:01:00",
        "slot1@hostb".ljust(34) + " 2    2048  0.250   0+01:02:05 Owner     1+01:01:01 Idle    0+00:01:00",
        "",
        "               Total Owner Unclaimed Claimed Preempting Matched  Drain Backfill BkIdle",
        "",
        "          Busy     0     0         0       1          0       0      0        0      0",
        "          Idle     0     1         1       0          0       0      0        0      0",
        "",
        "         Total     0     1         1       1          0       0      0        0      0",
        ""]
    assert shown("-stat", "-total").startswith("               Total Owner Unclaimed Claimed")
    assert shown("-state", "-constraint", "false") == ""


def test_state_summary_counts_unknown_states_as_malformed():
    snap = {"slots": [slot("slot1@hosta", "hosta", "Shutdown"), slot("slot2@hosta", "hosta", "Drained", "Retiring")]}
    assert shown("-state", "-total", snap=snap).split("\n")[2:] == [
        "          Idle     0     0         0       0          0       0      0        0      0",
        "      Retiring     0     0         0       0          0       0      1        0      0",
        "",
        "         Total     0     0         0       0          0       0      1        0      0",
        "",
        "              (Omitted 1 malformed ads in computed attribute totals)",
        "", ""]


def test_state_shows_what_a_slot_lacks_as_htcondor_does():
    snap = {"slots": [slot("slot1@hosta", "hosta", KeyboardIdle=None, EnteredCurrentActivity=None,
                           cpus=None)]}
    row = shown("-state", snap=snap).split("\n")[2]
    assert row == "slot1@hosta".ljust(34) + " ??   2048  0.250           ?? Unclaimed   1+01:01:01 Idle             -"


def test_server_table_and_its_summary():
    lines = shown("-server", "hosta").split("\n")
    assert lines[:4] == [
        "Name".ljust(34) + " OpSys      Arch     LoadAv   Memory      Disk    Mips    KFlops",
        "",
        "slot1@hosta".ljust(34) + " LINUX      X86_64    0.250     1024      1000   30000   2000000",
        "slot2@hosta".ljust(34) + " LINUX      X86_64    0.250     2048      1000   30000   2000000"]
    assert lines[4:] == [
        "",
        "                  Slots Avail  Memory        Disk        MIPS      KFLOPS",
        "",
        "  X86_64/LINUX        2     2        3072        2000       60000     4000000",
        "",
        "         Total        2     2        3072        2000       60000     4000000",
        ""]


def test_server_counts_an_ad_without_mips_or_arch_as_malformed():
    snap = {"slots": [slot("slot1@hosta", "hosta", Mips=None), slot("slot2@hosta", "hosta", Arch=None)]}
    assert shown("-server", "-total", snap=snap).endswith(
        "         Total        1     1        2048        1000           0     2000000\n"
        "\n              (Omitted 2 malformed ads in computed attribute totals)\n\n")


def test_limit_and_sort():
    assert shown("-limit", "2", "-af", "Name") == "slot1@hosta\nslot2@hosta\n"
    assert shown("-lim", "0", "-af", "Name").count("\n") == 3
    assert shown("-sort", "Cpus", "-sort", "Memory", "-af", "Name") == "slot1@hosta\nslot2@hosta\nslot1@hostb\n"
    assert shown("-sort", "-Memory", "-af", "Name") == "slot2@hosta\nslot1@hostb\nslot1@hosta\n"
    assert shown("-sort", "State", "-af", "State") == "Claimed\nOwner\nUnclaimed\n"
    assert shown("-sort", "Cpus", "-sort", "no", "-af", "Name") == "slot1@hosta\nslot2@hosta\nslot1@hostb\n"


def test_attributes_select_what_long_json_and_xml_show():
    assert shown("-l", "-attributes", "Name,state") == (
        'Name = "slot1@hosta"\nState = "Claimed"\n\n'
        'Name = "slot2@hosta"\nState = "Unclaimed"\n\n'
        'Name = "slot1@hostb"\nState = "Owner"\n\n')
    assert json.loads(shown("-json", "-attr", "Cpus", "-limit", "1")) == [{"Cpus": 1}]
    assert shown("-xml", "-attributes", "Memory", "hostb").count('<a n="') == 1
    assert shown("-attributes", "Memory", "-af", "Name", "Cpus").startswith("slot1@hosta 1\n")


@pytest.mark.parametrize("argv, message", [
    (["-limit"], "condor_status: -limit requires one additional argument\n"
                 'Use "condor_status -help" for details'),
    (["-sort"], "condor_status: -sort requires another argument\nUse \"condor_status -help\" for details"),
    (["-attributes"], "condor_status: -attributes requires one additional argument\n"
                      'Use "condor_status -help" for details'),
    (["-pool"], "condor_status: -pool requires a hostname as an argument.\n"
                "Extra Info: The hostname should be the central manager of the Condor pool you \n"
                'wish to work with. \nUse "condor_status -help" for details'),
    (["-dir"], 'condor_status: -direct requires another argument\nUse "condor_status -help" for details'),
    (["-sort", "Name =="], "Error:  Parse error of: Name =="),
    (["-format", "%s"], 'condor_status: -format requires two other arguments\nUse "condor_status -help" for details'),
    (["-cons"], 'condor_status: -constraint requires another argument\nUse "condor_status -help" for details'),
    (["-af", "-l"], 'Error: Argument -af requires at least one attribute parameter\n'
                    'Use "condor_status -help" for details')])
def test_option_errors(argv, message):
    with pytest.raises(GridError) as exc:
        status.parse_args(argv)
    assert (str(exc.value), exc.value.exit_code) == (message, 1)


def test_a_pool_without_its_host_prints_blank_lines_on_standard_output(capsys):
    assert status.main(["-pool"]) == 1
    out, err = capsys.readouterr()
    assert out == "\n\n" and err.startswith("condor_status: -pool requires a hostname as an argument.\n")


def test_an_unknown_option_prints_the_usage(capsys):
    assert status.main(["-bogus"]) == 1
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("Error:  Unknown option -bogus\nUsage: condor_status ")
    assert "        -state                  Display state of resources\n" in err


def test_abbreviations_as_htcondor_takes_them():
    assert shown("-x", "-attributes", "Name", "-limit", "1").count('<a n="Name">') == 1
    assert shown("-m", "-af", "MyType").startswith("DaemonMaster\n")
    assert shown("-compact", "-nocompact") == shown()
    assert shown("-expert", "-af", "Name") == shown("-af", "Name")


def test_pool_and_direct_are_accepted_and_the_cells_daemon_answers(pool):
    proc = pool.run("condor_status", "-pool", "cm.example.org", "-direct", "hosta", "-state", "-limit", "1")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.split("\n")
    assert lines[0].split() == ["Name", "Cpu", "Mem", "LoadAv", "KbdIdle", "State", "StateTime", "Activ",
                                "ActvtyTime"]
    assert lines[2].startswith("slot1@hosta ") and lines[3] == ""
    proc = pool.run("condor_status", "-sort", "Name ==")
    assert (proc.returncode, proc.stdout, proc.stderr) == (1, "", "Error:  Parse error of: Name ==\n")
    proc = pool.run("condor_status", "-bogus")
    assert proc.returncode == 1 and proc.stderr.startswith("Error:  Unknown option -bogus\n")


@pytest.fixture
def pool(two_host_pool):
    return two_host_pool


def test_compact_state_and_server_are_htcondors_compact_forms():
    """-compact with -state or -server: a line per machine with the columns of HTCondor's
    StateCompact and ServerCompact print formats, then the summary of -state (per
    Activity) or of -server (per Platform), in either order of the options."""
    state = shown("-state", "-compact").split("\n")
    assert state[0].split() == ["Machine", "Platform", "Slots", "Cpus", "Gpus", "TotalGb", "CpuLoad", "ST",
                                "Jobs/Min"]
    assert state[2].split() == ["hosta", "x64/LINUX", "2S", "2", "3.00", "**", "_"]
    assert state[3].split() == ["hostb", "x64/LINUX", "1S", "2", "2.00", "Oi", "_"]
    assert state[5:] == shown("-state", "-total").split("\n")
    assert shown("-compact", "-state") == shown("-state", "-compact")
    server = shown("-server", "-com").split("\n")
    assert server[0] == ("Machine      Platform    Slots Cpus Gpus  TotalGb  Mips    KFlops   CpuLoad ST "
                         "Jobs/Min")
    assert server[2].split() == ["hosta", "x64/LINUX", "2S", "2", "3.00", "30000", "2000000", "**", "_"]
    assert server[5:] == [
        "                  Slots Avail  Memory        Disk        MIPS      KFLOPS", "",
        "     x64/LINUX        3     2        5120        3000       90000     6000000", "",
        "         Total        3     2        5120        3000       90000     6000000", ""]
    # -total ignores -compact: the summary of -server, keyed by Arch/OpSys, not by Platform
    assert shown("-server", "-compact", "-total") == shown("-server", "-total") != "\n".join(server[5:])


def test_compact_state_rolls_a_partitionable_slot_up():
    """-state -compact counts a partitionable slot by its dynamic slots' states (under
    its own Activity), and its own state too while it has CPUs left, as HTCondor's
    compact totals do; the dynamic slots make no line of their own."""
    snap = {"slots": [slot("slot1@hostp", "hostp", cpus=1, PartitionableSlot=True, TotalSlotCpus=4,
                           NumDynamicSlots=2, ChildState=["Claimed", "Claimed"], ChildActivity=["Busy", "Busy"]),
                      slot("slot1_1@hostp", "hostp", "Claimed", "Busy", DynamicSlot=True,
                           ParentSlotName="slot1@hostp"),
                      slot("slot1_2@hostp", "hostp", "Claimed", "Busy", DynamicSlot=True,
                           ParentSlotName="slot1@hostp")]}
    out = shown("-state", "-compact", snap=snap).split("\n")
    assert out[2].split()[:4] == ["hostp", "x64/LINUX", "2", "4"]
    assert out[4:] == [
        "               Total Owner Unclaimed Claimed Preempting Matched  Drain Backfill BkIdle", "",
        "          Idle     0     0         1       2          0       0      0        0      0", "",
        "         Total     0     0         1       2          0       0      0        0      0", ""]
    snap["slots"][0][0]["Cpus"] = 0             # used up: only its dynamic slots count
    assert shown("-state", "-compact", snap=snap).split("\n")[6].split()[1:5] == ["0", "0", "0", "2"]
    # -total ignores -compact: no rolling up, the partitionable slot counts as itself
    assert shown("-state", "-compact", "-total", snap=snap).split("\n")[2].split()[1:5] == ["0", "0", "1", "0"]


def test_total_ignores_compact_but_keeps_its_query():
    """-compact with -total: HTCondor ignores -compact (it warns of it, see
    test_condor_status), and prints what -total prints, of the slots -compact's query
    selects: no dynamic slot, and with -run the claimed static slots and the
    partitionable slots that have dynamic ones."""
    assert status.parse_args(["-compact", "-total"]).compact_ignored
    assert not status.parse_args(["-total", "-compact", "-nocompact"]).compact_ignored
    assert not status.parse_args(["-compact"]).compact_ignored
    for args in ((), ("-avail",), ("-state",), ("-server",), ("-af", "Name")):
        assert shown("-compact", "-total", *args) == shown("-total", *args), args
    snap = {"slots": [slot("slot1@hostp", "hostp", cpus=1, PartitionableSlot=True, NumDynamicSlots=2),
                      slot("slot1_1@hostp", "hostp", "Claimed", "Busy", DynamicSlot=True,
                           ParentSlotName="slot1@hostp"),
                      slot("slot1_2@hostp", "hostp", "Claimed", "Busy", DynamicSlot=True,
                           ParentSlotName="slot1@hostp"),
                      slot("slot1@hosts", "hosts", "Claimed", "Busy")]}
    counts = shown("-compact", "-total", snap=snap).split("\n")
    assert counts[0].split()[:4] == ["Total", "Owner", "Claimed", "Unclaimed"]
    assert counts[4].split()[:4] == ["Total", "2", "0", "1"]      # (the static slot claimed)
    assert shown("-total", snap=snap).split("\n")[4].split()[:4] == ["Total", "4", "0", "3"]
    assert shown("-compact", "-total", "-af", "Name", snap=snap) == "slot1@hostp\nslot1@hosts\n"
    assert shown("-compact", "-run", "-total", "-af", "Name", snap=snap) == "slot1@hostp\nslot1@hosts\n"
    assert shown("-run", "-total", "-af", "Name", snap=snap) == "slot1_1@hostp\nslot1_2@hostp\nslot1@hosts\n"


def test_wide_cuts_the_table_as_htcondor_fits_it_to_a_display(monkeypatch):
    """-wide:N cuts the heading and rows to N-1 characters (not the summary); -wide (or
    -wide:N over 100) is HTCondor's wide display: the slot table ends in ActivityTime
    after a blank and the summary's key column fits its keys; -wide:0 is as without."""
    plain = shown().split("\n")
    assert plain[0].endswith(" Mem     ActvtyTime") and plain[8].startswith("  X86_64/LINUX")
    cut = shown("-wide:40").split("\n")
    # (the Name column, 34 wide, fitted first: 12 wide at least once it is cropped, see below)
    assert cut[:6] == [(line[:12] + line[34:])[:39] if line else line for line in plain[:6]]
    assert max(len(line) for line in cut[:6]) == 39
    assert cut[6:] == plain[6:]
    wide = shown("-wide").split("\n")
    assert wide[0].endswith(" Mem    ActivityTime")
    assert wide[2].endswith(" 1024   0+00:01:05")
    assert wide[:6] != plain[:6] and wide[6:] == [line[2:] for line in plain[6:]]   # (the widest key)
    assert shown("-wide:101") == shown("-wid")
    assert shown("-wide:100") == shown("-wide:0") == shown()
    assert shown("-server", "-wide:20").split("\n")[0] == "Name         OpSys "
    assert shown("-total", "-wide:20") == shown("-total")
    monkeypatch.setattr(status, "_fit", lambda text, width: text)       # (without the cut)
    widened = [line[:12] + line[34:] if line else line for line in plain[:6]]
    assert shown("-wide:40") == "\n".join(widened + plain[6:])


def test_a_display_that_is_not_wide_crops_the_name_column_first():
    """On a terminal, or -wide:N up to 100, HTCondor fits the Name column before it cuts
    the lines: what the columns after it leave (65 for the slot table, 63 for -run's,
    70 for -state's), 12 at least."""
    snap = {"slots": [slot("slot1@" + "h" * 30, "h" * 30), slot("slot2@" + "h" * 30, "h" * 30)]}
    full = shown(snap=snap).split("\n")
    assert full[2].startswith("slot1@" + "h" * 30 + " LINUX")              # (never cut when piped)
    fitted = shown("-wide:80", snap=snap).split("\n")
    assert fitted[0].startswith("Name           OpSys") and fitted[2].startswith("slot1@hhhhhhhh LINUX")
    assert len(fitted[2]) <= 79 and fitted[2].endswith("0+00:01:05")
    assert shown("-state", "-wide:80", snap=snap).split("\n")[2].startswith("slot1@hhhhhh 1 ")
    assert shown("-wide:101", snap=snap).split("\n")[2].startswith("slot1@" + "h" * 30 + " LINUX")


def test_absent_offline_and_cod_show_only_such_machines_and_debug_changes_nothing():
    """HTCondor's -absent, -offline and -cod show only machines absent from the collector,
    offline, or running computing-on-demand claims; -debug (any -debug:flags) only traces
    on standard error."""
    snap = {"slots": SNAP["slots"] + [slot("slot1@gone", "gone", Absent=True), slot("slot9@hostc", "hostc", NumCODClaims=1),
                                      slot("slot1@off", "off", Offline=True)]}
    for option, name in (("-absent", "slot1@gone"), ("-ab", "slot1@gone"), ("-offline", "slot1@off"),
                         ("-cod", "slot9@hostc")):
        assert shown(option, "-af", "Name", snap=snap) == name + "\n", option
    assert shown("-absent", "-af", "Name") == ""
    assert shown("-debug") == shown() and shown("-debug:D_FULLDEBUG", "-af", "Name") == shown("-af", "Name")
