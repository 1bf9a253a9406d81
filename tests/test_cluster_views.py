"""A cell of several execution hosts as its users see it: where -masterq puts the
master task, qstat -g t and qhost -j lines of a PE whose job_is_first_task is FALSE,
condor_status for hosts whose execution daemon is gone or whose queue instance is
disabled, condor_status -compact, Requirements that pick a slot, qconf -ke, and
gridtools execd for a host the cell does not have."""

import os
import re

import pytest

from condortools import submit, wait_gone, wait_status
from conftest import destroy_cell, make_cell, wait_for
from qtools import jid_of

HOSTS = ["testhost", "node2", "node3"]


@pytest.fixture(scope="module")
def cluster():
    cell = make_cell(slots=2, hosts=HOSTS)
    try:
        yield cell
    finally:
        destroy_cell(cell)


def _running(cell, jid):
    wait_for(lambda: cell.task_states(jid).get(1) == "running", timeout=30)


def _gt_lines(cell, jid):
    """(queue instance, MASTER or SLAVE) of each line of the job in qstat -g t, as the
    daemon last published it (a line of the job still waiting names no queue)."""
    out = cell.run("qstat", "-g", "t", check=True).stdout.splitlines()
    lines, mine = [], False
    for line in out[2:]:
        words = line.split()
        if words and words[0].isdigit():
            mine = int(words[0]) == jid
        queues = [w for w in words if "@" in w]
        if mine and queues:
            lines.append((queues[0], words[-1]))
    return lines


def test_masterq_places_the_master_task_and_first_task_false_adds_a_line(cluster):
    """-pe make 3 (round robin, job_is_first_task FALSE) with -masterq all.q@node3: node3
    is the first line of the PE host file, and qstat -g t shows MASTER and SLAVE there
    (4 lines for 3 slots), qhost -j the same for node3."""
    jid = jid_of(cluster.qsub("-pe", "make", "3", "-masterq", "all.q@node3", "-b", "y", "sleep", "60",
                              cwd="/tmp"))
    try:
        _running(cluster, jid)
        hostfile = os.path.join(cluster.root, "spool", "jobs", str(jid), "1", "pe_hostfile")
        wait_for(lambda: os.path.exists(hostfile))
        with open(hostfile) as fh:
            assert fh.readline().split()[:2] == ["node3", "1"]
        # (qstat shows what the daemon published, which may come a moment after the task
        # started: wait until it shows the job's four lines)
        wait_for(lambda: len(_gt_lines(cluster, jid)) == 4, timeout=30)
        lines = _gt_lines(cluster, jid)
        assert lines[:2] == [("all.q@node3", "MASTER"), ("all.q@node3", "SLAVE")]
        assert sorted(lines[2:]) == [("all.q@node2", "SLAVE"), ("all.q@testhost", "SLAVE")]
        out = cluster.run("qhost", "-j", "-h", "node3", check=True).stdout
        assert [line.split()[-1] for line in out.splitlines()
                if line.split()[-1:] in (["MASTER"], ["SLAVE"])] == ["MASTER", "SLAVE"]
    finally:
        cluster.run("qdel", str(jid))
    # a master queue that cannot take the master task: the job waits, with Grid Engine's reason
    cluster.run("qmod", "-d", "all.q@node3", check=True)
    try:
        jid = jid_of(cluster.qsub("-pe", "make", "2", "-masterq", "all.q@node3", "-b", "y", "true",
                                  cwd="/tmp"))
        wait_for(lambda: 'cannot run in PE "make" because it only offers'
                 in cluster.run("qstat", "-j", str(jid)).stdout, timeout=30)
        assert cluster.task_states(jid).get(1) in (None, "pending")
        cluster.run("qmod", "-e", "all.q@node3", check=True)
        cluster.wait_finished(jid, timeout=30)
        assert cluster.job_state(jid)["tasks"]["1"]["host"] == "node3"
    finally:
        cluster.run("qmod", "-e", "all.q@node3")


def _slots(cell, *more):
    out = cell.run("condor_status", *more, "-af", "Name", "State", "Start", check=True).stdout
    return {line.split()[0]: tuple(line.split()[1:]) for line in out.splitlines() if line.strip()}


def _host_state(cell, host):
    rows = [line.split() for line in cell.run("qhost", "-st", check=True).stdout.splitlines()]
    return next(row[-1] for row in rows if row and row[0] == host)


def test_condor_status_of_a_down_host_and_a_disabled_queue_instance(workdir):
    """The slots of a host whose execd is gone are left out; those of a disabled queue
    instance are Owner with Start false, and -better-analyze counts none available."""
    cell = make_cell(slots=2, hosts=HOSTS)
    try:
        procs = cell.start_execds(["node2", "node3"])
        wait_for(lambda: "slot1@node3" in _slots(cell))
        procs[1].terminate()
        procs[1].wait(timeout=10)
        wait_for(lambda: not any(n.endswith("@node3") for n in _slots(cell)), timeout=20)
        assert _host_state(cell, "node3") == "Down"
        cell.run("qmod", "-d", "all.q@node2", check=True)
        wait_for(lambda: _slots(cell).get("slot1@node2") == ("Owner", "false"))
        slots = _slots(cell)
        assert slots["slot2@node2"] == ("Owner", "false")
        assert slots["slot1@testhost"] == ("Unclaimed", "true")
        assert not any(n.endswith("@node2") for n in _slots(cell, "-avail"))
        cluster = submit(cell, 'executable = /bin/true\nrequirements = Machine == "node2"\nqueue\n', cwd=workdir)
        out = cell.run("condor_q", "-better-analyze", str(cluster), check=True).stdout
        assert "0 are available to run your job" in out
        cell.run("qmod", "-e", "all.q@node2", check=True)
        wait_gone(cell, f"{cluster}.0", timeout=30)        # it ran on node2 and left the queue
        # -compact: one line per machine that has slot ads
        out = cell.run("condor_status", "-compact", check=True).stdout.splitlines()
        assert out[0].split() == ["Machine", "Platform", "Slots", "Cpus", "Gpus", "TotalGb", "FreCpu",
                                  "FreeGb", "CpuLoad", "ST", "Jobs/Min", "MaxSlotGb"]
        rows = {line.split()[0]: line.split() for line in out[2:] if line.strip() and "/" in line.split()[1]
                and not line.startswith(" ")}
        assert sorted(rows) == ["node2", "testhost"]
        assert rows["node2"][2:4] == ["2S", "2"] and rows["node2"][-3] == "Ui"
        assert "Total Owner Claimed Unclaimed" in "\n".join(out)
        total = cell.run("condor_status", "-com", "-total")    # (-total ignores -compact, as HTCondor)
        assert total.stderr == "Warning: ignoring -compact option because -total option is also set\n"
        assert total.stdout == cell.run("condor_status", "-total", check=True).stdout
    finally:
        destroy_cell(cell)


def test_requirements_that_name_a_slot_take_that_slot(cluster, workdir):
    cluster_id = submit(cluster, 'executable = /bin/sleep\narguments = 30\n'
                        'requirements = TARGET.Name == "slot2@testhost"\nqueue\n', cwd=workdir)
    try:
        wait_status(cluster, f"{cluster_id}.0", (2,), timeout=30)
        out = cluster.run("condor_status", "-af", "Name", "JobId", check=True).stdout
        assert f"slot2@testhost {cluster_id}.0" in out.splitlines()
    finally:
        cluster.run("condor_rm", str(cluster_id))


def test_qconf_ke_marks_the_host_down_at_once():
    """After qconf -ke the host takes no job, also in the first seconds (Grid Engine marks
    it unheard at once): a job pinned to it waits."""
    cell = make_cell(slots=2, hosts=["testhost", "node2"])
    try:
        cell.start_execds(["node2"])
        # passes just before -ke (a job's start and end): the hosts were looked at then
        cell.wait_finished(jid_of(cell.qsub("-b", "y", "true", cwd="/tmp")))
        cell.run("qconf", "-ke", "node2", check=True)
        jid = jid_of(cell.qsub("-l", "h=node2", "-b", "y", "true", cwd="/tmp"))
        wait_for(lambda: "temporarily not available" in cell.run("qstat", "-j", str(jid)).stdout)
        assert cell.task_states(jid).get(1) in (None, "pending")
        assert _host_state(cell, "node2") == "Down"
    finally:
        destroy_cell(cell)


def test_execd_refuses_a_host_the_cell_does_not_have(cluster):
    proc = cluster.run("gridtools", "execd", "--host", "nosuchhost", timeout=20)
    assert proc.returncode == 1
    assert proc.stderr == 'gridtools execd: "nosuchhost" is not an execution host\n'
    assert not os.path.exists(os.path.join(cluster.root, "spool", "execd", "nosuchhost"))


def _procs(cell, cluster_id, *attrs):
    out = cell.run("condor_q", str(cluster_id), "-af", "ProcId", *attrs, check=True).stdout
    return {int(line.split()[0]): line.split()[1:] for line in out.splitlines() if line.strip()}


def test_procs_that_name_one_slot_take_it_one_after_the_other(workdir):
    """Procs of one cluster whose Requirements name the same slot, placed in one pass:
    one runs on that slot, the others wait (never on another slot) and run on it in
    turn; a proc naming a slot keeps it from a sibling placed before it in the pass."""
    cell = make_cell(slots=4)
    try:
        cluster_id = submit(cell, 'executable = /bin/sleep\narguments = 3\n'
                            'log = q3.log\nrequirements = TARGET.Name == "slot2@testhost"\nqueue 3\n',
                            cwd=workdir)
        wait_for(lambda: [p[0] for p in _procs(cell, cluster_id, "JobStatus").values()].count("2") == 1,
                 timeout=30)

        def one_at_a_time():
            procs = _procs(cell, cluster_id, "JobStatus", "RemoteHost")
            running = {n: p[1] for n, p in procs.items() if p[0] == "2"}
            assert len(running) <= 1, procs
            assert set(running.values()) <= {"slot2@testhost"}, procs
            assert all(p[0] in ("1", "2") for p in procs.values()), procs
            return not procs
        wait_for(one_at_a_time, timeout=60, interval=0.2)
        runs, text = [], open(os.path.join(workdir, "q3.log")).read()
        for event, proc, more in re.findall(r"^(00[15]) \(\d+\.(\d+)\.\d+\)[^\n]*\n((?:\t[^\n]*\n)*)",
                                            text, re.M):
            slot = re.search(r"SlotName: (\S+)", more)
            runs.append((event, int(proc)) + ((slot.group(1),) if event == "001" else ()))
        assert len(runs) == 6 and sorted(p for _e, p, *_s in runs[::2]) == [0, 1, 2]
        for start, end in zip(runs[::2], runs[1::2]):           # each ran alone, on slot2
            assert start == ("001", start[1], "slot2@testhost") and end == ("005", start[1]), runs

        # proc 0 asks for two CPUs and names no slot, proc 1 names slot2: one pass
        # places both, and proc 0's two slots leave slot2 to proc 1
        cluster_id = submit(cell, 'executable = /bin/sleep\narguments = 30\nrequest_cpus = 2\nqueue\n'
                            'request_cpus = 1\nrequirements = TARGET.Name == "slot2@testhost"\nqueue\n',
                            cwd=workdir)
        wait_for(lambda: [p[0] for p in _procs(cell, cluster_id, "JobStatus").values()] == ["2", "2"],
                 timeout=30)
        assert _procs(cell, cluster_id, "RemoteHost")[1] == ["slot2@testhost"]
        out = cell.run("condor_status", "-af", "Name", "JobId", check=True).stdout.splitlines()
        assert sorted(line for line in out if line.endswith(f" {cluster_id}.0")) == \
            [f"slot1@testhost {cluster_id}.0", f"slot3@testhost {cluster_id}.0"]
        cell.run("condor_rm", str(cluster_id), check=True)
    finally:
        destroy_cell(cell)
