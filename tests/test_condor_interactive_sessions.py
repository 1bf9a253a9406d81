"""condor_submit -interactive and condor_ssh_to_job sessions as HTCondor's: each session
has a directory of its own (.condor_ssh_to_job_N, N the first free number) and removes
only that; the interactive job ends (exit status 0) when the session condor_submit
opened ends, never when another does; a client ended by a signal removes its job
(-remove-on-interrupt, in HTCondor's words, exit 1), and after a client killed by
SIGKILL the job ends on its own; condor_submit -interactive without a file describes
HTCondor's interactive.sub; usage errors exit 2."""

import os
import re
import select
import signal
import subprocess
import time

from condortools import submit, wait_status
from conftest import BIN, wait_for

SLEEP = 'executable = /bin/sleep\narguments = 300\nqueue\n'


class Terminal:
    """A command run with a pseudo-terminal as its stdin, stdout and stderr: what it
    shows is read while waiting for a pattern; lines are typed into it."""

    def __init__(self, cell, workdir, args):
        self.master, slave = os.openpty()
        env = dict(cell.env, SHELL="/bin/sh", TERM="xterm", PS1="$ ")
        self.proc = subprocess.Popen([os.path.join(BIN, args[0])] + list(args[1:]), stdin=slave, stdout=slave,
                                     stderr=slave, cwd=workdir, env=env, start_new_session=True)
        os.close(slave)
        self.shown = b""

    def wait(self, pattern, timeout=30):
        """The match of ``pattern`` (bytes) in what the terminal showed (CR NL as NL)."""
        end = time.time() + timeout
        while time.time() < end:
            found = re.search(pattern, self.shown.replace(b"\r\n", b"\n"))
            if found:
                return found
            if select.select([self.master], [], [], 0.1)[0]:
                try:
                    self.shown += os.read(self.master, 65536)
                except OSError:
                    break
        raise AssertionError(f"{pattern!r} not shown: {self.shown!r}")

    def type(self, text):
        os.write(self.master, text.encode())

    def ended(self, timeout=30):
        """The command's exit status, once it ended (what it showed read meanwhile)."""
        end = time.time() + timeout
        while self.proc.poll() is None and time.time() < end:
            if select.select([self.master], [], [], 0.1)[0]:
                try:
                    self.shown += os.read(self.master, 65536)
                except OSError:
                    time.sleep(0.05)
        return self.proc.wait(timeout=1)

    def close(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        os.close(self.master)


def _interactive(cell, workdir):
    """condor_submit -interactive on a terminal, once its session's shell runs: (the
    terminal, the cluster, the job's scratch directory)."""
    term = Terminal(cell, workdir, ["condor_submit", "-interactive"])
    cluster = int(term.wait(rb"submitted to cluster (\d+)\.").group(1))
    term.wait(rb"Your condor job is running with pid\(s\) \d+\.\n")
    term.type("echo SCRATCH=$_CONDOR_SCRATCH_DIR TMOUT=$TMOUT\n")
    found = term.wait(rb"SCRATCH=(/\S+) TMOUT=(\d*)\n")
    return term, cluster, found.group(1).decode(), found.group(2).decode()


def _ended(cell, cluster, timeout=30):
    """The history's JobStatus, ExitCode and ExitBySignal of ``cluster``.0, once it has them."""
    return wait_for(lambda: cell.run("condor_history", f"{cluster}.0", "-af", "JobStatus", "ExitCode",
                                     "ExitBySignal").stdout.strip(), timeout=timeout)


def test_other_sessions_have_their_own_directory_and_never_end_the_interactive_job(cell, workdir):
    """Sessions into an interactive job beside condor_submit's own are numbered on, remove
    only their own directory, and leave the job running; the job ends, with exit status
    0, once condor_submit's session ends. The session's shell has interactive.sub's TMOUT."""
    term, cluster, scratch, tmout = _interactive(cell, workdir)
    try:
        assert tmout == "7200"
        other = cell.run("condor_ssh_to_job", str(cluster), "ls -a $_CONDOR_SCRATCH_DIR | grep condor_ssh_to_job_")
        assert (other.returncode, other.stdout) == (0, ".condor_ssh_to_job_1\n.condor_ssh_to_job_2\n"), other.stderr
        again = cell.run("condor_ssh_to_job", str(cluster), "id -un")
        assert again.returncode == 0, again.stderr
        time.sleep(4)                   # (longer than the job's waiting program's pause: it would have ended)
        assert cell.run("condor_q", f"{cluster}.0", "-af", "JobStatus").stdout == "2\n"
        assert sorted(n for n in os.listdir(scratch) if "ssh_to_job" in n) == [".condor_ssh_to_job_1"]
        term.type("echo still; exit 5\n")
        term.wait(rb"[^ ]still\n")
        assert term.ended() == 5
        assert _ended(cell, cluster) == "4 0 false"
    finally:
        term.close()


def test_sessions_into_a_plain_job_take_the_first_free_number(cell, workdir):
    cluster = submit(cell, SLEEP, cwd=workdir)
    wait_status(cell, f"{cluster}.0", 2)
    first = subprocess.Popen([os.path.join(BIN, "condor_ssh_to_job"), str(cluster), "echo in; read line"],
                             env=cell.env, cwd=workdir, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert first.stdout.readline() == "in\n"
        second = cell.run("condor_ssh_to_job", str(cluster), "ls -a $_CONDOR_SCRATCH_DIR | grep condor_ssh_to_job_")
        assert second.stdout == ".condor_ssh_to_job_1\n.condor_ssh_to_job_2\n", second.stderr
        first.stdin.write("\n")
        first.stdin.flush()
        assert first.wait(timeout=30) == 0
        last = cell.run("condor_ssh_to_job", str(cluster), "ls -a $_CONDOR_SCRATCH_DIR | grep condor_ssh_to_job_")
        assert last.stdout == ".condor_ssh_to_job_1\n"
    finally:
        if first.poll() is None:
            first.kill()
    cell.run("condor_rm", str(cluster), check=True)


def test_a_client_ended_by_sigterm_removes_its_job(cell, workdir):
    term, cluster, _scratch, _tmout = _interactive(cell, workdir)
    try:
        term.proc.send_signal(signal.SIGTERM)
        assert term.ended() == 1
        term.wait(rb"Interrupted by signal 15 \(SIGTERM\), removing job %d\.0\.\.\.\n" % cluster)
        assert _ended(cell, cluster).split()[0] == "3"
    finally:
        term.close()


def test_after_the_client_is_killed_the_job_ends_on_its_own(cell, workdir):
    term, cluster, scratch, _tmout = _interactive(cell, workdir)
    try:
        os.kill(term.proc.pid, signal.SIGKILL)
        assert term.proc.wait(timeout=10) == -signal.SIGKILL
        assert _ended(cell, cluster, timeout=60) == "4 0 false"
        assert not os.path.exists(os.path.join(scratch, ".condor_ssh_to_job_1"))
    finally:
        term.close()


def test_an_interrupt_while_waiting_removes_the_job_in_htcondors_words(cell, workdir):
    cluster = submit(cell, SLEEP.replace("queue", "requirements = false\nqueue"), cwd=workdir)
    waiting = subprocess.Popen([os.path.join(BIN, "condor_ssh_to_job"), "-auto-retry", "-remove-on-interrupt",
                                str(cluster)], env=cell.env, cwd=workdir, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    try:
        assert select.select([waiting.stderr], [], [], 30)[0]
        assert waiting.stderr.readline() == "Waiting for job to start...\n"
        waiting.send_signal(signal.SIGINT)
        out, err = waiting.communicate(timeout=30)
    finally:
        if waiting.poll() is None:
            waiting.kill()
    assert waiting.returncode == 1, err
    assert err == f"Interrupted by signal 2 (SIGINT), removing job {cluster}.0...\n"
    assert out == f"Job {cluster}.0 marked for removal\n"
    assert _ended(cell, cluster).split()[0] == "3"


def test_interactive_without_a_file_is_htcondors_interactive_sub(cell, workdir):
    dry = cell.run("condor_submit", "-interactive", "-dry-run", "-", cwd=workdir)
    assert dry.returncode == 0, dry.stderr
    for line in ('Environment = "TMOUT=7200"', "JobPrio = 1000", "RequestMemory = 512", "JobNotification = 0",
                 'JobDescription = "interactive job"', "InteractiveJob = true", 'Cmd = "/bin/sh"'):
        assert line in dry.stdout.splitlines(), line


def test_usage_errors_exit_2(cell):
    for args in ([], ["-bogus", "1"], ["1.x"], ["-name"]):
        assert cell.run("condor_ssh_to_job", *args).returncode == 2, args
