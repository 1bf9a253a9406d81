"""Atomic file writes and advisory locks: the two primitives of the spool.

Every file is replaced, never rewritten in place: the new content goes to a
temporary file in the same directory, is flushed to disk, and is renamed over
the old name, so a reader sees the old or the new content and never a mix.
Read-modify-write sequences hold an exclusive ``flock`` on a lock file for
one unit of work. Lock files are readable by their owner only: anyone who
can open a file can flock it, and a lock a user could hold would let that
user stop the daemon. ``Lock`` uses ``fcntl.flock`` directly (it is what the
filelock package uses on Unix, and the locks interoperate) because importing
filelock costs more than the whole of a qsub on the hot path; locks taken off
every command's path (the daemon's configuration lock) go through filelock
(``off_path_lock``). ``errno`` and ``fcntl`` are imported where they are used:
building their tables costs a command a tenth of a millisecond, and most
commands take no lock and meet no error.
"""

import posix

from gridtools import ospaths
from gridtools.ospaths import NotRegular
from gridtools.errors import SpoolError


_UMASK = []


def _masked(mode):
    """True when the process umask would take bits of ``mode`` away at creation (then
    the mode is set again explicitly); the umask is read once per process."""
    if not _UMASK:
        current = posix.umask(0o022)
        posix.umask(current)
        _UMASK.append(current)
    return bool(mode & _UMASK[0])


def atomic_write(path, data, mode=0o644, fsync=True, owner=None, reader=None):
    """Replace ``path`` with ``data`` (str, bytes, or an iterable of bytes written one
    after the other, each let go once written) atomically; ``owner`` (uid, gid) gives
    the new file to that user before it appears under its name; ``reader`` (a uid) may
    read it too, by an ACL entry (``grant``; where the file system has none, everyone
    may read it)."""
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogateescape")
    directory, name = ospaths.dirname(path), ospaths.basename(path)
    tmp = ospaths.join(directory, f".{name}.{posix.getpid()}.tmp")
    try:
        fd = _create(tmp, mode)
        try:
            _write_chunks(fd, (data,) if isinstance(data, (bytes, bytearray, memoryview)) else data)
            if owner is not None and posix.geteuid() == 0:
                posix.fchown(fd, owner[0], owner[1])
                posix.fchmod(fd, mode)         # (a change of owner may clear set-id bits)
            elif _masked(mode):
                posix.fchmod(fd, mode)
            if reader is not None and reader != posix.geteuid() and not grant(fd, reader, 4, owner=mode >> 6 & 7):
                posix.fchmod(fd, mode | 0o044)
            if fsync:
                posix.fsync(fd)
        finally:
            posix.close(fd)
        posix.rename(tmp, path)
    except OSError as exc:
        _discard(tmp)
        raise SpoolError(f"cannot write {path}: {exc.strerror}") from None
    except BaseException:               # the data could not be made: nothing is replaced
        _discard(tmp)
        raise


def grant(target, uid, perm, owner=7, others=0):
    """Give user ``uid`` the rights ``perm`` (r 4, w 2, x 1) on ``target`` (a path or an
    open descriptor) by a POSIX ACL entry, the owner keeping ``owner``, the owning group
    and everyone else ``others``; False where the file system has no ACLs."""
    import struct
    unset = 0xFFFFFFFF

    def entry(tag, rights, ident=unset):
        return struct.pack("<HHI", tag, rights, ident)
    # version 2; user owner, user uid, group owner, mask, other
    acl = struct.pack("<I", 2) + entry(0x01, owner) + entry(0x02, perm, int(uid)) + entry(0x04, others) + \
        entry(0x10, perm | others) + entry(0x20, others)
    try:
        if isinstance(target, int):
            posix.setxattr(target, "system.posix_acl_access", acl)
        else:
            posix.setxattr(target, "system.posix_acl_access", acl, follow_symlinks=False)
    except OSError:
        return False
    return True


def _write_chunks(fd, chunks):
    for chunk in chunks:
        _write_all(fd, chunk)
        chunk = None                    # (not held while the next one is made)


def _write_all(fd, chunk):
    view = memoryview(chunk)
    while view:
        view = view[posix.write(fd, view):]


def _discard(tmp):
    try:
        posix.unlink(tmp)
    except OSError:
        pass


def _create(path, mode):
    """A new file, never an existing one nor through a link (one left by a crash of a
    process with our pid is removed first)."""
    flags = posix.O_WRONLY | posix.O_CREAT | posix.O_EXCL | posix.O_NOFOLLOW | posix.O_CLOEXEC
    try:
        return posix.open(path, flags, mode)
    except FileExistsError:
        posix.unlink(path)
        return posix.open(path, flags, mode)


def write_new(path, data, mode, owner=None):
    """Write ``data`` to ``path`` in place, as a new file (one left by a crash is replaced);
    for files nobody reads before a later atomic write says they are complete."""
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogateescape")
    try:
        fd = _create(path, mode)
        try:
            view = memoryview(data)
            while view:
                view = view[posix.write(fd, view):]
            if owner is not None and posix.geteuid() == 0:
                posix.fchown(fd, owner[0], owner[1])
                posix.fchmod(fd, mode)
            elif _masked(mode):
                posix.fchmod(fd, mode)
        finally:
            posix.close(fd)
    except OSError as exc:
        raise SpoolError(f"cannot write {path}: {exc.strerror}") from None


def append_text(path, data, mode=0o644, owner=None):
    """Append ``data`` to ``path`` (created when missing, never through a link) in one
    write, so that a process killed meanwhile leaves all of it or none; not flushed.
    ``owner`` (uid, gid) is given the file (when run as root). A file whose last line
    was cut short (a crash, a full disk, an edit) gets a line break first: the new
    lines never join it."""
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogateescape")
    flags = posix.O_RDWR | posix.O_CREAT | posix.O_APPEND | posix.O_NOFOLLOW | posix.O_CLOEXEC
    try:
        fd = posix.open(path, flags, mode)
        try:
            if owner is not None and posix.geteuid() == 0 and posix.fstat(fd).st_uid != owner[0]:
                posix.fchown(fd, owner[0], owner[1])
                posix.fchmod(fd, mode)
            _write_all(fd, line_break_owed(fd) + data)
        finally:
            posix.close(fd)
    except OSError as exc:
        raise SpoolError(f"cannot write {path}: {exc.strerror}") from None


def line_break_owed(fd):
    """``b"\\n"`` when the file open at ``fd`` (for reading too) does not end with a
    line break, else ``b""``."""
    size = posix.fstat(fd).st_size
    return b"\n" if size and posix.pread(fd, 1, size - 1) != b"\n" else b""


def read_text(path, default=None):
    """The file's text, or ``default`` when it does not exist. Anything but a plain file
    (a link to one is followed) raises NotRegular at once: a FIFO is never waited on."""
    try:
        fd = ospaths.open_plain(path)
    except (FileNotFoundError, NotADirectoryError):
        return default
    with open(fd, encoding="utf-8", errors="surrogateescape") as fh:
        return fh.read()


def open_regular(path, dir_fd=None):
    """``(fd, stat)`` of a plain file, opened without following a link or blocking on a
    FIFO; raises NotRegular for anything else and OSError when it cannot be opened."""
    flags = posix.O_RDONLY | posix.O_NOFOLLOW | posix.O_NONBLOCK | posix.O_CLOEXEC
    try:
        fd = posix.open(path, flags, dir_fd=dir_fd)
    except FileNotFoundError:
        raise                   # (what a client waiting for its answer meets most)
    except OSError as exc:
        import errno
        if exc.errno == errno.ELOOP:
            raise NotRegular(errno.ELOOP, "a symbolic link", path) from None
        raise
    st = posix.fstat(fd)
    if st.st_mode & 0o170000 != 0o100000:          # not a regular file
        import errno
        posix.close(fd)
        raise NotRegular(errno.EINVAL, "not a regular file", path)
    return fd, st


def read_capped(fd, cap):
    """Up to ``cap`` bytes from ``fd``; None when there are more."""
    chunks, total = [], 0
    while True:
        chunk = posix.read(fd, min(1 << 20, cap + 1 - total))
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        total += len(chunk)
        if total > cap:
            return None


class Lock:
    """An exclusive flock on ``path`` (created if missing), as a context manager. With
    ``own`` (a lock in a folder other users may write, as a DAG's beside it in /tmp)
    the file is opened as ``ownfiles.open_own`` opens one (no link another user planted
    is followed) and must be a regular file of the caller's (SpoolError otherwise)."""

    def __init__(self, path, mode=0o600, blocking=True, own=False):
        self.path = path
        self.mode = mode
        self.blocking = blocking
        self.own = own
        self.fd = None

    def acquire(self):
        """Take the lock; returns False when non-blocking and already held."""
        try:
            if self.own:
                fd = _open_own_lock(self.path, self.mode)
            else:
                fd = posix.open(self.path, posix.O_RDWR | posix.O_CREAT, self.mode)
        except OSError as exc:
            raise SpoolError(f"cannot open lock {self.path}: {exc.strerror}") from None
        import fcntl
        flags = fcntl.LOCK_EX | (0 if self.blocking else fcntl.LOCK_NB)
        try:
            fcntl.flock(fd, flags)
        except OSError as exc:
            posix.close(fd)
            import errno
            if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
                return False
            raise SpoolError(f"cannot lock {self.path}: {exc.strerror}") from None
        self.fd = fd
        return True

    def replaced(self):
        """True when the held lock's path no longer names the locked file: the cell was
        removed (or removed and made again), so whoever holds it should go."""
        try:
            now = posix.stat(self.path)
        except FileNotFoundError:
            return True
        except OSError:
            return False
        held = posix.fstat(self.fd)
        return (now.st_dev, now.st_ino) != (held.st_dev, held.st_ino)

    def release(self):
        if self.fd is not None:
            posix.close(self.fd)
            self.fd = None

    def __enter__(self):
        self.acquire()
        return self

    def __exit__(self, *exc):
        self.release()


def _open_own_lock(path, mode):
    """A descriptor of lock file ``path`` for ``Lock(own=True)``."""
    import stat
    from gridtools.ownfiles import open_own
    fd = open_own(path, posix.O_RDWR | posix.O_CREAT | posix.O_NONBLOCK | posix.O_CLOEXEC, mode)
    info = posix.fstat(fd)
    if stat.S_ISREG(info.st_mode) and info.st_uid == posix.geteuid():
        return fd
    posix.close(fd)
    import errno
    raise OSError(errno.EPERM, f"it belongs to another user (uid {info.st_uid})" if stat.S_ISREG(info.st_mode)
                  else "it is not a regular file")


def off_path_lock(path, mode=0o600):
    """An exclusive lock on ``path`` through filelock, as a context manager, for work
    no command waits on at start-up (its flock excludes ``Lock`` holders too)."""
    from filelock import UnixFileLock
    return UnixFileLock(path, mode=mode)


def is_locked(path):
    """True when some process holds a flock on ``path`` (a liveness proof): the lock is
    tried (and let go at once)."""
    try:
        fd = posix.open(path, posix.O_RDONLY)
    except OSError:
        return False
    import fcntl
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        posix.close(fd)
    return False


def makedirs(path, mode=0o755):
    """Create ``path`` and parents with ``mode`` (not masked by the umask). A folder in
    the cell's spool is made only while the spool is there (FileNotFoundError else): a
    daemon whose cell was removed under it never makes the cell again, in part."""
    if not ospaths.isdir(path):
        import os
        from gridtools import cell
        spool = cell.spool()
        if path.startswith(spool + "/") and not ospaths.isdir(spool):
            raise FileNotFoundError(2, "the cell's spool is gone", spool)
        os.makedirs(path, exist_ok=True)
        posix.chmod(path, mode)


def sync_file_system(path):
    """Flush every written file of the file system holding ``path`` to disk at once
    (syncfs(2)); False when this system has no syncfs (the caller flushes file by file).
    Raises OSError when the flush fails."""
    import ctypes
    try:
        syncfs = ctypes.CDLL(None, use_errno=True).syncfs
    except (AttributeError, OSError):
        return False
    fd = posix.open(path, posix.O_RDONLY | posix.O_DIRECTORY | posix.O_CLOEXEC)
    try:
        if syncfs(fd) != 0:
            code = ctypes.get_errno()
            raise OSError(code, posix.strerror(code))
    finally:
        posix.close(fd)
    return True
