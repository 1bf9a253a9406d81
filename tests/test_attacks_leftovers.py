"""A job that leaves processes behind: started in a session or process group of their
own (setsid, nohup, a double fork), so that signalling the job's process group misses
them. Whatever way the job ends (its script exits, qdel), they end with it and their
CPU time is in its accounting; suspending the job stops them too."""

import os
import re
import textwrap
import time

from attack_tools import user_py
from conftest import wait_for
from qtools import jid_of

#: a busy loop that says when it has used BUSY seconds of CPU, and goes on
BUSY = 0.6
LOOP = ("import time, sys\nwhile time.process_time() < %s: pass\nopen(sys.argv[1], 'w').close()\n"
        "while True: pass\n" % BUSY)

ESCAPES = textwrap.dedent("""\
    #!/bin/sh
    setsid /usr/bin/python3 -c "{loop}" {busy} &
    echo $! >> {pids}
    nohup sleep 301 > /dev/null 2>&1 &
    echo $! >> {pids}
    setsid sh -c 'sleep 302 & echo $! >> {pids}; sleep 303' &
    echo $! >> {pids}
    touch {ready}
    {rest}
    """)


def _alive(pid):
    """True while ``pid`` runs (a zombie is not running)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            data = fh.read()
    except OSError:
        return False
    return data[data.rfind(b")") + 2:data.rfind(b")") + 3] != b"Z"


def _state(pid):
    with open(f"/proc/{pid}/stat", "rb") as fh:
        data = fh.read()
    return data[data.rfind(b")") + 2:data.rfind(b")") + 3].decode()


def _script(workdir, name, rest):
    pids, ready = os.path.join(workdir, f"{name}.pids"), os.path.join(workdir, f"{name}.ready")
    busy = os.path.join(workdir, f"{name}.busy")
    path = os.path.join(workdir, f"{name}.sh")
    with open(path, "w") as fh:
        fh.write(ESCAPES.format(pids=pids, ready=ready, rest=rest.format(busy=busy), loop=LOOP, busy=busy))
    os.chmod(path, 0o755)
    return path, pids, ready


def _pids(path):
    wait_for(lambda: os.path.exists(path) and len(open(path).read().split()) == 4)
    return [int(p) for p in open(path).read().split()]


def _cpu(cell, jid):
    text = wait_for(lambda: cell.run("qacct", "-j", str(jid)).stdout, timeout=30)
    return float(re.search(r"^cpu\s+(\S+?)s?$", text, re.M).group(1))


def test_what_a_job_leaves_running_ends_with_it_and_is_accounted(cell, users, workdir):
    alice = users[0]
    path, pids, _ready = _script(workdir, "end", "while [ ! -e {busy} ]; do sleep 0.1; done")
    jid = jid_of(cell.qsub("-o", "/dev/null", "-j", "y", path, user=alice, cwd=workdir))
    left = _pids(pids)
    assert all(_alive(pid) for pid in left)
    cell.wait_finished(jid, timeout=30)
    assert wait_for(lambda: not any(_alive(pid) for pid in left), timeout=10), [p for p in left if _alive(p)]
    assert _cpu(cell, jid) >= BUSY          # (what the busy loop used before the job ended)


def test_qdel_ends_what_the_job_left_outside_its_process_group(cell, users, workdir):
    alice = users[0]
    path, pids, _ready = _script(workdir, "del", "sleep 300")
    jid = jid_of(cell.qsub("-o", "/dev/null", "-j", "y", path, user=alice, cwd=workdir))
    left = _pids(pids)
    cell.run("qdel", str(jid), user=alice, check=True)
    cell.wait_finished(jid, timeout=30)
    assert wait_for(lambda: not any(_alive(pid) for pid in left), timeout=10), [p for p in left if _alive(p)]


def test_suspending_the_job_stops_what_it_left_outside_its_process_group(cell, users, workdir):
    alice = users[0]
    path, pids, _ready = _script(workdir, "sus", "sleep 300")
    jid = jid_of(cell.qsub("-o", "/dev/null", "-j", "y", path, user=alice, cwd=workdir))
    loop = _pids(pids)[0]
    cell.run("qmod", "-sj", str(jid), check=True)
    assert wait_for(lambda: _state(loop) == "T", timeout=10)
    time.sleep(0.3)
    assert _state(loop) == "T"              # (stopped, not between two samples)
    cell.run("qmod", "-usj", str(jid), check=True)
    assert wait_for(lambda: _state(loop) in "RS", timeout=10)
    cell.run("qdel", str(jid), check=True)
    cell.wait_finished(jid, timeout=30)
    assert wait_for(lambda: not _alive(loop), timeout=10)


def _ticks(pid):
    """The CPU clock ticks ``pid`` used (user and system)."""
    with open(f"/proc/{pid}/stat", "rb") as fh:
        data = fh.read()
    fields = data[data.rfind(b")") + 2:].split()
    return int(fields[11]) + int(fields[12])


def test_the_owner_s_sigcont_does_not_run_a_suspended_job_on(cell, users, workdir):
    """A job suspended by the cell (here a manager's qmod -sj; subordination and
    calendars suspend the same way) stays stopped when its owner sends its processes
    SIGCONT: its cgroup is frozen too. qmod -usj runs it on."""
    alice = users[0]
    path, pids, _ready = _script(workdir, "cont", "while [ ! -e {busy} ]; do sleep 0.1; done; sleep 300")
    jid = jid_of(cell.qsub("-o", "/dev/null", "-j", "y", path, user=alice, cwd=workdir))
    loop = _pids(pids)[0]                       # (a busy loop in a session of its own)
    wait_for(lambda: os.path.exists(os.path.join(workdir, "cont.busy")))
    cell.run("qmod", "-sj", str(jid), check=True)
    assert wait_for(lambda: _state(loop) == "T", timeout=10)
    user_py(cell, alice, f"import os, signal; os.kill({loop}, signal.SIGCONT)", check=True)
    before = _ticks(loop)
    time.sleep(0.5)
    assert _ticks(loop) == before               # (a busy loop that ran would have used 50 ticks)
    cell.run("qmod", "-usj", str(jid), check=True)
    assert wait_for(lambda: _ticks(loop) > before + 5, timeout=10)
    cell.run("qdel", str(jid), check=True)
    cell.wait_finished(jid, timeout=30)
    assert wait_for(lambda: not _alive(loop), timeout=10)


def _python_job(workdir, name, code):
    path = os.path.join(workdir, f"{name}.py")
    with open(path, "w") as fh:
        fh.write("#!/usr/bin/python3\n" + textwrap.dedent(code))
    os.chmod(path, 0o755)
    return path


def test_a_chain_of_processes_that_fork_and_exit_at_once_ends_with_the_job(cell, users, workdir):
    """A process that forks and exits again and again, in a session of its own, is a
    moving target for a killer that lists processes then kills them: the task's cgroup
    (or, without one, rounds of killing until none is left) ends it with the job."""
    alive = os.path.join(workdir, "chain.alive")
    path = _python_job(workdir, "chain", f"""\
        import os, time
        if os.fork() == 0:
            os.setsid()
            last = 0.0
            while True:
                if os.fork():
                    os._exit(0)
                now = time.time()
                if now - last > 0.05:
                    with open({alive!r}, "w") as fh:
                        fh.write(repr(now))
                    last = now
        time.sleep(1.5)
        """)
    jid = jid_of(cell.qsub("-o", "/dev/null", "-j", "y", "-b", "y", path, user=users[0], cwd=workdir))
    assert wait_for(lambda: os.path.exists(alive))
    cell.wait_finished(jid, timeout=30)
    time.sleep(0.3)
    before = open(alive).read()
    time.sleep(0.5)
    assert open(alive).read() == before         # (nothing of the chain is left to write it)


def _zombies_of(pid):
    found = 0
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat", "rb") as fh:
                    data = fh.read()
            except OSError:
                continue
            fields = data[data.rfind(b")") + 2:].split()
            if fields[0] == b"Z" and int(fields[1]) == pid:
                found += 1
    return found


def test_the_orphans_of_a_running_job_leave_no_zombies(cell, users, workdir):
    """A job whose processes leave 500 orphans that end at once (each is taken in by the
    shepherd): the shepherd waits for them while the job runs, so they do not pile up as
    zombies in the process table."""
    ready = os.path.join(workdir, "orphans.ready")
    path = _python_job(workdir, "orphans", f"""\
        import os, time
        for _ in range(500):
            if os.fork() == 0:
                if os.fork() == 0:
                    time.sleep(0.01)
                    os._exit(0)
                os._exit(0)
            os.wait()
        time.sleep(0.5)
        open({ready!r}, "w").close()
        time.sleep(300)
        """)
    jid = jid_of(cell.qsub("-o", "/dev/null", "-j", "y", "-b", "y", path, user=users[0], cwd=workdir))
    assert wait_for(lambda: os.path.exists(ready), timeout=30)
    job = next(pid for pid in map(int, filter(str.isdigit, os.listdir("/proc")))
               if _cmdline(pid).endswith(path))
    shepherd = int(open(f"/proc/{job}/stat", "rb").read().rsplit(b")", 1)[1].split()[1])
    assert _zombies_of(shepherd) < 20
    cell.run("qdel", str(jid), check=True)
    cell.wait_finished(jid, timeout=30)


def _cmdline(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return fh.read().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return ""


def test_cpu_of_children_nobody_waited_for_is_accounted(cell, users, workdir):
    """A job that ignores SIGCHLD has its busy child reaped by the kernel, whose time
    then counts for no parent: the task's cgroup counts it for the job."""
    path = _python_job(workdir, "ignored", """\
        import os, signal, time
        signal.signal(signal.SIGCHLD, signal.SIG_IGN)
        done = {done!r}
        if os.fork() == 0:
            while time.process_time() < 1.0:
                pass
            open(done, "w").close()
            os._exit(0)
        while not os.path.exists(done):
            time.sleep(0.05)
        time.sleep(0.2)
        """.format(done=os.path.join(workdir, "ignored.done")))
    jid = jid_of(cell.qsub("-o", "/dev/null", "-j", "y", "-b", "y", path, user=users[0], cwd=workdir))
    cell.wait_finished(jid, timeout=60)
    assert _cpu(cell, jid) >= 1.0


PLUGIN = '''#!/usr/bin/python3
import os, re, sys, time
args = sys.argv[1:]
if args == ["-classad"]:
    sys.exit(0)
if os.fork() == 0:                          # (a burner that leaves the plugin's session)
    os.setsid()
    if os.fork():
        os._exit(0)
    while True:
        with open({alive!r}, "w") as fh:
            fh.write(repr(time.time()))
        time.sleep(0.05)
infile, outfile = args[args.index("-infile") + 1], args[args.index("-outfile") + 1]
with open(infile) as fh, open(outfile, "w") as out:
    for line in fh:
        url, local = re.findall(r'"([^"]*)"', line)
        open(local, "w").close()
        out.write(f'[ TransferSuccess = true; TransferUrl = "{{url}}"; TransferFileName = "{{local}}" ]\\n')
'''


def test_what_a_transfer_plugin_leaves_running_ends_with_the_task(cell, users, workdir):
    """A job's own transfer plugin runs before the job, for its input files: a process it
    leaves in a session of its own is in the task's cgroup too, and ends with the task."""
    from condortools import submit
    alive = os.path.join(workdir, "plugin.alive")
    with open(os.path.join(workdir, "plugin.py"), "w") as fh:
        fh.write(PLUGIN.format(alive=alive))
    os.chmod(os.path.join(workdir, "plugin.py"), 0o755)
    cluster = submit(cell, "executable = /bin/true\nshould_transfer_files = YES\ntransfer_plugins = burn=plugin.py\n"
                           "transfer_input_files = burn://box/in.txt\nqueue\n", cwd=workdir, user=users[0])
    assert wait_for(lambda: os.path.exists(alive))
    assert wait_for(lambda: not cell.run("condor_q", str(cluster), "-af", "ClusterId").stdout.strip(), timeout=60)
    time.sleep(0.3)
    before = open(alive).read()
    time.sleep(0.5)
    assert open(alive).read() == before         # (nothing the plugin left is there to write it)


def test_a_transfer_plugin_that_would_not_end_ends_with_condor_rm(cell, users, workdir):
    """A job's transfer plugin that never ends: condor_rm ends it, and the job leaves."""
    from condortools import submit
    started = os.path.join(workdir, "hang.started")
    with open(os.path.join(workdir, "hang.py"), "w") as fh:
        fh.write(f"#!/usr/bin/python3\nimport sys, time\nif sys.argv[1:] == ['-classad']:\n    sys.exit(0)\n"
                 f"open({started!r}, 'w').close()\ntime.sleep(300)\n")
    os.chmod(os.path.join(workdir, "hang.py"), 0o755)
    cluster = submit(cell, "executable = /bin/true\nshould_transfer_files = YES\ntransfer_plugins = hang=hang.py\n"
                           "transfer_input_files = hang://box/in.txt\nqueue\n", cwd=workdir, user=users[0])
    assert wait_for(lambda: os.path.exists(started), timeout=30)
    assert cell.run("condor_rm", str(cluster), user=users[0]).returncode == 0
    assert wait_for(lambda: not cell.run("condor_q", str(cluster), "-af", "ClusterId").stdout.strip(), timeout=30)
    assert not any(_cmdline(pid).endswith("hang.py -infile") or "hang.py" in _cmdline(pid)
                   for pid in map(int, filter(str.isdigit, os.listdir("/proc"))))


def test_the_cgroups_of_shepherds_that_are_gone_are_removed(monkeypatch):
    """A shepherd killed before its end leaves its task's cgroup: the next shepherd to
    make one removes the empty ones whose shepherd is gone, and no other."""
    import subprocess
    from gridtools.exec import leftovers
    mount = leftovers._cgroup2_mount()
    if os.geteuid() != 0 or mount is None:
        import pytest
        pytest.skip("needs root and a cgroup2 file system")
    gone = subprocess.Popen(["true"])
    gone.wait()
    base = os.path.join(mount, leftovers.BASE)
    os.makedirs(base, exist_ok=True)
    stale, live = os.path.join(base, f"9999.1.{gone.pid}"), os.path.join(base, f"9999.2.{os.getpid()}")
    for path in (stale, live):
        os.makedirs(path, exist_ok=True)
    monkeypatch.setattr(leftovers, "_SWEPT", [])
    tracker = leftovers.Tracker.make(f"9999.3.{os.getpid()}")
    try:
        assert not os.path.exists(stale) and os.path.exists(live)
    finally:
        for path in (live, tracker.path):
            os.rmdir(path)
