"""condor_ssh_to_job run by root against what a plain user prepared: a set-uid-root
process planted with an environment that names the cell and the job, a job that pushes
input into the caller's terminal (TIOCSTI), a job that names a folder of root's group as
its scratch directory. Root's session is only ever opened beside the process the job's
shepherd recorded, runs the user's code in a terminal (or pipes) of its own, and does
what it does as the owner with the owner's groups."""

import fcntl
import os
import pwd
import select
import shutil
import stat
import subprocess
import termios
import tty

import pytest

from condortools import submit, wait_status
from conftest import BIN, user_python, wait_for

SLEEP = 'executable = /bin/sleep\narguments = 300\nenvironment = "COLOUR=blue"\nqueue\n'
PYTHON = "/usr/bin/python3"

#: run as the attacker: exec /usr/bin/su with an environment that claims many jobs of the
#: cell (the same names many times over), a library to preload, a directory of theirs
PLANT = """
import ctypes, sys
root, bait = sys.argv[1], sys.argv[2]
env = [f"GRIDTOOLS_ROOT={root}", f"SGE_ROOT={root}", "PLANTED=yes", f"LD_PRELOAD={bait}/evil.so",
       f"_CONDOR_JOB_IWD={bait}", f"_CONDOR_SCRATCH_DIR={bait}", f"PATH={bait}:/usr/bin:/bin"]
env += [f"CONDOR_ID={n}.0" for n in range(1, 40)] + [f"JOB_ID={n}" for n in range(1, 40)]
envp = (ctypes.c_char_p * (len(env) + 1))(*[e.encode() for e in env], None)
argv = (ctypes.c_char_p * 3)(b"su", b"root", None)
ctypes.CDLL(None).execve(b"/usr/bin/su", argv, envp)
"""


def _demoted(user, terminal=None):
    """A preexec_fn: (the controlling terminal ``terminal``, in a session of its own,
    then) ``user``'s identity."""
    entry = pwd.getpwnam(user) if user else None

    def demote():
        if terminal is not None:
            fcntl.ioctl(terminal, termios.TIOCSCTTY, 0)
        if entry is not None:
            os.initgroups(user, entry.pw_gid)
            os.setgid(entry.pw_gid)
            os.setuid(entry.pw_uid)
    return demote


def _read_all(fd):
    """What can be read from ``fd`` (non-blocking) now."""
    os.set_blocking(fd, False)
    data = b""
    while True:
        try:
            chunk = os.read(fd, 65536)
        except (BlockingIOError, OSError):
            return data
        if not chunk:
            return data
        data += chunk


@pytest.fixture
def planted(cell, workdir, users):
    """A set-uid-root ``su root`` of the first user's, waiting for a password on a terminal,
    whose environment claims cell jobs 1 to 39 (CONDOR_ID, JOB_ID), preloads a library of
    theirs and names their folder as the job's directories; yields (the su, that folder)."""
    su_file = os.stat("/usr/bin/su") if os.path.exists("/usr/bin/su") else None
    if su_file is None or su_file.st_uid != 0 or not su_file.st_mode & stat.S_ISUID:
        pytest.skip("needs a set-uid-root /usr/bin/su")
    attacker = users[0]
    bait = os.path.join(workdir, "bait")
    os.mkdir(bait, 0o755)
    os.chown(bait, pwd.getpwnam(attacker).pw_uid, -1)
    master, slave = os.openpty()
    python, extra = user_python()
    su = subprocess.Popen([python, "-c", PLANT, cell.root, bait], stdin=slave, stdout=slave, stderr=slave,
                          env={"PATH": "/usr/bin:/bin", **extra}, cwd="/", start_new_session=True,
                          preexec_fn=_demoted(attacker, 0))
    os.close(slave)
    seen = []
    try:
        wait_for(lambda: seen.append(_read_all(master)) or b"assword" in b"".join(seen), timeout=20)
        with open(f"/proc/{su.pid}/status") as fh:
            assert [line for line in fh if line.startswith("Uid:")][0].split()[1:3] == [
                str(pwd.getpwnam(attacker).pw_uid), "0"]       # (real: the attacker's; effective: root)
        yield su, bait
    finally:
        su.kill()
        su.wait()
        os.close(master)


def test_root_is_never_sent_into_a_process_another_user_planted(cell, workdir, planted):
    """Before: root's session ran beside the planted su (its /proc entry is root's), as
    root, with the attacker's LD_PRELOAD, PATH and directory, and root made its mark in
    the attacker's folder. Now it runs beside the job's own process, with the job's
    environment."""
    su, bait = planted
    cluster = submit(cell, SLEEP, cwd=workdir)
    wait_status(cell, f"{cluster}.0", 2)
    proc = cell.run("condor_ssh_to_job", str(cluster),
                    f'echo "$PLANTED|$LD_PRELOAD|$COLOUR|$_CONDOR_JOB_PIDS"; pwd; '
                    f'test -d {bait}/.condor_ssh_to_job_1 && echo marked-there; exit 0')
    assert proc.returncode == 0, proc.stderr
    assert "evil.so" not in proc.stderr
    said, where = proc.stdout.splitlines()
    planted_, preload, colour, pids = said.split("|")
    assert (planted_, preload, colour) == ("", "", "blue"), "root's session took the planted environment"
    assert int(pids) != su.pid and where == os.path.realpath(workdir)
    assert os.listdir(bait) == []
    cell.run("condor_rm", str(cluster), check=True)


def test_an_interactive_session_ends_its_own_job_and_nothing_planted(cell, workdir, planted):
    """The interactive job ends with its session; the planted su is not sent SIGTERM."""
    su, bait = planted
    proc = cell.run("condor_submit", "-interactive", cwd=workdir, input="echo $PLANTED/$_CONDOR_JOB_PIDS\nexit 0\n")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[-1] != f"yes/{su.pid}"
    cluster = int(proc.stdout.splitlines()[1].split()[-1].rstrip("."))
    assert wait_for(lambda: cell.run("condor_history", str(cluster), "-af", "JobStatus").stdout == "4\n", timeout=20)
    assert su.poll() is None, "the planted su was sent SIGTERM"
    assert os.listdir(bait) == []


#: run by the job's owner in root's session: push a line into its standard input and into
#: its controlling terminal (TIOCSTI), and say which terminal its standard input is
INJECT = """
import fcntl, os, termios
for name, how in (("stdin", lambda: 0), ("tty", lambda: os.open("/dev/tty", os.O_RDWR))):
    try:
        fd = how()
        for byte in b"echo INJECTED\\n":
            fcntl.ioctl(fd, termios.TIOCSTI, bytes([byte]))
        print(name, "pushed")
    except OSError as exc:
        print(name, exc.errno)
print("terminal", os.ttyname(0) if os.isatty(0) else "-")
"""


@pytest.mark.parametrize("stdin_is_terminal", [True, False])
def test_the_owners_code_never_gets_roots_terminal(cell, workdir, users, stdin_is_terminal):
    """Root opens a session in alice's job from a terminal (its standard input, or only its
    controlling terminal); what alice's code pushes with TIOCSTI never reaches root's
    terminal (root's shell would run it as root after the session), and her code never
    holds that terminal: it gets one of its own (or pipes)."""
    if not os.path.exists(PYTHON):
        pytest.skip("needs /usr/bin/python3")
    alice = users[0]
    home = pwd.getpwnam(alice).pw_dir
    cluster = submit(cell, SLEEP, user=alice, cwd=home, name="t.sub")
    wait_status(cell, f"{cluster}.0", 2)
    script = os.path.join(workdir, "inject.py")
    with open(script, "w") as fh:
        fh.write(INJECT)
    os.chmod(script, 0o644)
    master, slave = os.openpty()
    tty.setraw(slave)
    root_tty = os.ttyname(slave)
    streams = dict(stdin=slave, stdout=slave, stderr=slave) if stdin_is_terminal else \
        dict(stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    ssh = subprocess.Popen([os.path.join(BIN, "condor_ssh_to_job"), str(cluster), f"{PYTHON} {script}"],
                           env=cell.env, cwd=workdir, start_new_session=True, pass_fds=(slave,),
                           preexec_fn=_demoted(None, slave), **streams)
    out = b""
    try:
        while ssh.poll() is None:
            select.select([master], [], [], 1.0)
            out += _read_all(master)
        out += _read_all(master) + (ssh.stdout.read() if ssh.stdout else b"")
        typed = _read_all(slave)                # (what root's shell would read next)
    finally:
        if ssh.poll() is None:
            ssh.kill()
        ssh.wait()
        os.close(master)
        os.close(slave)
    assert ssh.returncode == 0, out
    assert b"INJECTED" not in typed, "alice's job pushed a command into root's terminal"
    said = dict(line.split(" ", 1) for line in out.decode().replace("\r", "").splitlines() if " " in line)
    assert said["terminal"] != root_tty
    if not stdin_is_terminal:
        assert said["terminal"] == "-" and said["tty"] != "pushed"     # (no controlling terminal at all)
    cell.run("condor_rm", str(cluster), check=True)


def test_root_acts_as_the_owner_without_roots_groups(cell, workdir, users):
    """alice's job names a folder only root's group may change as its scratch directory,
    in its process's environment and in the environment its shepherd wrote; what root's
    session removes there afterwards is removed with alice's rights alone."""
    alice = users[0]
    guarded = os.path.join(workdir, "rootgroup")
    os.mkdir(guarded)
    os.chmod(guarded, 0o770)
    os.mkdir(os.path.join(guarded, ".condor_ssh_to_job_1"))
    home = pwd.getpwnam(alice).pw_dir
    job = ('executable = /bin/sh\narguments = "-c \'echo _CONDOR_SCRATCH_DIR=%s >> $SGE_JOB_SPOOL_DIR/environment; '
           'exec /usr/bin/env _CONDOR_SCRATCH_DIR=%s /bin/sleep 300\'"\nqueue\n') % (guarded, guarded)
    cluster = submit(cell, job, user=alice, cwd=home, name="g.sub")
    wait_status(cell, f"{cluster}.0", 2)
    folder = os.path.join(cell.root, "spool", "jobs", str(cluster), "1")
    wait_for(lambda: guarded in open(os.path.join(folder, "environment")).read())
    wait_for(lambda: guarded.encode() in _environ_of_job(folder))
    proc = subprocess.run([os.path.join(BIN, "condor_ssh_to_job"), str(cluster), "id -un"], env=cell.env,
                          cwd=workdir, capture_output=True, text=True, timeout=60,
                          preexec_fn=lambda: os.setgroups([0]))          # (root, as a login makes it)
    assert (proc.returncode, proc.stdout) == (0, f"{alice}\n"), proc.stderr
    assert os.path.isdir(os.path.join(guarded, ".condor_ssh_to_job_1")), "removed with root's groups"
    cell.run("condor_rm", str(cluster), check=True)
    shutil.rmtree(guarded)


def _environ_of_job(folder):
    try:
        with open(os.path.join(folder, "job_pid")) as fh:
            pid = int(fh.read())
        with open(f"/proc/{pid}/environ", "rb") as fh:
            return fh.read()
    except (OSError, ValueError):
        return b""


def test_a_session_beside_a_job_of_roots_leaves_out_what_chooses_code_to_run(cell, workdir):
    """Root's session beside root's job takes the environment the shepherd wrote, without
    LD_* nor BASH_ENV and ENV."""
    cluster = submit(cell, 'executable = /bin/sleep\narguments = 300\n'
                           'environment = "COLOUR=blue LD_LIBRARY_PATH=/nowhere BASH_ENV=/nowhere/rc ENV=/nowhere/rc"\n'
                           'queue\n', cwd=workdir)
    wait_status(cell, f"{cluster}.0", 2)
    proc = cell.run("condor_ssh_to_job", str(cluster), 'echo "$COLOUR|$LD_LIBRARY_PATH|$BASH_ENV|$ENV"')
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "blue|||\n", "")
    cell.run("condor_rm", str(cluster), check=True)


def test_roots_shell_in_a_users_job_from_a_terminal_is_as_before(cell, workdir, users):
    """Through the terminal of its own, root's shell in alice's job is greeted as before,
    is alice's with her job's environment, takes what root types, sees root's window size,
    and its exit status is the command's; root's terminal gets its modes back."""
    alice = users[0]
    home = pwd.getpwnam(alice).pw_dir
    cluster = submit(cell, SLEEP, user=alice, cwd=home, name="s.sub")
    wait_status(cell, f"{cluster}.0", 2)
    master, slave = os.openpty()
    fcntl.ioctl(master, termios.TIOCSWINSZ, bytes([33, 0, 111, 0, 0, 0, 0, 0]))    # 33 rows, 111 columns
    modes = termios.tcgetattr(slave)
    ssh = subprocess.Popen([os.path.join(BIN, "condor_ssh_to_job"), "-shells", "/bin/sh", str(cluster)],
                           env=cell.env, cwd=workdir, start_new_session=True, stdin=slave, stdout=slave,
                           stderr=slave, preexec_fn=_demoted(None, 0))
    seen = []
    try:
        wait_for(lambda: seen.append(_read_all(master)) or b"running with pid(s)" in b"".join(seen), timeout=30)
        os.write(master, b"echo \"$(id -un) $COLOUR $(stty size)\"; exit 3\n")
        while ssh.poll() is None:
            select.select([master], [], [], 1.0)
            seen.append(_read_all(master))
        seen.append(_read_all(master))
        after = termios.tcgetattr(slave)
    finally:
        if ssh.poll() is None:
            ssh.kill()
        ssh.wait()
        os.close(master)
        os.close(slave)
    out = b"".join(seen).decode().replace("\r", "")
    assert ssh.returncode == 3, out
    assert out.startswith("Welcome to slot") and "\nYour condor job is running with pid(s) " in out
    assert f"{alice} blue 33 111\n" in out
    assert after == modes
    cell.run("condor_rm", str(cluster), check=True)
