"""The daemon's master (daemon.master), as HTCondor's condor_master: a daemon that dies is
started again after the back-off of MASTER_BACKOFF_CONSTANT and MASTER_BACKOFF_FACTOR,
with its jobs, and the administrator is mailed an obituary (not for SIGKILL); a daemon
stopped by ``gridtools daemon stop``, or armed with crash points, is not started again,
and ``gridtools daemon stop`` also ends a master waiting to start its daemon again."""

import os
import signal

from conftest import wait_for
from qtools import set_global

MAILER = """#!/bin/sh
{ echo "ARGS: $*"; cat; echo "END"; } >> "$(dirname "$0")/mail.txt"
"""


def _pid(cell, name):
    try:
        with open(os.path.join(cell.root, "spool", name)) as fh:
            return int(fh.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 0


def _alive(pid):
    from qtools import process_state
    return process_state(pid) not in (None, "Z")


def _parent(pid):
    with open(f"/proc/{pid}/stat") as fh:
        return int(fh.read().rpartition(")")[2].split()[1])


def _cell_for_obituaries(cell, workdir, constant):
    mailer = os.path.join(workdir, "mailer")
    with open(mailer, "w") as fh:
        fh.write(MAILER)
    os.chmod(mailer, 0o755)
    set_global(cell, mailer=mailer)
    with open(os.path.join(cell.root, "etc", "condor_config"), "a") as fh:
        fh.write(f"\nCONDOR_ADMIN = admin@example.org\nMASTER_BACKOFF_CONSTANT = {constant}\n")
    return os.path.join(workdir, "mail.txt")


def _restarted(cell, old):
    """The pid of the daemon that runs the cell once it is another than ``old``."""
    def found():
        pid = _pid(cell, "daemon.pid")
        return pid if pid != old and _alive(pid) and \
            cell.run("gridtools", "daemon", "status").returncode == 0 else 0
    return wait_for(found, timeout=30)


def _messages(cell):
    with open(os.path.join(cell.root, "spool", "messages")) as fh:
        return fh.read()


def test_a_daemon_that_dies_is_started_again_with_its_jobs_and_the_administrator_told(cell, workdir):
    mail = _cell_for_obituaries(cell, workdir, 1)
    job_id = cell.run("qsub", "-terse", "-h", "-b", "y", "true", cwd=workdir, check=True).stdout.strip()
    first = _pid(cell, "daemon.pid")
    master = _parent(first)
    assert _pid(cell, "daemon.master") == master and master != 1
    os.kill(first, signal.SIGSEGV)
    second = _restarted(cell, first)
    assert _parent(second) == master
    assert (f"|E|master: the daemon (pid {first}) died due to signal 11 (Segmentation fault); "
            "starting it again in 2 seconds\n") in _messages(cell)
    wait_for(lambda: os.path.exists(mail) and open(mail).read().endswith("END\n"))
    text = open(mail).read().splitlines()
    assert text[0] == f"ARGS: -s Problem {cell.host}: gridtools daemon died (11) admin@example.org"
    assert text[1].endswith(" died due to signal 11 (Segmentation fault).")
    assert text[2] == "gridtools will automatically restart this process in 2 seconds."
    assert text[4].startswith("*** Last ") and text[4].endswith("/spool/messages:")
    assert any(line.startswith("*** End of file messages") for line in text)
    assert cell.run("qstat", "-j", job_id).returncode == 0          # (its jobs: taken back)
    # killed by SIGKILL (an administrator's act): started again, no obituary (the back-off grew)
    os.kill(second, signal.SIGKILL)
    third = _restarted(cell, second)
    assert _parent(third) == master
    assert f"(pid {second}) died due to signal 9 (Killed); starting it again in 3 seconds\n" in _messages(cell)
    assert open(mail).read().count("ARGS: ") == 1
    # stopped as asked: the master ends with it
    assert cell.run("gridtools", "daemon", "stop").stdout == "daemon stopped\n"
    assert wait_for(lambda: not _alive(master))
    assert _pid(cell, "daemon.master") == 0 and cell.run("gridtools", "daemon", "status").returncode == 1


def test_daemon_stop_ends_a_master_that_waits_to_start_its_daemon_again(cell, workdir):
    _cell_for_obituaries(cell, workdir, 600)
    first = _pid(cell, "daemon.pid")
    master = _parent(first)
    os.kill(first, signal.SIGABRT)
    wait_for(lambda: f"(pid {first}) died due to signal 6 (Aborted); starting it again in 601 seconds"
             in _messages(cell))
    stopped = cell.run("gridtools", "daemon", "stop")
    assert stopped.stdout == "daemon not running; its master, which was to start it again, stopped\n"
    assert not _alive(master) and _pid(cell, "daemon.master") == 0
    assert cell.run("gridtools", "daemon", "stop").stdout == "daemon not running\n"
    cell.start_daemon()
    assert _parent(_pid(cell, "daemon.pid")) == _pid(cell, "daemon.master")


def test_a_daemon_armed_with_crash_points_is_not_started_again(cell, workdir):
    _cell_for_obituaries(cell, workdir, 1)
    cell.stop_daemon()
    # (the second crash point of start-up: once it is complete, pid file written)
    cell.run("gridtools", "daemon", "start", env={"GRIDTOOLS_CRASH_AT": "startup:2"})
    assert wait_for(lambda: "it had crash points armed" in _messages(cell), timeout=30)
    assert wait_for(lambda: not os.path.exists(os.path.join(cell.root, "spool", "daemon.master")))
    assert "it had crash points armed (GRIDTOOLS_CRASH_AT): not started again" in _messages(cell)
    assert cell.run("gridtools", "daemon", "status").returncode == 1
    assert not os.path.exists(os.path.join(workdir, "mail.txt"))


def test_daemon_stop_returns_once_the_master_has_left_too(cell):
    """Nothing of the daemon is left when ``gridtools daemon stop`` says it stopped: its
    master has left and taken its pid file away (a copy of the spool made right then
    meets no file that vanishes under it)."""
    for _ in range(3):
        master = _pid(cell, "daemon.master")
        assert master and _alive(master)
        stopped = cell.run("gridtools", "daemon", "stop")
        assert stopped.stdout == "daemon stopped\n"
        assert not _alive(master) and not os.path.exists(os.path.join(cell.root, "spool", "daemon.master"))
        cell.start_daemon()


def test_of_masters_started_at_once_the_one_whose_daemon_runs_the_cell_starts_it_again(cell, workdir):
    """Several ``gridtools daemon start`` at once: the masters whose daemons found the cell
    taken leave, and the one left is named in daemon.master and starts its daemon again
    when it dies."""
    import subprocess
    _cell_for_obituaries(cell, workdir, 1)
    cell.stop_daemon()
    starts = [subprocess.Popen(["gridtools", "daemon", "start"], env=cell.env, cwd=cell.root,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for _ in range(4)]
    for proc in starts:
        proc.wait(timeout=60)
    first = wait_for(lambda: _pid(cell, "daemon.pid") if cell.run("gridtools", "daemon", "status").returncode == 0
                     else 0, timeout=30)
    master = _parent(first)
    wait_for(lambda: sum(1 for p in os.listdir("/proc") if p.isdigit() and _master_of(p, cell.root)) == 1)
    assert _pid(cell, "daemon.master") == master
    os.kill(first, signal.SIGKILL)
    second = _restarted(cell, first)
    assert _parent(second) == master and _pid(cell, "daemon.master") == master


def _master_of(pid, root):
    """True when process ``pid`` is a daemon master of the cell at ``root`` (a daemon's
    parent that runs gridtools.daemon without GRIDTOOLS_MASTER)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            if b"gridtools.daemon" not in fh.read():
                return False
        with open(f"/proc/{pid}/environ", "rb") as fh:
            env = fh.read().split(b"\0")
    except OSError:
        return False
    return f"GRIDTOOLS_ROOT={root}".encode() in env and not any(e.startswith(b"GRIDTOOLS_MASTER=") for e in env)
