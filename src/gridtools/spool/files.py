"""Atomic file writes and advisory locks: the two primitives of the spool.

Every file is replaced, never rewritten in place: the new content goes to a
temporary file in the same directory, is flushed to disk, and is renamed over
the old name, so a reader sees the old or the new content and never a mix.
Read-modify-write sequences hold an exclusive ``flock`` on a lock file for
one unit of work. ``fcntl.flock`` is used directly (it is what the filelock
package uses on Unix, and the locks interoperate) because importing filelock
costs more than the whole of a qsub on the hot path.
"""

import errno
import fcntl
import os

from gridtools.errors import SpoolError


def atomic_write(path, data, mode=0o644, fsync=True):
    """Replace ``path`` with ``data`` (str or bytes) atomically."""
    if isinstance(data, str):
        data = data.encode()
    directory, name = os.path.split(path)
    tmp = os.path.join(directory, f".{name}.{os.getpid()}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fchmod(fd, mode)
            if fsync:
                os.fsync(fd)
        finally:
            os.close(fd)
        os.rename(tmp, path)
    except OSError as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise SpoolError(f"cannot write {path}: {exc.strerror}") from None


def read_text(path, default=None):
    """The file's text, or ``default`` when it does not exist."""
    try:
        with open(path, encoding="utf-8", errors="surrogateescape") as fh:
            return fh.read()
    except FileNotFoundError:
        return default
    except NotADirectoryError:
        return default


class Lock:
    """An exclusive flock on ``path`` (created if missing), as a context manager."""

    def __init__(self, path, mode=0o666, blocking=True):
        self.path = path
        self.mode = mode
        self.blocking = blocking
        self.fd = None

    def acquire(self):
        """Take the lock; returns False when non-blocking and already held."""
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, self.mode)
        except OSError as exc:
            raise SpoolError(f"cannot open lock {self.path}: {exc.strerror}") from None
        flags = fcntl.LOCK_EX | (0 if self.blocking else fcntl.LOCK_NB)
        try:
            fcntl.flock(fd, flags)
        except OSError as exc:
            os.close(fd)
            if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
                return False
            raise SpoolError(f"cannot lock {self.path}: {exc.strerror}") from None
        self.fd = fd
        return True

    def replaced(self):
        """True when the held lock's path no longer names the locked file: the cell was
        removed (or removed and made again), so whoever holds it should go."""
        try:
            now = os.stat(self.path)
        except FileNotFoundError:
            return True
        except OSError:
            return False
        held = os.fstat(self.fd)
        return (now.st_dev, now.st_ino) != (held.st_dev, held.st_ino)

    def release(self):
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None

    def __enter__(self):
        self.acquire()
        return self

    def __exit__(self, *exc):
        self.release()


def is_locked(path):
    """True when some process holds a flock on ``path`` (a liveness proof)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)
    return False


def makedirs(path, mode=0o755):
    """Create ``path`` and parents with ``mode`` (not masked by the umask)."""
    if not os.path.isdir(path):
        os.makedirs(path, exist_ok=True)
        os.chmod(path, mode)
