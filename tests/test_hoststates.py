"""Host states (LoadLeveler's startd states) with running jobs: drain, flush, suspend, resume."""

import os
import subprocess

from conftest import destroy_cell, make_cell, wait_for
from gridtools.daemon import qcontrol
from qtools import jid_of, job_pid, queue_letters, reasons, running, state_of, stopped, wait_state


def host_state(cell, host="testhost"):
    for line in cell.run("qhost", "-st").stdout.splitlines():
        fields = line.split()
        if fields and fields[0] == host:
            return fields[-1]
    return None


def sleeper(cell, workdir, *extra):
    jid = jid_of(cell.qsub("-b", "y", *extra, "sleep", "300", cwd=workdir))
    wait_state(cell, jid, ("r", "Rr"))
    return jid


def test_states_from_slot_use():
    assert qcontrol.host_state("", 2, 0, False) == "Idle"
    assert qcontrol.host_state("", 2, 1, False) == "Running"
    assert qcontrol.host_state("", 2, 2, False) == "Busy"
    assert qcontrol.host_state("", 0, 0, False) == "None"
    assert qcontrol.host_state("drain", 2, 1, False) == "Draining"
    assert qcontrol.host_state("drain", 2, 0, False) == "Drained"
    assert qcontrol.host_state("flush", 2, 0, False) == "Flush"
    assert qcontrol.host_state("suspend", 2, 2, False) == "Suspend"
    assert qcontrol.host_state("", 2, 2, True) == "Down"


def test_idle_running_busy(cell, workdir):
    wait_for(lambda: host_state(cell) == "Idle")
    first = sleeper(cell, workdir)
    wait_for(lambda: host_state(cell) == "Running")
    sleeper(cell, workdir)
    wait_for(lambda: host_state(cell) == "Busy")
    cell.run("qdel", str(first), check=True)
    wait_for(lambda: host_state(cell) == "Running")


def test_drain_lets_running_jobs_finish_and_takes_no_new_ones(cell, workdir):
    running_job = sleeper(cell, workdir)
    proc = cell.run("gridtools", "host", "drain", "testhost")
    assert (proc.returncode, proc.stdout) == (0, 'root drained host "testhost"\n')
    wait_for(lambda: host_state(cell) == "Draining")
    waiting = jid_of(cell.qsub("-b", "y", "true", cwd=workdir))
    why = 'queue instance "all.q@testhost" dropped because host "testhost" is draining'
    wait_for(lambda: why in reasons(cell, waiting))
    assert state_of(cell, running_job) == "r" and state_of(cell, waiting) == "qw"
    assert "d" in queue_letters(cell, "all.q@testhost")
    cell.run("qdel", str(running_job), check=True)
    wait_for(lambda: host_state(cell) == "Drained")
    assert state_of(cell, waiting) == "qw"
    assert cell.run("gridtools", "host", "resume", "testhost").stdout == 'root resumed host "testhost"\n'
    cell.wait_finished(waiting)
    wait_for(lambda: host_state(cell) == "Idle")


def test_flush_puts_running_jobs_back_into_the_queue(cell, workdir):
    jobs = [sleeper(cell, workdir), sleeper(cell, workdir, "-r", "n")]
    pids = [job_pid(cell, j) for j in jobs]
    proc = cell.run("llctl", "-h", "testhost", "flush")
    assert (proc.returncode, proc.stdout) == (0, 'root flushed host "testhost"\n')
    for jid in jobs:
        wait_state(cell, jid, "Rq")
    wait_for(lambda: not any(running(p) for p in pids))
    assert host_state(cell) == "Flush"
    why = 'queue instance "all.q@testhost" dropped because host "testhost" is flushed'
    wait_for(lambda: why in reasons(cell, jobs[0]))
    cell.run("llctl", "-h", "testhost", "resume", check=True)
    for jid in jobs:
        wait_state(cell, jid, "Rr")
        assert cell.job_state(jid)["tasks"]["1"]["restarted"] == 1
    assert host_state(cell) == "Busy"


def test_suspend_stops_every_job_where_it_stands(cell, workdir):
    jobs = [sleeper(cell, workdir), sleeper(cell, workdir)]
    pids = [job_pid(cell, j) for j in jobs]
    cell.run("qmod", "-sj", str(jobs[0]), check=True)
    proc = cell.run("gridtools", "host", "suspend", "testhost")
    assert (proc.returncode, proc.stdout) == (0, 'root suspended host "testhost"\n')
    wait_state(cell, jobs[1], "S")
    wait_for(lambda: all(stopped(p) for p in pids))
    assert host_state(cell) == "Suspend"
    assert "s" in queue_letters(cell, "all.q@testhost")
    waiting = jid_of(cell.qsub("-b", "y", "true", cwd=workdir))
    cell.run("gridtools", "host", "resume", "testhost", check=True)
    wait_state(cell, jobs[1], "r")
    wait_for(lambda: running(pids[1]))
    assert state_of(cell, jobs[0]) == "s" and stopped(pids[0])   # suspended by qmod: stays
    assert state_of(cell, waiting) == "qw"                       # suspended jobs keep their slots
    cell.run("qdel", str(jobs[0]), check=True)
    cell.wait_finished(waiting)


def test_host_states_survive_a_restart_and_llctl_g_takes_every_host(cell):
    cell.run("llctl", "-g", "drain", check=True)
    wait_for(lambda: host_state(cell) == "Drained")
    cell.stop_daemon()
    cell.start_daemon()
    wait_for(lambda: host_state(cell) == "Drained")
    cell.run("gridtools", "host", "resume", "--all", check=True)
    wait_for(lambda: host_state(cell) == "Idle")


def test_unknown_hosts_and_arguments(cell):
    proc = cell.run("gridtools", "host", "drain", "nosuchhost")
    assert proc.returncode == 1
    assert proc.stderr == '"nosuchhost" is not an execution host\n'
    proc = cell.run("llctl", "explode")
    assert proc.returncode == 1 and 'unknown argument "explode"' in proc.stderr


def test_a_host_whose_execution_daemon_went_away_is_down():
    cell = make_cell(hosts=["testhost", "node2"])
    execd = subprocess.Popen(["gridtools", "execd", "--host", "node2"], env=cell.env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for(lambda: os.path.exists(os.path.join(cell.root, "spool", "execd", "node2", "execd.lock")))
        wait_for(lambda: host_state(cell, "node2") == "Idle")
        execd.terminate()
        execd.wait(timeout=10)
        cell.qsub("-h", "-b", "y", "true", cwd="/tmp")      # the dispatcher looks on its next pass
        wait_for(lambda: host_state(cell, "node2") == "Down")
        assert host_state(cell) == "Idle"
    finally:
        if execd.poll() is None:
            execd.kill()
        destroy_cell(cell)


def _slots(cell):
    """Sorted (State, Activity, Start) of the slots condor_status shows."""
    out = cell.run("condor_status", "-af", "State", "Activity", "Start", check=True).stdout
    return sorted(tuple(line.split()) for line in out.splitlines())


def test_condor_status_shows_a_drained_or_suspended_host_as_a_startd_does(cell, workdir):
    """Drained, a host's claimed slot retires and its other slots are Drained, counted
    in the summary's Drain column; suspended, its claimed slot's job is Suspended and the
    others take no job (Owner); START is false on every slot either way, so condor_q
    -analyze counts none as available. A flushed host has no slot at all."""
    from condortools import submit
    slots = len(_slots(cell))
    cluster = submit(cell, "executable = /bin/sleep\narguments = 300\nqueue\n", cwd=workdir)
    wait_for(lambda: ("Claimed", "Busy", "true") in _slots(cell))
    cell.run("llctl", "-h", "testhost", "drain", check=True)
    wait_for(lambda: _slots(cell) == [("Claimed", "Retiring", "false")] + [("Drained", "Idle", "false")] * (slots - 1))
    total = cell.run("condor_status", "-total", check=True).stdout.splitlines()
    head, line = total[0].split(), total[-1].split()
    assert line[0] == "Total" and line[head.index("Drain") + 1] == str(slots - 1)
    idle = submit(cell, "executable = /bin/true\nqueue\n", cwd=workdir, name="idle.sub")
    analysis = cell.run("condor_q", "-analyze", f"{idle}.0", check=True).stdout
    assert f"Of {slots} machines," in analysis and "\n      0 are available to run your job\n" in analysis
    cell.run("llctl", "-h", "testhost", "suspend", check=True)
    wait_for(lambda: _slots(cell) == [("Claimed", "Suspended", "false")] + [("Owner", "Idle", "false")] * (slots - 1))
    cell.run("llctl", "-h", "testhost", "flush", check=True)
    wait_for(lambda: _slots(cell) == [])
    analysis = cell.run("condor_q", "-analyze", f"{idle}.0", check=True).stdout
    assert "Of 0 machines," in analysis and "\n      0 are available to run your job\n" in analysis
    cell.run("llctl", "-h", "testhost", "resume", check=True)
    cell.run("condor_rm", str(cluster), str(idle), check=True)
