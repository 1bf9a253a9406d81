"""The table of resources of a run's terminate and evict events (formats.condor.usagetable):
made from the job's ad as HTCondor's shadow makes it, written as HTCondor writes it,
read back as HTCondor's JobEventLog reads it."""

from gridtools.classad import ClassAd, parse
from gridtools.formats.condor.usagetable import parse as parse_table
from gridtools.formats.condor.usagetable import render, title_case, usage_ad

#: a table HTCondor 10's shadow wrote (from HTCondor's own tests), with the blanks it ends
#: its lines with
HTCONDOR_TABLE = ("\tPartitionable Resources :    Usage  Request Allocated \n"
                  "\t   Cpus                 :                 1         1 \n"
                  "\t   Disk (KB)            :      150      150  45831539 \n"
                  "\t   Memory (MB)          :        2        1      4096 \n")
HTCONDOR_USAGE = {"Cpus": 1, "RequestCpus": 1, "Disk": 45831539, "RequestDisk": 150, "DiskUsage": 150,
                  "Memory": 4096, "RequestMemory": 1, "MemoryUsage": 2}


def test_the_table_is_written_as_htcondor_writes_it_and_read_back():
    assert render(HTCONDOR_USAGE) == HTCONDOR_TABLE
    assert parse_table(HTCONDOR_TABLE.splitlines()) == HTCONDOR_USAGE


def test_fractions_devices_and_durations():
    """A column with a fraction shows two decimals and pads its integers to line up; the
    Assigned column appears with a device; the durations are rows of their own; rows
    are sorted whatever their case."""
    usage = {"Cpus": 2, "RequestCpus": 2, "CpusUsage": 0.25, "memory": 512, "RequestMemory": 100,
             "MemoryUsage": 7, "GPUs": 1, "RequestGpus": 1, "AssignedGPUs": "CUDA0",
             "TimeExecuteUsage": 3, "TimeSlotBusyUsage": 4}
    assert render(usage).splitlines() == [
        "\tPartitionable Resources :    Usage  Request Allocated Assigned",
        "\t   Cpus                 :     0.25        2         2 ",
        '\t   GPUs                 :                 1         1 "CUDA0"',
        "\t   memory               :     7         100       512 ",
        "\t   TimeExecute (s)      :     3                       ",
        "\t   TimeSlotBusy (s)     :     4                       "]
    back = parse_table(render(usage).splitlines())
    assert back == {"CpusUsage": 0.25, "RequestCpus": 2, "Cpus": 2, "RequestGPUs": 1, "GPUs": 1,
                    "AssignedGPUs": "CUDA0", "memoryUsage": 7, "Requestmemory": 100, "memory": 512,
                    "TimeExecuteUsage": 3, "TimeSlotBusyUsage": 4}
    assert render({}) == ""


def test_the_usage_ad_is_made_from_the_job_s_ad_as_the_shadow_makes_it():
    """For each resource of ProvisionedResources (CPUs, Disk and Memory when it has
    none), its <Name>Provisioned as the resource itself, Request<Name> and <Name>Usage
    evaluated (numbers only), Assigned<Name>; the two durations."""
    ad = ClassAd({"ProvisionedResources": "Cpus Memory GPUs", "CpusProvisioned": 4, "MemoryProvisioned": 2048,
                  "GPUsProvisioned": 1, "AssignedGPUs": "CUDA1", "RequestCpus": 2, "RequestGPUs": 1,
                  "ImageSize": 10240, "DiskUsage": 99, "ActivationExecutionDuration": 5,
                  "ActivationDuration": 7, "CpusUsage": "busy"})
    ad["RequestMemory"] = parse("ifthenelse(MemoryUsage isnt undefined, MemoryUsage, (ImageSize + 1023) / 1024)")
    assert usage_ad(ad) == {"Cpus": 4, "RequestCpus": 2, "Memory": 2048, "RequestMemory": 10,
                            "GPUs": 1, "RequestGpus": 1, "AssignedGpus": "CUDA1",
                            "TimeExecuteUsage": 5, "TimeSlotBusyUsage": 7}
    ad["MemoryUsage"] = 30
    del ad["ProvisionedResources"]
    assert usage_ad(ad) == {"CPUs": 4, "RequestCpus": 2, "DiskUsage": 99, "Memory": 2048, "RequestMemory": 30,
                            "MemoryUsage": 30, "TimeExecuteUsage": 5, "TimeSlotBusyUsage": 7}


def test_title_case_is_htcondor_s():
    assert [title_case(w) for w in ("GPUs", "cpus", "CPUs", "disk space")] == ["Gpus", "Cpus", "Cpus", "Disk Space"]
