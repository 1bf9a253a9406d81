"""Waking the daemon, and telling whether one is running.

The daemon reads a FIFO, ``spool/wakeup``; anyone may write to it. A client
that changed something writes one byte without blocking. If nobody holds
the FIFO open for reading, the open fails with ENXIO: no daemon is running.
The daemon also holds ``spool/daemon.lock`` while it lives, which status
queries check.
"""

import errno
import os

from gridtools import cell


def fifo_path():
    return cell.spool("wakeup")


def poke():
    """Wake the daemon. Returns False when no daemon is listening."""
    try:
        fd = os.open(fifo_path(), os.O_WRONLY | os.O_NONBLOCK)
    except OSError as exc:
        if exc.errno in (errno.ENXIO, errno.ENOENT):
            return False
        raise
    try:
        os.write(fd, b"!")
    except BlockingIOError:
        pass  # the pipe is full of wake-ups already: the daemon will wake
    finally:
        os.close(fd)
    return True


def listening():
    """True when a process holds the FIFO open for reading (only the daemon's user can)."""
    try:
        fd = os.open(fifo_path(), os.O_WRONLY | os.O_NONBLOCK)
    except OSError:
        return False
    os.close(fd)
    return True


def open_listener():
    """Create the FIFO if needed and open it for reading (daemon side); returns the fd."""
    path = fifo_path()
    if not os.path.exists(path):
        os.mkfifo(path, 0o622)
        os.chmod(path, 0o622)
    # O_RDWR keeps a writer open ourselves, so the FIFO never reports end of file
    return os.open(path, os.O_RDWR | os.O_NONBLOCK)


def drain(fd):
    """Read away pending wake-up bytes."""
    try:
        while os.read(fd, 4096):
            pass
    except BlockingIOError:
        pass
