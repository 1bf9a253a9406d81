"""Partitionable slots as condor_status shows them: the sizes every slot ad publishes
(TotalSlotCpus, TotalSlotMemory, TotalSlotDisk), what a partitionable slot rolls up
from its dynamic slots (NumDynamicSlots, PslotRollupInformation, Child<attr> lists),
and -compact's line and summary of a machine with one (HTCondor's StartdCompact print
format and its compact totals)."""

import os

from gridtools import ads
from gridtools.classad import parse
from gridtools.classad.values import UNDEFINED
from gridtools.cli.condor import status
from gridtools.daemon.slotads import plain
from gridtools.formats.condor_config import Config

from conftest import destroy_cell, make_cell, wait_for

NOW = 1_700_000_000
PSLOT = "NUM_SLOTS_TYPE_1 = 1\nSLOT_TYPE_1 = 100%\nSLOT_TYPE_1_PARTITIONABLE = True\n"


def config(text=""):
    cfg = Config({})
    cfg.read_text(text)
    return cfg


def carved(memories, cpus=4, states=None, text=PSLOT):
    """The slot ads of a 4-CPU host of 8 GB whose partitionable slot runs a job of one
    CPU and ``memories[i]`` MB in each dynamic slot slot1_<i+1>."""
    host = ads.HostFacts("vm", cpus=cpus, memory=8192, disk=40000)
    claims, views = {}, {}
    for i, memory in enumerate(memories, 1):
        name = f"slot1_{i}@vm"
        claims[name] = ads.Claim(f"{i}.0", "alice", "alice", rank=0.0, start=NOW - 60, cpus=1, memory=memory,
                                 disk=100, job_user="alice@example.org")
        state = (states or {}).get(name, ("Claimed", "Busy"))
        views[name] = ads.SlotView(state[0], state[1], NOW - 60, NOW - 60)
    return ads.machine_ads(host, config(text), NOW, views, claims)


def shown(*argv, slots):
    snap = {"slots": [plain(ad) for ad in slots]}
    return status.render(status.parse_args(list(argv)), snap, NOW)


def test_every_slot_publishes_what_it_was_given():
    host = ads.HostFacts("vm", cpus=4, memory=8192, disk=40000)
    static = ads.machine_ads(host, config(), NOW)
    assert [(s.eval("TotalSlotCpus"), s.eval("TotalSlotMemory"), s.eval("TotalSlotDisk")) for s in static] == \
        [(1, 2048, 10000.0)] * 4
    assert type(static[0].eval("TotalSlotDisk")) is float           # (a real, as HTCondor's)
    assert all("NumDynamicSlots" not in s and "ChildState" not in s for s in static)
    pslot, *dslots = carved([1000, 2048, 1000])
    # the partitionable slot's whole share, not what it has left
    assert (pslot.eval("Cpus"), pslot.eval("Memory")) == (1, 8192 - 4048)
    assert (pslot.eval("TotalSlotCpus"), pslot.eval("TotalSlotMemory"), pslot.eval("TotalSlotDisk")) == \
        (4, 8192, 40000.0)
    assert [(d.eval("TotalSlotCpus"), d.eval("TotalSlotMemory"), d.eval("TotalSlotDisk")) for d in dslots] == \
        [(1, 1000, 100.0), (1, 2048, 100.0), (1, 1000, 100.0)]
    assert [(d.eval("DSlotId"), d.eval("ParentSlotId"), d.eval("PslotRollupInformation")) for d in dslots] == \
        [(1, 1, True), (2, 1, True), (3, 1, True)]


def test_a_partitionable_slot_rolls_up_its_dynamic_slots():
    pslot = carved([1000, 2048], states={"slot1_2@vm": ("Claimed", "Idle")})[0]
    assert pslot.eval("NumDynamicSlots") == 2 and pslot.eval("PslotRollupInformation") is True
    assert pslot.eval("ChildName") == ["slot1_1@vm", "slot1_2@vm"]
    assert pslot.eval("ChildDSlotId") == [1, 2]
    assert pslot.eval("ChildState") == ["Claimed", "Claimed"]
    assert pslot.eval("ChildActivity") == ["Busy", "Idle"]
    assert pslot.eval("ChildCpus") == [1, 1] and pslot.eval("ChildMemory") == [1000, 2048]
    assert pslot.eval("ChildDisk") == [100, 100]
    assert pslot.eval("ChildRemoteUser") == ["alice@example.org"] * 2
    assert pslot.eval("ChildRemoteOwner") == ["alice@example.org"] * 2
    assert pslot.eval("ChildCurrentRank") == [0.0, 0.0]
    assert pslot.eval("ChildEnteredCurrentState") == [NOW - 60] * 2
    assert pslot.eval("ChildAccountingGroup") == [UNDEFINED, UNDEFINED]     # (no job of a group)
    assert parse("max(ChildMemory)").eval(pslot) == 2048
    # the children in the order of their names (strcmp), as HTCondor's startd keeps them
    many = carved([100] * 10)[0]
    assert many.eval("ChildDSlotId") == [10, 1, 2, 3, 4, 5, 6, 7, 8, 9]      # (slot1_10@ before slot1_1@)
    # none yet: NumDynamicSlots 0 and empty lists
    empty = carved([])[0]
    assert empty.eval("NumDynamicSlots") == 0 and empty.eval("PslotRollupInformation") is True
    assert empty.eval("ChildState") == [] and empty.eval("ChildMemory") == []
    assert parse("max(ChildMemory)").eval(empty) is UNDEFINED
    # STARTD_PARTITIONABLE_SLOT_ATTRS adds its own
    extra = carved([1000], text=PSLOT + "STARTD_PARTITIONABLE_SLOT_ATTRS = JobId, LoadAvg\n")[0]
    assert extra.eval("ChildJobId") == ["1.0"] and extra.eval("ChildLoadAvg") == [0.0]


def test_compact_shows_a_used_up_partitionable_slot_by_its_dynamic_slots():
    """All 4 CPUs taken: the line shows the whole slot (Cpus 4, TotalGb 8), what it has
    left (FreCpu 0), its largest dynamic slot, and Cb, its dynamic slots' consensus;
    the summary counts the 4 Claimed dynamic slots, not the slot itself, by Platform."""
    slots = carved([1000, 2048, 1000, 1024])
    lines = shown("-compact", slots=slots).split("\n")
    assert lines[0].split() == ["Machine", "Platform", "Slots", "Cpus", "Gpus", "TotalGb", "FreCpu", "FreeGb",
                                "CpuLoad", "ST", "Jobs/Min", "MaxSlotGb"]
    assert lines[2].split() == ["vm", "x64/LINUX", "4", "4", "8.00", "0", "3.05", "0.00", "Cb", "_", "2.00"]
    assert lines[4:] == [
        "               Total Owner Claimed Unclaimed Matched Preempting  Drain Backfill BkIdle",
        "",
        "     x64/LINUX     4     0       4         0       0          0      0        0      0",
        "",
        "         Total     4     0       4         0       0          0      0        0      0",
        ""]
    # -compact -total: -compact ignored, the partitionable slot counted as itself
    assert shown("-compact", "-total", slots=slots).split("\n")[2].split()[:5] == ["X86_64/LINUX", "1", "0", "0",
                                                                                   "1"]


def test_compact_counts_a_partitionable_slot_with_cpus_left_as_itself_too():
    slots = carved([1000, 2048])
    lines = shown("-compact", slots=slots).split("\n")
    assert lines[2].split() == ["vm", "x64/LINUX", "2", "4", "8.00", "2", "5.02", "0.00", "**", "_", "2.00"]
    assert lines[6].split() == ["x64/LINUX", "3", "0", "2", "1", "0", "0", "0", "0", "0"]
    # none carved yet: its own state, no largest slot
    lines = shown("-compact", slots=carved([])).split("\n")
    assert lines[2].split() == ["vm", "x64/LINUX", "0", "4", "8.00", "4", "8.00", "0.00", "Ui", "_", "*"]
    assert lines[6].split() == ["x64/LINUX", "1", "0", "0", "1", "0", "0", "0", "0", "0"]
    # a dynamic slot preempting wins the consensus
    slots = carved([1000] * 4, states={"slot1_3@vm": ("Preempting", "Vacating")})
    assert shown("-compact", slots=slots).split("\n")[2].split()[8] == "Pv"
    # dynamic slots that disagree: # for the letter they disagree on
    slots = carved([1000] * 4, states={"slot1_3@vm": ("Claimed", "Idle")})
    assert shown("-compact", slots=slots).split("\n")[2].split()[8] == "C#"


def test_compact_summary_of_static_slots_is_keyed_by_platform():
    host = ads.HostFacts("vm", cpus=2, memory=4096, disk=1000)
    views = {"slot2@vm": ads.SlotView("Claimed", "Busy", NOW, NOW)}
    slots = ads.machine_ads(host, config(), NOW, views)
    lines = shown("-compact", slots=slots).split("\n")
    assert lines[2].split()[:3] == ["vm", "x64/LINUX", "2S"]
    assert lines[4:] == [
        "               Total Owner Claimed Unclaimed Matched Preempting  Drain Backfill BkIdle",
        "",
        "     x64/LINUX     2     0       1         1       0          0      0        0      0",
        "",
        "         Total     2     0       1         1       0          0      0        0      0",
        ""]


def status_of(cell, *args):
    proc = cell.run("condor_status", *args)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_a_live_partitionable_slot_filled_with_jobs():
    cell = make_cell(slots=4, hosts=["bighost"])
    try:
        with open(os.path.join(cell.root, "etc", "condor_config"), "a") as fh:
            fh.write("use FEATURE : PartitionableSlot\n")
        cell.run("condor_reconfig", check=True)
        wait_for(lambda: status_of(cell, "-af", "Name", "SlotType") == "slot1@bighost Partitionable\n", timeout=20)
        assert status_of(cell, "-af", "TotalSlotCpus", "NumDynamicSlots", "PslotRollupInformation", "ChildState") \
            == "4 0 true {  }\n"
        for _ in range(4):
            cell.qsub("-b", "y", "sleep", "120", check=True)
        wait_for(lambda: status_of(cell, "slot1@bighost", "-af", "NumDynamicSlots", "Cpus") == "4 0\n", timeout=30)
        assert status_of(cell, "slot1@bighost", "-af", "TotalSlotCpus", "ChildState") == (
            '4 { "Claimed","Claimed","Claimed","Claimed" }\n')
        assert status_of(cell, "-const", "DynamicSlot", "-af", "TotalSlotCpus", "DSlotId") == \
            "1 1\n1 2\n1 3\n1 4\n"
        assert status_of(cell, "-const", "NumDynamicSlots > 0", "-af", "Name") == "slot1@bighost\n"
        lines = status_of(cell, "-compact").split("\n")
        row = lines[2].split()
        assert row[:4] == ["bighost", "x64/LINUX", "4", "4"] and row[5] == "0" and row[8] == "Cb"
        assert lines[4].split()[0] == "Total"
        assert lines[6].split() == ["x64/LINUX", "4", "0", "4", "0", "0", "0", "0", "0", "0"]
        # -run's query: the partitionable slot that has dynamic slots
        assert status_of(cell, "-compact", "-run").split("\n")[2].split()[:3] == ["bighost", "x64/LINUX", "4"]
    finally:
        destroy_cell(cell)
