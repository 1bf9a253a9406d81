"""Crash recovery, concurrent submission, and permissions between real users."""

import collections
import os
import re
import signal
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor


from conftest import unanswered, wait_for


def daemon_pid(cell):
    with open(os.path.join(cell.root, "spool", "daemon.pid")) as fh:
        return int(fh.read())


def test_sigkill_daemon_mid_run_every_job_completes_once(cell, workdir):
    log = os.path.join(workdir, "ran.log")
    ids = []
    for i in range(50):
        proc = cell.qsub("-terse", "-b", "y", "sh", "-c",
                         f"'echo $JOB_ID >> {log}; sleep 0.2'", cwd=workdir)
        ids.append(int(proc.stdout))
    wait_for(lambda: os.path.exists(log) and len(open(log).read().split()) >= 6, timeout=30)
    os.kill(daemon_pid(cell), signal.SIGKILL)
    time.sleep(1.0)                       # shepherds finish jobs while no daemon runs
    cell.start_daemon()
    for jid in ids:
        cell.wait_finished(jid, timeout=60)
    ran = collections.Counter(int(x) for x in open(log).read().split())
    assert sorted(ran) == ids
    assert set(ran.values()) == {1}, "a job ran twice"
    acct = collections.Counter(int(r[5]) for r in cell.accounting())
    assert sorted(acct) == ids and set(acct.values()) == {1}, "accounting lost or doubled"


def test_running_job_survives_daemon_restart(cell, workdir):
    release = os.path.join(workdir, "release")         # the job runs until the daemon is back
    proc = cell.qsub("-terse", "-cwd", "-N", "survivor", cwd=workdir,
                     input=f"while [ ! -e {release} ]; do sleep 0.1; done; echo done\n")
    jid = int(proc.stdout)
    wait_for(lambda: cell.task_states(jid).get(1) == "running")
    cell.stop_daemon()
    time.sleep(0.5)
    cell.start_daemon()
    assert cell.task_states(jid).get(1) == "running"
    open(release, "w").close()
    cell.wait_finished(jid, timeout=20)
    with open(os.path.join(workdir, f"survivor.o{jid}")) as fh:
        assert fh.read() == "done\n"


def test_pending_jobs_stay_pending_across_restart(cell, workdir):
    jid = int(cell.qsub("-terse", "-h", "-b", "y", "true", cwd=workdir).stdout)
    os.kill(daemon_pid(cell), signal.SIGKILL)
    time.sleep(0.2)
    cell.start_daemon()
    sentinel = int(cell.qsub("-terse", "-b", "y", "true", cwd=workdir).stdout)
    cell.wait_finished(sentinel)          # (a pass of the new daemon has looked at the job)
    assert cell.task_states(jid).get(1) in (None, "pending")
    cell.run("qrls", str(jid))
    cell.wait_finished(jid)


def test_concurrent_qsub_20_by_25(cell, workdir):
    def burst(_):
        out = []
        for _ in range(25):
            proc = cell.qsub("-terse", "-b", "y", "true", cwd=workdir)
            assert proc.returncode == 0, proc.stderr
            out.append(int(proc.stdout))
        return out

    with ThreadPoolExecutor(max_workers=20) as pool:
        ids = [jid for chunk in pool.map(burst, range(20)) for jid in chunk]
    assert len(ids) == 500 and len(set(ids)) == 500
    def all_accounted():
        return len({int(r[5]) for r in cell.accounting()}) == 500
    wait_for(all_accounted, timeout=240, interval=0.5)
    acct = collections.Counter(int(r[5]) for r in cell.accounting())
    assert set(acct) == set(ids) and set(acct.values()) == {1}


# ---------------------------------------------------------------- permissions

def test_other_user_cannot_delete_or_hold(cell, workdir, users):
    alice, bob = users[0], users[1]
    jid = int(cell.qsub("-terse", "-h", "-b", "y", "true", user=alice, cwd=workdir).stdout)
    proc = cell.run("qdel", str(jid), user=bob)
    assert proc.returncode == 1
    assert proc.stdout == f'{bob} - you do not have the necessary privileges to delete the job "{jid}"\n'
    proc = cell.run("qhold", str(jid), user=bob)
    assert proc.returncode != 0
    assert f'denied: "{bob}" must be at least owner of job {jid} to change job attributes' in proc.stdout
    proc = cell.run("qrls", str(jid), user=bob)
    assert proc.returncode != 0
    sentinel = int(cell.qsub("-terse", "-b", "y", "true", cwd=workdir).stdout)
    cell.wait_finished(sentinel)          # (a pass has looked at the job since)
    assert cell.task_states(jid).get(1) in (None, "pending")
    assert re.search(rf"^\s*{jid} .* hqw ", cell.run("qstat", "-u", "*").stdout, re.M)
    proc = cell.run("qdel", str(jid), user=alice)
    assert proc.stdout == f"{alice} has deleted job {jid}\n"
    cell.wait_finished(jid)


def test_a_job_that_ended_does_not_exist_for_anyone(cell, workdir, users):
    """Grid Engine forgets a job that ended: another user is told it does not exist, as
    its owner is, not that they lack the privileges."""
    alice, bob = users[0], users[1]
    jid = int(cell.qsub("-terse", "-b", "y", "true", user=alice, cwd=workdir).stdout)
    cell.wait_finished(jid)
    wait_for(lambda: str(jid) not in cell.run("qstat", "-u", "*").stdout)
    for user in (alice, bob):
        for command, code in (("qdel", 1), ("qhold", 3), ("qrls", 3)):     # (qhold: the qmaster's STATUS_EEXIST)
            proc = cell.run(command, str(jid), user=user)
            assert (proc.returncode, proc.stdout + proc.stderr) == (code, f'denied: job "{jid}" does not exist\n'), \
                (user, command)


def test_forged_request_is_not_applied(cell, workdir, users):
    """A request file written directly by another user is checked against its owner."""
    alice, bob = users[0], users[1]
    jid = int(cell.qsub("-terse", "-h", "-b", "y", "true", user=alice, cwd=workdir).stdout)
    body = f'kind: "delete"\ntargets:\n  -\n    id: {jid}\n    tasks: null\nforce: false\n'
    script = ("import os,time;p=os.environ['GRIDTOOLS_ROOT']+'/spool/requests/';"
              f"open(p+'.x','w').write({body!r});os.rename(p+'.x',p+'%020d-1.delete'%time.time_ns())")
    cell.run("python3", "-c", script, user=bob, check=True)
    subprocess.run(["sh", "-c", f"echo x > {cell.root}/spool/wakeup"], check=True)
    wait_for(lambda: not unanswered(cell.root))        # the daemon has taken and handled it
    sentinel = int(cell.qsub("-terse", "-b", "y", "true", cwd=workdir).stdout)
    cell.wait_finished(sentinel)
    assert cell.task_states(jid).get(1) in (None, "pending")


def test_operator_may_hold_others_jobs_and_user_may_not_set_system_hold(cell, workdir, users):
    alice, bob = users[0], users[1]
    with open(os.path.join(cell.root, "etc", "operators"), "a") as fh:
        fh.write(f"{bob}\n")
    jid = int(cell.qsub("-terse", "-h", "-b", "y", "true", user=alice, cwd=workdir).stdout)
    proc = cell.run("qhold", "-h", "o", str(jid), user=bob)
    assert proc.returncode == 0 and proc.stdout == f"modified hold of job {jid}\n"
    proc = cell.run("qhold", "-h", "s", str(jid), user=alice)
    assert proc.returncode == 10
    assert proc.stdout == f'denied: "{alice}" must be manager to set manager hold\n'


def test_jobs_run_as_their_owner(cell, workdir, users):
    alice = users[0]
    jid = int(cell.qsub("-terse", "-cwd", "-N", "whoami", user=alice, cwd=workdir,
                        input="id -un; touch owned\n").stdout)
    cell.wait_finished(jid)
    with open(os.path.join(workdir, f"whoami.o{jid}")) as fh:
        assert fh.read() == f"{alice}\n"
    import pwd
    assert os.stat(os.path.join(workdir, "owned")).st_uid == pwd.getpwnam(alice).pw_uid


def test_a_client_whose_daemon_dies_says_so_at_once_and_nothing_is_done_later(cell, workdir):
    """A command waiting for the daemon's answer notices that the daemon stopped, within
    a second. One that may not start it again gives a daemon five seconds to be back,
    then withdraws its request: the deletion it reports as failed does not happen when
    the daemon starts again (it used to wait 60 s and be carried out then). One that
    may start it does, and gets its answer."""
    jid = int(cell.qsub("-terse", "-h", "-b", "y", "true", cwd=workdir).stdout)
    wait_for(lambda: f"{jid} " in cell.run("qstat").stdout)     # taken in

    def qdel_over_a_dying_daemon(env):
        pid = daemon_pid(cell)
        os.kill(pid, signal.SIGSTOP)                 # it takes nothing in while stopped
        try:
            began = time.time()
            qdel = subprocess.Popen(["qdel", str(jid)], env=dict(cell.env, **env),
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            time.sleep(0.5)
            os.kill(pid, signal.SIGKILL)
            out, err = qdel.communicate(timeout=30)
        finally:
            try:
                os.kill(pid, signal.SIGCONT)
            except ProcessLookupError:
                pass
        return qdel.returncode, out, err, time.time() - began

    code, out, err, took = qdel_over_a_dying_daemon({"GRIDTOOLS_NO_AUTOSTART": "1"})
    assert took < 10                            # (it gives a daemon 5 s to be back)
    assert (code, out) == (1, "")
    assert err == ("error: the gridtools daemon stopped before it answered; "
                   "the request was withdrawn, nothing was done\n")
    assert not [n for n in unanswered(cell.root) if n.endswith(".delete")]   # nothing left to be done later
    cell.start_daemon()
    wait_for(lambda: f"{jid} " in cell.run("qstat").stdout)     # still there
    code, out, err, took = qdel_over_a_dying_daemon({"GRIDTOOLS_NO_AUTOSTART": ""})   # it may start it
    assert (code, err) == (0, "") and out.strip().endswith(f"has deleted job {jid}")


def test_the_daemon_starts_again_when_its_code_changes(cell, workdir, tmp_path):
    """An upgrade under a running daemon (its package's files change): it stops as
    ``gridtools daemon stop`` does and executes its program again, new code and all,
    in the same process; a job that runs meanwhile goes on, and later jobs run."""
    import shutil
    import sys
    copy = tmp_path / "pkg"
    shutil.copytree(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                 "src", "gridtools"), copy / "gridtools",
                    ignore=shutil.ignore_patterns("__pycache__"))
    # (the copy looks at its files every second, not every CHECK_EVERY seconds)
    watch = copy / "gridtools" / "daemon" / "upgrade.py"
    text, count = re.subn(r"(?m)^CHECK_EVERY = .*$", "CHECK_EVERY = 1.0", watch.read_text())
    assert count == 1
    watch.write_text(text)
    cell.stop_daemon()
    subprocess.run([sys.executable, "-c", "import sys; sys.path.insert(0, sys.argv[1])\n"
                    "from gridtools.spool import daemonctl; daemonctl.start()", str(copy)],
                   env=cell.env, check=True, timeout=30)
    pid = daemon_pid(cell)
    mark = os.path.join(workdir, "mark")
    running = int(cell.qsub("-terse", "-b", "y", "sh", "-c", f"'sleep 3; echo done > {mark}'",
                            cwd=workdir).stdout)
    wait_for(lambda: cell.job_state(running) and "running" in str(cell.task_states(running)))
    later = time.time() + 60
    os.utime(copy / "gridtools" / "errors.py", (later, later))      # the upgrade
    messages = os.path.join(cell.root, "spool", "messages")
    wait_for(lambda: "code changed since it started: starting again" in open(messages).read(),
             timeout=30)
    wait_for(lambda: os.path.exists(os.path.join(cell.root, "spool", "daemon.pid"))
             and daemon_pid(cell) == pid, timeout=30)              # the same process, again
    cell.wait_finished(running, timeout=30)
    assert open(mark).read() == "done\n"
    after = int(cell.qsub("-terse", "-b", "y", "true", cwd=workdir).stdout)
    cell.wait_finished(after, timeout=30)


def test_a_fifo_in_etc_blocks_neither_the_daemon_nor_qconf(cell, workdir):
    """A named pipe left among the configuration files is not a file: the daemon goes on
    with the configuration it has (and says why it could not reload), qconf says so."""
    fifo = os.path.join(cell.root, "etc", "usersets", "pipe")
    os.mkfifo(fifo)
    messages = os.path.join(cell.root, "spool", "messages")
    jid = int(cell.qsub("-terse", "-b", "y", "true", cwd=workdir).stdout)
    cell.wait_finished(jid, timeout=20)
    wait_for(lambda: "not a regular file" in open(messages).read())
    proc = cell.run("qconf", "-su", "pipe", timeout=10)
    assert proc.returncode == 1 and proc.stderr.strip().endswith("not a regular file")


def test_a_stop_asked_while_the_daemon_starts_itself_again_waits_for_it(cell):
    """In the moment a daemon executes itself again (its code changed) no daemon holds
    the lock; ``gridtools daemon stop`` then waits for it to be back, and stops it."""
    import threading
    cell.stop_daemon()
    stand_in = subprocess.Popen(["sleep", "30"])        # the restarting daemon's process
    try:
        with open(os.path.join(cell.root, "spool", "daemon.restarting"), "w") as fh:
            fh.write(f"{stand_in.pid}\n")
        # (the start may say the daemon it started exited: the stop can reach it first)
        later = threading.Timer(0.5, cell.run, ("gridtools", "daemon", "start"))
        later.start()
        proc = cell.run("gridtools", "daemon", "stop")
        later.join()
    finally:
        stand_in.kill()
        stand_in.wait()
    assert proc.returncode == 0 and "stopped" in proc.stdout, (proc.stdout, proc.stderr)
    assert cell.run("gridtools", "daemon", "status").returncode == 1
    assert not os.path.exists(os.path.join(cell.root, "spool", "daemon.restarting"))
