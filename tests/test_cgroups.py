"""A job's kernel memory cgroup (exec.cgroups): what is written in it for each cgroup
version, where the memory controller is found, the kernel's kill seen through it, and,
in a running cell whose shepherds are root, HTCondor jobs held to their slots by the
kernel: a job sees its cgroup and cannot raise its limit, a burst of memory too short
for sampling is caught, DISABLE_SWAP_FOR_JOB, and what a job leaves running ends with
it. (The kernel parts are skipped where no memory cgroup can be made.)"""

import os
import select
import signal
import subprocess
import sys

import pytest

from conftest import destroy_cell, make_cell, wait_for
from gridtools.classad import ClassAd
from gridtools.daemon import jobside
from gridtools.exec import cgroups

MB = 1 << 20


def test_a_v1_cgroup_gets_a_hard_limit_and_the_same_limit_with_swap():
    assert cgroups.settings(cgroups.V1, 64 * MB, 32 * MB) == [
        ("memory.limit_in_bytes", str(64 * MB)), ("memory.memsw.limit_in_bytes", str(64 * MB))]
    assert cgroups.settings(cgroups.V1, 64 * MB, no_swap=False) == [("memory.limit_in_bytes", str(64 * MB))]
    assert cgroups.settings(cgroups.V1, None, 32 * MB) == []          # (v1 has no low limit)


def test_a_v2_cgroup_gets_max_no_swap_low_and_one_kill_for_the_group():
    assert cgroups.settings(cgroups.V2, 64 * MB, 32 * MB) == [
        ("memory.max", str(64 * MB)), ("memory.swap.max", "0"), ("memory.low", str(32 * MB)),
        ("memory.oom.group", "1")]
    assert cgroups.settings(cgroups.V2, None, 32 * MB, no_swap=True) == [
        ("memory.low", str(32 * MB)), ("memory.oom.group", "1")]
    assert cgroups.settings(cgroups.V2, None, cpus=4)[-1] == ("cpu.weight", "400")
    assert cgroups.settings(cgroups.V2, None, cpus=500)[-1] == ("cpu.weight", "10000")
    assert cgroups.settings(cgroups.V1, None, cpus=4) == [] and cgroups.cpu_settings(4) == [("cpu.shares", "400")]


def test_a_cgroup_is_named_after_its_slot_and_shepherd():
    assert cgroups.leaf_name("slot1_1", 4242) == "slot1_1_4242"
    assert cgroups.leaf_name(None, 7) == "local_7"
    assert cgroups.leaf_name("../x/y.z", 7) == "___x_y_z_7"


def test_the_memory_controller_is_found_in_the_mount_table(tmp_path):
    unified, v1 = tmp_path / "unified", tmp_path / "memory"
    unified.mkdir()
    (unified / "cgroup.controllers").write_text("cpu io\n")
    mounts = tmp_path / "mounts"
    mounts.write_text(f"cgroup2 {unified} cgroup2 rw 0 0\ncgroup {tmp_path}/cpu cgroup rw,cpu 0 0\n"
                      f"cgroup {v1} cgroup rw,relatime,memory 0 0\n")
    assert cgroups.controller(str(mounts)) == (cgroups.V1, str(v1))
    (unified / "cgroup.controllers").write_text("cpu io memory pids\n")
    assert cgroups.controller(str(mounts)) == (cgroups.V2, str(unified))
    mounts.write_text("proc /proc proc rw 0 0\n")
    assert cgroups.controller(str(mounts)) is None
    assert cgroups.controller(str(tmp_path / "none")) is None


SLOT = ClassAd({"Memory": 64, "Cpus": 1})
JOB = ClassAd({"RequestMemory": 48})


def test_the_plan_names_the_base_cgroup_the_swap_and_the_low_limit():
    found = jobside.memory_limit({}, SLOT, JOB)
    assert (found["mb"], found["low_mb"], found["no_swap"]) == (64, None, True)
    assert jobside.cgroup_plan({}, SLOT, JOB) == {"base": "htcondor", "cpus": 1}
    conf = {"BASE_CGROUP": "batch/jobs", "DISABLE_SWAP_FOR_JOB": "false",
            "CGROUP_LOW_MEMORY_LIMIT": "TARGET.RequestMemory / 2"}
    found = jobside.memory_limit(conf, SLOT, JOB)
    assert (found["mb"], found["low_mb"], found["no_swap"]) == (64, 24, False)
    assert jobside.cgroup_plan(conf, ClassAd({"Memory": 64, "Cpus": 4}), JOB) == {"base": "batch/jobs", "cpus": 4}
    soft = jobside.memory_limit({"CGROUP_MEMORY_LIMIT_POLICY": "soft", "CGROUP_LOW_MEMORY_LIMIT": "16"}, SLOT, JOB)
    assert (soft["mb"], soft["low_mb"]) == (None, 16)
    assert jobside.memory_limit({"BASE_CGROUP": ""}, SLOT, JOB) is None        # (no cgroups: no limits)
    assert jobside.cgroup_plan({"BASE_CGROUP": " "}, SLOT, JOB) is None
    assert jobside.cgroup_plan({"CGROUP_MEMORY_LIMIT_POLICY": "none"}, SLOT, JOB) == {"base": "htcondor", "cpus": 1}
    assert jobside.memory_limit({"DISABLE_SWAP_FOR_JOB": "maybe("}, SLOT, JOB)["no_swap"] is True
    local = ClassAd({"JobUniverse": 12, "RequestMemory": 48, "RequestCpus": 3})
    assert jobside.memory_limit({"LOCAL_UNIVERSE_CGROUP_ENFORCEMENT": "true",
                                 "USE_CGROUPS_FOR_LOCAL_UNIVERSE": "false"}, None, local) is None
    assert jobside.cgroup_plan({}, None, local) == {"base": "htcondor", "cpus": 1}
    assert jobside.cgroup_plan({"LOCAL_UNIVERSE_CGROUP_ENFORCEMENT": "true"}, None, local)["cpus"] == 3
    assert jobside.cgroup_plan({"USE_CGROUPS_FOR_LOCAL_UNIVERSE": "false"}, None, local) is None
    assert jobside.cgroup_plan({}, None, ClassAd({"JobUniverse": 7})) is None       # (scheduler universe)


def _kernel_cgroups():
    """Skip unless this process can make memory cgroups."""
    found = cgroups.controller()
    if os.geteuid() != 0 or found is None:
        pytest.skip("no memory cgroup can be made here")
    probe = cgroups.make(f"gridtools-probe-{os.getpid()}", "probe_1", 64 * MB, found=found)
    if probe is None:
        pytest.skip("no memory cgroup can be made here")
    probe.remove()
    os.rmdir(os.path.dirname(probe.path))
    return found


@pytest.fixture
def base():
    found = _kernel_cgroups()
    name = f"gridtools-test-{os.getpid()}"
    yield name, found
    folder = os.path.join(found[1], name)          # (cgroups go with rmdir, when empty)
    for leaf in os.listdir(folder) if os.path.isdir(folder) else ():
        if os.path.isdir(os.path.join(folder, leaf)):
            os.rmdir(os.path.join(folder, leaf))
    if os.path.isdir(folder):
        os.rmdir(folder)


def test_the_kernel_kills_a_process_over_the_limit_and_the_cgroup_tells(base):
    name, found = base
    group = cgroups.make(name, "slot1_1_4242", 64 * MB, found=found)
    assert group is not None and os.path.isdir(group.path)
    efd = group.oom_events() if found[0] == cgroups.V1 else None
    child = subprocess.Popen([sys.executable, "-c", "x = b'x' * (160 << 20); print('survived')"],
                             stdout=subprocess.PIPE, preexec_fn=lambda: cgroups.join(group.procs_files))
    out, _ = child.communicate(timeout=60)
    assert child.returncode == -signal.SIGKILL and out == b""
    assert group.oom_kills() == 1
    assert 32 * MB < group.peak() <= 64 * MB
    if efd is not None:
        assert select.select([efd], [], [], 5)[0] == [efd]
    assert group.remove() and not os.path.exists(group.path)


def test_removing_a_cgroup_ends_what_is_left_in_it_and_stale_ones_go(base):
    name, found = base
    group = cgroups.make(name, "slot1_9", None, found=found)
    child = subprocess.Popen(["sleep", "300"], preexec_fn=lambda: cgroups.join(group.procs_files))
    wait_for(lambda: group.pids() == [child.pid], timeout=10)
    assert group.remove()
    assert child.wait(timeout=10) == -signal.SIGKILL and not os.path.exists(group.path)
    gone = subprocess.Popen(["true"])
    gone.wait()
    folder = os.path.join(found[1], name)
    os.mkdir(os.path.join(folder, f"slot2_{gone.pid}"))           # (its shepherd is gone)
    os.mkdir(os.path.join(folder, f"slot3_{os.getpid()}"))        # (its shepherd lives)
    newer = cgroups.make(name, "slot4_1", 64 * MB, found=found)
    assert {n for n in os.listdir(folder) if n.startswith("slot")} == {f"slot3_{os.getpid()}", "slot4_1"}
    newer.remove()


def test_no_cgroup_is_made_without_a_base_or_with_a_limit_the_kernel_refuses(base):
    name, found = base
    assert cgroups.make("", "slot1_1", 64 * MB, found=found) is None
    assert cgroups.make("/../", "slot1_1", 64 * MB, found=found) is None
    assert cgroups.make(name, "slot1_2", -5, found=found) is None
    assert not os.path.exists(os.path.join(found[1], name, "slot1_2"))


# ---------------------------------------------------------------- in a running cell

def _cell(config, slots=1):
    _kernel_cgroups()
    cell = make_cell(slots=slots, hosts=["desk"], start=False)
    try:
        with open(os.path.join(cell.root, "etc", "condor_config"), "a") as fh:
            fh.write(config)
        cell.start_daemon()
    except BaseException:
        destroy_cell(cell)
        raise
    return cell


#: a job that shows its memory cgroup and its limits, then tries to raise its limit
SHOWS_CGROUP = """#!/bin/sh
g=$(grep :memory: /proc/self/cgroup | cut -d: -f3)
echo "$g"
d=/sys/fs/cgroup/memory$g
cat "$d/memory.limit_in_bytes" "$d/memory.memsw.limit_in_bytes"
echo 999999999999 > "$d/memory.limit_in_bytes"
echo "wrote $?"
cat "$d/memory.limit_in_bytes"
"""

#: a job that leaves a process running in a session of its own, its pid in left.pid
LEAVES_A_PROCESS = """#!/bin/sh
setsid sleep 300 </dev/null >/dev/null 2>&1 &
echo $! > left.pid
"""


def script(folder, name, text):
    path = os.path.join(folder, name)
    with open(path, "w") as fh:
        fh.write(text)
    os.chmod(path, 0o755)
    return path


def test_a_job_runs_in_a_cgroup_of_its_slots_memory_that_it_cannot_raise(workdir, users):
    """A job of a plain user runs in htcondor/slot1_<pid> of the memory controller, its
    limit and its limit with swap the slot's 64 MB; its write to the limit is refused; the
    cgroup goes with the job; with DISABLE_SWAP_FOR_JOB false the swap is not limited."""
    from condortools import submit, wait_events
    if cgroups.controller()[0] != cgroups.V1:
        pytest.skip("reads the files of a cgroup v1 memory controller")
    cell = _cell("MEMORY = 64\n")
    try:
        log = os.path.join(workdir, "c.log")
        job = f"executable = {script(workdir, 'show.sh', SHOWS_CGROUP)}\noutput = $(Cluster).out\n" \
              f"error = $(Cluster).err\nlog = {log}\nqueue\n"
        cluster = submit(cell, job, cwd=workdir, user=users[0])
        wait_events(log, f"{cluster}.0", [0, 1, 5], timeout=40)
        lines = open(os.path.join(workdir, f"{cluster}.out")).read().split("\n")
        path, limit, memsw, wrote, after = lines[:5]
        assert path.startswith("/htcondor/slot1_") and path.rpartition("_")[2].isdigit()
        assert (limit, memsw, after) == (str(64 * MB),) * 3
        assert wrote != "wrote 0" and "Permission denied" in open(os.path.join(workdir, f"{cluster}.err")).read()
        assert not os.path.exists("/sys/fs/cgroup/memory" + path)
        with open(os.path.join(cell.root, "etc", "condor_config"), "a") as fh:
            fh.write("DISABLE_SWAP_FOR_JOB = false\n")
        assert cell.run("condor_reconfig").returncode == 0
        cluster = submit(cell, job, cwd=workdir, user=users[0])
        wait_events(log, f"{cluster}.0", [0, 1, 5], timeout=40)
        _path, limit, memsw = open(os.path.join(workdir, f"{cluster}.out")).read().split("\n")[:3]
        assert limit == str(64 * MB) and int(memsw) > 1 << 40
    finally:
        destroy_cell(cell)


def test_a_burst_of_memory_too_short_to_sample_is_caught_by_the_kernel(workdir):
    """A job that takes 160 MB for an instant and ends at once, well before a sample,
    is still killed and held at its slot's 64 MB, with HTCondor's code and words."""
    from condortools import submit, wait_events
    cell = _cell("MEMORY = 64\n")
    try:
        log = os.path.join(workdir, "b.log")
        cluster = submit(cell, "executable = /usr/bin/python3\narguments = \"-c 'x = b\"\"x\"\" * (160 << 20); "
                               "del x; print(\"\"done\"\")'\"\noutput = $(Cluster).out\n"
                               f"log = {log}\nqueue\n", cwd=workdir)
        jid = f"{cluster}.0"
        wait_events(log, jid, [0, 1, 12], timeout=40)
        wait_for(lambda: cell.run("condor_q", jid, "-af", "JobStatus").stdout == "5\n", timeout=15)
        assert cell.run("condor_q", jid, "-af:,", "HoldReasonCode", "HoldReasonSubCode", "HoldReason").stdout == (
            "34, 102, Job has gone over cgroup memory limit of 64 megabytes. Last measured usage: 64 megabytes.  "
            "Consider resubmitting with a higher request_memory.\n")
        assert "done" not in open(os.path.join(workdir, f"{cluster}.out")).read()
    finally:
        destroy_cell(cell)


def test_what_a_job_leaves_running_ends_with_it(workdir):
    """A job that starts a process in a session of its own and exits: the process, in the
    job's cgroup, is killed when the job ends, as HTCondor's starter kills its cgroup's."""
    from condortools import submit, wait_events
    cell = _cell("")
    try:
        log = os.path.join(workdir, "s.log")
        job = f"executable = {script(workdir, 'leave.sh', LEAVES_A_PROCESS)}\ninitialdir = {workdir}\n"
        cluster = submit(cell, job + f"log = {log}\nqueue\n", cwd=workdir)
        wait_events(log, f"{cluster}.0", [0, 1, 5], timeout=40)
        pid = int(open(os.path.join(workdir, "left.pid")).read())
        wait_for(lambda: not os.path.exists(f"/proc/{pid}") or
                 open(f"/proc/{pid}/stat").read().split(") ")[1][0] == "Z", timeout=10)
    finally:
        destroy_cell(cell)


#: a job that shows its CPU share and its memory limit
SHOWS_SHARE = """#!/bin/sh
g=$(grep ':cpu[,:]' /proc/self/cgroup | head -1 | cut -d: -f3)
cat "/sys/fs/cgroup/cpu$g/cpu.shares"
m=$(grep :memory: /proc/self/cgroup | cut -d: -f3)
echo "$m"
cat "/sys/fs/cgroup/memory$m/memory.limit_in_bytes"
"""


def test_a_job_gets_a_share_of_the_cpus_of_its_slot_whatever_its_memory_policy(workdir):
    """A job asking 2 CPUs of a partitionable slot runs in a cgroup whose cpu.shares is 200
    (HTCondor's 100 per CPU), and has one without a memory limit under
    CGROUP_MEMORY_LIMIT_POLICY = none."""
    from condortools import submit, wait_events
    if cgroups.controller()[0] != cgroups.V1 or cgroups.controller(name="cpu") is None:
        pytest.skip("reads the files of cgroup v1 memory and cpu controllers")
    cell = _cell("NUM_SLOTS_TYPE_1 = 1\nSLOT_TYPE_1 = 100%\nSLOT_TYPE_1_PARTITIONABLE = True\n"
                 "CGROUP_MEMORY_LIMIT_POLICY = none\n", slots=2)
    try:
        log = os.path.join(workdir, "p.log")
        job = f"executable = {script(workdir, 'share.sh', SHOWS_SHARE)}\noutput = $(Cluster).out\nrequest_cpus = 2\n"
        cluster = submit(cell, job + f"log = {log}\nqueue\n", cwd=workdir)
        wait_events(log, f"{cluster}.0", [0, 1, 5], timeout=40)
        shares, path, limit = open(os.path.join(workdir, f"{cluster}.out")).read().split("\n")[:3]
        assert shares == "200" and path.startswith("/htcondor/slot1_1_") and int(limit) > 1 << 40
        assert not os.path.exists("/sys/fs/cgroup/cpu" + path)
    finally:
        destroy_cell(cell)
