"""What a job's slots change: the per-slot limits its processes get (Grid Engine's shepherd
multiplies h_vmem, h_cpu, ... by the slots the job holds on the host), and ``-l slots=N``,
which asks for N slots on one host."""

import os

import pytest

from conftest import destroy_cell, make_cell, wait_for
from qtools import add_object, jid_of, wait_state

from gridtools.daemon.dispatch import _numeric_limits
from gridtools.exec.plan import LIMITS
from gridtools.formats import values
from gridtools.model.resources import Complex, Consumable, CxType, Relop

INF = values.INFINITY
M = 1024 * 1024


def write(workdir, name, body):
    path = os.path.join(workdir, name)
    with open(path, "w") as fh:
        fh.write(body)
    os.chmod(path, 0o755)
    return path


def output(cell, workdir, jid, name):
    cell.wait_finished(jid, timeout=30)
    with open(os.path.join(workdir, name)) as fh:
        return fh.read()


# ---------------------------------------------------------------- per-slot limits

def _limits(hard, queue=None, slots=1, job_consumables=(), **spec):
    table = {name: Complex(name, name, CxType.MEMORY, Relop.LE, consumable=Consumable.JOB)
             for name in job_consumables}
    spec["resources"] = {"hard": hard}
    return _numeric_limits(spec, dict.fromkeys(LIMITS, INF) | (queue or {}), slots, table)


def test_per_slot_limits_are_multiplied_by_the_slots_on_the_host():
    got = _limits({"h_vmem": "300M", "s_vmem": "200M", "h_cpu": "0:1:40", "h_stack": "10M",
                   "h_data": "1G", "h_rss": "100M", "h_fsize": "50M", "h_rt": "60", "h_core": "1M"},
                  {"s_cpu": 30.0, "s_data": 500 * M, "s_stack": 8 * M}, slots=3)
    assert (got["h_vmem"], got["s_vmem"], got["h_cpu"], got["s_cpu"]) == (900 * M, 600 * M, 300, 90)
    assert (got["h_data"], got["s_data"], got["h_stack"], got["s_stack"]) == (3072 * M, 1500 * M, 30 * M, 24 * M)
    # as Grid Engine's shepherd: rss, file size, core and the wall clock are not per slot
    assert (got["h_rss"], got["h_fsize"], got["h_core"], got["h_rt"]) == (100 * M, 50 * M, 1 * M, 60)
    assert got["s_rss"] == INF and got["s_rt"] == INF


def test_one_slot_the_cap_of_the_queue_and_infinity():
    assert _limits({"h_vmem": "300M"}, slots=1)["h_vmem"] == 300 * M
    # the job's value is capped by the queue's before it is multiplied
    assert _limits({"h_vmem": "3G"}, {"h_vmem": 1024 * M}, slots=2)["h_vmem"] == 2048 * M
    assert _limits({}, slots=4)["h_vmem"] == INF


def test_a_requested_consumable_job_limit_is_the_jobs_whole():
    got = _limits({"h_vmem": "300M"}, {"s_vmem": 100 * M}, slots=2,
                  job_consumables=("h_vmem", "s_vmem"))
    assert got["h_vmem"] == 300 * M
    # a JOB consumable that the job does not request: the queue's value, per slot
    assert got["s_vmem"] == 200 * M


def test_an_htcondor_jobs_limits_are_not_multiplied():
    got = _limits({"h_vmem": "300M"}, slots=4, condor_ad="MyType = \"Job\"")
    assert got["h_vmem"] == 300 * M


MEM = """#!/bin/bash
echo "NSLOTS=$NSLOTS v=$(ulimit -H -v) sv=$(ulimit -S -v) t=$(ulimit -t) m=$(ulimit -m)"
python3 -c 'b = bytearray(400 * 1024 * 1024); print("allocated 400M")'
"""


def test_a_parallel_job_gets_its_limits_times_its_slots(cell, workdir):
    cell.run("qconf", "-mattr", "queue", "s_vmem", "250M", "all.q", check=True)
    job = write(workdir, "mem.sh", MEM)
    jid = jid_of(cell.qsub("-cwd", "-j", "y", "-o", "par.out", "-pe", "smp", "2",
                           "-l", "h_vmem=300M,h_cpu=100,h_rss=100M", job, cwd=workdir))
    assert output(cell, workdir, jid, "par.out").splitlines() == [
        "NSLOTS=2 v=614400 sv=512000 t=200 m=102400", "allocated 400M"]
    jid = jid_of(cell.qsub("-cwd", "-j", "y", "-o", "one.out", "-l", "h_vmem=300M", job, cwd=workdir))
    lines = output(cell, workdir, jid, "one.out").splitlines()
    assert lines[0] == "NSLOTS=1 v=307200 sv=256000 t=unlimited m=unlimited"
    assert "allocated 400M" not in lines and "MemoryError" in "".join(lines)


def test_a_consumable_job_limit_is_not_multiplied(cell, workdir):
    text = cell.run("qconf", "-sc", check=True).stdout
    rows = [" ".join(line.split()[:5] + ["JOB"] + line.split()[6:]) if line.startswith("h_vmem ")
            else line for line in text.splitlines()]
    add_object(cell, "-Mc", "\n".join(rows) + "\n")
    cell.run("qconf", "-mattr", "exechost", "complex_values", "h_vmem=4G", cell.host, check=True)
    job = write(workdir, "mem.sh", MEM)
    jid = jid_of(cell.qsub("-cwd", "-j", "y", "-o", "job.out", "-pe", "smp", "2", "-l", "h_vmem=300M",
                           job, cwd=workdir))
    lines = output(cell, workdir, jid, "job.out").splitlines()
    assert lines[0] == "NSLOTS=2 v=307200 sv=307200 t=unlimited m=unlimited"
    assert "allocated 400M" not in lines


# ---------------------------------------------------------------- -l slots=N

SLOTS = """#!/bin/sh
echo "NSLOTS=$NSLOTS PE=$PE"
while [ ! -e "$1" ]; do sleep 0.1; done
"""


@pytest.fixture
def four_slots():
    cell = make_cell(slots=4)
    try:
        yield cell
    finally:
        destroy_cell(cell)


def _slots_column(cell, jid):
    for line in cell.run("qstat", check=True).stdout.splitlines()[2:]:
        words = line.split()
        if words[0] == str(jid):
            return words[4], int(words[-1])
    return None


def test_slots_request_books_that_many_slots_on_one_host(four_slots, workdir):
    cell = four_slots
    job = write(workdir, "slots.sh", SLOTS)
    first_go, second_go = os.path.join(workdir, "go1"), os.path.join(workdir, "go2")
    first = jid_of(cell.qsub("-cwd", "-j", "y", "-o", "first.out", "-l", "slots=3", job, first_go, cwd=workdir))
    wait_state(cell, first, "r")
    second = jid_of(cell.qsub("-cwd", "-j", "y", "-o", "second.out", "-l", "slots=3", job, second_go,
                              cwd=workdir))
    assert _slots_column(cell, first) == ("r", 3)
    wait_for(lambda: "qw" in cell.run("qstat", check=True).stdout)
    assert _slots_column(cell, second) == ("qw", 3)
    assert "0/3/4" in cell.run("qstat", "-f", check=True).stdout
    detail = cell.run("qstat", "-j", str(first), check=True).stdout
    assert "hard resource_list:         slots=3" in detail
    assert "parallel environment:  smp range: 3" in detail
    # a job of one slot still fits beside the first; the second waits until the first ends
    one = jid_of(cell.qsub("-cwd", "-j", "y", "-o", "one.out", "-l", "slots=1", job, "/", cwd=workdir))
    cell.wait_finished(one, timeout=20)
    assert _slots_column(cell, second) == ("qw", 3)
    open(first_go, "w").close()
    cell.wait_finished(first, timeout=20)
    wait_state(cell, second, "r")
    open(second_go, "w").close()
    cell.wait_finished(second, timeout=20)
    for name, expected in (("first.out", "NSLOTS=3 PE=smp"), ("second.out", "NSLOTS=3 PE=smp"),
                           ("one.out", "NSLOTS=1 PE=")):
        with open(os.path.join(workdir, name)) as fh:
            assert fh.read().splitlines() == [expected]


def test_a_pe_request_keeps_its_count_over_slots(cell, workdir):
    job = write(workdir, "slots.sh", SLOTS)
    jid = jid_of(cell.qsub("-cwd", "-j", "y", "-o", "pe.out", "-pe", "smp", "2", "-l", "slots=5", job, "/",
                           cwd=workdir))
    assert output(cell, workdir, jid, "pe.out").splitlines() == ["NSLOTS=2 PE=smp"]


def test_slots_without_a_single_host_pe_is_refused(cell, workdir):
    cell.run("qconf", "-mattr", "pe", "allocation_rule", "$fill_up", "smp", check=True)
    done = cell.qsub("-cwd", "-b", "y", "-l", "slots=2", "true", cwd=workdir)
    assert done.returncode == 1
    assert done.stderr == ('Unable to run job: "job" denied: use parallel environments instead of '
                           "requesting slots explicitly\nExiting.\n")
    assert done.stdout == ""


def test_qalter_slots_of_a_job_without_a_pe_asks_for_that_many_on_one_host(cell, workdir):
    """qalter -l slots=N of a pending job without -pe gives it N slots of the single-host
    PE, as qsub does; a job with a PE keeps its count."""
    jid = jid_of(cell.qsub("-h", "-b", "y", "true", cwd=workdir))
    cell.run("qalter", "-l", "slots=2", str(jid), check=True)
    shown = cell.run("qstat", "-j", str(jid)).stdout
    assert "parallel environment:  smp range: 2" in shown and "slots=2" in shown
    other = jid_of(cell.qsub("-h", "-pe", "smp", "3", "-b", "y", "true", cwd=workdir))
    cell.run("qalter", "-l", "slots=2", str(other), check=True)
    assert "parallel environment:  smp range: 3" in cell.run("qstat", "-j", str(other)).stdout
