"""The lock file of a running DAG (``DAGFILE.lock``): one manager per DAG at a time.

A DAG's manager takes the lock before it reads the DAG, and keeps it to its
end: it holds an exclusive flock on the file and writes in it who it is (its
pid and start time, the machine, its job id). A second manager of the same
DAG (``condor_submit_dag -f`` while the first runs) finds the flock held, or
the process the file names still alive, and leaves without touching the DAG.
A lock file whose process is gone (its manager was killed outright, or the
machine restarted) is taken over. The flock makes taking the lock atomic: of
managers that start together exactly one gets it; the file is removed while
the flock is still held, and a manager that locked a file removed meanwhile
tries again on the file now there.

The DAG's folder may be one other users write (/tmp): the lock file is
opened without following a link another user planted there
(``ownfiles``), and one that is not a regular file of the manager's own user
is neither written nor taken: the manager ends, saying why.
"""

import os
from dataclasses import dataclass

from gridtools.errors import GridError

#: bytes of the record at the start of a lock file (padded with blanks)
RECORD = 96
#: attempts at locking a lock file that its holder removes meanwhile
TRIES = 20


@dataclass(frozen=True)
class Holder:
    """What a lock file says of the manager that wrote it."""
    pid: int
    ticks: int          # its start time (clock ticks since boot)
    node: str = ""      # the machine it runs on
    job: int = 0        # its job id (0: not run as a job)
    since: int = 0      # the size of the DAG's nodes log when the DAG's run began

    def alive(self):
        """True when this machine runs the process the record names (same pid, same
        start time); a record of another machine cannot be checked here."""
        from gridtools.exec.jobproc import start_ticks
        return self.node == os.uname().nodename and self.ticks != 0 and start_ticks(self.pid) == self.ticks


def parse_record(data):
    """The Holder of a lock file's first bytes, or None when they name none."""
    fields = data.decode("utf-8", "replace").split()
    try:
        pid, ticks = int(fields[0]), int(fields[1])
        job = int(fields[3]) if len(fields) > 3 else 0
        since = int(fields[4]) if len(fields) > 4 else 0
    except (IndexError, ValueError):
        return None
    return Holder(pid, ticks, fields[2] if len(fields) > 2 else "", job, since)


def render_record(holder):
    text = f"{holder.pid} {holder.ticks} {holder.node} {holder.job} {holder.since}"
    return (text[:RECORD - 1].ljust(RECORD - 1) + "\n").encode("utf-8")


def myself(job, since=0):
    from gridtools.exec.jobproc import start_ticks
    pid = os.getpid()
    return Holder(pid, start_ticks(pid), os.uname().nodename, int(job or 0), int(since or 0))


class Taken:
    """A held DAG lock; ``release`` removes the file and lets the flock go."""

    def __init__(self, lock):
        self.lock = lock

    def release(self):
        if self.lock.fd is None:
            return
        if not self.lock.replaced():
            try:
                os.unlink(self.lock.path)
            except FileNotFoundError:
                pass
        self.lock.release()

    def keep(self):
        """Let the flock go but leave the file: the manager stopped (held) and its next
        start takes the lock over and recovers the DAG."""
        if self.lock.fd is not None:
            self.lock.release()


def take(path, job=0, since=0):
    """Take the lock of a DAG: (Taken, the Holder of the stale lock taken over or None),
    or (None, the Holder of the live lock, None when it wrote nothing yet). ``since``:
    the size of the nodes log now, written in the record unless a stale record is
    taken over (then its own is kept: the run it began goes on)."""
    from gridtools.spool.files import Lock
    me = myself(job, since)
    for _ in range(TRIES):
        lock = Lock(path, mode=0o600, blocking=False, own=True)
        if not lock.acquire():
            return None, _read(path)
        if lock.replaced():             # removed by the manager that held it: try the new one
            lock.release()
            continue
        found = parse_record(os.pread(lock.fd, RECORD, 0))
        if found is not None and found.pid != me.pid and found.alive():
            lock.release()              # a live process that holds no flock (an older manager)
            return None, found
        if found is not None:
            me = myself(job, found.since)
        os.pwrite(lock.fd, render_record(me), 0)
        os.ftruncate(lock.fd, RECORD)
        return Taken(lock), found
    raise GridError(f"ERROR: could not lock {path}: it is removed and made again all the time")


def _read(path):
    from gridtools.ownfiles import read_trusted
    try:
        return parse_record(read_trusted(path, binary=True)[:RECORD])
    except OSError:
        return None
