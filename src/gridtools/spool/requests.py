"""The request queue: how clients ask the daemon to change anything.

A client writes one file per request into ``spool/requests/`` (a directory
everyone may write to, like /tmp): ``<ns>-<pid>.<kind>``, a spool-YAML
mapping (a request naming more than BULK jobs is written as a JSON object,
which the daemon reads many times faster; a file that starts with ``{`` is
read so). The file is written under a hidden temporary name, flushed to disk
and renamed, so the daemon sees whole requests only. A submit request carries
its job script: a script of at most EMBED_MAX bytes follows the mapping in
the same file, closed by the line ``#script <length>`` (one file, one flush
to disk); a larger one travels in a companion file ``<same name>.script``
written before it (it stays in ``requests/`` until the request is removed).

Exactly one side owns a request at any time, and a rename hands it over. The
daemon takes a request (``take``) by moving it into ``spool/taken/`` (a
folder of the daemon's own, where no user can put anything) before it reads
it, and reads it there; a request that is gone (its client withdrew it)
is skipped. A client takes its request back (``withdraw``) by removing it
from ``requests/``, which succeeds only while the daemon has not taken it:
then nothing is done, else the daemon carries it out and answers. A taken
request stays in ``taken/`` until it is answered (``Request.remove``): a
daemon killed before that finds it there when it starts again, applies it
again (see ``daemon.journal`` for the changes it recorded) before any
request still queued, and answers it. ``names`` (what the journal's replay
counts as waiting to be answered) and ``pending_submits`` (what queries
show of submits not yet in the status) see both folders.

The daemon takes requests in the order they were queued, those it took before
first: by the time their name begins with, which the client chose, but never
more than NAME_SLACK seconds before the file came into the folder (its change
time, which the kernel sets): a user who names requests as if they were older
cannot have theirs taken before other users' requests queued earlier (a flood
of such requests would otherwise keep everybody else's waiting). The daemon
trusts only the file's owner uid for the requester's identity, never a name
written inside: this is the file-system
authentication of Grid Engine's FS method (the rename keeps the owner). It
opens an entry without following links or blocking, reads plain files only,
at most ``MAX_REQUEST`` bytes (a script travels beside its request, with its
own cap), and removes anything else it finds. Answers go through
``spool.replies``.
"""

import posix
import time

from gridtools import cell, ospaths
from gridtools.formats import spoolyaml
from gridtools.errors import SpoolError
from gridtools.spool.files import NotRegular, open_regular, read_capped

SUFFIX_SCRIPT = ".script"
#: largest request file the daemon reads; a larger one is refused. It holds a job
#: description within jobcheck's limits as far as an exec could start its job (a
#: command line and environment of ARG_MAX, 2 MiB, quoted), with its HTCondor ads
MAX_REQUEST = 8 << 20
#: largest job script unless the configuration says otherwise (qmaster_params MAX_SCRIPT_SIZE)
MAX_SCRIPT = 64 << 20
#: largest script carried inside its request file (a larger one gets a companion file)
EMBED_MAX = 256 << 10
#: the line that ends a request file carrying its script: b"\n#script <length>\n"
_TRAILER = b"\n#script "
#: requests naming more targets than this are written as JSON
BULK = 64


def _folder():
    return cell.spool("requests")


#: the daemon's folder of the requests it took (spool/taken/, mode 0755: a client reads
#: its own taken submits there, nobody but the daemon writes)
TAKEN = "taken"


def _taken():
    return cell.spool(TAKEN)


def _check_served():
    """Raise SpoolError when the cell's daemon cannot read this user's requests: a cell
    another user owns and runs as himself (a personal cell) serves him alone; a cell root
    owns serves every user. (Said at once: the request would wait unanswered.)"""
    try:
        owner = posix.stat(cell.root()).st_uid
    except OSError:
        return
    me = posix.geteuid()
    if owner not in (0, me):
        import pwd
        try:
            name = pwd.getpwuid(owner).pw_name
        except KeyError:
            name = str(owner)
        raise SpoolError(f"error: {cell.root()} is the cell of {name}, whose daemon serves {name} alone")


def new_name(kind):
    """A fresh request file name that sorts after all earlier ones, with a random part
    nobody can foresee (a name another user made first would keep this one out)."""
    return f"{time.time_ns():020d}-{posix.getpid()}-{posix.urandom(6).hex()}.{kind}"


#: times a client tries another name when the one it chose was taken meanwhile
NAME_TRIES = 8


def write(kind, payload, script=None, name=None, reply=False):
    """Queue a request; returns its file name. ``script`` (bytes) travels beside it.

    With ``reply``, the daemon answers in ``spool/replies/<name>`` (see ``wait_reply``).
    """
    body = dict(payload)
    body["kind"] = kind
    if reply:
        body["reply"] = True
    text = _dump(body)
    if script is not None:
        if len(script) <= EMBED_MAX and len(text) + len(script) + 32 <= MAX_REQUEST:
            text = b"".join((text, script, _TRAILER, b"%d\n" % len(script)))
            script = None
        else:
            body["has_script"] = True
            text = _dump(body)
    if len(text) > MAX_REQUEST:
        from gridtools.errors import InputError
        raise InputError(f"the request is too large ({len(text)} bytes, at most {MAX_REQUEST})")
    _check_served()
    folder = _folder()
    # both files are written under hidden names that say nothing of the request's, then
    # renamed: its name shows in the folder only as the request appears (a user who
    # learnt it before could take it first, and the request could not be queued)
    parts, queued = [], False
    try:
        parts.append(_hidden_copy(folder, text))
        if script is not None:
            parts.append(_hidden_copy(folder, script))
        for _attempt in range(NAME_TRIES):
            chosen = _reply_box(name or new_name(kind), kind) if reply else (name or new_name(kind))
            try:
                if script is not None:
                    posix.rename(parts[1], ospaths.join(folder, chosen + SUFFIX_SCRIPT))
                    parts[1] = ospaths.join(folder, chosen + SUFFIX_SCRIPT)
                posix.rename(parts[0], ospaths.join(folder, chosen))
                queued = True
                return chosen
            except (PermissionError, FileExistsError):
                if reply:                   # (the name was taken meanwhile: another one)
                    from gridtools.spool import replies
                    replies.discard(chosen)
                name = None
        raise SpoolError(f"cannot queue a request in {folder}: the names chosen were taken")
    except OSError as exc:
        raise SpoolError(f"cannot queue a request in {folder}: {exc.strerror}") from None
    finally:
        for path in () if queued else parts:
            try:                        # (nothing half-written stays behind)
                posix.unlink(path)
            except OSError:
                pass


def _hidden_copy(folder, data):
    """Write ``data`` into a new hidden file of ``folder`` (mode 0600, flushed to disk)
    with a random name; its path."""
    path = ospaths.join(folder, f".{posix.urandom(8).hex()}.tmp")
    fd = posix.open(path, posix.O_WRONLY | posix.O_CREAT | posix.O_EXCL | posix.O_NOFOLLOW | posix.O_CLOEXEC,
                    0o600)
    try:
        posix.fchmod(fd, 0o600)
        view = memoryview(data)
        while view:
            view = view[posix.write(fd, view):]
        posix.fsync(fd)
    except BaseException:
        posix.close(fd)
        try:
            posix.unlink(path)
        except OSError:
            pass
        raise
    posix.close(fd)
    return path


def _dump(body):
    """The bytes of a request's mapping: spool YAML, or JSON for a bulk request."""
    targets = body.get("targets")
    if isinstance(targets, list) and len(targets) > BULK and "job" not in body:
        import json
        return json.dumps(body, separators=(",", ":")).encode("utf-8", "surrogateescape")
    return spoolyaml.dump(body).encode("utf-8", "surrogateescape")


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


def _reply_box(name, kind):
    """``name``, or a fresh one, whose private answer folder this client created."""
    from gridtools.spool import replies
    for _attempt in range(100):
        try:
            replies.prepare(name)
            return name
        except FileExistsError:
            name = new_name(kind)
    raise FileExistsError(f"cannot create a reply folder in {replies.folder()}")


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


def reply_path(name):
    from gridtools.spool import replies
    return ospaths.join(replies.folder(), name)


def answer(req, code, out="", err=""):
    """Daemon side: write the reply to a request that asked for one."""
    from gridtools.spool import replies
    if req.wants_reply():
        replies.answer(req.name, req.uid, code, out, err)


#: seconds a caller that may not start the daemon waits for one to be back before it
#: withdraws a request still queued
COME_BACK = 5.0


def wait_reply(name, timeout=30.0):
    """Client side: wait for the daemon's reply; returns (code, out, err).

    When the daemon stops before it answered, a caller that may start it (as a command
    that finds no daemon does) starts it again and goes on waiting: the new daemon
    takes the request in, or answers what the stopped one did from its record. A
    caller that may not goes on waiting for a request the daemon took in (its answer
    comes when a daemon is back); one still queued is withdrawn when no daemon came
    back within COME_BACK seconds, so that nothing the caller is told failed is done
    later. With no answer within
    ``timeout`` seconds GridError says so; the request is withdrawn when still queued,
    and one the daemon took in may have been carried out."""
    from gridtools.errors import GridError
    from gridtools.spool import daemonctl, replies
    end = time.time() + timeout
    may_start = daemonctl.may_autostart()
    stopped = None                  # since when no daemon ran (for a caller that may not start it)
    while True:
        answer = replies.wait(name, max(0.0, end - time.time()), alive=daemonctl.running)
        if answer is not None and answer != replies.STOPPED:
            return answer
        now = time.time()
        if answer is None or now >= end:
            break
        if may_start:
            if not _revive():
                time.sleep(0.1)                 # (someone else may start it meanwhile)
        elif daemonctl.running():
            stopped = None
        elif stopped is None:
            stopped = now
        elif now - stopped >= COME_BACK and _queued(name):
            break                               # nobody takes it in: withdrawn below
    withdrawn = withdraw(name)
    replies.discard(name)
    if answer == replies.STOPPED:
        head = "error: the gridtools daemon stopped before it answered"
    else:
        head = "error: no answer from the gridtools daemon"
    tail = ("the request was withdrawn, nothing was done" if withdrawn else
            "the daemon had taken the request in: it may have been carried out")
    raise GridError(f"{head}; {tail}")


def _revive():
    """Start the daemon again; True when a daemon runs afterwards."""
    from gridtools.errors import GridError
    from gridtools.spool import daemonctl
    if daemonctl.running():
        return True
    try:
        return daemonctl.start()
    except GridError:
        return daemonctl.running()


def _queued(name):
    """True while the request ``name`` waits in the queue (the daemon has not taken it)."""
    return ospaths.exists(ospaths.join(_folder(), name))


def withdraw(name):
    """Take back the caller's queued request ``name`` (and remove its script); True when it
    was still queued: the daemon had not taken it (``claim``), and never will. False when
    the daemon had taken it: it carries it out and answers, whatever became of the
    caller."""
    folder = _folder()
    try:
        posix.unlink(ospaths.join(folder, name))
    except OSError:
        return False
    try:
        posix.unlink(ospaths.join(folder, name + SUFFIX_SCRIPT))
    except OSError:
        pass
    return True


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
