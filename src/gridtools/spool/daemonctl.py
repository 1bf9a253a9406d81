"""Starting, stopping and asking after the daemon of a cell.

Lean on purpose: qsub imports this to auto-start the daemon. The daemon is
started as a new session (``python -m gridtools.daemon``) whose output
goes to ``spool/daemon.out``; it is running when it holds
``spool/daemon.lock``, and ready once it wrote its pid into ``spool/daemon.pid``
(``start`` waits for that, and says why when the daemon died instead).
"""

import posix
import sys
import time

from gridtools import cell, ospaths
from gridtools.errors import GridError, SpoolError
from gridtools.spool.files import is_locked

ENV_NO_AUTOSTART = "GRIDTOOLS_NO_AUTOSTART"


#: most seconds ``start`` waits for a daemon to come up (it loads every job of the spool)
START_WAIT = 120.0
FREE_WAIT = 5.0         # seconds ready_pid waits for a daemon to take its free lock
LOOK_WAIT = 2.0         # seconds ``daemon start`` waits for a daemon whose lock it saw held


def running():
    """True while the cell's daemon runs: it holds its lock (which only the daemon's user
    may open), or, for other users, it holds the wake-up FIFO open for reading. A daemon
    whose lock file was removed (or replaced) under it runs as long as the process
    spool/daemon.pid names holds a daemon.lock of this spool open (``lock_holder``), as
    Grid Engine believes the pid of its qmaster.pid while that process lives."""
    path = cell.spool("daemon.lock")
    if posix.access(path, posix.R_OK) or not ospaths.exists(path):
        if is_locked(path):
            return True
        holder = lock_holder()
        if holder is not None:
            return bool(holder)
    from gridtools.spool import wake
    return wake.listening()


def lock_holder(number=None):
    """The pid of the daemon named by spool/daemon.pid (or ``number``) while that process
    lives and holds a daemon lock of this spool open, even one removed from the spool
    (0 when it does not); None when its open files cannot be looked at (another user's
    process, no /proc)."""
    import os
    number = pid() if number is None else number
    if not number or not alive(number):
        return 0
    path = cell.spool("daemon.lock")
    known = {path, os.path.realpath(path)}
    known |= {name + " (deleted)" for name in known}
    try:
        names = os.listdir(f"/proc/{number}/fd")
    except FileNotFoundError:
        return 0 if os.path.isdir("/proc/self/fd") else None
    except OSError:
        return None
    for name in names:
        try:
            target = os.readlink(f"/proc/{number}/fd/{name}")
        except OSError:
            continue
        if target in known:
            return number
    return 0


def pid():
    """The daemon's pid from spool/daemon.pid, which the daemon writes once its start-up
    is complete (0 when there is none)."""
    try:
        with open(cell.spool("daemon.pid")) as fh:
            return int(fh.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 0


def spawn():
    """Start the daemon in the background; returns its pid at once."""
    import os
    try:
        out = os.open(cell.spool("daemon.out"), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    except OSError as exc:
        raise SpoolError(f"error: cannot start the daemon: cannot write {cell.spool()}: "
                         f"{exc.strerror}") from None
    try:
        actions = [(os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
                   (os.POSIX_SPAWN_DUP2, out, 1), (os.POSIX_SPAWN_DUP2, out, 2)]
        env = dict(os.environ)
        env.pop("GRIDTOOLS_MASTER", None)       # (it starts a master: daemon.master)
        env[cell.ENV_ROOT] = cell.root()
        src = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        env["PYTHONPATH"] = src + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        # -P (and PYTHONSAFEPATH for any Python it starts): the folder the caller stands in,
        # which others may write to, is never searched for modules (-m would put it first)
        env["PYTHONSAFEPATH"] = "1"
        return os.posix_spawn(sys.executable, [sys.executable, "-P", "-m", "gridtools.daemon"], env,
                              file_actions=actions, setsid=True)
    finally:
        os.close(out)


def start(wait=START_WAIT):
    """Start the daemon unless it runs, and wait until its start-up is complete.
    Returns True; raises GridError with the cause when it did not come up."""
    if running():
        return True
    launch(wait)
    return True


def launch(wait=START_WAIT):
    """Start the daemon, and wait (at most ``wait`` seconds) until its start-up is
    complete. Returns (True, its pid); or (False, the pid of the daemon that another
    start made first, once that one is complete). Raises GridError with the cause when
    no daemon came up."""
    import os
    try:
        offset = os.path.getsize(cell.spool("daemon.out"))
    except OSError:
        offset = 0
    child = spawn()                     # (the daemon's master: daemon.master)
    end = time.time() + wait
    while time.time() < end:
        number = pid()
        if number and _parent(number) == child and running():
            return True, number
        done, status = os.waitpid(child, os.WNOHANG)
        if done:
            if running():               # another start won the race
                return False, ready_pid(max(end - time.time(), 0.0))
            raise GridError(f"error: the daemon did not start: {_cause(status, offset)}")
        time.sleep(0.01)
    raise GridError(f"error: the daemon did not start within {wait:.0f} s (see {cell.spool('daemon.out')})")


def _parent(number):
    """The pid of the parent of process ``number`` (0 when it is gone)."""
    try:
        with open(f"/proc/{number}/stat", "rb") as fh:
            return int(fh.read().rpartition(b")")[2].split()[1])
    except (OSError, ValueError, IndexError):
        return 0


def master_pid():
    """The pid of the daemon's master while it runs (spool/daemon.master), else 0."""
    try:
        with open(cell.spool("daemon.master")) as fh:
            number = int(fh.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 0
    return number if alive(number) else 0


def alive(number):
    """True while process ``number`` runs: not a zombie (a daemon killed a moment ago,
    which the process that reaps it has not reaped yet, is none)."""
    try:
        posix.kill(number, 0)
    except PermissionError:
        pass
    except OSError:
        return False
    try:
        with open(f"/proc/{number}/stat", "rb") as fh:
            stat = fh.read()
    except OSError:
        return True                     # (no /proc to ask: as the signal found it)
    return stat[stat.rfind(b")") + 2:][:1] != b"Z"


def ready_pid(wait=START_WAIT):
    """The pid of the running daemon once its start-up is complete: a daemon that holds
    its lock but is still starting (its pid not yet written, or the pid file still that
    of a daemon killed before it) is waited for, at most ``wait`` seconds. Raises
    GridError when none runs (its lock free for FREE_WAIT seconds: a lock that seemed
    held may have been another start's look at it, while the daemon it starts is not
    up yet) or it is not complete in time."""
    now = time.time()
    end, free_since = now + wait, None
    while True:
        number = pid()
        held = running()
        if held and number and alive(number):
            return number
        now = time.time()
        free_since = None if held else (free_since or now)
        if free_since is not None and now - free_since >= min(FREE_WAIT, wait):
            raise GridError("error: the daemon is not running")
        if now >= end:
            raise GridError(f"error: the daemon did not complete its start-up within {wait:.0f} s "
                            f"(see {cell.spool('daemon.out')})")
        time.sleep(0.01)


def _cause(status, offset):
    """Why a daemon that exited during start-up did: its last line of output, or its signal."""
    import os
    if os.WIFSIGNALED(status):
        return f"it was killed by signal {os.WTERMSIG(status)} during start-up"
    try:
        with open(cell.spool("daemon.out"), "rb") as fh:
            fh.seek(offset)
            lines = [line.strip() for line in fh.read().decode(errors="replace").splitlines() if line.strip()]
    except OSError:
        lines = []
    if not lines:
        return f"it exited with status {os.WEXITSTATUS(status)}"
    return lines[-1].removeprefix("gridtools daemon: ").removeprefix("cannot start: ")


def may_autostart():
    """True when a client may start the daemon itself: GRIDTOOLS_NO_AUTOSTART unset (or
    0) and the spool writable by the caller."""
    return ospaths.getenv(ENV_NO_AUTOSTART, "") in ("", "0") and posix.access(cell.spool(), posix.W_OK)


def autostart():
    """Start the daemon for a client that found it not running (unless disabled)."""
    if not may_autostart():
        return False
    try:
        spawn()
    except SpoolError:
        return False
    return True


#: what a daemon that starts itself again leaves while it does (its pid)
RESTARTING = "daemon.restarting"
#: seconds ``gridtools daemon stop`` waits for a daemon that starts itself again
STOP_WAIT = 10.0


def coming_back(wait):
    """True when a daemon that is starting itself again (``RESTARTING``, its process
    alive) runs again within ``wait`` seconds."""
    if _restarting() is None:
        return False
    end = time.time() + wait
    while time.time() < end:
        if running():
            return True
        if not _restarting():
            return running()
        time.sleep(0.02)
    return running()


def _restarting():
    """None when no daemon is starting itself again (no ``RESTARTING`` file); else
    whether the process that wrote it is still alive (the daemon, before it executes
    itself again, or the new one, until it has started)."""
    try:
        with open(cell.spool(RESTARTING)) as fh:
            target = int(fh.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None
    try:
        posix.kill(target, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return True


def stop_master(wait=10.0):
    """End a master whose daemon is not running (it waits to start it again after it
    died: daemon.master); True when there was one and it ended."""
    number = master_pid()
    if not number:
        return False
    try:
        posix.kill(number, 15)
    except ProcessLookupError:
        return False
    end = time.time() + wait
    while time.time() < end and alive(number):
        time.sleep(0.02)
    return not alive(number)


def stop(wait=10.0):
    """Ask the daemon to stop (SIGTERM) and wait until it released its lock (one that is
    starting itself again is waited for first), and until its master left too; True once
    they did, or when none runs.
    One look that finds the lock free tells: another command's look at the lock holds
    it for a moment too (``is_locked``), so a look that finds it held may be theirs."""
    if not running() and not coming_back(wait):
        return True
    end = time.time() + wait
    master = master_pid()               # (it leaves once its daemon stopped as asked)
    target = pid()
    # still starting: its pid file comes when it is ready (a look of another command at the
    # lock may have been taken for the daemon: one that starts itself again is waited for)
    while not target and time.time() < end and (running() or _restarting()):
        time.sleep(0.02)
        target = pid()
    if target:
        try:
            posix.kill(target, 15)
        except ProcessLookupError:
            pass
    while time.time() < end:
        if not running():
            while master and alive(master) and time.time() < end:
                time.sleep(0.02)        # (and its pid file with it: nothing of the daemon is left)
            return True
        time.sleep(0.02)
    return False
