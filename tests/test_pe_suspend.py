"""Suspending a parallel job stops every task of it on every host: qmod -sj (and qmod -s
of a queue instance it runs in) stops the job script and the tasks it started with
qrsh -inherit, on its own host and on the other one, and the nodes of an HTCondor
parallel universe job; qmod -usj (qmod -us) continues them all."""

import os
import signal

import pytest

from condortools import submit, write
from conftest import destroy_cell, make_cell, wait_for
from qtools import add_object, jid_of, process_state, wait_state

PE = """pe_name            rr
slots              999
user_lists         NONE
xuser_lists        NONE
start_proc_args    NONE
stop_proc_args     NONE
allocation_rule    $round_robin
control_slaves     TRUE
job_is_first_task  FALSE
urgency_slots      min
accounting_summary FALSE
qsort_args         NONE
"""

JOB = """#!/bin/sh
other=$(awk -v h="$HOSTNAME" '$1 != h {{print $1}}' "$PE_HOSTFILE")
echo "$other" > {dir}/other
qrsh -inherit "$other" 'echo $$ > {dir}/t1.tmp; mv {dir}/t1.tmp {dir}/t1.pid; exec sleep 120' &
qrsh -inherit "$HOSTNAME" 'echo $$ > {dir}/t2.tmp; mv {dir}/t2.tmp {dir}/t2.pid; exec sleep 120' &
echo $$ > {dir}/m.tmp; mv {dir}/m.tmp {dir}/m.pid
wait
"""


@pytest.fixture
def two_hosts():
    cell = make_cell(slots=2, hosts=["testhost", "node2"], execds=True)
    try:
        yield cell
    finally:
        destroy_cell(cell)


def _read(workdir, files):
    try:
        return [int(open(os.path.join(workdir, f)).read()) for f in files]
    except (OSError, ValueError):
        return None


def _pids(workdir, names):
    return wait_for(lambda: _read(workdir, [f"{n}.pid" for n in names]), timeout=30)


def _all(pids, letter):
    return all(process_state(p) == letter for p in pids)


def _none(pids, letter):
    return all(process_state(p) not in (letter, None) for p in pids)


def test_qmod_sj_stops_every_task_of_a_pe_job_on_every_host(two_hosts, workdir):
    cell = two_hosts
    add_object(cell, "-Ap", PE)
    cell.run("qconf", "-aattr", "queue", "pe_list", "rr", "all.q", check=True)
    jid = jid_of(cell.qsub("-V", "-pe", "rr", "4", "-o", f"{workdir}/out", "-j", "y",
                           input=JOB.format(dir=workdir), cwd=workdir))
    pids = _pids(workdir, ("m", "t1", "t2"))
    wait_state(cell, jid, "r")
    assert _none(pids, "T")

    out = cell.run("qmod", "-sj", str(jid))
    assert out.returncode == 0 and "suspended job" in out.stdout
    wait_state(cell, jid, "s")
    wait_for(lambda: _all(pids, "T"), timeout=15)     # the job script and both tasks

    cell.run("qmod", "-usj", str(jid), check=True)
    wait_state(cell, jid, "r")
    wait_for(lambda: _none(pids, "T"), timeout=15)

    # the queue instance of the other host suspended: the job (and its tasks) stop
    other = open(os.path.join(workdir, "other")).read().strip()
    cell.run("qmod", "-s", f"all.q@{other}", check=True)
    wait_state(cell, jid, "S")
    wait_for(lambda: _all(pids, "T"), timeout=15)
    cell.run("qmod", "-us", f"all.q@{other}", check=True)
    wait_state(cell, jid, "r")
    wait_for(lambda: _none(pids, "T"), timeout=15)

    # qmod -s JOBID (without j) suspends the job as well
    cell.run("qmod", "-s", str(jid), check=True)
    wait_state(cell, jid, "s")
    wait_for(lambda: _all(pids, "T"), timeout=15)
    cell.run("qmod", "-us", str(jid), check=True)
    wait_for(lambda: _none(pids, "T"), timeout=15)
    cell.run("qdel", str(jid), check=True)
    cell.wait_finished(jid, timeout=30)


LATE = """#!/bin/sh
other=$(awk -v h="$HOSTNAME" '$1 != h {{print $1}}' "$PE_HOSTFILE")
echo $$ > {dir}/m.tmp; mv {dir}/m.tmp {dir}/m.pid
while [ ! -e {dir}/go ]; do sleep 0.1; done
qrsh -inherit "$other" 'echo $$ > {dir}/t1.tmp; mv {dir}/t1.tmp {dir}/t1.pid; exec sleep 120' &
wait $!
echo $? > {dir}/t1.tmp; mv {dir}/t1.tmp {dir}/t1.status
"""


def test_a_task_started_while_its_job_is_suspended_is_stopped(two_hosts, workdir):
    """A process of the job that was not stopped (here: signalled on) starts a task."""
    cell = two_hosts
    add_object(cell, "-Ap", PE)
    cell.run("qconf", "-aattr", "queue", "pe_list", "rr", "all.q", check=True)
    cell.run("qconf", "-mattr", "queue", "suspend_method", "SIGUSR1", "all.q", check=True)
    jid = jid_of(cell.qsub("-V", "-pe", "rr", "4", "-o", f"{workdir}/out", "-j", "y",
                           input="trap '' USR1\n" + LATE.format(dir=workdir), cwd=workdir))
    _pids(workdir, ("m",))
    cell.run("qmod", "-sj", str(jid), check=True)
    wait_state(cell, jid, "s")
    open(os.path.join(workdir, "go"), "w").close()
    # the task's suspend_method (SIGUSR1, trapped by neither its shell nor sleep) ends it,
    # whether it comes before the task wrote its pid or after: qrsh -inherit says the task
    # was killed by it (128 + 10), long before its sleep would have ended
    status, = wait_for(lambda: _read(workdir, ["t1.status"]), timeout=30)
    assert status == 128 + signal.SIGUSR1
    cell.wait_finished(jid, timeout=30)          # (its script ends once the task ended)


NODE = """#!/bin/sh
echo $$ > pidtmp.$_CONDOR_PROCNO && mv pidtmp.$_CONDOR_PROCNO pid.$_CONDOR_PROCNO
exec sleep 120
"""


def test_every_node_of_a_condor_parallel_job_is_suspended(two_hosts, workdir):
    cell = two_hosts
    write(os.path.join(workdir, "node.sh"), NODE)
    os.chmod(os.path.join(workdir, "node.sh"), 0o755)
    cluster = submit(cell, "universe = parallel\nexecutable = node.sh\nmachine_count = 4\n"
                     "output = out.$(Node)\nerror = err.$(Node)\nlog = par.log\nqueue\n", cwd=workdir)
    pids = wait_for(lambda: _read(workdir, [f"pid.{n}" for n in range(4)]), timeout=30)
    wait_state(cell, cluster, "r")
    cell.run("qmod", "-sj", str(cluster), check=True)
    wait_state(cell, cluster, "s")
    wait_for(lambda: _all(pids, "T"), timeout=15)
    cell.run("qmod", "-usj", str(cluster), check=True)
    wait_state(cell, cluster, "r")
    wait_for(lambda: _none(pids, "T"), timeout=15)
    cell.run("condor_rm", str(cluster), check=True)
    cell.wait_finished(cluster, timeout=30)
