"""condor_submit's start-up: a plain description, and dask-jobqueue's, are submitted
without the modules of what only other descriptions or configurations need (the
list of every submit command for the unused-line warning, the rarer setters of the
job's attributes and of its spec, the checks of submit requirements and queue
limits), while the descriptions that need them still get what they need.
"""

import os
import subprocess
import sys

from conftest import BIN, REPO
from test_fastpath import PROGRAM

from gridtools.cli.condor import submit, submit_unused
from gridtools.formats.condor import jobattrs
from gridtools.formats.condor.jobad import ALIASES
from gridtools.formats.condor.submit import parse_submit

#: the modules a plain submission does without
RARE = {"gridtools.cli.condor.submit_unused", "gridtools.cli.condor.submit_checks",
        "gridtools.cli.condor.submit_more", "gridtools.formats.condor.jobattrs_rare",
        "gridtools.formats.condor.specmore"}

DASK = ('MY.DaskWorkerName = "htcondor--$F(MY.JobId)--"\nbatch_name = HTCondorCluster-0\n'
        "RequestCpus = MY.DaskWorkerCores\nRequestMemory = floor(MY.DaskWorkerMemory / 1048576)\n"
        'RequestDisk = floor(MY.DaskWorkerDisk / 1024)\nMY.JobId = "$(ClusterId).$(ProcId)"\n'
        "MY.DaskWorkerCores = 1\nMY.DaskWorkerMemory = 1073741824\nMY.DaskWorkerDisk = 1073741824\n"
        "LogDirectory = {logs}\nOutput = $(LogDirectory)/worker-$F(MY.JobId).out\n"
        "Error = $(LogDirectory)/worker-$F(MY.JobId).err\nLog = $(LogDirectory)/worker-$(ClusterId).log\n"
        "Stream_Output = True\nStream_Error = True\nhold = true\n\n"
        "Arguments = \"-c '/usr/bin/python3 -m distributed.cli.dask_worker tcp://127.0.0.1:39311'\"\n"
        "Executable = /bin/sh\n\nQueue\n")


def _modules(cell, *args):
    """The modules condor_submit has loaded when it leaves, and its CompletedProcess."""
    proc = subprocess.run([sys.executable, "-I", "-S", "-c", PROGRAM, os.path.join(REPO, "src"),
                           os.path.join(BIN, "condor_submit"), *args],
                          capture_output=True, text=True, env=cell.env, cwd="/tmp", timeout=60)
    listed = [line for line in proc.stderr.splitlines() if line.startswith("MODULES ")]
    return set(listed[-1].split()[1:]) if listed else set(), proc


def test_plain_and_dask_submissions_leave_the_rare_modules_out(cell, tmp_path):
    plain = tmp_path / "plain.sub"
    plain.write_text("executable = /bin/true\narguments = a b\noutput = out\nerror = err\n"
                     "request_memory = 100\nhold = true\nqueue\n")
    dask = tmp_path / "dask.sub"
    dask.write_text(DASK.format(logs=tmp_path))
    for path in (plain, dask, plain):           # (the second plain run starts from the bundle)
        loaded, proc = _modules(cell, str(path))
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.startswith("Submitting job(s).\n1 job(s) submitted to cluster ")
        assert "WARNING" not in proc.stderr, proc.stderr
        assert "gridtools.cli.condor.submit" in loaded and not loaded & RARE, sorted(loaded & RARE)


def test_the_descriptions_that_need_them_still_get_what_they_need(cell, tmp_path):
    sub = tmp_path / "rare.sub"
    sub.write_text("executable = /bin/true\nuniverse = 5\ntypo_here = 1\nMacroUsed = x\n"
                   "output = $(MacroUsed).out\nrequest_gpus = 0\nhold = true\nqueue\n")
    loaded, proc = _modules(cell, str(sub), "-append", "unused2 = 3")
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.count("was unused by condor_submit") == 2, proc.stderr
    assert "WARNING: the line 'typo_here = 1' was unused by condor_submit. Is it a typo?" in proc.stderr
    assert "WARNING: the line 'unused2 = 3' was unused by condor_submit. Is it a typo?" in proc.stderr
    assert {"gridtools.cli.condor.submit_unused", "gridtools.formats.condor.jobattrs_rare"} <= loaded
    cluster = proc.stdout.strip().rpartition(" ")[2].rstrip(".")
    shown = cell.run("condor_q", cluster, "-af", "JobUniverse", "Out", "RequestGPUs").stdout
    assert shown == f"5 {tmp_path}/x.out 0\n" or shown == "5 x.out 0\n", shown
    bad = tmp_path / "bad.sub"
    bad.write_text("executable = /bin/true\nuniverse = 1\nqueue\n")
    proc = cell.run("condor_submit", str(bad))
    assert proc.returncode == 1 and "'Standard' is not a supported universe." in proc.stderr


def test_the_plain_commands_are_each_one_condor_submit_reads():
    known = (submit_unused.KNOWN_COMMANDS | set(ALIASES) | set(ALIASES.values()) | jobattrs.MORE_COMMANDS
             | jobattrs.DEFERRAL_COMMANDS | jobattrs.CONTAINER_COMMANDS)
    assert submit.PLAIN_COMMANDS <= known


def test_the_quick_look_finds_every_line_the_full_check_warns_of():
    texts = ["executable = /bin/true\nqueue\n", DASK.format(logs="/tmp"),
             "executable = x\nfoo = 1\nqueue\n", "executable = x\nFoo = 1\narguments = $(foo)\nqueue\n",
             "executable = x\nFoo = 1\narguments = $(Foo)\nqueue\n", "executable = x\nFoo = 1\nerror = $(Foo)(\nqueue\n",
             "executable = x\nA = 1\noutput = $$(A)\nqueue\n", "executable = x\nrequest_foo = 2\nqueue\n",
             "executable = x\n+Attr = 1\nMY.Other = 2\nqueue\n"]
    for text in texts:
        desc = parse_submit(text)
        if not submit._may_be_unused(desc, text):
            assert submit_unused.unused_lines(desc, text) == [], text
    assert submit._may_be_unused(parse_submit(texts[2]), texts[2])
    assert not submit._may_be_unused(parse_submit(texts[0]), texts[0])


def test_a_job_without_an_environment_does_without_its_parser(cell, tmp_path):
    """The environment's parser is not loaded for a job that has none; arguments are read
    by a module condor_submit loads at its start, not by that parser. The log's creation
    does not load the standard library's ``stat`` (nor ``os``)."""
    bare = tmp_path / "bare.sub"
    bare.write_text(f"executable = /bin/true\nlog = {tmp_path}/bare.log\nhold = true\nqueue\n")
    dask = tmp_path / "dask.sub"
    dask.write_text(DASK.format(logs=tmp_path))
    for path in (bare, dask, bare):
        loaded, proc = _modules(cell, str(path))
        assert proc.returncode == 0, proc.stderr
        assert "gridtools.ownfiles" in loaded           # (each creates its log)
        assert not loaded & {"stat", "os"}, sorted(loaded & {"stat", "os"})
        assert "gridtools.formats.condor.argsenv" not in loaded
        assert "gridtools.formats.condor.args" in loaded
        if path == dask:
            cluster = proc.stdout.strip().rpartition(" ")[2].rstrip(".")
            shown = cell.run("condor_q", cluster, "-af", "Arguments").stdout
            assert shown == "-c /usr/bin/python3' '-m' 'distributed.cli.dask_worker' 'tcp://127.0.0.1:39311\n", shown
    assert (tmp_path / "bare.log").exists()
    cluster = proc.stdout.strip().rpartition(" ")[2].rstrip(".")
    assert cell.run("condor_q", cluster, "-af", "Environment", "Arguments").stdout == " \n"
