"""Waking the daemon, and telling whether one is running.

The daemon reads a FIFO, ``spool/wakeup``; anyone may write to it. A client
that changed something writes one byte without blocking. If nobody holds
the FIFO open for reading, the open fails with ENXIO: no daemon is running.
The daemon also holds ``spool/daemon.lock`` while it lives, which status
queries check.
"""

import posix

from gridtools import cell, ospaths


def fifo_path():
    return cell.spool("wakeup")


def poke():
    """Wake the daemon. Returns False when no daemon is listening."""
    try:
        fd = posix.open(fifo_path(), posix.O_WRONLY | posix.O_NONBLOCK)
    except OSError as exc:
        import errno
        if exc.errno in (errno.ENXIO, errno.ENOENT):
            return False
        raise
    try:
        posix.write(fd, b"!")
    except BlockingIOError:
        pass  # the pipe is full of wake-ups already: the daemon will wake
    except BrokenPipeError:
        return False  # the daemon closed it between the open and the write: it is gone
    finally:
        posix.close(fd)
    return True


def listening():
    """True when a process holds the FIFO open for reading (only the daemon's user can)."""
    try:
        fd = posix.open(fifo_path(), posix.O_WRONLY | posix.O_NONBLOCK)
    except OSError:
        return False
    posix.close(fd)
    return True


def open_listener():
    """Create the FIFO if needed and open it for reading (daemon side); returns the fd."""
    path = fifo_path()
    if not ospaths.exists(path):
        posix.mkfifo(path, 0o622)
        posix.chmod(path, 0o622)
    # O_RDWR keeps a writer open ourselves, so the FIFO never reports end of file
    return posix.open(path, posix.O_RDWR | posix.O_NONBLOCK)


def drain(fd):
    """Read away pending wake-up bytes."""
    try:
        while posix.read(fd, 4096):
            pass
    except BlockingIOError:
        pass
