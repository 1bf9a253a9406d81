"""The job lifecycle against a running daemon: holds, dependencies, arrays, deletion, -sync, limits."""

import os
import re
import time

from conftest import wait_for
from passwait import pass_after
from qtools import set_global


def jid_of(proc):
    assert proc.returncode == 0, proc.stderr
    return int(re.search(r"(\d+)", proc.stdout).group(1))


def states(cell, jid):
    return cell.task_states(jid)


def accounting_of(cell, jid):
    return [r for r in cell.accounting() if r[5] == str(jid)]


def qstat_state(cell, jid):
    out = cell.run("qstat", "-u", "*").stdout
    for line in out.splitlines()[2:]:
        fields = line.split()
        if fields and fields[0] == str(jid):
            return fields[4]
    return None


def after_a_pass(cell, workdir):
    """Return once a scheduler pass has looked at every job submitted before: a job
    submitted now has been dispatched and has ended (slots permitting)."""
    cell.wait_finished(jid_of(cell.qsub("-b", "y", "true", cwd=workdir)))


def test_hold_and_release(cell, workdir):
    jid = jid_of(cell.qsub("-h", "-b", "y", "true", cwd=workdir))
    wait_for(lambda: qstat_state(cell, jid) == "hqw")
    after_a_pass(cell, workdir)
    assert states(cell, jid).get(1) in (None, "pending")
    proc = cell.run("qrls", str(jid))
    assert proc.stdout == f"modified hold of job {jid}\n"
    cell.wait_finished(jid)
    proc = cell.run("qrls", str(jid))
    assert "does not exist" in proc.stdout and proc.returncode == 3        # (the qmaster's STATUS_EEXIST)


def test_qhold_pending_job_keeps_it_waiting(cell, workdir):
    jid = jid_of(cell.qsub("-a", time.strftime("%Y%m%d%H%M", time.localtime(time.time() + 3600)),
                           "-b", "y", "true", cwd=workdir))
    assert cell.run("qhold", str(jid)).stdout == f"modified hold of job {jid}\n"
    wait_for(lambda: qstat_state(cell, jid) == "hqw")
    assert cell.run("qrls", "-h", "u", str(jid)).returncode == 0
    wait_for(lambda: qstat_state(cell, jid) == "qw")


def test_start_time_a(cell, workdir):
    start = int(time.time()) + 6          # whole seconds: the -a syntax has no fractions
    stamp = time.strftime("%m%d%H%M.%S", time.localtime(start))
    jid = jid_of(cell.qsub("-a", stamp, "-b", "y", "true", cwd=workdir))
    after_a_pass(cell, workdir)
    if time.time() < start - 0.5:         # (a very slow machine may have reached the start time)
        assert states(cell, jid).get(1) in (None, "pending")
    cell.wait_finished(jid, timeout=20)
    state = cell.job_state(jid)
    assert state["tasks"]["1"]["start_time"] >= int(start) - 0.01


def test_hold_jid_orders_jobs(cell, workdir):
    first = jid_of(cell.qsub("-N", "first", "-b", "y", "sleep", "1", cwd=workdir))
    second = jid_of(cell.qsub("-hold_jid", str(first), "-N", "second", "-b", "y", "true", cwd=workdir))
    by_name = jid_of(cell.qsub("-hold_jid", "first", "-b", "y", "true", cwd=workdir))
    assert qstat_state(cell, second) == "hqw"
    cell.wait_finished(by_name, timeout=15)
    cell.wait_finished(second)
    f = cell.job_state(first)["tasks"]["1"]
    for dep in (second, by_name):
        s = cell.job_state(dep)["tasks"]["1"]
        assert s["start_time"] >= f["end_time"]


def test_hold_jid_on_unknown_or_finished_job_does_not_block(cell, workdir):
    done = jid_of(cell.qsub("-b", "y", "true", cwd=workdir))
    cell.wait_finished(done)
    a = jid_of(cell.qsub("-hold_jid", "9999999", "-b", "y", "true", cwd=workdir))
    b = jid_of(cell.qsub("-hold_jid", str(done), "-b", "y", "true", cwd=workdir))
    cell.wait_finished(a)
    cell.wait_finished(b)


def test_array_tasks_and_task_concurrency(cell, workdir):
    script = "date +%s.%N > $TMPDIR/x; echo start $(date +%s.%N); sleep 0.5; echo end $(date +%s.%N)\n"
    jid = jid_of(cell.qsub("-cwd", "-t", "1-4", "-tc", "1", "-N", "tc", cwd=workdir, input=script))
    cell.wait_finished(jid, (1, 2, 3, 4), timeout=30)
    spans = []
    for t in range(1, 5):
        with open(os.path.join(workdir, f"tc.o{jid}.{t}")) as fh:
            lines = fh.read().split()
        spans.append((float(lines[1]), float(lines[3])))
    spans.sort()
    for (s1, e1), (s2, _e2) in zip(spans, spans[1:]):
        assert s2 >= e1 - 0.05, "tasks overlapped despite -tc 1"
    assert len(accounting_of(cell, jid)) == 4


def test_array_accounting_has_task_numbers(cell, workdir):
    jid = jid_of(cell.qsub("-t", "2-6:2", "-b", "y", "true", cwd=workdir))
    cell.wait_finished(jid, (2, 4, 6))
    assert sorted(int(r[35]) for r in accounting_of(cell, jid)) == [2, 4, 6]


def test_qdel_pending_and_running(cell, workdir):
    run = jid_of(cell.qsub("-b", "y", "sleep", "60", cwd=workdir))
    wait_for(lambda: states(cell, run).get(1) == "running")
    held = jid_of(cell.qsub("-h", "-b", "y", "true", cwd=workdir))
    proc = cell.run("qdel", str(run), str(held))
    assert proc.stdout.splitlines() == [f"root has registered the job {run} for deletion",
                                        f"root has deleted job {held}"]
    cell.wait_finished(run, timeout=10)
    cell.wait_finished(held, timeout=10)
    rec = accounting_of(cell, run)
    assert rec and rec[0][11] == "100" and rec[0][12] == "137"
    assert accounting_of(cell, held) == []
    wait_for(lambda: qstat_state(cell, run) is None)     # leaves qstat (it has ended already)
    proc = cell.run("qdel", str(run))
    assert proc.returncode == 1 and proc.stdout == f'denied: job "{run}" does not exist\n'


def test_qdel_f_of_a_running_job_records_what_grid_engines_qmaster_records(cell, workdir):
    # (qacct-j-qdel-f-running.txt: failed 0, exit_status 0, ru_wallclock 0s, no usage)
    run = jid_of(cell.qsub("-b", "y", "sleep", "60", cwd=workdir))
    wait_for(lambda: states(cell, run).get(1) == "running")
    cell.run("qdel", "-f", str(run), check=True)
    cell.wait_finished(run, timeout=10)
    out = cell.run("qacct", "-j", str(run)).stdout
    assert "\nfailed       0    \nexit_status  0                   \nru_wallclock 0s\n" in out
    assert "\nru_utime     0.000s\n" in out and "\nstart_time   -/-" not in out


def _alive(pid):
    """Whether process ``pid`` exists and has not ended (a zombie has ended)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            data = fh.read()
    except OSError:
        return False
    return data[data.rindex(")") + 2] != "Z"


def test_qdel_kills_the_whole_process_tree(cell, workdir):
    child_pid = os.path.join(workdir, "child.pid")
    script = f"sleep 300 &\necho $! > {child_pid}.tmp; mv {child_pid}.tmp {child_pid}\nsleep 60\n"
    jid = jid_of(cell.qsub(cwd=workdir, input=script))
    wait_for(lambda: os.path.exists(child_pid))        # the script has forked its child
    with open(child_pid) as fh:
        child = int(fh.read())
    assert os.path.exists(f"/proc/{child}")
    cell.run("qdel", str(jid))
    cell.wait_finished(jid)
    wait_for(lambda: not _alive(child))              # the script's child was killed too


def test_qdel_array_tasks(cell, workdir):
    jid = jid_of(cell.qsub("-h", "-t", "1-6", "-b", "y", "true", cwd=workdir))
    proc = cell.run("qdel", f"{jid}.3-4")
    assert proc.stdout == f"root has deleted job-array tasks 3,4 of job {jid}\n"
    proc = cell.run("qdel", str(jid), "-t", "2")
    assert proc.stdout == f"root has deleted job-array task {jid}.2\n"
    wait_for(lambda: {k for k, v in states(cell, jid).items() if v == "finished"} == {2, 3, 4})


def test_binary_arguments_are_joined_as_grid_engine_does(cell, workdir):
    # the command and its arguments form one shell command line (quoting is not kept)
    proc = cell.qsub("-sync", "y", "-b", "y", "sh", "-c", "exit 3", cwd=workdir)
    assert proc.returncode == 0


def test_sync_returns_exit_status(cell, workdir):
    proc = cell.qsub("-sync", "y", cwd=workdir, input="exit 3\n")
    assert proc.returncode == 3
    jid = int(re.search(r"(\d+)", proc.stdout).group(1))
    assert proc.stderr == f"Job {jid} exited with exit code 3.\n"
    proc = cell.qsub("-sync", "y", "-t", "1-2", "-b", "y", "true", cwd=workdir)
    assert proc.returncode == 0
    # Grid Engine 8.1.9 (capture qsub-sync-y-exit0): a zero exit code is said on stdout
    jid = int(re.search(r"(\d+)", proc.stdout).group(1))
    assert sorted(proc.stdout.splitlines()[1:]) == [f"Job {jid}.1 exited with exit code 0.",
                                                    f"Job {jid}.2 exited with exit code 0."]
    assert proc.stderr == ""
    proc = cell.qsub("-sync", "y", "-terse", "-b", "y", "true", cwd=workdir)
    assert (proc.returncode, re.fullmatch(r"\d+\n", proc.stdout) is not None, proc.stderr) == (0, True, "")


def test_sync_says_a_signal_and_exits_1(cell, workdir):
    """A job whose process a signal ended: "Job N exited because of signal SIGTERM", exit 1
    (qsub.c report_exit_status), also when qdel killed it."""
    proc = cell.qsub("-sync", "y", cwd=workdir, input="#!/bin/bash\nkill -TERM $$\n")
    jid = int(re.search(r"(\d+)", proc.stdout).group(1))
    assert (proc.returncode, proc.stderr) == (1, f"Job {jid} exited because of signal SIGTERM\n")
    import subprocess
    waiting = subprocess.Popen(["qsub", "-sync", "y", "-b", "y", "sleep", "60"], env=cell.env, cwd=workdir,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        jid = int(re.search(r"Your job (\d+)", waiting.stdout.readline()).group(1))
        wait_for(lambda: states(cell, jid).get(1) == "running", timeout=20)
        cell.run("qdel", str(jid), check=True)
        _out, err = waiting.communicate(timeout=30)
    finally:
        if waiting.poll() is None:
            waiting.kill()
    assert (waiting.returncode, err) == (1, f"Job {jid} exited because of signal SIGKILL\n")


def test_sync_array_exits_with_the_first_non_zero_task_to_end(cell, workdir):
    """submit(1): the exit code of an array job is that of the first completed task with
    a non-zero one; each task is said as it ends."""
    script = "#!/bin/bash\nif [ $SGE_TASK_ID = 1 ]; then sleep 3; exit 5; else exit 2; fi\n"
    proc = cell.qsub("-sync", "y", "-t", "1-2", cwd=workdir, input=script, timeout=60)
    jid = int(re.search(r"(\d+)", proc.stdout).group(1))
    assert proc.returncode == 2
    assert proc.stderr == f"Job {jid}.2 exited with exit code 2.\nJob {jid}.1 exited with exit code 5.\n"


def _interrupted(cell, workdir, signum):
    import signal
    import subprocess
    waiting = subprocess.Popen(["qsub", "-sync", "y", "-t", "1-3", "-b", "y", "sleep", "60"], env=cell.env,
                               cwd=workdir, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        jid = int(re.search(r"Your job-array (\d+)", waiting.stdout.readline()).group(1))
        wait_for(lambda: "running" in states(cell, jid).values(), timeout=20)
        waiting.send_signal(signum)
        _out, err = waiting.communicate(timeout=30)
    finally:
        if waiting.poll() is None:
            waiting.kill()
    return jid, waiting.returncode, err


def test_interrupting_sync_deletes_the_job(cell, workdir):
    """submit(1) -sync: "If qsub is interrupted, e.g. with CTRL-C, before the job
    completes, the job will be canceled" (all its tasks); qsub.c says so on stderr."""
    import signal
    for signum in (signal.SIGINT, signal.SIGTERM):
        jid, code, err = _interrupted(cell, workdir, signum)
        assert (code, err) == (1, "\nInterrupted!\nPlease wait while qsub shuts down.\n")
        assert set(states(cell, jid).values()) <= {"finished"}
        assert qstat_state(cell, jid) is None         # gone from qstat when qsub returns


def _number(proc):
    return int(re.search(r"Your job (\d+)", proc.stdout).group(1))


def test_an_immediate_job_that_is_held_is_turned_away_and_an_interrupted_wait_deletes_it(cell, workdir):
    """qsub -now y: the job starts in its first pass or is removed, whatever keeps it
    (a hold, a dependency); a qsub interrupted while it waits deletes its job, as with
    -sync y, so that no "immediate" job runs later."""
    import signal
    import subprocess
    held = cell.qsub("-now", "y", "-h", "-b", "y", "true", cwd=workdir, timeout=30)
    assert held.returncode == 1
    assert held.stderr.endswith('Your "qsub" request could not be scheduled, try again later.\n')
    assert qstat_state(cell, _number(held)) is None
    first = jid_of(cell.qsub("-h", "-b", "y", "true", cwd=workdir))
    waits = cell.qsub("-now", "y", "-hold_jid", str(first), "-b", "y", "true", cwd=workdir, timeout=30)
    assert waits.returncode == 1 and qstat_state(cell, _number(waits)) is None
    cell.run("qdel", str(first), check=True)
    # one that waits: scheduling is stopped
    cell.run("qconf", "-ks", check=True)
    waiting = subprocess.Popen(["qsub", "-now", "y", "-b", "y", "true"], env=cell.env, cwd=workdir,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        jid = int(re.search(r"Your job (\d+)", waiting.stdout.readline()).group(1))
        wait_for(lambda: qstat_state(cell, jid) == "qw", timeout=20)
        waiting.send_signal(signal.SIGTERM)
        _out, err = waiting.communicate(timeout=30)
    finally:
        if waiting.poll() is None:
            waiting.kill()
    assert (waiting.returncode, err) == (1, "Waiting for immediate job to be scheduled.\n"
                                            "\nInterrupted!\nPlease wait while qsub shuts down.\n")
    assert qstat_state(cell, jid) is None
    cell.run("qconf", "-at", "scheduler", check=True)
    ran = cell.qsub("-now", "y", "-b", "y", "true", cwd=workdir, timeout=30)
    assert ran.returncode == 0 and "has been successfully scheduled." in ran.stderr


def test_error_reason_has_grid_engines_prefix(cell, workdir):
    """qstat -j: "error reason 1: MM/DD/YYYY HH:MM:SS [uid:pid]: error: ..." (capture qstat-j-Eqw)."""
    missing = os.path.join(workdir, "nonexist")
    jid = jid_of(cell.qsub("-wd", missing, "-b", "y", "true", cwd=workdir))
    wait_for(lambda: states(cell, jid).get(1) == "error", timeout=20)
    line = next(line for line in cell.run("qstat", "-j", str(jid)).stdout.splitlines()
                if line.startswith("error reason"))
    m = re.fullmatch(r"error reason          1:      (\d\d/\d\d/\d{4} \d\d:\d\d:\d\d) \[(\d+):(\d+)\]: error: (.*)",
                     line)
    assert m, line
    assert int(m.group(2)) == os.getuid() and int(m.group(3)) > 0
    assert m.group(4) == f"can't chdir to {missing}: No such file or directory"
    stamp = time.mktime(time.strptime(m.group(1), "%m/%d/%Y %H:%M:%S"))
    assert abs(stamp - time.time()) < 60


def test_a_job_that_never_ran_is_accounted_and_synced_as_grid_engine_does(cell, workdir):
    """A job that cannot open its output file goes to the error state; deleted from there
    it is accounted with exit status 0 (the 8.1.9 capture qacct-j-Eqw-deleted), and
    qsub -sync y says it could not run it and exits 1."""
    import subprocess
    waiting = subprocess.Popen(["qsub", "-sync", "y", "-o", "/nonexistent/dir/out", "-b", "y", "true"],
                               env=cell.env, cwd=workdir, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True)
    try:
        wait_for(lambda: os.path.exists(os.path.join(cell.root, "spool", "jobseqnum")))
        jid = int(re.search(r"Your job (\d+)", waiting.stdout.readline()).group(1))
        wait_for(lambda: cell.job_state(jid) and cell.job_state(jid)["tasks"]["1"].get("state") == "error")
        cell.run("qdel", str(jid), check=True)
        _out, err = waiting.communicate(timeout=30)
    finally:
        if waiting.poll() is None:
            waiting.kill()
    assert (waiting.returncode, err) == (1, f"Unable to run job {jid}\n")
    lines = cell.run("qacct", "-j", str(jid), check=True).stdout.splitlines()
    assert "failed       26  : opening input/output file" in lines
    assert "exit_status  0                   " in lines
    assert "start_time   -/-" in lines


def test_exit_99_runs_the_job_again_and_exit_100_sets_it_into_error(cell, workdir):
    """Grid Engine's shepherd rule for a job's own exit status: 99 reschedules it (each
    run accounted, the first with failed 25), 100 leaves it in the error state (failed
    30), where a job that waits for it with -hold_jid waits too."""
    script = "echo run >> runs\n[ -f flag ] && exit 0\ntouch flag\nexit 99\n"
    jid = jid_of(cell.qsub("-cwd", "-o", "/dev/null", "-j", "y", cwd=workdir, input=script))
    cell.wait_finished(jid, timeout=30)
    assert open(os.path.join(workdir, "runs")).read() == "run\nrun\n"
    records = accounting_of(cell, jid)
    assert [(r[11], r[12]) for r in records] == [("25", "99"), ("0", "0")]
    failing = jid_of(cell.qsub("-cwd", "-o", "/dev/null", "-j", "y", cwd=workdir, input="exit 100\n"))
    after = jid_of(cell.qsub("-hold_jid", str(failing), "-b", "y", "true", cwd=workdir))
    wait_for(lambda: qstat_state(cell, failing) == "Eqw", timeout=20)
    shown = cell.run("qstat", "-j", str(failing)).stdout
    assert re.search(r"error reason\s+1:.*exit_status of job start = 100", shown), shown
    assert [(r[11], r[12]) for r in accounting_of(cell, failing)] == [("30", "100")]
    assert qstat_state(cell, after) == "hqw"
    cell.run("qdel", str(failing), str(after), check=True)


def test_a_job_that_asks_to_run_again_and_again_rests_between_runs(cell, workdir):
    """A job that exits 99 at once every time runs again at once a few times, then waits
    before each run, longer each time: it neither spins the daemon nor floods the
    accounting file, and qstat -j says when it may start again."""
    from gridtools.daemon.apply import FREE_REQUEUES
    jid = jid_of(cell.qsub("-cwd", "-o", "/dev/null", "-j", "y", cwd=workdir,
                           input="echo run >> spins\nexit 99\n"))
    runs = os.path.join(workdir, "spins")

    def count():
        return len(open(runs).read().split()) if os.path.exists(runs) else 0
    wait_for(lambda: count() >= FREE_REQUEUES + 2, timeout=30)
    began, before = time.time(), count()
    assert wait_for(lambda: "execution time not reached" in cell.run("qstat", "-j", str(jid)).stdout
                    or None, timeout=10)
    # for 3 s the daemon is asked for pass after pass (each waited for), any of which would
    # start the job again if it did not rest
    window = time.time()
    while time.time() - window < 3:
        pass_after(cell)
    # rests of 1, 2, 4 ... seconds: a few runs in those seconds, not hundreds
    assert count() - before <= 3, (count(), before, time.time() - began)
    assert len(accounting_of(cell, jid)) <= count()
    cell.run("qdel", str(jid), check=True)


def test_rests_double_after_the_free_requeues_and_end_after_a_long_run():
    from gridtools.daemon.apply import FREE_REQUEUES, MOST_REST, rest
    from gridtools.model.job import Task
    task, now, rests = Task(1), 1000.0, []
    for _ in range(FREE_REQUEUES + 8):
        task.start_time, task.end_time = now, now + 1
        rest(task, now + 1)
        rests.append(task.rest_until - (now + 1) if task.rest_until else 0.0)
    assert rests == [0.0] * FREE_REQUEUES + [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, MOST_REST, MOST_REST]
    task.start_time, task.end_time = now, now + 3600          # a long run: no rest after it
    rest(task, now + 3600)
    assert (task.quick_requeues, task.rest_until) == (0, 0.0)


def test_qmaster_params_forbid_the_exit_status_rules(cell, workdir):
    conf = os.path.join(cell.root, "etc", "conf", "global")
    text = re.sub(r"^qmaster_params\s+.*$", "qmaster_params               FORBID_RESCHEDULE,FORBID_APPERROR",
                  open(conf).read(), flags=re.M)
    open(conf, "w").write(text)
    assert "FORBID_APPERROR" in cell.run("qconf", "-sconf", check=True).stdout
    first = jid_of(cell.qsub("-o", "/dev/null", "-j", "y", cwd=workdir, input="exit 99\n"))
    second = jid_of(cell.qsub("-o", "/dev/null", "-j", "y", cwd=workdir, input="exit 100\n"))
    cell.wait_finished(first, timeout=20)
    cell.wait_finished(second, timeout=20)
    assert [(r[11], r[12]) for r in accounting_of(cell, first) + accounting_of(cell, second)] == \
        [("0", "99"), ("0", "100")]


def test_hard_wallclock_limit_kills(cell, workdir):
    jid = jid_of(cell.qsub("-l", "h_rt=1", "-b", "y", "sleep", "30", cwd=workdir))
    t0 = time.time()
    cell.wait_finished(jid, timeout=15)
    assert time.time() - t0 < 10
    rec = accounting_of(cell, jid)[0]
    assert rec[12] == "137"


def test_soft_wallclock_limit_warns_with_usr1(cell, workdir):
    script = "trap 'echo got USR1; exit 5' USR1\nsleep 30 & wait\n"
    jid = jid_of(cell.qsub("-cwd", "-N", "softrt", "-l", "s_rt=1", cwd=workdir, input=script))
    cell.wait_finished(jid, timeout=15)
    with open(os.path.join(workdir, f"softrt.o{jid}")) as fh:
        assert fh.read() == "got USR1\n"
    assert accounting_of(cell, jid)[0][12] == "5"


def test_memory_limit_is_enforced(cell, workdir):
    script = "python3 -c 'x = bytearray(400 * 1024 * 1024)' && echo allocated || echo refused\n"
    jid = jid_of(cell.qsub("-cwd", "-N", "vmem", "-l", "h_vmem=100M", cwd=workdir, input=script))
    cell.wait_finished(jid, timeout=20)
    with open(os.path.join(workdir, f"vmem.o{jid}")) as fh:
        assert fh.read() == "refused\n"


def test_a_queue_limit_of_infinity_lifts_the_soft_limits_the_daemon_had(cell, workdir, users):
    # (job-pe_hostfile-tmpdir-spooldir-mpi.txt: stack and core unlimited under all.q's INFINITY)
    with open(os.path.join(cell.root, "spool", "daemon.pid")) as fh:
        with open(f"/proc/{fh.read().split()[0]}/limits") as limits:
            stack = next(line for line in limits if line.startswith("Max stack size")).split()
    assert stack[3] != "unlimited"              # (the daemon's own soft limit, which jobs had)
    script = "ulimit -Sc; ulimit -Ss; ulimit -Hc\n"
    jid = jid_of(cell.qsub("-cwd", "-N", "limits", cwd=workdir, input=script, user=users[0]))
    cell.wait_finished(jid, timeout=20)
    with open(os.path.join(workdir, f"limits.o{jid}")) as fh:
        assert fh.read() == "unlimited\nunlimited\nunlimited\n"
    jid = jid_of(cell.qsub("-cwd", "-N", "capped", "-l", "s_stack=4M,h_stack=6M", cwd=workdir, input=script,
                           user=users[0]))
    cell.wait_finished(jid, timeout=20)
    with open(os.path.join(workdir, f"capped.o{jid}")) as fh:
        assert fh.read().splitlines()[1] == "4096"


def test_cpu_limit_is_enforced(cell, workdir):
    jid = jid_of(cell.qsub("-l", "h_cpu=1", cwd=workdir, input="while :; do :; done\n"))
    cell.wait_finished(jid, timeout=20)
    rec = accounting_of(cell, jid)[0]
    assert int(rec[12]) in (128 + 9, 128 + 24)    # killed by SIGKILL or SIGXCPU
    # The kernel counts CPU time in ticks and may stop the loop a little
    # before the rusage it reports reaches the full second; it must have
    # spun for most of it, not died at once.
    assert float(rec[14]) + float(rec[15]) >= 0.6


def test_usage_is_accounted(cell, workdir):
    jid = jid_of(cell.qsub(cwd=workdir, input="i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done\n"))
    cell.wait_finished(jid, timeout=30)
    rec = accounting_of(cell, jid)[0]
    assert float(rec[36]) > 0.0                       # cpu
    assert int(rec[10]) >= int(rec[9]) > 0            # end >= start
    assert rec[0] == "all.q" and rec[1] == "testhost"


def test_finished_jobs_stay_visible_for_a_configured_time(cell, workdir):
    set_global(cell, qmaster_params="FINISHED_JOBS_TIME=0:0:6")     # (in effect when qconf returns)
    jid = jid_of(cell.qsub("-b", "y", "true", cwd=workdir))
    cell.wait_finished(jid)
    # (counted from the end the spool records: qstat shows it from the status the
    # dispatcher publishes after, which may come late)
    ended = float(cell.job_state(jid)["tasks"]["1"]["end_time"])
    listed = lambda: re.search(rf"^\s*{jid} .* z ", cell.run("qstat", "-s", "z").stdout, re.M)
    wait_for(listed, timeout=6)
    wait_for(lambda: not listed(), timeout=15)
    assert time.time() - ended >= 6.0
    wait_for(lambda: cell.job_state(jid) is None)       # gone from the spool too, right after
    assert cell.run("qacct", "-j", str(jid)).returncode == 0


def test_pe_start_and_stop_procedures(cell, workdir):
    pe = os.path.join(cell.root, "etc", "pe", "smp")
    text = open(pe).read()
    text = re.sub(r"^start_proc_args\s+.*$", "start_proc_args    /bin/echo start $pe_slots $host $pe", text, flags=re.M)
    text = re.sub(r"^stop_proc_args\s+.*$", "stop_proc_args     /bin/echo stop $job_id", text, flags=re.M)
    open(pe, "w").write(text)
    time.sleep(0.3)
    jid = jid_of(cell.qsub("-cwd", "-pe", "smp", "2", "-N", "pejob", cwd=workdir, input="echo job\n"))
    cell.wait_finished(jid)
    # the procedures' output goes to REQUEST.poJID and REQUEST.peJID (sge_pe(5)), not the job's
    with open(os.path.join(workdir, f"pejob.o{jid}")) as fh:
        assert fh.read() == "job\n"
    with open(os.path.join(workdir, f"pejob.po{jid}")) as fh:
        assert fh.read() == f"start 2 testhost smp\nstop {jid}\n"
    with open(os.path.join(workdir, f"pejob.pe{jid}")) as fh:
        assert fh.read() == ""


def test_the_scheduler_runs_every_schedule_interval_while_nothing_happens(cell, workdir):
    """Grid Engine's scheduler runs every schedule_interval: a job that waits (no room)
    sees its waiting time contribution grow without any other event."""
    text = cell.run("qconf", "-ssconf", check=True).stdout
    text = re.sub(r"^schedule_interval\s+.*$", "schedule_interval 0:0:1", text, flags=re.M)
    text = re.sub(r"^weight_waiting_time\s+.*$", "weight_waiting_time 1.000000", text, flags=re.M)
    path = os.path.join(workdir, "sconf")
    open(path, "w").write(text)
    cell.run("qconf", "-Msconf", path, check=True)
    cell.run("qconf", "-mattr", "queue", "slots", "0", "all.q", check=True)
    jid = jid_of(cell.qsub("-b", "y", "true", cwd=workdir))

    def wtcontr():
        for line in cell.run("qstat", "-urg", "-u", "*").stdout.splitlines()[2:]:
            fields = line.split()
            if fields and fields[0] == str(jid):
                return int(fields[5])             # job-ID prior nurg urg rrcontr wtcontr
        return None
    assert wait_for(lambda: (wtcontr() or 0) >= 3, timeout=15)


def test_the_accounting_record_keeps_the_queues_priority_not_the_jobs(cell, workdir):
    """accounting(5): priority is the nice value of the queue the job ran in (queue_conf's
    priority), whatever the job's -p."""
    from qtools import set_attr
    set_attr(cell, "all.q", "priority", "5")
    jid = jid_of(cell.qsub("-p", "-100", "-o", "/dev/null", "-j", "y", "-b", "y", "true", cwd=workdir))
    cell.wait_finished(jid)
    records = wait_for(lambda: accounting_of(cell, jid))
    assert [r[7] for r in records] == ["5"]
    assert re.search(r"^priority\s+5\s*$", cell.run("qacct", "-j", str(jid)).stdout, re.M)


def _rows(cell, jid):
    """{ja-task-ID text: state} of the job's qstat lines."""
    out = cell.run("qstat", "-u", "*").stdout
    return {line.split()[-1]: line.split()[4] for line in out.splitlines()[2:] if line.split()[:1] == [str(jid)]}


def test_a_hold_on_running_array_tasks_shows_and_keeps_them_from_running_again(cell, workdir):
    """qhold -t and qalter -h -t of running tasks: qstat shows hr, and once rescheduled the
    tasks wait held (hRq) until qrls, as Grid Engine holds them."""
    from qtools import set_attr
    set_attr(cell, "all.q", "slots", "2")
    jid = jid_of(cell.qsub("-r", "y", "-t", "1-2", "-o", "/dev/null", "-j", "y", "-b", "y", "sleep", "60",
                           cwd=workdir))
    wait_for(lambda: _rows(cell, jid) == {"1": "r", "2": "r"}, timeout=30)
    assert cell.run("qhold", str(jid), "-t", "1").stdout == f"modified hold of job-array task {jid}.1\n"
    assert cell.run("qalter", "-h", "u", str(jid), "-t", "2").stdout == \
        f"modified hold of job-array task {jid}.2\n"
    wait_for(lambda: _rows(cell, jid) == {"1": "hr", "2": "hr"}, timeout=10)
    cell.run("qmod", "-rj", str(jid), check=True)
    wait_for(lambda: _rows(cell, jid) == {"1,2": "hRq"}, timeout=30)
    cell.run("qrls", str(jid), "-t", "1", check=True)
    wait_for(lambda: _rows(cell, jid) == {"1": "Rr", "2": "hRq"}, timeout=30)
    cell.run("qdel", str(jid), check=True)
