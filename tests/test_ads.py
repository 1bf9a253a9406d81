"""The ClassAd views: a job task as HTCondor's job ad (from qsub or condor_submit), and
an execution host as slot ads built from its facts and condor_config."""

import shlex

import pytest

from gridtools import ads
from gridtools.classad import parse_ad, symmetric_match
from gridtools.classad.values import UNDEFINED
from gridtools.cli.sge import options
from gridtools.formats.condor.jobad import SubmitContext
from gridtools.formats.condor.submit import parse_submit
from gridtools.formats.condor_config import Config
from gridtools.model.job import Job, Task, TaskState

NOW = 1_700_000_000


def qsub_spec(line, job_id=7, owner="alice", **extra):
    req = options.fresh_request()
    options.parse(shlex.split(line), req, options.Context(prog="qsub", cwd="/tmp", env={}))
    spec = dict(req)
    spec.update(id=job_id, owner=owner, group=owner, submit_time=NOW + 0.25, command="sleep",
                args=["10", "two words"], sge_o={"HOME": f"/home/{owner}"}, **extra)
    return spec


def config(text=""):
    cfg = Config({})
    cfg.read_text(text)
    return cfg


# ---------------------------------------------------------------- Grid Engine jobs

def test_qsub_job_as_a_job_ad():
    ad = ads.job_ad(qsub_spec("-N sim -p -5 -l h_vmem=1G -pe smp 2-4 -P physics"), number=1)
    values = {name: ad.eval(name) for name in ad}
    assert values["ClusterId"] == 7 and values["ProcId"] == 0
    assert values["Owner"] == "alice" and values["QDate"] == NOW
    assert values["JobStatus"] == 1 and values["EnteredCurrentStatus"] == NOW
    assert values["Cmd"] == "sleep" and values["Arguments"] == "10 two' 'words"
    assert values["Iwd"] == "/home/alice"                  # no -cwd: the home directory
    assert values["Out"] == "sim.o7" and values["Err"] == "sim.e7"
    assert values["JobPrio"] == 0                          # qsub -p is Grid Engine's priority, not JobPrio
    assert values["RequestCpus"] == 2                      # the smallest slot count asked for
    assert values["RequestMemory"] == 2048                 # h_vmem per slot times slots, in MB
    assert values["AccountingGroup"] == "physics.alice"
    assert ad["Requirements"].unparse() == "(TARGET.Memory >= RequestMemory) && (TARGET.Cpus >= RequestCpus)"


def test_long_form_is_condor_q_l():
    text = str(ads.job_ad(qsub_spec("-N sim"), number=1))
    assert 'Owner = "alice"\n' in text
    assert "JobStatus = 1\n" in text
    assert "Requirements = true\n" in text                 # a plain job asks for nothing


def test_array_task_n_is_proc_n_minus_one():
    job = Job(qsub_spec("-t 1-3"))
    job.tasks[2] = Task(2, TaskState.RUNNING, host="h1", queue="all.q", granted=[["all.q", "h1", 1]],
                        start_time=NOW + 60)
    a1, a2, a3 = ads.job_ads(job)
    assert [a.eval("ProcId") for a in (a1, a2, a3)] == [0, 1, 2]
    assert [a.eval("JobStatus") for a in (a1, a2, a3)] == [1, 2, 1]
    assert a2.eval("RemoteHost") == "all.q@h1"
    assert a2.eval("JobCurrentStartDate") == NOW + 60 and a2.eval("EnteredCurrentStatus") == NOW + 60


@pytest.mark.parametrize("task, hold, deleted, status", [
    (None, "", False, 1),
    (None, "u", False, 5),
    (Task(1, TaskState.PENDING, hold="o"), "", False, 5),
    (Task(1, TaskState.ERROR, error_reason="can't chdir"), "", False, 5),
    (Task(1, TaskState.RUNNING, start_time=NOW + 5), "", False, 2),
    (Task(1, TaskState.RUNNING, start_time=NOW + 5, suspended="s"), "", False, 7),
    (Task(1, TaskState.FINISHED, start_time=NOW + 5, end_time=NOW + 65, exit_status=3), "", False, 4),
    (None, "", True, 3),
])
def test_job_status_from_the_neutral_task_state(task, hold, deleted, status):
    ad = ads.job_ad(qsub_spec(""), task, 1, hold, deleted)
    assert ad.eval("JobStatus") == status


def test_held_and_finished_details():
    spec = qsub_spec("")
    held = ads.job_ad(spec, None, 1, "u")
    assert held.eval("HoldReason") == "held by the job's owner" and held.eval("HoldReasonCode") == 1
    error = ads.job_ad(spec, Task(1, TaskState.ERROR, error_reason="can't chdir", failed=28))
    assert error.eval("HoldReason") == "can't chdir" and error.eval("HoldReasonCode") == 14     # IwdError
    shell = ads.job_ad(spec, Task(1, TaskState.ERROR, error_reason="can't execute", failed=27))
    assert shell.eval("HoldReasonCode") == 6                                   # FailedToCreateProcess
    done = ads.job_ad(spec, Task(1, TaskState.FINISHED, start_time=NOW + 5, end_time=NOW + 65,
                                 exit_status=3))
    assert (done.eval("ExitCode"), done.eval("ExitBySignal")) == (3, False)
    assert done.eval("CompletionDate") == NOW + 65 and done.eval("RemoteWallClockTime") == 60.0
    killed = ads.job_ad(spec, Task(1, TaskState.FINISHED, start_time=NOW, end_time=NOW + 1,
                                   exit_status=137, signal=9))
    assert (killed.eval("ExitBySignal"), killed.eval("ExitSignal")) == (True, 9)
    # an exit status above 128 without a signal is the job's own exit code
    high = ads.job_ad(spec, Task(1, TaskState.FINISHED, start_time=NOW, end_time=NOW + 1,
                                 exit_status=130))
    assert (high.eval("ExitBySignal"), high.eval("ExitCode")) == (False, 130)


def test_host_requests_become_requirements():
    one = ads.job_ad(qsub_spec("-q all.q@node1"))
    assert 'TARGET.Machine == "node1"' in one["Requirements"].unparse()
    many = ads.job_ad(qsub_spec("-l hostname=node*"))
    slot = ads.machine_ads(ads.HostFacts("node7", memory=100, disk=100), config(), NOW)[0]
    other = ads.machine_ads(ads.HostFacts("gpu1", memory=100, disk=100), config(), NOW)[0]
    assert symmetric_match(many, slot) and not symmetric_match(many, other)


def test_memory_request_matches_slots_with_enough_memory():
    job = ads.job_ad(qsub_spec("-l h_vmem=3G"))
    small = ads.machine_ads(ads.HostFacts("a", cpus=2, memory=4096, disk=10), config(), NOW)[0]
    big = ads.machine_ads(ads.HostFacts("b", cpus=1, memory=4096, disk=10), config(), NOW)[0]
    assert small.eval("Memory") == 2048 and not symmetric_match(job, small)
    assert big.eval("Memory") == 4096 and symmetric_match(job, big)


# ---------------------------------------------------------------- condor_submit jobs

def condor_spec(text, procs):
    ctx = SubmitContext(cwd="/home/bob", owner="bob", now=NOW)
    job_ads = parse_submit(text).job_ads(12, ctx)
    assert len(job_ads) == procs
    return {"id": 12, "owner": "bob", "submit_time": NOW, "condor_ad": [str(a) for a in job_ads]}


def test_condor_submit_ad_is_the_base():
    spec = condor_spec("executable = /bin/echo\narguments = $(Process)\nrequest_memory = 2G\n"
                       "priority = 3\n+Department = \"Chemistry\"\nqueue 2\n", 2)
    first = ads.job_ad(spec, None, 1)
    second = ads.job_ad(spec, Task(2, TaskState.RUNNING, start_time=NOW + 9, granted=[["slot1", "h", 1]]), 2)
    assert (first.eval("ClusterId"), first.eval("ProcId"), second.eval("ProcId")) == (12, 0, 1)
    assert (first.eval("Args"), second.eval("Args")) == ("0", "1")
    assert first.eval("RequestMemory") == 2048 and first.eval("JobPrio") == 3
    assert first.eval("Department") == "Chemistry"
    assert first["Requirements"].unparse() == parse_ad(spec["condor_ad"][0])["Requirements"].unparse()
    assert (first.eval("JobStatus"), second.eval("JobStatus")) == (1, 2)
    assert second.eval("RemoteHost") == "slot1@h"


def test_condor_job_submitted_on_hold_keeps_its_reason():
    spec = condor_spec("executable = /bin/true\nhold = true\nqueue\n", 1)
    ad = ads.job_ad(spec, None, 1, "u")
    assert ad.eval("JobStatus") == 5
    assert ad.eval("HoldReason") == "submitted on hold at user's request"


# ---------------------------------------------------------------- machines

def test_static_slots_split_the_host_evenly():
    host = ads.HostFacts("node1", cpus=4, memory=8192, disk=4_000_000, load_avg=0.25,
                         keyboard_idle=1234)
    slots = ads.machine_ads(host, config(), NOW)
    assert [s.eval("Name") for s in slots] == [f"slot{i}@node1" for i in range(1, 5)]
    first = slots[0]
    assert (first.eval("Cpus"), first.eval("Memory"), first.eval("Disk")) == (1, 2048, 1_000_000)
    assert (first.eval("TotalCpus"), first.eval("TotalMemory"), first.eval("TotalSlots")) == (4, 8192, 4)
    assert first.eval("Machine") == "node1" and first.eval("SlotID") == 1
    assert (first.eval("State"), first.eval("Activity")) == ("Unclaimed", "Idle")
    assert first.eval("EnteredCurrentState") == NOW and first.eval("CurrentTime") == NOW
    assert first.eval("KeyboardIdle") == 1234 and first.eval("LoadAvg") == 0.25
    assert first.eval("Requirements") is True and first.eval("Start") is True


def test_num_slots_start_rank_and_startd_attrs():
    cfg = config("NUM_SLOTS = 2\nSTART = KeyboardIdle > 15 * 60\nRANK = Department =?= \"Chemistry\"\n"
                 "INSTRUCTIONAL = TRUE\nNETWORK_SPEED = 100\nSTARTD_ATTRS = INSTRUCTIONAL, NETWORK_SPEED\n")
    host = ads.HostFacts("desk", cpus=4, memory=1000, disk=10, keyboard_idle=60)
    slots = ads.machine_ads(host, cfg, NOW)
    assert len(slots) == 2 and slots[0].eval("Cpus") == 2
    assert slots[0].eval("Start") is False and slots[0].eval("INSTRUCTIONAL") is True
    assert slots[0].eval("NETWORK_SPEED") == 100
    chem = parse_ad('[ Department = "Chemistry" ]')
    assert slots[0].eval("Rank", chem) is True


def test_cpu_busy_and_the_latches_of_startd_latch_exprs():
    """CpuBusy is in every slot ad (false when the configuration has none); each name of
    STARTD_LATCH_EXPRS gives <name>Value (not for a constant) and <name>Time, the time
    its value last changed, as HTCondor's startd publishes them."""
    assert ads.machine_ads(ads.HostFacts("h", cpus=1, memory=1, disk=1), config(), NOW)[0].eval("CpuBusy") is False
    cfg = config("CpuBusy = (LoadAvg - CondorLoadAvg) >= 0.5\nFlat = 3\nSTARTD_ATTRS = Flat, Gone\n"
                 "STARTD_LATCH_EXPRS = CpuBusy, Flat cpubusy\nSYSTEM_STARTD_LATCH_EXPRS = Gone\n")
    names = ads.latch_names(cfg)
    assert names == ["CpuBusy", "Flat", "Gone"]
    store = {}

    def slot(owner_load, now):
        ad = ads.machine_ads(ads.HostFacts("h", cpus=1, memory=1, disk=1, load_avg=owner_load), cfg, now)[0]
        ads.latch(ad, names, store, now)
        return ad
    ad = slot(0.0, NOW)
    assert (ad.eval("CpuBusyValue"), ad.eval("CpuBusyTime")) == (0, NOW)
    assert "FlatValue" not in ad and ad.eval("FlatTime") == NOW      # (a constant: no Value)
    assert "GoneValue" not in ad and "GoneTime" not in ad            # (never a number)
    ad = slot(0.1, NOW + 10)
    assert (ad.eval("CpuBusyValue"), ad.eval("CpuBusyTime")) == (0, NOW)
    ad = slot(0.9, NOW + 20)
    assert (ad.eval("CpuBusyValue"), ad.eval("CpuBusyTime")) == (1, NOW + 20)
    assert slot(0.9, NOW + 50).eval("CpuBusyTime") == NOW + 20


def test_partitionable_slot_and_its_dynamic_slots():
    cfg = config("NUM_SLOTS_TYPE_1 = 1\nSLOT_TYPE_1 = 100%\nSLOT_TYPE_1_PARTITIONABLE = True\n")
    host = ads.HostFacts("big", cpus=8, memory=16384, disk=1000)
    claim = ads.Claim("5.0", "alice", "alice", rank=0.0, start=NOW - 100, cpus=2, memory=4096, disk=100)
    views = {"slot1_1@big": ads.SlotView("Claimed", "Busy", NOW - 100, NOW - 100)}
    pslot, dslot = ads.machine_ads(host, cfg, NOW, views, {"slot1_1@big": claim})
    assert pslot.eval("PartitionableSlot") is True and pslot.eval("SlotType") == "Partitionable"
    assert (pslot.eval("Cpus"), pslot.eval("Memory"), pslot.eval("Disk")) == (6, 12288, 900)
    assert dslot.eval("Name") == "slot1_1@big" and dslot.eval("DynamicSlot") is True
    assert (dslot.eval("Cpus"), dslot.eval("Memory")) == (2, 4096)
    assert (dslot.eval("State"), dslot.eval("Activity")) == ("Claimed", "Busy")
    assert dslot.eval("RemoteUser") == "alice" and dslot.eval("JobStart") == NOW - 100
    big = parse_ad("[ RequestCpus = 8; RequestMemory = 1; RequestDisk = 1 ]")
    assert pslot.eval("Requirements", big) is False        # only 6 cpus are left


def test_a_claimed_slot_names_its_job_as_htcondor_does():
    """RemoteUser and RemoteOwner are the job's User, AccountingGroup the job's group
    qualified with the User's domain, GlobalJobId the job's own."""
    host = ads.HostFacts("h", memory=10, disk=10)
    view = {"slot1@h": ads.SlotView("Claimed", "Busy", NOW, NOW)}

    def slot(claim):
        return ads.machine_ads(host, config(), NOW, view, {"slot1@h": claim})[0]
    plain = slot(ads.Claim("5.0", "alice", "alice", job_user="alice@example.org",
                           global_job_id="sub#5.0#1699999000"))
    assert (plain.eval("RemoteUser"), plain.eval("RemoteOwner")) == ("alice@example.org",) * 2
    assert plain.lookup("AccountingGroup") is None
    assert (plain.eval("JobId"), plain.eval("GlobalJobId")) == ("5.0", "sub#5.0#1699999000")
    grouped = slot(ads.Claim("6.0", "alice", "physics.alice", job_user="alice@example.org",
                             group="physics.alice", global_job_id="sub#6.0#1699999000"))
    assert (grouped.eval("RemoteUser"), grouped.eval("RemoteOwner")) == ("alice@example.org",) * 2
    assert grouped.eval("AccountingGroup") == "physics.alice@example.org"


def test_matched_and_preempting_slots_advertise_false_requirements():
    host = ads.HostFacts("h", memory=10, disk=10)
    for state in ("Matched", "Preempting"):
        ad = ads.machine_ads(host, config(), NOW, {"slot1@h": ads.SlotView(state, "Idle", NOW, NOW)})[0]
        assert ad.eval("Requirements") is False
    again = ads.with_view(ad, ads.SlotView("Unclaimed", "Idle", NOW, NOW))
    assert again.eval("Requirements") is True


def test_job_load_goes_to_busy_slots_and_owner_load_to_the_first():
    host = ads.HostFacts("h", cpus=2, memory=10, disk=10, load_avg=1.5, condor_load_avg=1.0)
    views = {"slot2@h": ads.SlotView("Claimed", "Busy", NOW, NOW)}
    one, two = ads.machine_ads(host, config(), NOW, views)
    assert (one.eval("LoadAvg"), one.eval("CondorLoadAvg")) == (0.5, 0.0)
    assert (two.eval("LoadAvg"), two.eval("CondorLoadAvg")) == (1.0, 1.0)


def test_slots_share_the_hosts_gpus():
    host = ads.HostFacts("g", cpus=4, memory=4096, disk=100, gpus=3)
    slots = ads.machine_ads(host, config(), NOW)
    assert [s.eval("GPUs") for s in slots] == [1, 1, 1, 0]
    assert {s.eval("TotalGPUs") for s in slots} == {3}
    cfg = config("NUM_SLOTS_TYPE_1 = 1\nSLOT_TYPE_1 = cpus=2, gpus=2\nNUM_SLOTS_TYPE_2 = 2\n"
                 "SLOT_TYPE_2 = cpus=1\n")
    assert [s.eval("GPUs") for s in ads.machine_ads(host, cfg, NOW)] == [2, 1, 0]
    plain = ads.machine_ads(ads.HostFacts("n", cpus=2, memory=10, disk=10), config(), NOW)
    assert all("GPUs" not in s and "TotalGPUs" not in s for s in plain)
    one = parse_ad("[ RequestGPUs = 1 ]")
    assert [s.eval("GPUs") >= one.eval("RequestGPUs") for s in slots] == [True, True, True, False]


def test_a_partitionable_slot_gives_its_gpus_to_dynamic_slots():
    cfg = config("NUM_SLOTS_TYPE_1 = 1\nSLOT_TYPE_1 = 100%\nSLOT_TYPE_1_PARTITIONABLE = True\n")
    host = ads.HostFacts("big", cpus=8, memory=16384, disk=1000, gpus=2)
    claim = ads.Claim("5.0", "alice", "alice", cpus=1, memory=100, disk=10, gpus=1)
    views = {"slot1_1@big": ads.SlotView("Claimed", "Busy", NOW, NOW)}
    pslot, dslot = ads.machine_ads(host, cfg, NOW, views, {"slot1_1@big": claim})
    assert (pslot.eval("GPUs"), dslot.eval("GPUs"), pslot.eval("TotalGPUs")) == (1, 1, 2)
    asks = {n: parse_ad(f"[ RequestCpus = 1; RequestMemory = 1; RequestDisk = 1{extra} ]")
            for n, extra in (("none", ""), ("one", "; RequestGPUs = 1"), ("two", "; RequestGPUs = 2"))}
    assert {n: pslot.eval("Requirements", ad) for n, ad in asks.items()} == {
        "none": True, "one": True, "two": False}


def test_slots_name_the_gpus_they_hold_as_htcondor_does():
    """AssignedGPUs: the devices of a slot, CUDA0, CUDA1 ..., handed out in slot order; a
    dynamic slot names those its job holds (else the first its partitionable slot has
    left), and the partitionable slot the rest; a slot without GPUs has none."""
    host = ads.HostFacts("g", cpus=4, memory=4096, disk=100, gpus=3)
    cfg = config("NUM_SLOTS_TYPE_1 = 1\nSLOT_TYPE_1 = cpus=2, gpus=2\nNUM_SLOTS_TYPE_2 = 2\n"
                 "SLOT_TYPE_2 = cpus=1\n")
    assert [s.eval("AssignedGPUs") for s in ads.machine_ads(host, cfg, NOW)] == ["CUDA0,CUDA1", "CUDA2", UNDEFINED]
    part = config("NUM_SLOTS_TYPE_1 = 1\nSLOT_TYPE_1 = 100%\nSLOT_TYPE_1_PARTITIONABLE = True\n")
    claims = {"slot1_1@g": ads.Claim("5.0", "alice", "alice", gpus=1, gpu_ids=(2,)),
              "slot1_2@g": ads.Claim("6.0", "alice", "alice", gpus=1)}
    slots = ads.machine_ads(host, part, NOW, None, claims)
    assert [(s.eval("Name"), s.eval("GPUs"), s.eval("AssignedGPUs")) for s in slots] == [
        ("slot1@g", 1, "CUDA1"), ("slot1_1@g", 1, "CUDA2"), ("slot1_2@g", 1, "CUDA0")]
    claims["slot1_3@g"] = ads.Claim("7.0", "alice", "alice", gpus=1)
    assert "AssignedGPUs" not in ads.machine_ads(host, part, NOW, None, claims)[0]
    assert all("AssignedGPUs" not in s for s in ads.machine_ads(ads.HostFacts("n", cpus=2), config(), NOW))


def test_a_hosts_other_resources_are_shared_among_its_slots():
    host = ads.HostFacts("r", cpus=2, memory=100, disk=100, resources=(("foo", 3),))
    slots = ads.machine_ads(host, config(), NOW)
    assert [(s.eval("foo"), s.eval("Totalfoo")) for s in slots] == [(2, 3), (1, 3)]
    assert slots[0].eval("MachineResources") == "Cpus Disk Memory foo"
    asks = parse_ad("[ Requestfoo = 2 ]")
    assert [s.eval("foo") >= asks.eval("RequestFoo") for s in slots] == [True, False]
    cfg = config("NUM_SLOTS_TYPE_1 = 1\nSLOT_TYPE_1 = 100%\nSLOT_TYPE_1_PARTITIONABLE = True\n")
    claim = ads.Claim("5.0", "alice", "alice", cpus=1, memory=10, disk=1, resources=(("foo", 2),))
    views = {"slot1_1@r": ads.SlotView("Claimed", "Busy", NOW, NOW)}
    pslot, dslot = ads.machine_ads(host, cfg, NOW, views, {"slot1_1@r": claim})
    assert (pslot.eval("foo"), dslot.eval("foo")) == (1, 2)
    two = parse_ad("[ RequestCpus = 1; RequestMemory = 1; RequestDisk = 1; Requestfoo = 2 ]")
    plain = parse_ad("[ RequestCpus = 1; RequestMemory = 1; RequestDisk = 1 ]")
    assert (pslot.eval("Requirements", two), pslot.eval("Requirements", plain)) == (False, True)
