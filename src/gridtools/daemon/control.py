"""Starting, stopping and asking after the daemon of a cell.

Lean on purpose: qsub imports this to auto-start the daemon. The daemon is
started as a new session (``python -m gridtools.daemon.loop``) whose output
goes to ``spool/daemon.out``; it is running when it holds
``spool/daemon.lock``.
"""

import os
import sys
import time

from gridtools import cell
from gridtools.spool.files import is_locked

ENV_NO_AUTOSTART = "GRIDTOOLS_NO_AUTOSTART"


def running():
    """True while the cell's daemon runs: it holds its lock (which only the daemon's user
    may open), or, for other users, it holds the wake-up FIFO open for reading."""
    path = cell.spool("daemon.lock")
    if os.access(path, os.R_OK) or not os.path.exists(path):
        return is_locked(path)
    from gridtools.spool import wake
    return wake.listening()


def pid():
    try:
        with open(cell.spool("daemon.pid")) as fh:
            return int(fh.read().strip())
    except (OSError, ValueError):
        return 0


def spawn():
    """Start the daemon in the background (returns at once)."""
    out = os.open(cell.spool("daemon.out"), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        actions = [(os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
                   (os.POSIX_SPAWN_DUP2, out, 1), (os.POSIX_SPAWN_DUP2, out, 2)]
        env = dict(os.environ)
        env[cell.ENV_ROOT] = cell.root()
        src = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        env["PYTHONPATH"] = src + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        os.posix_spawn(sys.executable, [sys.executable, "-m", "gridtools.daemon.loop"], env,
                       file_actions=actions, setsid=True)
    finally:
        os.close(out)


def start(wait=5.0):
    """Start the daemon unless it runs; wait until it holds its lock. Returns True if running."""
    if running():
        return True
    spawn()
    end = time.time() + wait
    while time.time() < end:
        if running():
            return True
        time.sleep(0.01)
    return running()


def autostart():
    """Start the daemon for a client that found it not running (unless disabled)."""
    if os.environ.get(ENV_NO_AUTOSTART, "") not in ("", "0"):
        return False
    if not os.access(cell.spool(), os.W_OK):
        return False
    spawn()
    return True


def stop(wait=10.0):
    """Ask the daemon to stop (SIGTERM) and wait until it released its lock."""
    if not running():
        return False
    target = pid()
    if target:
        try:
            os.kill(target, 15)
        except ProcessLookupError:
            pass
    end = time.time() + wait
    while time.time() < end and running():
        time.sleep(0.02)
    return not running()
