"""A job's memory held to its slot's, as HTCondor's starter holds its cgroup: the limit the
configuration gives (CGROUP_MEMORY_LIMIT_POLICY, CGROUP_HARD_MEMORY_LIMIT_EXPR), the
hold's words (STARTER_ALWAYS_HOLD_ON_OOM), and the shepherd's monitor that sees a job go
over."""

import subprocess
import sys
import time

import pytest

from gridtools.classad import ClassAd
from gridtools.daemon import condorjob, jobside
from gridtools.exec import meter

SLOT = ClassAd({"Memory": 64, "Cpus": 1})
JOB = ClassAd({"RequestMemory": 48, "ImageSize": 1000})


@pytest.mark.parametrize("conf, expected", [
    ({}, 64),                                                       # hard, by default
    ({"CGROUP_MEMORY_LIMIT_POLICY": "hard"}, 64),
    ({"CGROUP_MEMORY_LIMIT_POLICY": " Hard "}, 64),
    ({"CGROUP_MEMORY_LIMIT_POLICY": "soft"}, None),
    ({"CGROUP_MEMORY_LIMIT_POLICY": "none"}, None),
    ({"CGROUP_MEMORY_LIMIT_POLICY": "custom"}, None),               # custom without its expression
    ({"CGROUP_MEMORY_LIMIT_POLICY": "custom", "CGROUP_HARD_MEMORY_LIMIT_EXPR": "MY.Memory * 2"}, 128),
    ({"CGROUP_MEMORY_LIMIT_POLICY": "custom", "CGROUP_HARD_MEMORY_LIMIT_EXPR": "TARGET.RequestMemory + 0.9"}, 48),
    ({"CGROUP_MEMORY_LIMIT_POLICY": "custom", "CGROUP_HARD_MEMORY_LIMIT_EXPR": "\"big\""}, None),
    ({"CGROUP_MEMORY_LIMIT_POLICY": "custom", "CGROUP_HARD_MEMORY_LIMIT_EXPR": "NoSuchAttr"}, None),
    ({"CGROUP_MEMORY_LIMIT_POLICY": "custom", "CGROUP_HARD_MEMORY_LIMIT_EXPR": "(("}, None),
    ({"CGROUP_MEMORY_LIMIT_POLICY": "custom", "CGROUP_HARD_MEMORY_LIMIT_EXPR": "0"}, None),
])
def test_the_limit_follows_the_policy(conf, expected):
    found = jobside.memory_limit(conf, SLOT, JOB)
    assert (found["mb"] if found else None) == expected
    if found:
        assert found["slot_mb"] == 64 and found["at_limit"] is True


def test_a_local_universe_job_is_held_to_its_request_only_when_the_configuration_says_so():
    local = ClassAd({"JobUniverse": 12, "RequestMemory": 48})
    assert jobside.memory_limit({}, None, local) is None
    found = jobside.memory_limit({"LOCAL_UNIVERSE_CGROUP_ENFORCEMENT": "true"}, None, local)
    assert (found["mb"], found["slot_mb"]) == (48, 48)
    assert jobside.memory_limit({"LOCAL_UNIVERSE_CGROUP_ENFORCEMENT": "true"}, None, JOB) is None   # (vanilla)
    assert jobside.memory_limit({"LOCAL_UNIVERSE_CGROUP_ENFORCEMENT": "true", "CGROUP_MEMORY_LIMIT_POLICY": "none"},
                                None, local) is None


def test_a_slot_without_a_whole_memory_has_no_limit():
    assert jobside.memory_limit({}, ClassAd({"Cpus": 1}), JOB) is None
    assert jobside.memory_limit({}, ClassAd({"Memory": "64"}), JOB) is None


@pytest.mark.parametrize("text, expected", [("false", False), ("0", False), ("true", True), ("junk(", True)])
def test_starter_always_hold_on_oom_is_read_as_a_boolean(text, expected):
    assert jobside.memory_limit({"STARTER_ALWAYS_HOLD_ON_OOM": text}, SLOT, JOB)["at_limit"] is expected


def test_the_hold_names_the_slots_memory_as_htcondors_starter_does():
    result = {"memory_exceeded": {"mb": 128, "slot_mb": 64, "at_limit": True, "used_mb": 131}}
    assert condorjob.memory_hold(result) == [
        "Job has gone over cgroup memory limit of 64 megabytes. Last measured usage: 64 megabytes.  "
        "Consider resubmitting with a higher request_memory.", 34, 102]
    result["memory_exceeded"]["at_limit"] = False
    assert condorjob.memory_hold(result)[0].startswith(
        "Job has gone over cgroup memory limit of 64 megabytes. Last measured usage: 131 megabytes.")
    assert condorjob.memory_hold({"exit_status": 137}) is None


def test_the_monitor_sees_a_job_go_over_its_limit_and_samples_it_often():
    child = subprocess.Popen([sys.executable, "-c", "import time; x = b'x' * (96 << 20); print(1, flush=True); "
                              "time.sleep(30)"], stdout=subprocess.PIPE)
    try:
        assert child.stdout.readline() == b"1\n"        # (its memory is taken)
        usage = {}
        high = meter.UsageMonitor(child.pid, limit=200 << 20)
        low = meter.UsageMonitor(child.pid, limit=64 << 20)
        free = meter.UsageMonitor(child.pid)
        for monitor in (high, low, free):
            monitor.next_at = 0
            assert monitor.sample(usage)
        assert high.over == 0 and free.over == 0
        assert low.over > 96 << 20
        for _ in range(8):                              # (the waits grow, to half a second at most)
            low.next_at = free.next_at = 0
            low.sample(usage)
            free.sample(usage)
        assert low.next_due() - time.time() <= meter.LIMITED_EVERY
        assert free.next_due() - time.time() > 1
    finally:
        child.kill()
        child.wait()


# ---------------------------------------------------------------- dynamic slots' sizes

PSLOT = ClassAd({"Memory": 4096, "Disk": 1_000_000, "Cpus": 4})


@pytest.mark.parametrize("conf, asked, expected", [
    ({}, (100, 1000), (128, 1024)),                                  # HTCondor's defaults round up
    ({}, (1, 1), (128, 1024)),
    ({}, (128, 2048), (128, 2048)),
    ({}, (129, 2049), (256, 3072)),
    ({"MODIFY_REQUEST_EXPR_REQUESTMEMORY": "RequestMemory * 2"}, (100, 1000), (200, 1024)),
    ({"MODIFY_REQUEST_EXPR_REQUESTMEMORY": "TARGET.Memory / 2"}, (100, 1000), (2048, 1024)),
    ({"MODIFY_REQUEST_EXPR_REQUESTMEMORY": "", "MODIFY_REQUEST_EXPR_REQUESTDISK": ""}, (100, 1000), (100, 1000)),
    ({"MODIFY_REQUEST_EXPR_REQUESTMEMORY": "\"lots\""}, (100, 1000), (100, 1024)),
    ({"MODIFY_REQUEST_EXPR_REQUESTMEMORY": "(("}, (100, 1000), (100, 1024)),
])
def test_a_dynamic_slot_is_sized_by_the_modified_requests(conf, asked, expected):
    from gridtools.daemon.machines import modified_requests
    job = ClassAd({"RequestMemory": asked[0], "RequestDisk": asked[1]})
    assert modified_requests(conf, job, PSLOT, *asked) == expected


def test_requests_that_no_longer_fit_once_modified_are_taken_as_asked():
    from gridtools.daemon.machines import modified_requests
    job = ClassAd({"RequestMemory": 100, "RequestDisk": 1000})
    assert modified_requests({}, job, ClassAd({"Memory": 120, "Disk": 10_000}), 100, 1000) == (100, 1000)
    assert modified_requests({}, job, ClassAd({"Memory": 4096, "Disk": 1020}), 100, 1000) == (100, 1000)
    assert modified_requests({}, job, None, 100, 1000) == (128, 1024)
