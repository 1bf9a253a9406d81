"""Job and advance-reservation ids: claimed by the submitting client, confirmed by the daemon.

A client takes an id by creating the file ``spool/jobids/<id>`` (``arids``
for reservations) with ``O_EXCL``: exactly one creator succeeds, so two
clients never get the same id, and nobody waits for anybody (there is no
shared lock a user could hold). The folder is writable by everyone with the
sticky bit, so a claim can be removed only by its owner or the daemon. The
daemon accepts a submit only when the claim of its id exists and belongs to
the uid that wrote the request; it then removes the claim and records the
id in ``jobseqnum`` (``arseqnum``), a hint that only the daemon writes.

A client starts after the higher of the hint and the highest claim not yet
taken in (claims far above the hint are ignored, so a planted claim cannot
make ids jump), skips ids whose job still exists, and counts to 9,999,999
before starting again at 1, as Grid Engine does.
"""

import posix
import time

from gridtools import cell, ospaths
from gridtools.errors import SpoolError
from gridtools.formats.jobcheck import MAX_JOB_ID as MAX_ID

#: claims further than this above the hint are not believed when picking the next id
WINDOW = 100_000
#: seconds after which the daemon removes a claim no submit came for
CLAIM_TTL = 24 * 3600.0

_FOLDERS = {"job": ("jobids", "jobseqnum", "jobs"), "ar": ("arids", "arseqnum", "ars")}


def claims_dir(kind="job"):
    return cell.spool(_FOLDERS[kind][0])


def hint_path(kind="job"):
    return cell.spool(_FOLDERS[kind][1])


def _in_use(kind, number):
    return ospaths.lexists(cell.spool(_FOLDERS[kind][2], str(number)))


def peek(kind="job"):
    """The last id the daemon took in (0 when none yet)."""
    try:
        with open(hint_path(kind), "rb") as fh:
            raw = fh.read(32).strip()
    except OSError:
        return 0
    return int(raw) if raw.isdigit() and int(raw) <= MAX_ID else 0


def _highest_claim(folder, hint):
    try:
        names = posix.listdir(folder)
    except FileNotFoundError:
        raise SpoolError(f"cannot claim a job id: {folder} is missing") from None
    top = hint
    for name in names:
        if name.isdigit():
            number = int(name)
            if hint < number <= hint + WINDOW and number > top:
                top = number
    return top


def _claim(folder, number):
    """True when this process created the claim of ``number``."""
    try:
        fd = posix.open(ospaths.join(folder, str(number)),
                     posix.O_WRONLY | posix.O_CREAT | posix.O_EXCL | posix.O_NOFOLLOW, 0o644)
    except FileExistsError:
        return False
    except OSError as exc:
        raise SpoolError(f"cannot claim a job id in {folder}: {exc.strerror}") from None
    posix.close(fd)
    return True


def allocate(kind="job", count=1):
    """Claim ``count`` ids for the calling user; returns them as a list."""
    folder = claims_dir(kind)
    candidate = _highest_claim(folder, peek(kind))
    ids = []
    for _attempt in range(MAX_ID):
        if len(ids) == count:
            return ids
        candidate = candidate + 1 if candidate < MAX_ID else 1
        if _in_use(kind, candidate) or not _claim(folder, candidate):
            continue
        if _in_use(kind, candidate):           # taken in and released meanwhile
            posix.unlink(ospaths.join(folder, str(candidate)))
            continue
        ids.append(candidate)
    raise SpoolError("no free id left")


# ---------------------------------------------------------------- daemon side

def claimed_by(kind, number, uid):
    """True when the claim of ``number`` is a plain file owned by ``uid``."""
    try:
        st = posix.lstat(ospaths.join(claims_dir(kind), str(number)))
    except OSError:
        return False
    return st.st_uid == uid and (st.st_mode & 0o170000) == 0o100000


def release(kind, number):
    """Remove the claim of ``number`` (its job was taken in, or refused)."""
    try:
        posix.unlink(ospaths.join(claims_dir(kind), str(number)))
    except OSError:
        pass


def record(kind, number):
    """Daemon: note ``number`` as the last id taken in (the clients' hint)."""
    from gridtools.spool.files import atomic_write
    atomic_write(hint_path(kind), f"{number}\n", mode=0o644, fsync=False)


def sweep(kind="job", now=None, ttl=CLAIM_TTL):
    """Daemon: remove claims older than ``ttl`` and entries that are not claims."""
    now = now if now is not None else time.time()
    folder = claims_dir(kind)
    try:
        names = posix.listdir(folder)
    except OSError:
        return
    for name in names:
        path = ospaths.join(folder, name)
        try:
            st = posix.lstat(path)
        except OSError:
            continue
        plain = (st.st_mode & 0o170000) == 0o100000
        if not (plain and name.isdigit()) or now - st.st_mtime > ttl:
            _remove_entry(path, st)


def _remove_entry(path, st):
    import shutil
    try:
        if (st.st_mode & 0o170000) == 0o040000:
            shutil.rmtree(path)
        else:
            posix.unlink(path)
    except OSError:
        pass
