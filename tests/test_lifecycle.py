"""The job lifecycle against a running daemon: holds, dependencies, arrays, deletion, -sync, limits."""

import os
import re
import time

from conftest import wait_for


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


def test_hold_and_release(cell, workdir):
    jid = jid_of(cell.qsub("-h", "-b", "y", "true", cwd=workdir))
    wait_for(lambda: qstat_state(cell, jid) == "hqw")
    time.sleep(0.3)
    assert states(cell, jid).get(1) in (None, "pending")
    proc = cell.run("qrls", str(jid))
    assert proc.stdout == f"modified hold of job {jid}\n"
    cell.wait_finished(jid)
    proc = cell.run("qrls", str(jid))
    assert "does not exist" in proc.stdout and proc.returncode == 1


def test_qhold_pending_job_keeps_it_waiting(cell, workdir):
    jid = jid_of(cell.qsub("-a", time.strftime("%Y%m%d%H%M", time.localtime(time.time() + 3600)),
                           "-b", "y", "true", cwd=workdir))
    assert cell.run("qhold", str(jid)).stdout == f"modified hold of job {jid}\n"
    wait_for(lambda: qstat_state(cell, jid) == "hqw")
    assert cell.run("qrls", "-h", "u", str(jid)).returncode == 0
    wait_for(lambda: qstat_state(cell, jid) == "qw")


def test_start_time_a(cell, workdir):
    start = int(time.time()) + 3          # whole seconds: the -a syntax has no fractions
    stamp = time.strftime("%m%d%H%M.%S", time.localtime(start))
    jid = jid_of(cell.qsub("-a", stamp, "-b", "y", "true", cwd=workdir))
    time.sleep(1.0)
    assert states(cell, jid).get(1) in (None, "pending")
    cell.wait_finished(jid, timeout=10)
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
    t0 = time.time()
    proc = cell.run("qdel", str(run), str(held))
    assert time.time() - t0 < 2.0
    assert proc.stdout.splitlines() == [f"root has registered the job {run} for deletion",
                                        f"root has deleted job {held}"]
    cell.wait_finished(run, timeout=10)
    cell.wait_finished(held, timeout=10)
    rec = accounting_of(cell, run)
    assert rec and rec[0][11] == "100" and rec[0][12] == "137"
    assert accounting_of(cell, held) == []
    wait_for(lambda: qstat_state(cell, run) is None, timeout=1.0)     # leaves qstat promptly
    proc = cell.run("qdel", str(run))
    assert proc.returncode == 1 and proc.stdout == f'denied: job "{run}" does not exist\n'


def test_qdel_kills_the_whole_process_tree(cell, workdir):
    marker = os.path.join(workdir, "child_alive")
    script = f"(sleep 3; touch {marker}) &\nsleep 60\n"
    jid = jid_of(cell.qsub(cwd=workdir, input=script))
    wait_for(lambda: states(cell, jid).get(1) == "running")
    time.sleep(0.3)
    cell.run("qdel", str(jid))
    cell.wait_finished(jid)
    time.sleep(3.5)
    assert not os.path.exists(marker)


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
    assert proc.stderr.count("exited with exit code 0.") == 2


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
    conf = os.path.join(cell.root, "etc", "conf", "global")
    text = open(conf).read()
    text = re.sub(r"^qmaster_params\s+.*$", "qmaster_params               FINISHED_JOBS_TIME=0:0:2",
                  text, flags=re.M)
    open(conf, "w").write(text)
    time.sleep(0.3)
    jid = jid_of(cell.qsub("-b", "y", "true", cwd=workdir))
    cell.wait_finished(jid)
    listed = lambda: re.search(rf"^\s*{jid} .* z ", cell.run("qstat", "-s", "z").stdout, re.M)
    wait_for(listed, timeout=2)
    ended = time.time()
    wait_for(lambda: not listed(), timeout=6)
    assert time.time() - ended >= 1.0
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
