"""Job and advance-reservation ids: claimed by the submitting client, confirmed by the daemon.

A client takes an id by creating the file ``spool/jobids/<id>`` (``arids``
for reservations) with ``O_EXCL``: exactly one creator succeeds, so two
clients never get the same id, and nobody waits for anybody (there is no
shared lock a user could hold). The folder is writable by everyone with the
sticky bit, so a claim can be removed only by its owner or the daemon. The
daemon accepts a submit only when the claim of its id exists and belongs to
the uid that wrote the request; it then removes the claim and records the
id in ``jobseqnum`` (``arseqnum``), a hint that only the daemon writes.

A client starts after the hint and the unbroken run of claims that follows
it (the ids other clients hold right now), skips ids whose job still exists,
and counts to 9,999,999 before starting again at 1, as Grid Engine does. A
claim that does not touch that run is never looked at, so a planted claim
cannot make ids jump: the next id is the one after the last job taken in,
and a claim next to it costs one id, as a submitted job would. Only the
daemon moves the hint, and only to the id of a job it took in that a client could
have been given (no further after the hint than the claims present, the jobs taken
in and the jobs already there allow: a job whose claim was planted far ahead, with
a request written for it by hand, is taken in without moving the hint).

The daemon removes claims no submit came for: a claim it has seen for
``SEEN_TTL`` seconds (counted from its own first sighting, whatever the
file's times say), whose modification time is older than ``CLAIM_TTL``
seconds, or lies more than ``CLOCK_SLACK`` seconds in the future, and every
claim of a user who holds more than ``MOST_CLAIMS``.
"""

import posix
import time

from gridtools import cell, ospaths
from gridtools.errors import SpoolError
from gridtools.formats.jobcheck import MAX_JOB_ID as MAX_ID

#: claims further than this above the hint are not believed when picking the next id
WINDOW = 100_000
#: seconds after its modification time that the daemon removes a claim no submit came for
CLAIM_TTL = 24 * 3600.0
#: seconds after the daemon first saw it that it removes a claim no submit came for (a
#: client submits within seconds of its claim; a claim made while no daemon ran waits for
#: the next one)
SEEN_TTL = 3600.0
#: most claims one user may hold: a client holds one for a moment, so a user with more
#: planted them (each costs the clients and the daemon's sweep a look); the daemon's sweep
#: removes every claim of a user who holds more (but of its own user, whose tools may
#: claim thousands at once)
MOST_CLAIMS = 1000
#: a claim whose modification time lies further ahead than this is stale (the clocks of
#: hosts sharing the spool may differ a little; a client's claim is never made in the future)
CLOCK_SLACK = 300.0

_FOLDERS = {"job": ("jobids", "jobseqnum", "jobs"), "ar": ("arids", "arseqnum", "ars")}


def claims_dir(kind="job"):
    return cell.spool(_FOLDERS[kind][0])


def hint_path(kind="job"):
    return cell.spool(_FOLDERS[kind][1])


def _in_use(kind, number):
    return ospaths.lexists(cell.spool(_FOLDERS[kind][2], str(number)))


def peek(kind="job"):
    """The last id the daemon took in (0 when none yet). A hint a crash or a full disk
    left damaged (empty, not a number) is not taken for 0, which would hand out again
    the ids of jobs that ended: the highest id found instead (``recovered``)."""
    number = _hint(kind)
    return recovered(kind) if number is None else number


def damaged(kind="job"):
    """True when the hint exists but says no id."""
    return _hint(kind) is None


def _hint(kind):
    """The id the hint says (0 when there is none yet), or None when it says none."""
    try:
        with open(hint_path(kind), "rb") as fh:
            raw = fh.read(32).strip()
    except FileNotFoundError:
        return 0
    except OSError:
        return None
    return int(raw) if raw.isdigit() and int(raw) <= MAX_ID else None


#: bytes at the end of the accounting file ``recovered`` reads the last jobs' ids from
ACCOUNTING_TAIL = 1 << 16


def recovered(kind="job"):
    """The highest id known without the hint: of the jobs (reservations) still in the
    spool and, for jobs, of the last records of the accounting file."""
    try:
        names = posix.listdir(cell.spool(_FOLDERS[kind][2]))
    except OSError:
        names = []
    found = [int(name) for name in names if name.isdigit() and int(name) <= MAX_ID]
    if kind == "job":
        from gridtools.formats import accounting as acct_format
        from gridtools.spool import acct
        number = acct_format.FIELDS.index("job_number")
        for line in acct.tail_lines(ACCOUNTING_TAIL):
            fields = line.split(":")
            if len(fields) == len(acct_format.FIELDS) and fields[number].isdigit() \
                    and int(fields[number]) <= MAX_ID:
                found.append(int(fields[number]))
    return max(found, default=0)


def _run_end(folder, hint):
    """The last id of the unbroken run of claims that starts right after ``hint``
    (``hint`` itself when the next id is not claimed), at most WINDOW after it: the
    claims are looked at one after the other, never listed (a folder of a million
    planted claims costs nobody a look at each)."""
    top = hint
    for _step in range(WINDOW):
        following = top + 1 if top < MAX_ID else 1
        if not ospaths.lexists(ospaths.join(folder, str(following))):
            if top == hint and not ospaths.isdir(folder):
                raise SpoolError(f"cannot claim a job id: {folder} is missing")
            break
        top = following
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
    candidate = _run_end(folder, peek(kind))
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


def run_length(kind="job", hint=None):
    """Daemon: how many claims follow the hint (``peek``) unbroken: a client's id lies no
    further after the hint than them (and the jobs there)."""
    hint = peek(kind) if hint is None else hint
    return (_run_end(claims_dir(kind), hint) - hint) % MAX_ID


def record(kind, number):
    """Daemon: note ``number`` as the last id taken in (the clients' hint)."""
    from gridtools.spool.files import atomic_write
    atomic_write(hint_path(kind), f"{number}\n", mode=0o644, fsync=False)


#: the daemon's first sighting of each claim: {(folder, name): ((inode, uid), seconds)}
_seen = {}


def sweep(kind="job", now=None, ttl=CLAIM_TTL, seen_ttl=SEEN_TTL):
    """Daemon: remove entries that are not claims, and stale claims: seen by this
    daemon for more than ``seen_ttl`` seconds, modified more than ``ttl`` seconds
    ago, or modified more than ``CLOCK_SLACK`` seconds in the future."""
    now = now if now is not None else time.time()
    folder = claims_dir(kind)
    try:
        names = posix.listdir(folder)
    except OSError:
        return
    present, found, per_user = set(), [], {}
    for name in names:
        path = ospaths.join(folder, name)
        try:
            st = posix.lstat(path)
        except OSError:
            continue
        found.append((name, path, st))
        per_user[st.st_uid] = per_user.get(st.st_uid, 0) + 1
    hoarders = {uid for uid, count in per_user.items() if count > MOST_CLAIMS and uid != posix.geteuid()}
    for name, path, st in found:
        if st.st_uid in hoarders:           # (no client holds so many: all of them go)
            _remove_entry(path, st)
            _seen.pop((folder, name), None)
            continue
        plain = (st.st_mode & 0o170000) == 0o100000
        key, who = (folder, name), (st.st_ino, st.st_uid)
        seen = _seen.get(key)
        if seen is None or seen[0] != who:          # (a new claim of the same id)
            seen = _seen[key] = (who, now)
        present.add(key)
        if (not (plain and name.isdigit()) or now - st.st_mtime > ttl
                or st.st_mtime - now > CLOCK_SLACK or now - seen[1] > seen_ttl):
            _remove_entry(path, st)
            _seen.pop(key, None)
            present.discard(key)
    for key in [k for k in _seen if k[0] == folder and k not in present]:
        del _seen[key]


def _remove_entry(path, st):
    from gridtools.spool import junk
    junk.remove(path, st)
