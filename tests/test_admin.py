"""gridtools init and gridtools daemon: cells, idempotency, refusals, status, auto-start."""

import os
import re
import shutil
import subprocess
import sys
import tempfile

import pytest

from conftest import BIN, wait_for


def env_for(root, **extra):
    env = dict(os.environ)
    env.update({"GRIDTOOLS_ROOT": root, "PATH": os.pathsep.join([BIN, os.path.dirname(sys.executable),
                                                                  env.get("PATH", "")])})
    env.pop("GRIDTOOLS_NO_AUTOSTART", None)
    env.update(extra)
    return env


def run(env, *args, **kw):
    return subprocess.run(list(args), env=env, capture_output=True, text=True, timeout=60, **kw)


@pytest.fixture
def scratch():
    root = tempfile.mkdtemp(prefix="gtadmin-")
    yield root
    run(env_for(root), "gridtools", "daemon", "stop")
    shutil.rmtree(root, ignore_errors=True)


def test_init_creates_a_cell_and_is_idempotent(scratch):
    env = env_for(scratch)
    proc = run(env, "gridtools", "init", "--slots", "3", "--host", "alpha", "--host", "beta")
    assert proc.returncode == 0, proc.stderr
    etc = os.path.join(scratch, "etc")
    with open(os.path.join(etc, "queues", "all.q")) as fh:
        queue = fh.read()
    assert re.search(r"^slots\s+1,\[alpha=3\],\[beta=3\]$", queue, re.M)
    with open(os.path.join(etc, "hostgroups", "@allhosts")) as fh:
        assert re.search(r"^hostlist\s+alpha beta$", fh.read(), re.M)
    assert sorted(os.listdir(os.path.join(etc, "exechosts"))) == ["alpha", "beta", "global"]
    with open(os.path.join(etc, "managers")) as fh:
        assert fh.read().split() == [run(env, "id", "-un").stdout.strip()]
    assert oct(os.stat(os.path.join(scratch, "spool", "requests")).st_mode & 0o7777) == "0o1777"
    # a second init keeps what is there (a changed queue stays changed)
    with open(os.path.join(etc, "queues", "all.q"), "a") as fh:
        fh.write("")
    os.unlink(os.path.join(etc, "pe", "mpi"))
    proc = run(env, "gridtools", "init", "--slots", "9")
    assert proc.returncode == 0
    with open(os.path.join(etc, "queues", "all.q")) as fh:
        assert fh.read() == queue
    assert os.path.exists(os.path.join(etc, "pe", "mpi"))


def test_init_refuses_a_foreign_directory(scratch):
    with open(os.path.join(scratch, "precious.txt"), "w") as fh:
        fh.write("data\n")
    proc = run(env_for(scratch), "gridtools", "init")
    assert proc.returncode != 0
    assert "not empty and is not a gridtools cell" in proc.stderr
    assert proc.stderr.startswith("error: ") and proc.stderr.count("\n") == 1     # (as every command says one)
    assert os.listdir(scratch) == ["precious.txt"]


def test_a_cell_must_be_its_daemon_users_own(scratch, users):
    """A cell folder another user owns (he made the path first) or may write to is
    refused by init and by the daemon: its owner could put his own etc/ in place."""
    import pwd
    env = env_for(scratch)
    entry = pwd.getpwnam(users[1])
    os.chown(scratch, entry.pw_uid, entry.pw_gid)
    proc = run(env, "gridtools", "init", "--slots", "1")
    assert proc.returncode == 1 and f"{scratch} belongs to {users[1]}" in proc.stderr
    assert os.listdir(scratch) == []
    os.chown(scratch, 0, 0)
    os.chmod(scratch, 0o777)
    proc = run(env, "gridtools", "init", "--slots", "1")
    assert proc.returncode == 1 and f"others may write to {scratch}" in proc.stderr
    os.chmod(scratch, 0o755)
    assert run(env, "gridtools", "init", "--slots", "1").returncode == 0
    os.chown(os.path.join(scratch, "etc"), entry.pw_uid, entry.pw_gid)     # swapped later
    proc = run(env, "gridtools", "daemon", "start")
    assert proc.returncode != 0
    assert "belongs to " + users[1] in proc.stdout + proc.stderr + open(
        os.path.join(scratch, "spool", "daemon.out")).read()
    assert run(env, "gridtools", "daemon", "status").returncode == 1


def test_commands_refuse_an_uninitialised_named_cell(scratch):
    proc = run(env_for(scratch), "qsub", "-b", "y", "true")
    assert proc.returncode == 1
    assert "not an initialised gridtools cell" in proc.stderr
    for args in (["qsub", "-l", "h_rt=10", "-b", "y", "true"], ["qsub", "-pe", "smp", "2", "-b", "y", "true"]):
        proc = run(env_for(scratch), *args)         # the cell is missing, not the resource
        assert proc.returncode == 1
        assert proc.stderr.splitlines() == [f"error: {scratch} is not an initialised gridtools cell "
                                            "(run: gridtools init)"]


def test_queries_in_an_uninitialised_named_cell_say_so_too(scratch):
    """A mistyped GRIDTOOLS_ROOT: a query does not show an empty queue and succeed, as if
    the user's jobs were gone; it says the cell is not there, in one line."""
    for args in (["qstat"], ["qstat", "-f"], ["condor_q"], ["qhost"], ["qdel", "1"], ["condor_status"],
                 ["qhold", "1"], ["qrstat"], ["qacct", "-j"], ["condor_history"]):
        proc = run(env_for(scratch), *args)
        assert (proc.returncode, proc.stdout) == (1, ""), args
        assert proc.stderr == f"error: {scratch} is not an initialised gridtools cell (run: gridtools init)\n"
    assert run(env_for(scratch), "qstat", "-help").returncode == 0


def test_daemon_start_status_stop_and_autostart(scratch):
    env = env_for(scratch)
    run(env, "gridtools", "init", "--slots", "1", "--host", "solo")
    queue = os.path.join(scratch, "etc", "queues", "all.q")
    text = open(queue).read().replace("np_load_avg=1.75", "NONE")    # not the machine's load
    open(queue, "w").write(text)
    proc = run(env, "gridtools", "daemon", "status")
    assert proc.returncode == 1 and proc.stdout == "daemon not running\n"
    # the first qsub starts the daemon, and the job runs
    proc = run(env, "qsub", "-terse", "-b", "y", "true", cwd=scratch)
    jid = proc.stdout.strip()
    state = os.path.join(scratch, "spool", "jobs", jid, "state.yaml")
    wait_for(lambda: os.path.exists(state) and "finished" in open(state).read(), timeout=20)
    pattern = r"daemon running: pid \d+, uptime \d+:\d\d:\d\d, 0 running, 0 pending\n"
    wait_for(lambda: re.fullmatch(pattern, run(env, "gridtools", "daemon", "status").stdout), timeout=20)
    assert run(env, "gridtools", "daemon", "start").stdout.startswith("daemon already running")
    assert run(env, "gridtools", "daemon", "stop").stdout == "daemon stopped\n"
    assert run(env, "gridtools", "daemon", "status").returncode == 1


def test_racing_starts_all_name_the_one_daemon_that_runs(scratch):
    """Starts that race (after the daemon was killed, its pid file left behind) each print
    the pid of the daemon that won, once it is up: exactly one says it started it, the
    others that it is already running; none prints pid 0 or the killed daemon's pid."""
    env = env_for(scratch)
    run(env, "gridtools", "init", "--slots", "1")
    pidfile = os.path.join(scratch, "spool", "daemon.pid")
    assert run(env, "gridtools", "daemon", "start").returncode == 0
    for _round in range(3):
        killed = int(open(pidfile).read())
        os.kill(killed, 9)
        wait_for(lambda: run(env, "gridtools", "daemon", "status").returncode == 1)
        starters = [subprocess.Popen(["gridtools", "daemon", "start"], env=env, text=True,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                    for _ in range(3)]
        outputs = [(p.communicate(timeout=120), p.returncode) for p in starters]
        daemon_pid = int(open(pidfile).read())
        assert daemon_pid not in (0, killed)
        lines = sorted(out for (out, _err), _code in outputs)
        assert [code for _out, code in outputs] == [0, 0, 0], outputs
        assert lines.count(f"daemon started (pid {daemon_pid})\n") == 1, lines
        assert lines.count(f"daemon already running (pid {daemon_pid})\n") == 2, lines


def test_no_autostart_when_disabled(scratch):
    env = env_for(scratch, GRIDTOOLS_NO_AUTOSTART="1")
    run(env, "gridtools", "init", "--slots", "1")
    proc = run(env, "qsub", "-b", "y", "true", cwd=scratch)
    assert proc.returncode == 0
    # qsub started no daemon: it opens the output file of a daemon it starts (spool/daemon.out)
    # before it starts it in the background, which may not be up when qsub returns
    assert not os.path.exists(os.path.join(scratch, "spool", "daemon.out"))
    assert run(env, "gridtools", "daemon", "status").returncode == 1
    out = run(env, "qstat").stdout
    assert " qw " in out          # visible while waiting for a daemon


def test_personal_cell_is_created_on_first_use(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    env = env_for("", HOME=str(home), GRIDTOOLS_NO_AUTOSTART="1")
    env.pop("GRIDTOOLS_ROOT")
    proc = run(env, "qsub", "-h", "-b", "y", "true", cwd=str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert (home / ".gridtools" / "etc" / "queues" / "all.q").exists()
    # the id is claimed in jobids/; the daemon has not taken the job in yet
    assert (home / ".gridtools" / "spool" / "jobids" / "1").exists()
    assert (home / ".gridtools" / "spool" / "jobseqnum").read_text().strip() == "0"


def test_personal_cell_queue_has_no_load_threshold_a_shared_one_has(tmp_path, scratch):
    home = tmp_path / "home"
    home.mkdir()
    env = env_for("", HOME=str(home), GRIDTOOLS_NO_AUTOSTART="1")
    env.pop("GRIDTOOLS_ROOT")
    proc = run(env, "qconf", "-sq", "all.q", cwd=str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert "load_thresholds       NONE\n" in proc.stdout
    shared = env_for(scratch)
    assert run(shared, "gridtools", "init", "--host", "alpha").returncode == 0
    proc = run(shared, "qconf", "-sq", "all.q")
    assert "load_thresholds       np_load_avg=1.75\n" in proc.stdout


def test_other_users_cannot_start_or_stop_roots_daemon(cell, users):
    from conftest import user_bin, user_python
    python, extra = user_python()
    admin = [python, os.path.join(user_bin(), "gridtools"), "daemon"]
    proc = cell.run(*admin, "stop", user="gtalice", env=extra)
    assert (proc.returncode, proc.stderr) == (1, "error: only the user who started the daemon (or root) "
                                                 "may stop it\n")
    cell.stop_daemon()
    proc = cell.run(*admin, "start", user="gtalice", env=extra)
    assert proc.returncode == 1
    assert proc.stderr == (f"error: only the owner of the cell may start its daemon "
                           f"({cell.root}/spool is not writable)\n")


def test_daemon_run_serves_in_the_foreground_until_sigterm(idle_cell):
    """``gridtools daemon run``: the same daemon as a started one (its exec server first),
    in the foreground; a job runs, and SIGTERM ends it with status 0."""
    proc = subprocess.Popen([os.path.join(BIN, "gridtools"), "daemon", "run"], env=idle_cell.env,
                            cwd=idle_cell.root, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        done = idle_cell.run("qsub", "-sync", "y", "-b", "y", "true", timeout=60)
        assert done.returncode == 0, done.stderr
        assert done.stdout.splitlines()[-1] == "Job 1 exited with exit code 0." and done.stderr == ""
    finally:
        proc.terminate()
        assert proc.wait(timeout=30) == 0


def test_init_makes_grid_engines_common_folder(scratch):
    """$SGE_ROOT/$SGE_CELL/common (jobs get SGE_ROOT = the cell, SGE_CELL = default) holds
    the accounting file (accounting(5)) and settings.sh/settings.csh, writable by nobody
    but the cell's owner; a daemon started in a cell without it makes it."""
    env = env_for(scratch)
    assert run(env, "gridtools", "init", "--slots", "1").returncode == 0
    common = os.path.join(scratch, "default", "common")
    for path in (os.path.join(scratch, "default"), common):
        st = os.lstat(path)
        assert os.path.isdir(path) and st.st_uid == os.geteuid() and st.st_mode & 0o7777 == 0o755
    for name in ("settings.sh", "settings.csh"):
        st = os.lstat(os.path.join(common, name))
        assert st.st_uid == os.geteuid() and st.st_mode & 0o7777 == 0o644
    assert os.path.realpath(os.path.join(common, "accounting")) == os.path.join(scratch, "spool", "accounting")
    probe = run({"PATH": "/usr/bin:/bin"}, "sh", "-c", f". {common}/settings.sh; "
                'echo "$GRIDTOOLS_ROOT $SGE_ROOT $SGE_CELL"; command -v qsub')
    assert probe.stdout.splitlines() == [f"{scratch} {scratch} default", os.path.join(BIN, "qsub")]
    library = os.path.join(scratch, "util", "resources", "jsv", "jsv_include.sh")     # sh JSVs' functions
    assert os.path.islink(library) and "jsv_main()" in open(library).read()
    assert os.lstat(os.path.dirname(library)).st_mode & 0o7777 == 0o755
    shutil.rmtree(os.path.join(scratch, "default"))
    os.unlink(library)
    os.symlink("/nonexistent/older/install/jsv_include.sh", library)
    assert run(env, "gridtools", "daemon", "start").returncode == 0
    wait_for(lambda: os.path.isdir(common) and
             sorted(os.listdir(common)) == ["accounting", "settings.csh", "settings.sh"])
    assert os.path.isfile(library)          # pointed at this installation's copy again


def test_a_cell_whose_path_has_spaces_reads_its_own_configuration(scratch):
    """The cell's path goes into etc/conf/global as it is (a home such as /home/Jane Doe
    makes such a personal cell): the cell and its daemon read that configuration back."""
    root = os.path.join(scratch, "my cell  #1")
    env = env_for(root)
    assert run(env, "gridtools", "init", "--slots", "1").returncode == 0
    try:
        assert run(env, "gridtools", "daemon", "start").returncode == 0
        proc = run(env, "qsub", "-h", "-N", "spaced", "-b", "y", "true")
        assert (proc.returncode, proc.stderr) == (0, "")
        wait_for(lambda: "spaced" in run(env, "qstat").stdout)
        proc = run(env, "qconf", "-sconf")
        assert (proc.returncode, proc.stderr) == (0, "")
        assert f"execd_spool_dir              {root}/spool/execd\n" in proc.stdout
        assert "mailer                       /usr/bin/mail\n" in proc.stdout
        assert not os.path.exists(os.path.join(root, "spool", "quarantine"))
    finally:
        run(env, "gridtools", "daemon", "stop")


def test_a_killed_daemon_not_yet_reaped_is_not_the_running_one():
    """The pid file of a daemon killed a moment ago names a zombie until its parent reaps
    it: ``daemon start`` must not name it as the daemon that runs."""
    from gridtools.spool.daemonctl import alive
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    try:
        wait_for(lambda: open(f"/proc/{pid}/stat").read().rpartition(")")[2].split()[0] == "Z")
        assert not alive(pid) and alive(os.getpid())
    finally:
        os.waitpid(pid, 0)
    assert not alive(pid)



def test_a_daemon_starts_while_others_look_at_its_lock(scratch):
    """``daemon status`` and starts look whether a daemon runs by taking its lock for a
    moment: a daemon starting meanwhile still takes it (it tries again) and runs."""
    import threading
    from gridtools.spool.files import is_locked
    env = env_for(scratch)
    run(env, "gridtools", "init", "--slots", "1")
    lock = os.path.join(scratch, "spool", "daemon.lock")
    open(lock, "a").close()
    stop = threading.Event()

    def look():
        while not stop.is_set():
            is_locked(lock)
    lookers = [threading.Thread(target=look) for _ in range(2)]
    for thread in lookers:
        thread.start()
    try:
        for _round in range(3):
            proc = run(env, "gridtools", "daemon", "start")
            assert proc.returncode == 0 and proc.stdout.startswith("daemon started"), proc.stderr
            assert run(env, "gridtools", "daemon", "stop").returncode == 0
    finally:
        stop.set()
        for thread in lookers:
            thread.join()


def test_a_users_own_cell_keeps_every_jobs_history_and_serves_no_other_user(users):
    """A cell a user made and runs as himself: condor_history shows every job's command
    (the user's private history file stays writable to his daemon), and another user's
    commands are told at once that the cell is not theirs (nothing waits unanswered)."""
    import pwd
    from conftest import user_bin
    owner, other = users[0], users[1]
    root = tempfile.mkdtemp(prefix="gtusercell-", dir="/tmp")
    entry = pwd.getpwnam(owner)
    os.chown(root, entry.pw_uid, entry.pw_gid)
    os.chmod(root, 0o755)

    def as_user(user, *args):
        who = pwd.getpwnam(user)
        env = {"GRIDTOOLS_ROOT": root, "HOME": who.pw_dir, "USER": user, "LOGNAME": user,
               "PATH": os.pathsep.join([user_bin(), "/usr/bin", "/bin"])}

        def demote():
            os.initgroups(user, who.pw_gid)
            os.setgid(who.pw_gid)
            os.setuid(who.pw_uid)
        return subprocess.run(list(args), env=env, cwd=root, capture_output=True, text=True, timeout=60,
                              preexec_fn=demote)
    try:
        assert as_user(owner, "gridtools", "init", "--slots", "1").returncode == 0
        assert as_user(owner, "qconf", "-rattr", "queue", "load_thresholds", "NONE", "all.q").returncode == 0
        for n in (1, 2):
            proc = as_user(owner, "condor_submit", "-a", "executable = /bin/echo", "-a", f"arguments = run{n}",
                           "-a", "queue", "/dev/null")
            assert proc.returncode == 0, proc.stderr
            wait_for(lambda: f"run{n}" in as_user(owner, "condor_history", "-af", "Args").stdout, timeout=30)
        assert sorted(as_user(owner, "condor_history", "-af", "Args").stdout.split()) == ["run1", "run2"]
        with open(os.path.join(root, "spool", "messages")) as fh:
            assert "cannot append" not in fh.read()
        refusal = f"error: {root} is the cell of {owner}, whose daemon serves {owner} alone\n"
        for args in (("qsub", "-b", "y", "true"), ("condor_submit", "-a", "executable = /bin/true", "-a", "queue",
                                                   "/dev/null")):
            proc = as_user(other, *args)
            assert (proc.returncode, proc.stderr) == (1, refusal), args
    finally:
        as_user(owner, "gridtools", "daemon", "stop")
        shutil.rmtree(root, ignore_errors=True)
