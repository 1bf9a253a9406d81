"""condor_status's views of daemons and GPUs (-startd, -any, -gpus) as functions of the
published slot ads, and against a daemon."""

import pytest

from conftest import wait_for
from gridtools.cli.condor import status
from test_condor_status_opts import NOW, slot


def shown(*argv, snap):
    return status.render(status.parse_args(list(argv)), snap, NOW)


def host(name, states, gpus=None):
    """The slot ads of a host, one per state (Claimed ones run alice's job); ``gpus``:
    the GPUs of each slot, named in AssignedGPUs as the daemon names them."""
    ads = []
    for i, state in enumerate(states):
        extra = {"MyType": "Machine", "TargetType": "Job", "TotalCpus": len(states),
                 "TotalMemory": 2048 * len(states), "TotalSlots": len(states)}
        if gpus:
            extra.update(GPUs=gpus[i], TotalGPUs=sum(gpus))
            if gpus[i]:
                extra["AssignedGPUs"] = ",".join(f"CUDA{n}" for n in range(sum(gpus[:i]), sum(gpus[:i + 1])))
        if state == "Claimed":
            extra["RemoteUser"] = f"alice@{name}"
        ads.append(slot(f"slot{i + 1}@{name}", name, state, "Busy" if state == "Claimed" else "Idle", **extra))
    return ads


SNAP = {"slots": host("node10", ("Claimed", "Unclaimed")) + host("node9", ("Unclaimed",)), "started": NOW - 3700}


def test_startd_shows_a_startd_ad_per_host_and_its_summary():
    assert shown("-startd", snap=SNAP).split("\n") == [
        "Name   Platform  Version Cpus   Memory   GPUs     Uptime    ",
        "",
        "node9  x64/LINUX 24.0.0     1     2.0 GB          0+01:01:40",
        "node10 x64/LINUX 24.0.0     2     4.0 GB          0+01:01:40",
        "",
        "              Machines    Slots     Cpus BusyCpus   BkCpus     GPUs BusyGPUs   BkGPUs  Memory%   BkMem%",
        "",
        "     x64/LINUX       2        3        3        1        0        0        0        0   25.00%    0.00%",
        "",
        "         Total       2        3        3        1        0        0        0        0   25.00%    0.00%",
        ""]
    assert shown("-startd", "-af", "MyType", "Name", "TotalInUseCpus", "TotalInUseMemory", snap=SNAP) == \
        "StartD node9 0 0\nStartD node10 1 2048\n"
    assert 'MyType = "StartD"\n' in shown("-star", "-l", "node9", snap=SNAP)
    assert shown("-startd", "-total", snap=SNAP).startswith("              Machines    Slots")
    assert shown("-startd", "-constraint", "DetectedCpus > 4", snap=SNAP) == ""


def test_any_lists_every_ad_by_machine_and_name():
    from gridtools import cell
    lines = shown("-any", snap=SNAP).split("\n")
    here = cell.hostname()
    assert lines[:2] == ["MyType             TargetType         Name" + " " * 37, ""]
    assert [line.rstrip() for line in lines[2:]] == [
        "StartD             None               node9",
        "DaemonMaster       None               node9",
        "Machine            Job                slot1@node9",
        "StartD             None               node10",
        "DaemonMaster       None               node10",
        "Machine            Job                slot1@node10",
        "Machine            Job                slot2@node10",
        "Collector          None               My Pool - " + here,
        "Scheduler          None               " + here,
        "DaemonMaster       None               " + here,
        "Negotiator         None               " + here, ""]
    assert all(len(line) == 79 for line in lines[2:13])          # Name: 41 wide, left-aligned
    assert shown("-an", "-af", "MyType", "-constraint", 'Machine == "node9"', snap=SNAP) == \
        "StartD\nDaemonMaster\nMachine\n"
    assert shown("-any", "-total", snap=SNAP) == ""


def test_startd_and_any_against_a_daemon(cell):
    out = cell.run("condor_status", "-any", check=True).stdout
    kinds = [line.split()[0] for line in out.splitlines()[2:]]
    assert sorted(set(kinds)) == ["Collector", "DaemonMaster", "Machine", "Negotiator", "Scheduler", "StartD"]
    out = cell.run("condor_status", "-startd", check=True).stdout.splitlines()
    assert out[0].split() == ["Name", "Platform", "Version", "Cpus", "Memory", "GPUs", "Uptime"]
    assert out[2].split()[:2] == ["testhost", "x64/LINUX"]
    assert out[4].split()[:10] == ["Machines", "Slots", "Cpus", "BusyCpus", "BkCpus", "GPUs", "BusyGPUs",
                                   "BkGPUs", "Memory%", "BkMem%"]


GPU_SNAP = {"slots": host("gpu1", ("Claimed", "Unclaimed", "Unclaimed"), gpus=[2, 1, 0])
            + host("node9", ("Unclaimed",)), "started": NOW - 3700}


def test_gpus_lists_the_slots_with_gpus_and_the_state_summary():
    assert shown("-gpus", snap=GPU_SNAP).split("\n") == [
        "Name       ST User       GPUs GPU-Memory GPU-Name",
        "",
        "slot1@gpu1 Cb alice@gpu1    2            *       ",
        "slot2@gpu1 Ui _             1            *       ",
        "",
        "               Total Owner Unclaimed Claimed Preempting Matched  Drain Backfill BkIdle",
        "",
        "          Busy     0     0         0       1          0       0      0        0      0",
        "          Idle     0     0         1       0          0       0      0        0      0",
        "",
        "         Total     0     0         1       1          0       0      0        0      0",
        ""]
    assert shown("-gpu", "-af", "Name", "GPUs", snap=GPU_SNAP) == "slot1@gpu1 2\nslot2@gpu1 1\n"
    assert shown("-gpus", "-total", snap=GPU_SNAP).startswith("               Total Owner Unclaimed")
    assert shown("-gpus", snap=SNAP) == "" and shown("-gpus", "-total", snap=SNAP) == ""


def test_gpus_shows_the_slots_holding_gpus_and_their_properties():
    """HTCondor's test, (PartitionableSlot && AssignedGPUs isnt undefined) ?: Gpus: a
    partitionable slot whose GPUs all went to dynamic slots is left out, one that holds
    some is shown; the devices' memory and name are the slot's GPUs_GlobalMemoryMb and
    GPUs_DeviceName when it has them (STARTD_ATTRS)."""
    def part(name, gpus, **extra):
        return slot(name, "p", MyType="Machine", TargetType="Job", PartitionableSlot=True, GPUs=gpus,
                    TotalGPUs=2, **extra)
    slots = host("gpu1", ("Claimed", "Unclaimed"), gpus=[1, 1])
    slots[0][0].update(GPUs_DeviceName="Tesla T4", GPUs_GlobalMemoryMb=15360)
    snap = {"slots": slots + [part("slot1@p", 0), part("slot2@p", 1, AssignedGPUs="CUDA1")]}
    assert shown("-gpus", snap=snap).split("\n")[:6] == [
        "Name       ST User       GPUs GPU-Memory GPU-Name",
        "",
        "slot1@gpu1 Cb alice@gpu1    1 15.0 GB    Tesla T4",
        "slot2@gpu1 Ui _             1            *       ",
        "slot2@p    Ui _             1            *       ",
        ""]


def test_gpus_with_startd_lists_the_hosts_with_gpus():
    assert shown("-startd", "-gpus", snap=GPU_SNAP).split("\n")[:4] == [
        "Name Cores   Memory   GPUs GPU-Memory GPU-Name Offline-GPUs",
        "",
        "gpu1 3         6.0 GB    3                                 ",
        ""]
    assert shown("-gpus", "-startd", "-af", "Name", "DetectedGPUs", snap=GPU_SNAP) == "gpu1 CUDA0, CUDA1, CUDA2\n"
    assert shown("-startd", "-gpus", snap=SNAP) == ""


def test_gpus_against_a_daemon(cell):
    assert cell.run("condor_status", "-gpus", check=True).stdout == ""
    cell.run("qconf", "-mattr", "exechost", "complex_values", "gpu=2", "testhost", check=True)
    wait_for(lambda: "slot1@testhost" in cell.run("condor_status", "-gpus").stdout)
    out = cell.run("condor_status", "-gpus").stdout.splitlines()
    assert out[0].split() == ["Name", "ST", "User", "GPUs", "GPU-Memory", "GPU-Name"]
    assert [line.split()[:2] for line in out[2:4]] == [["slot1@testhost", "Ui"], ["slot2@testhost", "Ui"]]
    assert cell.run("condor_status", "-gpus", "-af", "Name", "AssignedGPUs").stdout.splitlines()[:2] == [
        "slot1@testhost CUDA0", "slot2@testhost CUDA1"]


# ---------------------------------------------------------------- HTCondor's column widths

def test_slot_table_has_htcondors_arch_and_mem_widths():
    lines = shown(snap=SNAP).split("\n")
    assert lines[0] == "Name".ljust(34) + " OpSys      Arch     State     Activity LoadAv Mem     ActvtyTime"
    assert lines[2] == "slot1@node10".ljust(34) + " LINUX      X86_64   Claimed   Busy      0.250   2048  0+00:01:05"
    run = shown("-run", snap=SNAP).split("\n")
    assert run[0] == "Name".ljust(34) + " OpSys      Arch     LoadAv RemoteUser           ClientMachine"


def test_compact_headings_are_left_aligned_as_htcondor_prints_them():
    lines = shown("-compact", snap=SNAP).split("\n")
    assert lines[0] == ("Machine      Platform    Slots Cpus Gpus  TotalGb FreCpu  FreeGb  CpuLoad ST "
                        "Jobs/Min MaxSlotGb")
    assert lines[2].startswith("node10       x64/LINUX      2S    2          4.00      1     2.00")


def test_submitters_and_schedd_fit_name_and_machine_to_the_display():
    from gridtools.classad import ClassAd
    from gridtools.cli.condor import machineviews as views
    ads = [ClassAd({"Name": "group_physics.alice@" + "d" * 20, "Machine": "submit." + "m" * 20,
                    "RunningJobs": 1, "IdleJobs": 2, "HeldJobs": 0}),
           ClassAd({"Name": "bob@x", "Machine": "s", "RunningJobs": 0, "IdleJobs": 0, "HeldJobs": 0})]
    whole = views.table("submitters", ads, NOW).split("\n")
    assert whole[0] == "Name" + " " * 37 + "Machine" + " " * 21 + "RunningJobs   IdleJobs   HeldJobs"
    # 79 columns: Machine gives up half the excess, Name the rest, and the values are cut
    fitted = views.table("submitters", ads, NOW, fit=79).split("\n")
    assert fitted[0] == "Name" + " " * 25 + "Machine" + " " * 10 + "RunningJobs   IdleJobs   HeldJobs"
    assert fitted[2] == "group_physics.alice@dddddddd submit.mmmmmmmmm           1          2          0"
    assert fitted[3] == "bob@x                        s                          0          0          0"
    narrow = views.table("schedd", ads[:1], NOW, fit=40).split("\n")
    assert narrow[0] == "Name         Machine RunningJobs   IdleJobs   HeldJobs"
    small = [ClassAd({"Name": "a", "Machine": "b", "TotalRunningJobs": 1})]
    assert views.table("schedd", small, NOW).split("\n")[:3] == [
        "Name            Machine      RunningJobs   IdleJobs   HeldJobs", "",
        "a               b                      1          0          0"]
    assert shown("-schedd", "-wide:60", snap=SNAP).split("\n")[0].startswith("Name")


@pytest.mark.parametrize("argv, line", [
    (["-avail", "-gpus"], "Error:  Arg 2 (-gpus) contradicts arg 1 (-avail)"),
    (["-gpus", "-avail"], "Error:  Arg 2 (-avail) contradicts arg 1 (-gpus)"),
    (["-af", "Name", "-schedd", "-master"], "Error:  Arg 4 (-master) contradicts arg 3 (-schedd)"),
    # the same mode spelt another way contradicts it too, as in HTCondor
    (["-avail", "-av"], "Error:  Arg 2 (-av) contradicts arg 1 (-avail)"),
    (["-startd", "-submitters"], "Error:  Arg 2 (-submitters) contradicts arg 1 (-startd)"),
])
def test_contradicting_modes_are_refused(capsys, argv, line):
    assert status.main(argv) == 1
    assert capsys.readouterr() == ("", line + "\n")


def test_kindred_modes_and_styles(capsys):
    # -gpus and -startd make the GPUs of the startds in either order; a mode given again
    for argv in (["-gpus", "-startd"], ["-startd", "-gpus"], ["-avail", "-avail"], ["-claimed", "-schedd"]):
        status.parse_args(argv)
    assert capsys.readouterr() == ("", "")
    # a display style below the one set before is reported and left out
    opts = status.parse_args(["-state", "-server"])
    assert (opts.style, capsys.readouterr()) == ("state", ("", "Error:  arg 2 (-server) contradicts arg 1 (-state)\n"))
    opts = status.parse_args(["-server", "-state", "-af", "Name", "-state"])
    assert (opts.style, capsys.readouterr()) == ("state", ("", ""))


def _gpu_prop_snap():
    """gpu1's three static slots with a GPU each and its property ads (two slot types),
    and node9 without GPUs."""
    slots = host("gpu1", ("Claimed", "Unclaimed", "Unclaimed"), gpus=[1, 1, 1]) + host("node9", ("Unclaimed",))
    props = [(7.5, 16384, "Tesla T4"), (7.5, 16384, "Tesla T4"), (8.0, 24576, "NVIDIA A10-24GB")]
    for n, (values, exprs) in enumerate(slots[:3]):
        cap, mem, name = props[n]
        exprs["AvailableGPUs"] = (f'{{ [Id = "CUDA{n}"; Capability = {cap}; GlobalMemoryMB = {mem}; '
                                  f'DeviceName = "{name}"] }}')
        values.update(SlotTypeId=1 if n < 2 else 2, SlotType="Static", OpSysAndVer="AlmaLinux9")
    return {"slots": slots, "started": NOW - 3700}


def test_gpus_compact_rolls_up_the_slots_with_gpu_properties_by_machine_and_slot_type():
    from gridtools.cli.condor import printas
    try:
        snap = _gpu_prop_snap()
        assert shown("-gpus", "-compact", snap=snap).split("\n") == [
            "Machine Platform       Slots FreGPU TotGPUs Capability GPUsMemory DeviceNames    ",
            "",
            "gpu1    x64/AlmaLinux9    2S      1       1 7.5        16.0 GB    Tesla T4       ",
            "   slot3 x64/AlmaLinux9    1S      1       1 8.0        24.0 GB    NVIDIA A10-24GB",
            "",
            "                                  Total Owner Unclaimed Claimed Preempting Matched  Drain"
            " Backfill BkIdle",
            "",
            "Capability 7.5, 16.0 GB, Tesla T4     0     0         1       1          0       0      0"
            "        0      0",
            "     Capability 8.0, 24.0 GB, A10     0     0         1       0          0       0      0"
            "        0      0",
            "",
            "                            Total     0     0         2       1          0       0      0"
            "        0      0",
            ""]
        # the slots it shows, in every output form; none without GPU property ads
        assert shown("-gpus", "-compact", "-af", "Name", snap=snap) == "slot1@gpu1\nslot2@gpu1\nslot3@gpu1\n"
        assert shown("-gpus", "-compact", snap=GPU_SNAP) == ""
        # -total ignores -compact: -gpus's summary (by Activity) of the slots it shows
        total = shown("-gpus", "-compact", "-total", snap=snap)
        assert total == shown("-gpus", "-total", snap=snap) and "Capability" not in total
        assert total.split("\n")[2].split() == ["Busy", "0", "0", "0", "1", "0", "0", "0", "0", "0"]
    finally:
        printas.GPU_INFO.update(props=None, offline=set())


def test_compact_refuses_the_modes_that_are_not_of_slots(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("GRIDTOOLS_ROOT", str(tmp_path / "root"))
    for argv, err in ((["-startd", "-compact"], "Error:  arg (-compact) contradicts arg 1 (-startd) remove -startd "
                                                "from command or use -slot instead\n"),
                      (["-compact", "-any"], "Error:  arg (-compact) contradicts arg 2 (-any) \n"),
                      (["-gpus", "-startd", "-compact"], "Error:  arg (-compact) contradicts arg 2 (-startd) remove "
                                                         "-startd from command or use -slot instead\n"),
                      (["-schedd", "-long", "-compact"], "Error:  arg (-compact) contradicts arg 2 (-long) \n")):
        assert status.main(argv) == 1
        assert capsys.readouterr() == ("", err)


def test_print_format_gpu_functions_know_the_gpus_with_gpus_only(tmp_path):
    from gridtools.cli.condor import printas
    path = tmp_path / "g.cpf"
    path.write_text("SELECT NOHEADER\nName\nAssignedGPUs PRINTAS GPUS_NAMES OR -\n")
    try:
        snap = _gpu_prop_snap()
        def rows(*argv):
            return [line.rstrip() for line in shown("-pr", str(path), *argv, snap=snap).split("\n")[:3]]
        assert rows("-constraint", "GPUs > 0") == \
            ["slot1@gpu1 -", "slot2@gpu1 -", "slot3@gpu1 -"]
        assert rows("-gpus") == \
            ["slot1@gpu1 Tesla T4", "slot2@gpu1 Tesla T4", "slot3@gpu1 NVIDIA A10-24GB"]
    finally:
        printas.GPU_INFO.update(props=None, offline=set())


def test_collector_and_negotiator_against_a_daemon(cell, workdir):
    """HTCondor's tables of -collector and -negotiator, of the cell's daemon: its jobs and
    slots, its last pass's figures."""
    from condortools import submit, wait_status
    cluster = submit(cell, "executable = /bin/sleep\narguments = 60\nqueue\n", cwd=workdir)
    held = submit(cell, "executable = /bin/true\nhold = true\nqueue\n", cwd=workdir, name="h.sub")
    wait_status(cell, f"{cluster}.0", 2)
    out = cell.run("condor_status", "-collector", check=True).stdout.splitlines()
    assert out[0].split() == ["Name", "Machine", "RunningJobs", "IdleJobs", "HostsTotal"] and out[1] == ""
    slots = len(cell.run("condor_status", "-af", "Name").stdout.split())
    assert out[2].split() == ["My", "Pool", "-", cell.host, cell.host, "1", "0", str(slots)]
    out = cell.run("condor_status", "-negotiator", check=True).stdout.splitlines()
    assert out[0].split() == ["Name", "LastCycleEnd", "(Sec)", "Slots", "Submitrs", "Schedds", "Jobs", "Matches",
                              "Rejections"]
    assert out[1] == "" and out[2].split()[0] == cell.host and out[2].split()[5] == "1"      # one schedd
    ad = cell.run("condor_status", "-negotiator", "-af", "MyType", "LastNegotiationCycleNumSchedulers0").stdout
    assert ad == "Negotiator 1\n"
    cell.run("condor_rm", str(cluster), str(held), check=True)
