"""qmod against a running daemon: queue states, job suspension, clearing errors, rescheduling."""

import os

from conftest import REPO, destroy_cell, make_cell, wait_for
from qtools import (jid_of, job_pid, queue_letters, reasons, running, set_attr, state_of,
                    stopped, wait_state)

Q = "all.q@testhost"


def reference_stdout(name):
    with open(os.path.join(REPO, "tests", "data", "reference", "sge", name)) as fh:
        text = fh.read()
    return text.split("# ---- stdout ----\n", 1)[1].split("# ---- stderr ----", 1)[0]


def sleeper(cell, workdir, *extra, seconds=300):
    return jid_of(cell.qsub("-b", "y", *extra, "sleep", str(seconds), cwd=workdir))


def test_help_is_grid_engines():
    import subprocess
    out = subprocess.run([os.path.join(REPO, "bin", "qmod"), "-help"], capture_output=True, text=True)
    assert out.returncode == 0
    assert out.stdout == reference_stdout("qmod-help.txt")


def test_disable_and_enable_a_queue(cell, workdir):
    proc = cell.run("qmod", "-d", "all.q")
    assert (proc.returncode, proc.stdout) == (0, f'root@testhost changed state of "{Q}" (disabled)\n')
    proc = cell.run("qmod", "-d", Q)
    assert proc.stdout == f'Queue instance "{Q}" is already in the specified state: disabled\n'
    assert proc.returncode == 0
    assert queue_letters(cell, Q) == "d"
    jid = jid_of(cell.qsub("-b", "y", "true", cwd=workdir))
    wait_for(lambda: f'queue instance "{Q}" dropped because it is disabled' in reasons(cell, jid))
    assert state_of(cell, jid) == "qw"
    proc = cell.run("qmod", "-e", "all.q")
    assert proc.stdout == f'root@testhost changed state of "{Q}" (enabled)\n'
    cell.wait_finished(jid)
    assert queue_letters(cell, Q) == ""


def test_unknown_queues_and_jobs_are_refused(cell):
    proc = cell.run("qmod", "-e", "nosuch.q")
    assert (proc.returncode, proc.stdout) == (1, 'invalid queue "nosuch.q"\n')
    proc = cell.run("qmod", "-s", "nosuch")
    assert (proc.returncode, proc.stdout) == (1, 'invalid queue or job "nosuch"\n')
    # sge_qmod_qmaster.c: a job action that finds nothing is MSG_QUEUE_INVALIDQORJOB_S
    proc = cell.run("qmod", "-sj", "4242")
    assert (proc.returncode, proc.stdout) == (1, 'invalid queue or job "4242"\n')
    proc = cell.run("qmod", "-cj", "4242")
    assert (proc.returncode, proc.stdout) == (1, 'invalid queue or job "4242"\n')
    jid = int(cell.qsub("-h", "-t", "1-3", "-b", "y", "true").stdout.split()[2].split(".")[0])
    proc = cell.run("qmod", "-sj", f"{jid}.9")        # a task the job does not have
    assert (proc.returncode, proc.stdout) == (1, f'invalid queue or job "{jid}"\n')
    proc = cell.run("qmod", "-sj", f"{jid}.2")
    assert (proc.returncode, proc.stdout) == (
        0, f"Modify operation can not be applied on job-array task {jid}.2 in pending/hold state\n")
    proc = cell.run("qmod", "-d")
    assert proc.returncode == 1 and "needs a list of queues" in proc.stderr


def test_suspending_a_queue_stops_its_jobs_until_it_is_resumed(cell, workdir):
    first, second = sleeper(cell, workdir), sleeper(cell, workdir)
    wait_state(cell, first, "r")
    wait_state(cell, second, "r")
    pids = {first: job_pid(cell, first), second: job_pid(cell, second)}
    proc = cell.run("qmod", "-s", "all.q")
    assert proc.stdout == f'root@testhost changed state of "{Q}" (suspended)\n'
    wait_state(cell, first, "S")
    wait_state(cell, second, "S")
    assert queue_letters(cell, Q) == "s"
    wait_for(lambda: all(stopped(p) for p in pids.values()))
    proc = cell.run("qmod", "-us", Q)
    assert proc.stdout == f'root@testhost changed state of "{Q}" (unsuspended)\n'
    wait_state(cell, first, "r")
    wait_for(lambda: all(running(p) for p in pids.values()))


def test_a_job_suspended_explicitly_stays_suspended_when_its_queue_resumes(cell, workdir):
    mine, other = sleeper(cell, workdir), sleeper(cell, workdir)
    wait_state(cell, mine, "r")
    wait_state(cell, other, "r")
    pid, other_pid = job_pid(cell, mine), job_pid(cell, other)
    assert cell.run("qmod", "-sj", str(mine)).stdout == f"root - suspended job {mine}\n"
    wait_for(lambda: stopped(pid))
    cell.run("qmod", "-sq", "all.q", check=True)
    wait_state(cell, other, "S")
    cell.run("qmod", "-usq", "all.q", check=True)
    wait_state(cell, other, "r")
    wait_for(lambda: running(other_pid))
    assert state_of(cell, mine) == "s" and stopped(pid)
    assert cell.run("qmod", "-usj", str(mine)).stdout == f"root - unsuspended job {mine}\n"
    wait_state(cell, mine, "r")
    wait_for(lambda: running(pid))


def _listed(cell, *states):
    """Job ids (as text) that ``qstat -s states`` lists."""
    return [line.split()[0] for line in cell.run("qstat", "-s", *states).stdout.splitlines()[2:]]


def test_a_held_job_shows_its_hold_beside_each_suspension(cell, workdir):
    """Grid Engine writes every state letter in its order (d S T h R r s): a held job
    suspended by qmod -sj is hs, by its queue Sh, by a threshold Th; -s s and -s hu list it."""
    jid = sleeper(cell, workdir)
    wait_state(cell, jid, "r")
    pid = job_pid(cell, jid)
    cell.run("qhold", str(jid), check=True)
    wait_state(cell, jid, "hr")
    assert _listed(cell, "hu") == [str(jid)] and _listed(cell, "s") == []
    cell.run("qmod", "-sj", str(jid), check=True)
    wait_state(cell, jid, "hs")
    wait_for(lambda: stopped(pid))
    assert _listed(cell, "s") == [str(jid)] and _listed(cell, "r") == []
    cell.run("qmod", "-usj", str(jid), check=True)
    wait_state(cell, jid, "hr")
    cell.run("qmod", "-s", "all.q", check=True)
    wait_state(cell, jid, "Sh")
    assert _listed(cell, "s") == [str(jid)]
    cell.run("qmod", "-us", "all.q", check=True)
    wait_state(cell, jid, "hr")
    set_attr(cell, "all.q", "suspend_interval", "0:0:1")
    set_attr(cell, "all.q", "suspend_thresholds", "np_load_avg=0")
    wait_state(cell, jid, "Th")
    assert _listed(cell, "s") == [str(jid)]
    set_attr(cell, "all.q", "suspend_thresholds", "NONE")
    wait_state(cell, jid, "hr")
    cell.run("qrls", str(jid), check=True)
    wait_state(cell, jid, "r")
    wait_for(lambda: running(pid))


def test_a_job_suspended_for_two_reasons_shows_both_letters(cell, workdir):
    """Suspended by its user and by its queue, a job is Ss (by a threshold too, STs:
    a threshold picks only running jobs, so it comes first); lifting one suspension
    leaves the other's letter; -s s lists it all along."""
    jid = sleeper(cell, workdir)
    wait_state(cell, jid, "r")
    cell.run("qmod", "-sj", str(jid), check=True)
    wait_state(cell, jid, "s")
    cell.run("qmod", "-s", "all.q", check=True)
    wait_state(cell, jid, "Ss")
    assert _listed(cell, "s") == [str(jid)]
    cell.run("qmod", "-us", "all.q", check=True)
    cell.run("qmod", "-usj", str(jid), check=True)
    wait_state(cell, jid, "r")
    set_attr(cell, "all.q", "suspend_interval", "0:0:1")
    set_attr(cell, "all.q", "suspend_thresholds", "np_load_avg=0")
    wait_state(cell, jid, "T")
    cell.run("qmod", "-sj", str(jid), check=True)
    cell.run("qmod", "-s", "all.q", check=True)
    wait_state(cell, jid, "STs")
    assert _listed(cell, "s") == [str(jid)]
    cell.run("qmod", "-us", "all.q", check=True)
    wait_state(cell, jid, "Ts")
    proc = cell.run("qmod", "-usj", str(jid))
    assert (proc.returncode, proc.stdout) == (1, f"root@testhost removed administrator suspension of job {jid} "
                                                 "(suspend threshold is still active)\n")
    wait_state(cell, jid, "T")
    set_attr(cell, "all.q", "suspend_thresholds", "NONE")
    wait_state(cell, jid, "r")


def test_job_suspension_messages(cell, workdir):
    run = sleeper(cell, workdir)
    wait_state(cell, run, "r")
    assert cell.run("qmod", "-sj", str(run)).stdout == f"root - suspended job {run}\n"
    proc = cell.run("qmod", "-sj", str(run))
    assert (proc.returncode, proc.stdout) == (0, f"root - job {run} is already suspended\n")
    assert cell.run("qmod", "-us", str(run)).stdout == f"root - unsuspended job {run}\n"
    assert cell.run("qmod", "-usj", str(run)).stdout == f"root - job {run} is already unsuspended\n"
    assert cell.run("qmod", "-f", "-usj", str(run)).stdout == f"root - forced enabling of job {run}\n"
    cell.run("qmod", "-sj", str(run), check=True)
    proc = cell.run("qmod", "-f", "-us", str(run))
    assert proc.stdout == f"root@testhost forced unsuspension of job {run}\n"
    wait_state(cell, run, "r")
    held = jid_of(cell.qsub("-h", "-b", "y", "true", cwd=workdir))
    proc = cell.run("qmod", "-sj", str(held))
    assert proc.stdout == f"Modify operation can not be applied on job-array task {held}.1 in pending/hold state\n"
    assert proc.returncode == 0


def test_array_tasks_are_suspended_one_by_one(cell, workdir):
    jid = jid_of(cell.qsub("-t", "1-2", "-b", "y", "sleep", "300", cwd=workdir))
    wait_for(lambda: state_of(cell, f"{jid}.2") == "r")
    proc = cell.run("qmod", "-sj", f"{jid}.2")
    assert proc.stdout == f"root - suspended job-array task {jid}.2\n"
    wait_for(lambda: state_of(cell, f"{jid}.2") == "s")
    assert state_of(cell, f"{jid}.1") == "r"
    proc = cell.run("qmod", "-usj", str(jid), "-t", "2")
    assert proc.stdout == f"root - unsuspended job-array task {jid}.2\n"


def test_clear_job_error_state(cell, workdir):
    jid = jid_of(cell.qsub("-wd", "/nonexistent/dir", "-b", "y", "true", cwd=workdir))
    wait_state(cell, jid, "Eqw")
    cell.run("qhold", str(jid), check=True)
    proc = cell.run("qmod", "-cj", str(jid))
    assert (proc.returncode, proc.stdout) == (1, f"root@testhost cleared error state of job {jid}\n")
    wait_state(cell, jid, "hqw")
    proc = cell.run("qmod", "-c", str(jid))
    assert (proc.returncode, proc.stdout) == (1, f"Job {jid} is not in error state\n")


def test_reschedule_needs_a_rerunnable_job(cell, workdir):
    plain = sleeper(cell, workdir)
    wait_state(cell, plain, "r")
    proc = cell.run("qmod", "-rj", str(plain))
    # word for word the 8.1.9 capture: the queue is always "none", and it is a warning (exit 0)
    assert proc.stdout == reference_stdout("qmod-r-job-not-rerunnable.txt").replace("52", str(plain))
    assert proc.returncode == 0
    assert state_of(cell, plain) == "r"
    rerun = sleeper(cell, workdir, "-r", "y")
    wait_state(cell, rerun, "r")
    pid = job_pid(cell, rerun)
    proc = cell.run("qmod", "-rj", str(rerun))
    assert (proc.returncode, proc.stdout) == (0, f"Pushed rescheduling of job {rerun} on host testhost\n")
    wait_for(lambda: not running(pid))
    wait_state(cell, rerun, ("Rr", "Rq"))
    assert cell.job_state(rerun)["tasks"]["1"]["restarted"] == 1
    assert state_of(cell, plain) == "r"
    proc = cell.run("qmod", "-f", "-rj", str(plain))
    assert (proc.returncode, proc.stdout) == (0, f"Forced rescheduling of job {plain} on host testhost\n")
    wait_state(cell, plain, ("Rr", "Rq"))


def test_forced_reschedule_ends_a_task_being_deleted(cell, workdir):
    # reschedule.c skips a task marked deleted unless forced; forced, its rescheduling
    # ends the run, and job_exit.c trashes the task, being deleted, instead of requeueing it
    set_attr(cell, "all.q", "notify", "0:10:0")
    script = os.path.join(workdir, "deaf.sh")
    with open(script, "w") as fh:
        fh.write("#!/bin/sh\ntrap '' USR2\nsleep 300\n")      # the notify warning is ignored
    jid = jid_of(cell.qsub("-r", "y", "-notify", script, cwd=workdir))
    wait_state(cell, jid, "r")
    pid = job_pid(cell, jid)
    cell.run("qdel", str(jid), check=True)
    wait_state(cell, jid, "dr")
    proc = cell.run("qmod", "-rj", str(jid))
    assert (proc.returncode, proc.stdout) == (0, f"The job {jid} is already in deleted state. No rescheduling!\n")
    assert running(pid)
    proc = cell.run("qmod", "-f", "-rj", str(jid))
    assert (proc.returncode, proc.stdout) == (0, f"Forced rescheduling of job {jid} on host testhost\n")
    cell.wait_finished(jid)
    wait_for(lambda: not running(pid))
    [record] = [r for r in cell.accounting() if r[5] == str(jid)]
    assert record[11:13] == ["25", "0"]              # failed: rescheduling, exit status 0
    # (the end is in the spool before the dispatcher publishes it)
    wait_for(lambda: str(jid) not in cell.run("qstat").stdout)
    assert str(jid) not in cell.run("qstat").stdout


def test_queue_rerun_makes_jobs_rerunnable_and_rq_reschedules_a_queue(cell, workdir):
    set_attr(cell, "all.q", "rerun", "TRUE")
    jid = sleeper(cell, workdir)
    refuses = sleeper(cell, workdir, "-r", "n")
    wait_state(cell, jid, "r")
    wait_state(cell, refuses, "r")
    proc = cell.run("qmod", "-rq", "all.q")
    assert f"Pushed rescheduling of job {jid} on host testhost\n" in proc.stdout
    assert f"The job {refuses} is not restartable\n" in proc.stdout
    wait_state(cell, jid, ("Rr", "Rq"))
    assert state_of(cell, refuses) == "r"
    # the run that was ended is accounted as Grid Engine's master accounts a rescheduling
    record = wait_for(lambda: next((r for r in cell.accounting() if r[5] == str(jid)), None))
    shown = cell.run("qacct", "-j", str(jid)).stdout
    assert "\nfailed       25  : rescheduling\n" in shown and "\nexit_status  0 " in shown, (record, shown)


def test_clear_queue_error_state(cell, workdir):
    script = os.path.join(workdir, "prolog.sh")
    with open(script, "w") as fh:
        fh.write("#!/bin/sh\nexit 2\n")
    os.chmod(script, 0o755)
    assert cell.run("qmod", "-cq", "all.q").stdout == \
        f'Queue instance "{Q}" is already in the specified state: no error\n'
    # a root@ prolog runs with a clean environment: its failure is the queue's (one
    # run as the job owner would put the job into the error state instead)
    set_attr(cell, "all.q", "prolog", f"root@{script}")
    jid = jid_of(cell.qsub("-b", "y", "true", cwd=workdir))
    wait_for(lambda: queue_letters(cell, Q) == "E")
    explained = cell.run("qstat", "-f", "-explain", "E").stdout
    assert f"\tqueue {Q} marked QERROR as result of job {jid}'s failure at host testhost\n" in explained
    as_xml = cell.run("qstat", "-f", "-explain", "E", "-xml").stdout
    assert (f"<message>queue {Q} marked QERROR as result of job {jid}'s failure at host testhost</message>"
            in as_xml)
    wait_state(cell, jid, "Rq")
    set_attr(cell, "all.q", "prolog", "NONE")
    proc = cell.run("qmod", "-c", "all.q")
    assert proc.stdout == f'root@testhost changed state of "{Q}" (no error)\n'
    cell.wait_finished(jid)


def _cgroup(pid):
    """The folder of the cgroup of process ``pid``."""
    with open(f"/proc/{pid}/cgroup") as fh:
        group = [line[3:].strip() for line in fh if line.startswith("0::")][0]
    with open("/proc/self/mounts") as fh:
        mount = [line.split()[1] for line in fh if line.split()[2] == "cgroup2"][0]
    return f"{mount}{group}"


def _frozen(pid):
    """True once the cgroup of process ``pid`` is frozen (a suspended job's is frozen
    after its processes stopped)."""
    with open(f"{_cgroup(pid)}/cgroup.events") as fh:
        return "frozen 1" in fh.read().split("\n")


def _thaw(pid):
    """Thaw the cgroup of process ``pid`` (a suspended job's is frozen as well)."""
    with open(f"{_cgroup(pid)}/cgroup.freeze", "w") as fh:
        fh.write("0")


def test_force_resends_the_state(cell, workdir):
    jid = sleeper(cell, workdir)
    wait_state(cell, jid, "r")
    pid = job_pid(cell, jid)
    cell.run("qmod", "-s", "all.q", check=True)
    wait_for(lambda: stopped(pid) and _frozen(pid))     # (stopped first, then frozen)
    _thaw(pid)                            # root continued the job behind the daemon's back
    os.kill(pid, 18)
    wait_for(lambda: running(pid))
    proc = cell.run("qmod", "-f", "-s", "all.q")
    assert proc.stdout == f'root@testhost forced state change of "{Q}" (suspended)\n'
    wait_for(lambda: stopped(pid))


def test_queue_states_survive_a_daemon_restart(cell):
    cell.run("qmod", "-d", "all.q", check=True)
    cell.stop_daemon()
    cell.start_daemon()
    wait_for(lambda: queue_letters(cell, Q) == "d")
    cell.run("qmod", "-e", "all.q", check=True)


def test_queue_domains_and_wildcards():
    cell = make_cell(hosts=["testhost", "otherhost"])
    try:
        proc = cell.run("qmod", "-d", "all.q@@allhosts")
        assert proc.stdout.splitlines() == [
            'root@testhost changed state of "all.q@otherhost" (disabled)',
            'root@testhost changed state of "all.q@testhost" (disabled)']
        proc = cell.run("qmod", "-e", "*@other*")
        assert proc.stdout == 'root@testhost changed state of "all.q@otherhost" (enabled)\n'
        assert queue_letters(cell, "all.q@testhost") == "d"
        assert queue_letters(cell, "all.q@otherhost") == ""
    finally:
        destroy_cell(cell)


def test_reschedule_refusals_in_grid_engines_words_and_order(cell, workdir):
    set_attr(cell, "all.q", "rerun", "TRUE")
    set_attr(cell, "all.q", "slots", "3")
    path = os.path.join(workdir, "ck")
    with open(path, "w") as fh:
        fh.write("ckpt_name ck\ninterface userdefined\nckpt_command none\nmigr_command none\n"
                 "restart_command none\nclean_command none\nckpt_dir /tmp\nsignal none\nwhen sx\n")
    cell.run("qconf", "-Ackpt", path, check=True)
    set_attr(cell, "all.q", "ckpt_list", "ck")
    norerun = sleeper(cell, workdir, "-r", "n")
    ckpt = sleeper(cell, workdir, "-r", "y", "-ckpt", "ck")
    both = sleeper(cell, workdir, "-r", "n", "-ckpt", "ck")
    for jid in (norerun, ckpt, both):
        wait_state(cell, jid, "r")
    # submitted -r n: refused whatever the queue's rerun says, before the checkpointing check
    proc = cell.run("qmod", "-rj", f"{norerun},{ckpt},{both}")
    assert (proc.returncode, proc.stdout) == (0, f"The job {norerun} is not restartable\n"
                                                 f"{ckpt} requests ckpt object ck. Therefore this job "
                                                 "is not restartable.\n"
                                                 f"The job {both} is not restartable\n")
    assert [state_of(cell, j) for j in (norerun, ckpt, both)] == ["r", "r", "r"]
    proc = cell.run("qmod", "-f", "-rj", str(ckpt))
    assert (proc.returncode, proc.stdout) == (0, f"Forced rescheduling of job {ckpt} on host testhost\n")
