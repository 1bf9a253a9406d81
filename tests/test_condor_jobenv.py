"""What HTCondor's starter gives a job (daemon.jobside): BATCH_SYSTEM, the thread-count
variables, _CONDOR_SLOT, and the job's and its slot's ads in files of its scratch
directory (_CONDOR_JOB_AD, _CONDOR_MACHINE_AD), the job owner's alone; a Grid Engine
job's environment has none of them."""

import os
import re

from condortools import submit, wait_events, write
from conftest import wait_for
from gridtools.classad import ClassAd, parse
from gridtools.daemon.jobside import execute_props
from gridtools.formats.condor.userlog import EventType, parse_events

SCRIPT = """#!/bin/sh
env > env.txt
cat "$_CONDOR_JOB_AD" > job.ad
cat "$_CONDOR_MACHINE_AD" > machine.ad
stat -c '%U %a' "$_CONDOR_JOB_AD" "$_CONDOR_MACHINE_AD" > owners.txt
echo "$*" > done.tmp && mv done.tmp done
"""


def _env(workdir):
    with open(os.path.join(workdir, "env.txt")) as fh:
        return dict(line.rstrip("\n").split("=", 1) for line in fh if "=" in line)


def _ad(path):
    """name -> value text of a long form ad file."""
    with open(path) as fh:
        return dict(line.rstrip("\n").split(" = ", 1) for line in fh if " = " in line)


def _run(cell, workdir, description, user=None):
    write(os.path.join(workdir, "job.sh"), SCRIPT, 0o755)
    cluster = submit(cell, "executable = job.sh\narguments = a b\noutput = out.txt\nerror = err.txt\n"
                     + description + "queue\n", cwd=workdir, user=user)
    wait_for(lambda: os.path.exists(os.path.join(workdir, "done")), timeout=30)
    return cluster


def test_a_job_has_its_ads_in_files_and_the_starters_variables(cell, workdir, users):
    """As HTCondor's starter: the ad files in the scratch dir, readable by their owner
    alone (a plain user's job in a cell root started), the thread counts from the
    CPUs the job asked for, unless its own environment sets one."""
    user = users[0]
    os.chmod(workdir, 0o777)
    cluster = _run(cell, workdir, 'request_cpus = 2\nenvironment = "MKL_NUM_THREADS=7"\n', user=user)
    env = _env(workdir)
    assert env["BATCH_SYSTEM"] == "HTCondor"
    for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "OMP_THREAD_LIMIT", "GOMAXPROCS",
                 "NUMEXPR_NUM_THREADS", "ROOT_MAX_THREADS", "TF_NUM_THREADS"):
        assert env[name] == "2", name
    assert env["MKL_NUM_THREADS"] == "7"             # the job's own environment wins
    scratch = env["_CONDOR_SCRATCH_DIR"]
    assert env["_CONDOR_JOB_AD"] == os.path.join(scratch, ".job.ad")
    assert env["_CONDOR_MACHINE_AD"] == os.path.join(scratch, ".machine.ad")
    assert scratch == env["TMPDIR"]
    assert re.fullmatch(r"slot\d+(_\d+)?", env["_CONDOR_SLOT"])
    job = _ad(os.path.join(workdir, "job.ad"))
    assert (job["ClusterId"], job["ProcId"], job["RequestCpus"]) == (str(cluster), "0", "2")
    assert job["Owner"] == f'"{user}"' and job["JobStatus"] == "2"
    assert job["RemoteHost"] == f'"{env["_CONDOR_SLOT"]}@testhost"'
    machine = _ad(os.path.join(workdir, "machine.ad"))
    assert machine["Name"] == job["RemoteHost"]
    assert int(machine["Cpus"]) >= 1 and machine["State"] == '"Claimed"'
    assert machine["RemoteUser"].startswith(f'"{user}@')
    with open(os.path.join(workdir, "owners.txt")) as fh:
        assert fh.read() == f"{user} 600\n{user} 600\n"


def test_one_cpu_and_the_admins_list_of_thread_variables(cell, workdir):
    with open(os.path.join(cell.root, "etc", "condor_config"), "a") as fh:
        fh.write("STARTER_NUM_THREADS_ENV_VARS = OMP_NUM_THREADS, MY_THREADS\n")
    cell.run("condor_reconfig", check=True)
    _run(cell, workdir, "")
    env = _env(workdir)
    assert (env["OMP_NUM_THREADS"], env["MY_THREADS"]) == ("1", "1")
    assert "MKL_NUM_THREADS" not in env
    machine = _ad(os.path.join(workdir, "machine.ad"))
    assert machine["Cpus"] == "1" and machine["Name"] == f'"{env["_CONDOR_SLOT"]}@testhost"'


def test_a_grid_engine_job_has_none_of_them(cell, workdir):
    write(os.path.join(workdir, "job.sh"), "env > env.txt; touch done\n")
    cell.run("qsub", "-cwd", "-pe", "smp", "2", "job.sh", cwd=workdir, check=True)
    wait_for(lambda: os.path.exists(os.path.join(workdir, "done")), timeout=30)
    env = _env(workdir)
    for name in ("BATCH_SYSTEM", "OMP_NUM_THREADS", "_CONDOR_SLOT", "_CONDOR_JOB_AD", "_CONDOR_MACHINE_AD"):
        assert name not in env, name


def test_the_execute_event_names_the_scratch_dir_the_slot_s_resources_and_the_attributes_asked_for(
        cell, workdir):
    """As HTCondor's shadow writes it: CondorScratchDir (the job's _CONDOR_SCRATCH_DIR),
    the slot's Cpus, Disk and Memory (its MachineResources), and the slot's attributes
    ulog_execute_attrs names, with those their values refer to."""
    with open(os.path.join(cell.root, "etc", "condor_config"), "a") as fh:
        fh.write('MyLabel = strcat("lab-", Arch)\nSTARTD_ATTRS = MyLabel\n')
    cell.run("condor_reconfig", check=True)
    cluster = _run(cell, workdir, "log = job.log\nulog_execute_attrs = MyLabel, OpSys, NoSuchAttr\n")
    wait_events(os.path.join(workdir, "job.log"), f"{cluster}.0", [0, 1])
    with open(os.path.join(workdir, "job.log")) as fh:
        [run] = [e for e in parse_events(fh.read()) if e.type == EventType.EXECUTE]
    env, machine = _env(workdir), _ad(os.path.join(workdir, "machine.ad"))
    props = run.info["ExecuteProps"]
    assert props == {"CondorScratchDir": f'"{env["_CONDOR_SCRATCH_DIR"]}"', "Cpus": machine["Cpus"],
                     "Disk": machine["Disk"], "Memory": machine["Memory"],
                     "MyLabel": 'strcat("lab-",Arch)', "Arch": machine["Arch"], "OpSys": '"LINUX"'}
    assert run.info["SlotName"] == machine["Name"].strip('"')


def test_execute_props_follow_htcondor_s_rules():
    """CPUs, Disk and Memory when the slot names no MachineResources, Available<name> with
    what it refers to, and an attribute asked for that was taken already is not taken
    again (nor replaced)."""
    slot = ClassAd({"Cpus": 4, "Disk": 100, "Memory": 512, "GPUs": 1, "Arch": "X86_64"})
    slot["AvailableGPUs"] = parse("{ GPUs_CUDA0 }")
    slot["GPUs_CUDA0"] = parse('[ Id = "CUDA0"; GlobalMemoryMb = 8000 ]')
    assert execute_props(slot, None) == {"CPUs": "4", "Disk": "100", "Memory": "512"}
    slot["MachineResources"] = "Cpus Memory GPUs"
    assert execute_props(slot, "/s", "memory, arch") == {
        "CondorScratchDir": '"/s"', "Cpus": "4", "Memory": "512", "GPUs": "1",
        "AvailableGPUs": "{ GPUs_CUDA0 }", "GPUs_CUDA0": '[ Id = "CUDA0"; GlobalMemoryMb = 8000 ]',
        "arch": '"X86_64"'}
