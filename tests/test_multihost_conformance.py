"""Execution hosts of a cell with several of them, as Grid Engine shows and handles them:
a host whose execution daemon is gone, or has not reported for max_unheard, keeps its
static load values (arch, num_proc, mem_total, swap_total, virtual_total) and loses the
others; a load threshold on a value the host does not have puts its queue instances in
load alarm (``au`` on a host not heard from); ``qconf -de`` of a host a queue instance
still refers to (an orphaned one too) is refused in Grid Engine's words; an orphaned
queue instance keeps its queue's type; ``qrsh -inherit`` to a host the job holds no
queue on is refused as Grid Engine's execution daemon refuses it."""

import os

import pytest

from conftest import destroy_cell, make_cell, wait_for
from qtools import (add_object, hold_execd_lock, jid_of, queue_line, queue_letters, reasons, report_load, set_attr,
                    state_of, wait_state)
from test_pe_suspend import PE

#: node2's load report: static values (arch ... swap_total) and changing ones
REPORT = {"arch": "lx-amd64", "num_proc": 3, "load_avg": 7.5, "np_load_avg": 2.5,
          "mem_total": "1.0G", "mem_used": "512.0M", "swap_total": "2.0G", "swap_used": "0.0",
          "virtual_total": "3.0G", "virtual_used": "512.0M"}


@pytest.fixture
def two_hosts():
    cell = make_cell(hosts=["testhost", "node2"])
    try:
        yield cell
    finally:
        destroy_cell(cell)




def _qhost_row(cell, host):
    rows = [line.split() for line in cell.run("qhost").stdout.splitlines()[3:]]
    return next((row for row in rows if row and row[0] == host), None)


def _host_values(cell, host):
    """name -> value of the host's load values as qhost -F lists them."""
    found = {}
    for line in cell.run("qhost", "-F", "-h", host).stdout.splitlines():
        word = line.strip()
        if word.startswith("hl:"):
            name, _, value = word[3:].partition("=")
            found[name] = value
    return found


def _served(cell, age=0.0):
    """node2 served by a stand-in execution daemon that has reported; its descriptor."""
    fd = hold_execd_lock(cell, "node2")
    report_load(cell, "node2", age=age, **REPORT)
    wait_for(lambda: (_qhost_row(cell, "node2") or [""] * 7)[2] == "3", timeout=20)
    return fd


#: qhost columns: HOSTNAME ARCH NCPU NSOC NCOR NTHR LOAD MEMTOT MEMUSE SWAPTO SWAPUS
STATIC_COLUMNS = (1, 2, 7, 9)
CHANGING_COLUMNS = (6, 8, 10)


def test_a_host_whose_execd_is_gone_keeps_its_static_values(two_hosts):
    cell = two_hosts
    fd = _served(cell)
    try:
        seen = _qhost_row(cell, "node2")
        assert [seen[i] for i in CHANGING_COLUMNS] != ["-", "-", "-"]
    finally:
        os.close(fd)                            # its execution daemon is gone
    wait_for(lambda: "u" in queue_letters(cell, "all.q@node2"), timeout=20)
    row = wait_for(lambda: (lambda r: r if r and r[6] == "-" else None)(_qhost_row(cell, "node2")), timeout=20)
    assert [row[i] for i in STATIC_COLUMNS] == [seen[i] for i in STATIC_COLUMNS] == ["lx-amd64", "3", "1.0G", "2.0G"]
    assert [row[i] for i in CHANGING_COLUMNS] == ["-", "-", "-"]
    values = _host_values(cell, "node2")
    assert values.get("arch") == "lx-amd64" and values.get("num_proc") == "3.000000"
    assert "mem_total" in values and "swap_total" in values and "virtual_total" in values
    assert not {"load_avg", "np_load_avg", "mem_used", "virtual_used"} & set(values)
    # qstat -f: the arch stays, the load is -NA-
    fields = queue_line(cell, "all.q@node2").split()
    assert fields[3:5] == ["-NA-", "lx-amd64"], fields


def test_a_host_not_heard_for_max_unheard_loses_its_changing_values(two_hosts):
    cell = two_hosts
    edit = cell.run("qconf", "-mconf", env={"EDITOR": "sed -i 's/^max_unheard .*/max_unheard 0:0:5/'"})
    assert edit.returncode == 0, edit.stderr
    fd = _served(cell)
    try:
        assert _host_values(cell, "node2").get("np_load_avg")
        report_load(cell, "node2", age=60.0, **REPORT)        # its daemon still holds its lock, but is silent
        wait_for(lambda: "u" in queue_letters(cell, "all.q@node2"), timeout=20)
        row = wait_for(lambda: (lambda r: r if r and r[6] == "-" else None)(_qhost_row(cell, "node2")),
                       timeout=20)
        assert [row[i] for i in STATIC_COLUMNS] == ["lx-amd64", "3", "1.0G", "2.0G"]
        assert [row[i] for i in CHANGING_COLUMNS] == ["-", "-", "-"]
        assert "np_load_avg" not in _host_values(cell, "node2")
        assert queue_line(cell, "all.q@node2").split()[3] == "-NA-"
        report_load(cell, "node2", **REPORT)                  # it reports again: its values are back
        wait_for(lambda: (_qhost_row(cell, "node2") or [""] * 7)[6] == "7.50", timeout=20)
        assert "u" not in queue_letters(cell, "all.q@node2")
    finally:
        os.close(fd)


def test_a_threshold_on_a_missing_value_is_a_load_alarm(two_hosts, workdir):
    cell = two_hosts
    set_attr(cell, "all.q", "load_thresholds", "np_load_avg=100")
    os.close(_served(cell))                     # node2's execution daemon is gone
    wait_for(lambda: queue_letters(cell, "all.q@node2") == "au", timeout=20)
    assert queue_letters(cell, "all.q@testhost") == ""
    explain = cell.run("qstat", "-f", "-explain", "a").stdout
    assert 'error: no value for "np_load_avg" because execd is in unknown state' in explain
    # a host that reports, but not the value a threshold names: in alarm, and no job
    # goes there until the queue gives the value itself
    cell.run("qconf", "-mc", env={"EDITOR": "sh -c 'echo \"foo foo DOUBLE >= YES NO 0 0\" >> $1' sh"},
             check=True)
    set_attr(cell, "all.q", "load_thresholds", "foo=5")
    wait_for(lambda: queue_letters(cell, "all.q@testhost") == "a", timeout=20)
    explain = cell.run("qstat", "-f", "-explain", "a").stdout
    assert "error: no complex attribute for threshold foo" in explain
    jid = jid_of(cell.qsub("-q", "all.q@testhost", "-b", "y", "true", cwd=workdir))
    wait_for(lambda: 'queue instance "all.q@testhost" dropped because it is overloaded: '
             'no value for complex attribute "foo"' in reasons(cell, jid), timeout=20)
    assert state_of(cell, jid) == "qw"
    set_attr(cell, "all.q", "complex_values", "foo=1")
    cell.wait_finished(jid)
    assert queue_letters(cell, "all.q@testhost") == ""


def test_qconf_de_of_a_host_a_queue_instance_refers_to(two_hosts, workdir):
    cell = two_hosts
    release = os.path.join(workdir, "release")
    jid = jid_of(cell.qsub("-q", "all.q@node2", "-b", "y", "sh", "-c",
                           f"'while [ ! -e {release} ]; do sleep 0.1; done'", cwd=workdir))
    wait_state(cell, jid, "r")
    refused = 'Host object "node2" is still referenced in cluster queue "all.q".\n'
    proc = cell.run("qconf", "-de", "node2")
    assert (proc.returncode, proc.stderr) == (1, refused)
    # out of @allhosts while the job runs: its queue instance stays, orphaned, with the
    # queue's type, and still refers to the host
    cell.run("qconf", "-dattr", "hostgroup", "hostlist", "node2", "@allhosts", check=True)
    wait_for(lambda: "o" in queue_letters(cell, "all.q@node2"))
    assert queue_line(cell, "all.q@node2").split()[1] == queue_line(cell, "all.q@testhost").split()[1] == "BIP"
    proc = cell.run("qconf", "-de", "node2")
    assert (proc.returncode, proc.stderr) == (1, refused)
    # held by a host group alone
    add_object(cell, "-Ahgrp", "group_name @spare\nhostlist node2\n")
    open(release, "w").close()
    cell.wait_finished(jid)
    wait_for(lambda: queue_line(cell, "all.q@node2") is None)
    proc = cell.run("qconf", "-de", "node2")
    assert (proc.returncode, proc.stderr) == (1, 'Host object "node2" is still referenced in host group "@spare".\n')
    cell.run("qconf", "-dhgrp", "@spare", check=True)
    proc = cell.run("qconf", "-de", "node2")
    assert proc.returncode == 0, proc.stderr


JOB = """#!/bin/sh
qrsh -inherit node2 true
echo "node2 $?"
qrsh -inherit nowhere true
echo "nowhere $?"
"""


def test_qrsh_inherit_to_a_host_the_job_does_not_hold(two_hosts, workdir):
    cell = two_hosts
    add_object(cell, "-Ap", PE)
    cell.run("qconf", "-aattr", "queue", "pe_list", "rr", "all.q", check=True)
    jid = jid_of(cell.qsub("-V", "-pe", "rr", "2", "-q", "all.q@testhost", "-o", f"{workdir}/out",
                           "-e", f"{workdir}/err", input=JOB, cwd=workdir))
    cell.wait_finished(jid, timeout=40)
    assert open(f"{workdir}/out").read().splitlines() == ["node2 1", "nowhere 1"]
    assert open(f"{workdir}/err").read().splitlines() == [
        f'error: executing task of job {jid} failed: execution daemon on host "{host}" didn\'t accept task'
        for host in ("node2", "nowhere")]
