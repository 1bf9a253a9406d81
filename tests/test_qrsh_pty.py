"""qlogin and qrsh on a pseudo terminal, as Grid Engine's: a login session run from a
terminal gets a pty (its shell's stdin is a terminal, typed lines echoed once, by the
job's pty), -pty y gives a command one, -pty n none; qrsh's terminal is in raw mode
meanwhile and back as it was afterwards; the job's exit status is qrsh's."""

import fcntl
import os
import pwd
import select
import struct
import subprocess
import termios
import threading
import time

from conftest import user_bin, wait_for

#: how the sessions' shell (SHELL, run with -i by qrsh without a command) prompts: root's,
#: a user's
PROMPTS = (b"# ", b"$ ")


def _session(cell, workdir, args, typed=None, user=None, timeout=15, end_on=None):
    """Run ``args`` (qrsh, qlogin) with a terminal of 24 rows and 100 columns as its
    stdin, stdout and stderr; ``typed`` is typed once the job's shell prompts; qrsh is
    sent SIGTERM once the terminal shows ``end_on``. Returns
    (exit status, all the terminal showed with CR NL made NL, the terminal's mode
    before, and after)."""
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))
    env = dict(cell.env, SHELL="/bin/sh", TERM="xterm")
    kwargs = {}
    if user is not None:
        entry = pwd.getpwnam(user)
        env.update(HOME=entry.pw_dir, USER=user, LOGNAME=user,
                   PATH=os.pathsep.join([user_bin(), "/usr/local/bin", "/usr/bin", "/bin"]))

        def demote():
            os.initgroups(user, entry.pw_gid)
            os.setgid(entry.pw_gid)
            os.setuid(entry.pw_uid)
        kwargs["preexec_fn"] = demote
    before = termios.tcgetattr(slave)
    proc = subprocess.Popen(args, stdin=slave, stdout=slave, stderr=slave, cwd=workdir, env=env, **kwargs)
    shown, end = b"", time.time() + timeout
    try:
        while time.time() < end:
            ready, _, _ = select.select([master], [], [], 0.1)
            if ready:
                shown += os.read(master, 65536)
                if typed is not None and shown.endswith(PROMPTS):
                    os.write(master, typed)
                    typed = None
                if end_on is not None and end_on in shown:
                    proc.terminate()
                    end_on = None
            elif proc.poll() is not None:
                break
        else:
            proc.kill()
            raise AssertionError(f"{args} did not end: {shown!r}")
        after = termios.tcgetattr(slave)
    finally:
        os.close(master)
        os.close(slave)
    return proc.wait(), shown.replace(b"\r\n", b"\n").decode(errors="replace"), before, after


def test_a_command_with_pty_y_runs_on_a_terminal_and_pty_n_does_not(cell, workdir):
    code, shown, before, after = _session(cell, workdir, ["qrsh", "-pty", "y", "tty; test -t 0 && echo yes; "
                                                          "stty size; echo $TERM"])
    lines = shown.splitlines()
    assert code == 0 and lines[0].startswith("/dev/pts/"), shown
    assert lines[1:] == ["yes", "24 100", "xterm"]
    assert after == before
    code, shown, before, after = _session(cell, workdir, ["qrsh", "-pty", "n", "tty; exit 4"])
    assert (code, shown) == (4, "not a tty\n")
    assert after == before
    # a command gets none by default (Grid Engine's "QRSH" job)
    assert _session(cell, workdir, ["qrsh", "tty"])[:2] == (1, "not a tty\n")
    # input that is no terminal is not echoed by the pty; its end is the terminal's
    proc = cell.run("qrsh", "-pty", "y", "cat; tty", input="abc\n", cwd=workdir)
    assert (proc.returncode, proc.stdout.splitlines()[0]) == (0, "abc")
    assert proc.stdout.splitlines()[1].startswith("/dev/pts/")


def test_the_terminal_is_restored_when_qrsh_is_ended_by_a_signal(cell, workdir):
    code, shown, before, after = _session(cell, workdir, ["qrsh", "-pty", "y", "echo running; sleep 60"],
                                          end_on=b"running")
    assert (code, shown) == (143, "running\n")
    assert after == before
    wait_for(lambda: cell.run("qstat").stdout == "", 10)        # its job was deleted


def test_a_login_session_from_a_terminal_runs_on_a_pty(cell, workdir):
    typed = b"echo hello; tty; exit 3\r"
    for prog in ("qrsh", "qlogin"):
        code, shown, before, after = _session(cell, workdir, [prog], typed=typed)
        lines = shown.splitlines()
        assert code == 3, shown
        assert lines.count("hello") == 1, shown
        assert shown.count("echo hello; tty; exit 3") == 1, shown       # echoed once, by the job's pty
        assert any(line.startswith("/dev/pts/") for line in lines), shown
        assert "job control" not in shown, shown
        assert after == before


def test_a_plain_users_session_gets_a_pty_of_its_own(cell, workdir, users):
    user = users[0]
    typed = b'stat -c "%U %a" $(tty); exit 7\r'
    code, shown, before, after = _session(cell, workdir, ["qlogin"], typed=typed, user=user)
    assert code == 7, shown
    # the owner's, closed to others (0620 or 0600, as the system's devpts makes it)
    assert {f"{user} 620", f"{user} 600"} & set(shown.splitlines()), shown
    assert after == before


def test_the_notify_signal_reaches_a_job_on_a_pty(cell, workdir):
    """qmod -sj of a -notify job on a pty: the job's own SIGUSR1 trap runs (the shepherd
    signals the process it started, which passes the signal on)."""
    ready, got = os.path.join(workdir, "ready"), os.path.join(workdir, "got")
    # (the note is written whole before it is there: the loop must not read it half made)
    command = (f"trap 'echo usr1 > {got}.new; mv {got}.new {got}' USR1; touch {ready}; "
               f"while [ ! -e {got} ]; do sleep 0.1; done; cat {got}; exit 5")

    def suspend_once_ready():
        wait_for(lambda: os.path.exists(ready), 15)
        jid = int(cell.run("qstat").stdout.splitlines()[2].split()[0])
        cell.run("qmod", "-sj", str(jid), check=True)

    helper = threading.Thread(target=suspend_once_ready)
    helper.start()
    try:
        code, shown, _before, _after = _session(cell, workdir, ["qrsh", "-pty", "y", "-notify", command])
    finally:
        helper.join()
    # (the job's process group has the signal, as Grid Engine's kill(-pid): the shell
    # says so of the sleep it killed)
    assert code == 5 and shown.endswith("usr1\n"), shown
