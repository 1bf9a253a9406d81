"""condor_qedit of the RequestCpus and RequestMemory of a job submitted with qsub: a value
its Grid Engine requests cannot hold is refused (as qsub and qalter refuse it), and an
edit while a task runs leaves the PE and slots that task was granted, which qstat -j
and its accounting record name."""

import os
import re

from conftest import wait_for
from condortools import wait_status


def _jid(proc):
    assert proc.returncode == 0, proc.stderr
    return int(re.search(r"Your job (\d+)", proc.stdout).group(1))


def _af(cell, jid, *attrs):
    proc = cell.run("condor_q", str(jid), "-af", *attrs)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.split()


def _qstat_j(cell, jid):
    proc = cell.run("qstat", "-j", str(jid))
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def _qacct(cell, jid):
    """qacct -j's fields of job ``jid`` (once its record is written)."""
    def fields():
        proc = cell.run("qacct", "-j", str(jid))
        return proc.returncode == 0 and dict(line.split(None, 1) for line in proc.stdout.splitlines()
                                             if len(line.split(None, 1)) == 2)
    return wait_for(fields, timeout=30)


def _requests(text):
    """qstat -j's lines of the job's PE and resource requests."""
    return [line for line in text.splitlines() if line.startswith(("parallel environment", "hard resource_list"))]


def _state(cell, jid):
    """qstat's state of job ``jid`` ("" when it is not listed)."""
    for line in cell.run("qstat").stdout.splitlines():
        fields = line.split()
        if fields[:1] == [str(jid)]:
            return fields[4]
    return ""


def _gated(cell, workdir, *options):
    """A qsub job that runs until the file ``go`` of ``workdir`` is there."""
    script = os.path.join(workdir, "gated.sh")
    with open(script, "w") as fh:
        fh.write(f"#!/bin/sh\nwhile [ ! -e {os.path.join(workdir, 'go')} ]; do sleep 0.1; done\n")
    return _jid(cell.qsub(*options, script, cwd=workdir))


def test_a_request_memory_beyond_what_qsub_takes_is_refused_and_nothing_changes(cell, workdir):
    job = _jid(cell.qsub("-h", "-b", "y", "/bin/sleep", "60", cwd=workdir))
    before = _requests(_qstat_j(cell, job))
    for value in ("10000000000000", "1e300"):
        proc = cell.run("condor_qedit", str(job), "RequestMemory", value)
        assert proc.returncode == 1, proc.stdout
        assert f'Failed to set attribute "RequestMemory" for job {job}.0: attribute "mem_free" is not a ' \
               "memory value:" in proc.stderr, proc.stderr
        assert "is out of range (at most 9223372036854775807 bytes)" in proc.stderr, proc.stderr
        assert "Set attribute" not in proc.stdout
    proc = cell.run("condor_qedit", str(job), "RequestCpus", "100000000")
    assert proc.returncode == 1 and "out of range" in proc.stderr, proc.stderr
    assert _requests(_qstat_j(cell, job)) == before == []
    assert _af(cell, job, "RequestCpus") == ["1"]
    # a large value it can hold is its request, and keeps the job waiting
    assert cell.run("condor_qedit", str(job), "RequestMemory", "100000000").returncode == 0
    assert re.search(r"^hard resource_list:\s+mem_free=100000000M$", _qstat_j(cell, job), re.M)
    assert _af(cell, job, "RequestMemory") == ["100000000"]


def test_request_cpus_of_a_running_pe_job_leaves_the_pe_it_runs_in(cell, workdir):
    job = _gated(cell, workdir, "-pe", "smp", "2")
    wait_status(cell, f"{job}.0", 2, timeout=60)
    assert cell.run("condor_qedit", str(job), "RequestCpus", "1").returncode == 0
    assert _af(cell, job, "RequestCpus") == ["1"]          # (the ad says what was asked)
    assert re.search(r"^parallel environment:\s+smp range: 2$", _qstat_j(cell, job), re.M)
    open(os.path.join(workdir, "go"), "w").close()
    acct = _qacct(cell, job)
    assert (acct["granted_pe"].strip(), acct["slots"].strip()) == ("smp", "2"), acct


def test_request_cpus_of_a_running_job_gives_it_no_pe_it_was_not_granted(cell, workdir):
    job = _gated(cell, workdir)
    wait_status(cell, f"{job}.0", 2, timeout=60)
    assert cell.run("condor_qedit", str(job), "RequestCpus", "2").returncode == 0
    assert _af(cell, job, "RequestCpus") == ["2"]
    assert "parallel environment" not in _qstat_j(cell, job)
    open(os.path.join(workdir, "go"), "w").close()
    acct = _qacct(cell, job)
    assert (acct["granted_pe"].strip(), acct["slots"].strip()) == ("NONE", "1"), acct


def test_requests_edited_while_it_ran_go_into_the_description_with_the_next_edit(cell, workdir):
    """The edit that lay over the running job's ad is not lost: once it waits again, the
    next edit brings it into its requests."""
    job = _gated(cell, workdir, "-r", "y")
    wait_status(cell, f"{job}.0", 2, timeout=60)
    assert cell.run("condor_qedit", str(job), "RequestCpus", "2").returncode == 0
    assert cell.run("qhold", str(job)).returncode == 0
    assert cell.run("qmod", "-rj", str(job)).returncode == 0
    wait_for(lambda: _state(cell, job) in ("hqw", "hRq"), timeout=60)       # (waiting again, held)
    assert cell.run("condor_qedit", str(job), "RequestMemory", "2048").returncode == 0
    text = _qstat_j(cell, job)
    assert re.search(r"^parallel environment:\s+smp range: 2$", text, re.M), text
    assert re.search(r"^hard resource_list:\s+mem_free=1024M$", text, re.M), text
    assert _af(cell, job, "RequestCpus", "RequestMemory") == ["2", "2048"]
    cell.run("qdel", "-f", str(job))
