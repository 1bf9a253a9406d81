"""The daemon's side of the request queue (``spool.requests`` tells how clients
queue requests and how a request passes from a client to the daemon): listing
the requests in the order they were queued (``pending``), taking each in
(``claim``, ``take``) and reading it (``read``) as a ``Request``,
authenticated by its file's owner, answering it (``answer``), sweeping
leftovers (``sweep``), and the queries' look at the submits not answered yet
(``pending_submits``).
"""

import posix
import time

from gridtools import ospaths
from gridtools.formats import spoolyaml
from gridtools.spool.files import NotRegular, open_regular, read_capped
from gridtools.spool.requests import MAX_REQUEST, MAX_SCRIPT, SUFFIX_SCRIPT, _TRAILER, _folder, _taken


def _load(data):
    """A request's mapping from its bytes (JSON when they start with ``{``), and whether a
    text in it holds a lone surrogate that no byte stands for (see ``_lone_surrogate``)."""
    text = data.decode("utf-8", "surrogateescape")
    if data[:1] == b"{":
        import json
        body = json.loads(text)
    else:
        body = spoolyaml.load(text)
    return body, ("\\u" in text or "\\U" in text) and _lone_surrogate(body)


def _lone_surrogate(value):
    """True when a text of ``value`` (at any depth) holds a surrogate other than one from
    U+DC80 to U+DCFF: those stand for bytes that were not UTF-8 (``surrogateescape``: a
    file name's, say), any other only an escape (``\\ud800``) can make; no file and no
    output could hold it, and every record of a job that had it would fail."""
    import re
    bad = re.compile("[\ud800-\udc7f\udd00-\udfff]")
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if bad.search(item):
                return True
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
    return False


class Request:
    """One queued request as the daemon sees it."""

    __slots__ = ("name", "kind", "uid", "body", "path", "problem", "script", "queued", "replayed")

    def __init__(self, name, kind, uid, body, path, problem="", script=None, queued=0.0):
        self.name = name
        self.kind = kind
        self.uid = uid
        self.body = body
        self.path = path
        self.problem = problem        # why the file could not be read ("" when it could)
        self.script = script          # the script carried in the request file (bytes), if any
        self.queued = queued          # when it was queued (``queued_at``), 0.0 when not known
        self.replayed = False         # taken by a daemon that ended before it answered

    def script_path(self):
        """The companion script's path: beside the request as its client wrote it (in
        ``requests/``, also once the request was taken)."""
        return ospaths.join(_folder(), self.name + SUFFIX_SCRIPT)

    def read_script(self, cap=MAX_SCRIPT):
        """The companion script's bytes: a plain file of the requester's, opened without
        following links or blocking, at most ``cap`` bytes. None otherwise (a script
        carried in the request file comes from there)."""
        if self.script is not None:
            return self.script if len(self.script) <= cap else None
        try:
            fd, st = open_regular(self.script_path())
        except OSError:
            return None
        try:
            if st.st_uid != self.uid or st.st_nlink != 1 or st.st_size > cap:
                return None
            return read_capped(fd, cap)
        finally:
            posix.close(fd)

    def applied(self):
        """Let go of what was read but what answering and removing the request need: an
        applied request waits for the status that shows it, and a whole intake of them
        would hold every job description it carried twice."""
        body = self.body if isinstance(self.body, dict) else {}
        self.body = {key: body[key] for key in ("reply", "has_script") if key in body}
        self.script = None

    def wants_reply(self):
        return isinstance(self.body, dict) and self.body.get("reply") is True

    def remove(self):
        """Remove the request and its script (a stray script goes with the sweep)."""
        companion = self.problem or (isinstance(self.body, dict) and self.body.get("has_script"))
        for path in (self.path, self.script_path()) if companion else (self.path,):
            if path != self.path and not _owned_by(path, self.uid):
                continue                # (another user's: the sweep removes an orphan)
            try:
                posix.unlink(path)
            except FileNotFoundError:
                pass
            except OSError:             # a planted directory
                from gridtools.spool import junk
                try:
                    junk.remove(path, posix.lstat(path))
                except OSError:
                    pass


def _owned_by(path, uid):
    try:
        return posix.lstat(path).st_uid == uid
    except OSError:
        return False


def _listed(folder):
    """The sorted names of the requests in ``folder`` (no hidden file, no companion)."""
    try:
        return sorted(n for n in posix.listdir(folder) if not n.startswith(".")
                      and not n.endswith(SUFFIX_SCRIPT))
    except FileNotFoundError:
        return []


#: seconds a request's name may say it is older than its file (a client chooses the name,
#: then writes the file and renames it into the folder)
NAME_SLACK = 2.0
#: the order key of each queued request name seen (the daemon's listing looks once at each)
_KEYS = {}


def _queued_order(folder, names):
    """``names`` (of requests in ``folder``) in the order they were queued: by the time
    their name begins with, moved up to NAME_SLACK seconds before the file's change
    time when the name says it is older (``_KEYS`` keeps what each name gave)."""
    keys = {}
    slack = int(NAME_SLACK * 1e9)
    for name in names:
        key = _KEYS.get(name)
        if key is None:
            stamp = name.partition("-")[0]
            said = int(stamp) if stamp.isdigit() and len(stamp) <= 20 else 0
            try:
                came = posix.lstat(ospaths.join(folder, name)).st_ctime_ns
            except OSError:
                came = said + slack             # (gone meanwhile: as it says)
            key = (max(said, came - slack), name)
        keys[name] = key
    _KEYS.clear()
    _KEYS.update(keys)
    return sorted(names, key=keys.__getitem__)


def pending(limit=None):
    """The names of the requests the daemon has to apply, in order (the first ``limit``):
    those it took already (left by a daemon that ended before it answered them, or that
    had to wait), then those still queued. ``take`` takes and reads each when its turn
    comes (an intake does not hold every job description at once)."""
    names = _listed(_taken())
    if limit is None or len(names) < limit:
        taken = set(names)              # (a name queued again by someone else waits its turn)
        folder = _folder()
        names += _queued_order(folder, [name for name in _listed(folder) if name not in taken])
    return names[:limit]


def claim(name):
    """Daemon: make request ``name`` the daemon's before reading it, by moving it from
    ``requests/`` into ``taken/`` (one rename: its client can no longer withdraw it).
    True when it is the daemon's (now or from before); False when it is gone (its client
    withdrew it); raises OSError when it cannot be moved."""
    taken = ospaths.join(_taken(), name)
    if ospaths.lexists(taken):          # taken before (only the daemon writes there)
        return True
    for _attempt in range(2):
        try:
            posix.rename(ospaths.join(_folder(), name), taken)
            return True
        except FileNotFoundError:
            if ospaths.isdir(_taken()):
                return False
            from gridtools.spool.files import makedirs
            makedirs(_taken(), 0o755)   # (a spool made before there was one)
    return False


def take(name):
    """Daemon: take request ``name`` (``claim``) and read it, authenticated by owner uid;
    None when its client withdrew it first. An unreadable or malformed request file (or
    one that cannot be taken) comes with kind ``invalid`` so the daemon can log and drop
    it. An entry that is no plain file (planted), or that is not the file looked at
    before it was moved (swapped meanwhile), never stays in ``taken/``: it is hidden
    in ``requests/`` under a name of its own (``_hide``), where its owner may remove it
    and no intake lists it again, and removed from there."""
    path = ospaths.join(_folder(), name)
    try:
        st = posix.lstat(path)
        queued = st.st_ctime            # (before the move changes it)
    except OSError:
        st, queued = None, 0.0          # (taken before: when it was taken)
    else:
        if (st.st_mode & 0o170000) != 0o100000:
            return _hide(name, path)
    taken = ospaths.join(_taken(), name)
    if ospaths.lexists(taken):
        st = None                       # (taken before: what is queued under its name waits)
    try:
        if not claim(name):
            return None
    except OSError as exc:              # (a planted folder of another user's, a broken disk)
        return _unreadable(name, path, f"cannot be taken in ({exc.strerror})")
    try:
        now = posix.lstat(taken)
    except OSError:
        return None
    if (now.st_mode & 0o170000) != 0o100000 or (st is not None and (now.st_dev, now.st_ino)
                                                 != (st.st_dev, st.st_ino)):
        return _hide(name, taken)
    req = read(_taken(), name)
    if 0 < queued < req.queued:
        req.queued = queued
    req.replayed = st is None
    return req


def _hide(name, path):
    """Move the entry at ``path`` to a hidden name of ``requests/`` no one can have taken
    (``.planted.<name>.<random>``); the refused Request for it (None when it is gone)."""
    hidden = ospaths.join(_folder(), f".planted.{name}.{posix.urandom(6).hex()}")
    try:
        posix.rename(path, hidden)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return _unreadable(name, path, f"not a regular file, and cannot be moved aside ({exc.strerror})")
    return _unreadable(name, hidden, "not a regular file")


def names():
    """The names of the requests not answered yet (a set): queued, or taken and not
    answered."""
    return set(_listed(_folder())).union(_listed(_taken()))


def read(folder, name, uid=None):
    """One request file as a Request; an entry that is not a readable plain file of
    at most MAX_REQUEST bytes comes back with kind ``invalid`` and its ``problem``.
    With ``uid``, a file of another owner counts as unreadable."""
    path = ospaths.join(folder, name)
    try:
        fd, st = open_regular(path)
    except OSError as exc:
        return _unreadable(name, path, "not a regular file" if isinstance(exc, NotRegular)
                           else f"cannot be read ({exc.strerror})")
    try:
        if st.st_nlink != 1 or (uid is not None and st.st_uid != uid):
            return Request(name, "invalid", st.st_uid, {}, path, "has another owner or name")
        data = None if st.st_size > MAX_REQUEST else read_capped(fd, MAX_REQUEST)
    finally:
        posix.close(fd)
    if data is None:
        return Request(name, "invalid", st.st_uid, {}, path, f"is too large (over {MAX_REQUEST} bytes)")
    data, script = _split_script(data)
    try:
        body, lone = _load(data)
    except Exception:  # noqa: BLE001 - a broken request must not stop the daemon
        return Request(name, "invalid", st.st_uid, {}, path, "is not a request")
    if lone:
        keep = {key: body[key] for key in ("reply", "has_script") if key in body} if isinstance(body, dict) else {}
        return Request(name, "invalid", st.st_uid, keep, path, "holds a text with a character that is none "
                                                                "(a lone surrogate)")
    kind = body.get("kind") if isinstance(body, dict) else None
    return Request(name, kind if isinstance(kind, str) else "invalid", st.st_uid, body, path,
                   script=script, queued=st.st_ctime)


def queued_at(req, now):
    """When request ``req`` was queued, by the kernel's clock: the last change of its
    file's inode (``st_ctime``), which the rename that queued it set, no later than
    ``now``. Its client cannot move the time back (every change it makes to the file
    moves it on), unlike a time it writes into the request, or the file's modification
    time, which ``utime`` sets. (The daemon reads it before it moves the file into
    ``taken/``, which changes it again: see ``take``.)"""
    return min(now, req.queued) if req.queued > 0 else now


def _split_script(data):
    """(the request's mapping, the script it carries or None) of a request file's bytes."""
    at = data.rfind(_TRAILER)
    if at < 0 or not data.endswith(b"\n"):
        return data, None
    size = data[at + len(_TRAILER):-1]
    if not size.isdigit() or int(size) > at:
        return data, None
    start = at - int(size)
    return data[:start], data[start:at]


def _unreadable(name, path, problem):
    try:
        uid = posix.lstat(path).st_uid
    except OSError:
        uid = -1
    return Request(name, "invalid", uid, {}, path, problem)


#: seconds after which the daemon removes half-written or orphaned entries
STALE = 3600.0


def sweep(now=None):
    """Daemon: remove hidden leftovers of ``requests/`` and script companions without a
    request (queued or taken) that were last changed more than STALE seconds ago (their
    ``st_ctime``: a modification time set ahead does not keep them). What was taken is
    left alone: it is answered and removed once applied."""
    now = now if now is not None else time.time()
    folder = _folder()
    try:
        names = set(posix.listdir(folder))
    except OSError:
        return
    taken = None
    for name in names:
        orphan = name.endswith(SUFFIX_SCRIPT) and name[:-len(SUFFIX_SCRIPT)] not in names
        if orphan:
            if taken is None:
                taken = set(_listed(_taken()))
            orphan = name[:-len(SUFFIX_SCRIPT)] not in taken
        if not (name.startswith(".") or orphan):
            continue
        path = ospaths.join(folder, name)
        try:
            st = posix.lstat(path)
        except OSError:
            continue
        if now - st.st_ctime > STALE:  # (the kernel's time of its last change: no utime sets it)
            from gridtools.spool import junk
            junk.remove(path, st)


def answer(req, code, out="", err=""):
    """Daemon side: write the reply to a request that asked for one."""
    from gridtools.spool import replies
    if req.wants_reply():
        replies.answer(req.name, req.uid, code, out, err)


def pending_submits():
    """Submit requests of the caller not answered yet (for queries: their jobs may not be
    in the status yet), queued or taken, each a plain file of the caller's with a job
    description that passes ``jobcheck``, its submission time the one the daemon stamps
    (``queued_at``). A request is looked for in ``taken/`` when the
    daemon took it since ``requests/`` was listed: it leaves ``taken/`` only once the
    status shows its job."""
    from gridtools.formats import jobcheck
    queued, taken = _folder(), _taken()
    found, seen = [], set()
    me = None if posix.geteuid() == 0 else posix.getuid()
    for folder in (queued, taken):
        for name in _listed(folder):
            if not name.endswith(".submit") or name in seen:
                continue
            seen.add(name)
            req = read(folder, name, uid=me)
            if folder == queued and req.problem and not ospaths.lexists(req.path):
                req = read(taken, name, uid=me)         # (taken meanwhile)
            try:
                req.body = dict(req.body, job=jobcheck.check(req.body.get("job")))
            except (jobcheck.Invalid, AttributeError):
                continue
            req.body["job"]["submit_time"] = queued_at(req, time.time())   # (as the daemon will stamp it)
            found.append(req)
    found.sort(key=lambda req: req.name)
    return found
