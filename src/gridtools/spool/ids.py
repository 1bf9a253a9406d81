"""Job and advance-reservation ids: allocated by the submitting client under a lock.

The last id handed out is kept in a small file (``jobseqnum``, ``arseqnum``)
that every submitter may lock and update. Ids count up to 9,999,999 and then
wrap to 1, as in Grid Engine; an id whose job (or pending submit request)
still exists is skipped, so an id is never given to two live jobs.
"""

import fcntl
import os

from gridtools import cell
from gridtools.errors import SpoolError

MAX_ID = 9_999_999


def _in_use(kind, number):
    if kind == "job":
        return os.path.exists(cell.spool("jobs", str(number)))
    return os.path.exists(cell.spool("ars", str(number)))


def allocate(kind="job", count=1):
    """Reserve ``count`` consecutive-in-sequence ids; returns them as a list."""
    path = cell.spool("jobseqnum" if kind == "job" else "arseqnum")
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    except OSError as exc:
        raise SpoolError(f"cannot open {path}: {exc.strerror}") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        raw = os.pread(fd, 32, 0).strip()
        last = int(raw) if raw.isdigit() else _recover_last(kind)
        ids = []
        candidate = last
        for _ in range(count):
            for _attempt in range(MAX_ID):
                candidate = candidate + 1 if candidate < MAX_ID else 1
                if not _in_use(kind, candidate):
                    break
            else:
                raise SpoolError("no free id left")
            ids.append(candidate)
        data = b"%d\n" % candidate
        os.pwrite(fd, data, 0)
        os.ftruncate(fd, len(data))
        os.fsync(fd)
        return ids
    finally:
        os.close(fd)


def _recover_last(kind):
    """The highest id present in the spool, used when the sequence file is unreadable."""
    top = 0
    folder = cell.spool("jobs" if kind == "job" else "ars")
    try:
        for name in os.listdir(folder):
            if name.isdigit():
                top = max(top, int(name))
    except FileNotFoundError:
        pass
    return top


def peek(kind="job"):
    """The last id handed out (0 when none yet)."""
    path = cell.spool("jobseqnum" if kind == "job" else "arseqnum")
    try:
        with open(path, "rb") as fh:
            raw = fh.read().strip()
    except FileNotFoundError:
        return 0
    return int(raw) if raw.isdigit() else 0
