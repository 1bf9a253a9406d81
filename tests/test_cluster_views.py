"""A cell of several execution hosts as its users see it: where -masterq puts the
master task, qstat -g t and qhost -j lines of a PE whose job_is_first_task is FALSE."""

import os

import pytest

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
    out = cell.run("qstat", "-g", "t", check=True).stdout.splitlines()
    lines, mine = [], False
    for line in out[2:]:
        words = line.split()
        if words and words[0].isdigit():
            mine = int(words[0]) == jid
        if mine:
            lines.append((next(w for w in words if "@" in w), words[-1]))
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
