"""One job model, two dialects: what one side changes or asks of a job is what the other
side shows and what the scheduler uses (priorities, CPU and memory requests, what a run
was given, projects and accounting groups, completed jobs kept in the queue)."""

import os
import re

from conftest import wait_for
from condortools import statuses, submit, wait_events, wait_status, write
from qtools import add_object


def _jid(proc):
    assert proc.returncode == 0, proc.stderr
    return int(re.search(r"Your job (\d+)", proc.stdout).group(1))


def _af(cell, *args):
    proc = cell.run("condor_q", "-allusers", *args)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def _pri_column(cell, jid):
    """The PRI column of condor_q -nobatch for proc ``jid``.0."""
    out = _af(cell, "-nobatch", str(jid))
    head = next(line for line in out.splitlines() if line.split()[:1] == ["ID"])
    row = next(line for line in out.splitlines() if line.split()[:1] == [f"{jid}.0"])
    return int(row.split()[head.split().index("PRI") + 1])    # (SUBMITTED is two words)


def _ppri(cell, jid):
    """qstat -pri's ppri of job ``jid``."""
    out = cell.run("qstat", "-u", "*", "-pri").stdout
    lines = out.splitlines()
    head = lines[0].split()
    for line in lines[2:]:
        fields = line.split()
        if fields and fields[0] == str(jid):
            return int(fields[head.index("ppri")])
    raise AssertionError(f"job {jid} not in qstat -pri:\n{out}")


def _qstat_j(cell, jid):
    proc = cell.run("qstat", "-j", str(jid))
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_job_prio_and_posix_priority_are_two_knobs_each_shown_once(cell, workdir):
    """JobPrio is the job's HTCondor priority for every job: condor_q's PRI column and
    -af JobPrio agree, for a qsub -p job (JobPrio 0, its -p is qstat's ppri), after
    condor_prio (JobPrio changes, ppri does not), and for a condor_submit priority
    (JobPrio, ppri 0)."""
    job = _jid(cell.qsub("-h", "-p", "-100", "-b", "y", "/bin/sleep", "100", cwd=workdir))
    assert _af(cell, str(job), "-af", "JobPrio").split() == ["0"]
    assert _pri_column(cell, job) == 0
    assert _ppri(cell, job) == -100
    assert cell.run("condor_prio", "-p", "7", str(job)).returncode == 0
    wait_for(lambda: _af(cell, str(job), "-af", "JobPrio").split() == ["7"], timeout=30)
    assert _pri_column(cell, job) == 7
    assert _ppri(cell, job) == -100
    assert re.search(r"^priority:\s+-100$", _qstat_j(cell, job), re.M)
    cluster = submit(cell, "executable = /bin/sleep\narguments = 100\npriority = -3\nhold = true\nqueue\n",
                     cwd=workdir)
    assert _af(cell, str(cluster), "-af", "JobPrio").split() == ["-3"]
    assert _pri_column(cell, cluster) == -3
    assert _ppri(cell, cluster) == 0
    cell.run("qdel", str(job), str(cluster))


def test_condor_qedit_of_requests_is_a_change_of_the_job(cell, workdir):
    """condor_qedit RequestCpus and RequestMemory of a qsub job change its Grid Engine
    requests (qstat -j's PE and resource list) and so where it runs (2 slots); qalter -l
    h_vmem of a condor job changes its RequestMemory."""
    job = _jid(cell.qsub("-h", "-b", "y", "/bin/sleep", "300", cwd=workdir))
    assert cell.run("condor_qedit", str(job), "RequestCpus", "2").returncode == 0
    assert cell.run("condor_qedit", str(job), "RequestMemory", "2048").returncode == 0
    wait_for(lambda: _af(cell, str(job), "-af", "RequestCpus", "RequestMemory").split() == ["2", "2048"],
             timeout=30)
    text = _qstat_j(cell, job)
    assert re.search(r"^parallel environment:\s+smp range: 2$", text, re.M), text
    assert re.search(r"^hard resource_list:\s+mem_free=1024M$", text, re.M), text
    assert cell.run("qrls", str(job)).returncode == 0
    wait_status(cell, f"{job}.0", 2, timeout=60)
    row = next(line.split() for line in cell.run("qstat").stdout.splitlines()
               if line.split()[:1] == [str(job)])
    assert row[-1] == "2", row
    assert _af(cell, str(job), "-af", "RequestCpus", "RequestMemory").split() == ["2", "2048"]
    cell.run("qdel", "-f", str(job))
    # the other way: qalter -l of an HTCondor job's memory is its RequestMemory
    cluster = submit(cell, "executable = /bin/sleep\narguments = 100\nrequest_memory = 512\nhold = true\nqueue\n",
                     cwd=workdir)
    assert _af(cell, str(cluster), "-af", "RequestMemory").split() == ["512"]
    assert cell.run("qalter", "-l", "h_vmem=2G", str(cluster)).returncode == 0
    wait_for(lambda: _af(cell, str(cluster), "-af", "RequestMemory").split() == ["2048"], timeout=30)
    assert "h_vmem=2G" in _qstat_j(cell, cluster)
    cell.run("qdel", str(cluster))


def test_a_run_on_two_slots_is_provisioned_two_cpus(cell, workdir):
    """A condor job of request_cpus = 2 runs on two static slots: its execute event and
    its ad say what it was given, 2 CPUs and the memory of both slots."""
    slots = _slot_memory(cell)
    log = os.path.join(workdir, "job.log")
    cluster = submit(cell, "executable = /bin/sleep\narguments = 300\nrequest_cpus = 2\nlog = job.log\nqueue\n",
                     cwd=workdir)
    wait_status(cell, f"{cluster}.0", 2, timeout=60)
    wait_events(log, f"{cluster}.0", [0, 1], timeout=30)
    with open(log) as fh:
        text = fh.read()
    execute = text.split("001 (", 1)[1].split("...", 1)[0]
    assert re.search(r"^\s*Cpus = 2$", execute, re.M), execute
    assert re.search(rf"^\s*Memory = {sum(slots)}$", execute, re.M), execute
    assert _af(cell, str(cluster), "-af", "CpusProvisioned", "MemoryProvisioned").split() \
        == ["2", str(sum(slots))]
    cell.run("qdel", "-f", str(cluster))


def _slot_memory(cell):
    proc = cell.run("condor_status", "-af", "Memory")
    assert proc.returncode == 0, proc.stderr
    found = [int(x) for x in proc.stdout.split()]
    assert len(found) == 2, found
    return found


def test_accounting_group_naming_a_project_is_the_jobs_project(cell, workdir):
    """condor_submit's accounting_group that names a project of the cell makes it the
    job's project (qstat -ext, qacct); one that names no project leaves it without."""
    add_object(cell, "-Aprj", "name proj1\noticket 0\nfshare 0\nacl NONE\nxacl NONE\n")
    mapped = submit(cell, "executable = /bin/true\naccounting_group = proj1\nqueue\n", cwd=workdir, name="a.sub")
    other = submit(cell, "executable = /bin/true\naccounting_group = elsewhere\nqueue\n", cwd=workdir,
                   name="b.sub")
    for jid in (mapped, other):
        cell.wait_finished(jid, timeout=60)

    def project(jid):
        proc = cell.run("qacct", "-j", str(jid))
        found = re.search(r"^project\s+(\S+)\s*$", proc.stdout, re.M)
        return found and found.group(1)
    assert wait_for(lambda: project(mapped), timeout=30) == "proj1"
    assert wait_for(lambda: project(other), timeout=30) == "NONE"
    held = submit(cell, "executable = /bin/true\naccounting_group = proj1\nhold = true\nqueue\n", cwd=workdir,
                  name="c.sub")

    def row():
        ext = cell.run("qstat", "-ext").stdout
        return next(line.split() for line in ext.splitlines() if line.split()[:1] == [str(held)])
    # (the project is the daemon's to give when it takes the job in: until then qstat shows
    # the waiting submission as its client wrote it)
    assert wait_for(lambda: "proj1" in row()), row()
    cell.run("qdel", str(held))


def test_a_completed_job_kept_in_the_queue_is_seen_and_removed_by_qstat_and_qdel(cell, workdir):
    """leave_in_queue keeps a completed job in the queue (condor_q C, qstat -s z): qstat
    -j describes it, and qdel removes it as condor_rm does (X)."""
    write(os.path.join(workdir, "liq.sub"), "executable = /bin/true\nleave_in_queue = true\nqueue\n")
    proc = cell.run("condor_submit", "liq.sub", cwd=workdir)
    assert proc.returncode == 0, proc.stderr
    cluster = int(re.search(r"submitted to cluster (\d+)\.", proc.stdout).group(1))
    wait_status(cell, f"{cluster}.0", 4, timeout=60)
    assert str(cluster) in cell.run("qstat", "-s", "z").stdout.split()
    text = _qstat_j(cell, cluster)
    assert re.search(rf"^job_number:\s+{cluster}$", text, re.M), text
    proc = cell.run("qdel", str(cluster))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "has deleted job" in proc.stdout
    wait_for(lambda: statuses(cell, str(cluster)).get(f"{cluster}.0") in (3, None), timeout=30)
