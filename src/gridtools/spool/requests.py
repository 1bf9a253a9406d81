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
written before it.

The daemon takes requests in name order (which is time order) and trusts
only the file's owner uid for the requester's identity, never a name written
inside: this is the file-system authentication of Grid Engine's FS method.
It opens an entry without following links or blocking, reads plain files
only, at most ``MAX_REQUEST`` bytes (a script travels beside its request,
with its own cap), and removes anything else it finds. Answers go through
``spool.replies``.
"""

import posix
import time

from gridtools import cell, ospaths
from gridtools.formats import spoolyaml
from gridtools.spool.files import NotRegular, atomic_write, open_regular, read_capped

SUFFIX_SCRIPT = ".script"
#: largest request file the daemon reads; a larger one is refused
MAX_REQUEST = 1 << 20
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


def new_name(kind):
    """A fresh request file name that sorts after all earlier ones."""
    return f"{time.time_ns():020d}-{posix.getpid()}.{kind}"


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
    name = _reply_box(name or new_name(kind), kind) if reply else (name or new_name(kind))
    folder = _folder()
    try:
        if script is not None:
            atomic_write(ospaths.join(folder, name + SUFFIX_SCRIPT), script, mode=0o600, fsync=True)
        atomic_write(ospaths.join(folder, name), text, mode=0o600)
    except Exception:
        if reply:
            from gridtools.spool import replies
            replies.discard(name)
        if script is not None:          # nothing half-written stays behind
            try:
                posix.unlink(ospaths.join(folder, name + SUFFIX_SCRIPT))
            except OSError:
                pass
        raise
    return name


def _dump(body):
    """The bytes of a request's mapping: spool YAML, or JSON for a bulk request."""
    targets = body.get("targets")
    if isinstance(targets, list) and len(targets) > BULK and "job" not in body:
        import json
        return json.dumps(body, separators=(",", ":")).encode("utf-8", "surrogateescape")
    return spoolyaml.dump(body).encode("utf-8", "surrogateescape")


def _load(data):
    """A request's mapping from its bytes (JSON when they start with ``{``)."""
    if data[:1] == b"{":
        import json
        return json.loads(data.decode("utf-8", "surrogateescape"))
    return spoolyaml.load(data.decode("utf-8", "surrogateescape"))


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

    __slots__ = ("name", "kind", "uid", "body", "path", "problem", "script")

    def __init__(self, name, kind, uid, body, path, problem="", script=None):
        self.name = name
        self.kind = kind
        self.uid = uid
        self.body = body
        self.path = path
        self.problem = problem        # why the file could not be read ("" when it could)
        self.script = script          # the script carried in the request file (bytes), if any

    def script_path(self):
        return self.path + SUFFIX_SCRIPT

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
            try:
                posix.unlink(path)
            except FileNotFoundError:
                pass
            except OSError:
                import shutil           # a planted directory (rmtree follows no link)
                shutil.rmtree(path, ignore_errors=True)


def pending(limit=None):
    """The names of the queued requests in order (the first ``limit``); ``take`` reads
    each when its turn comes (an intake does not hold every job description at once)."""
    try:
        names = sorted(n for n in posix.listdir(_folder()) if not n.startswith(".")
                       and not n.endswith(SUFFIX_SCRIPT))
    except FileNotFoundError:
        return []
    return names[:limit]


def take(name):
    """The queued request ``name``, read and authenticated by owner uid. An unreadable or
    malformed request file comes with kind ``invalid`` so the daemon can log and drop it."""
    return read(_folder(), name)


def names():
    """The names of the requests queued now (a set)."""
    try:
        return {n for n in posix.listdir(_folder()) if not n.startswith(".") and not n.endswith(SUFFIX_SCRIPT)}
    except FileNotFoundError:
        return set()


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
        data = read_capped(fd, MAX_REQUEST)
    finally:
        posix.close(fd)
    if data is None:
        return Request(name, "invalid", st.st_uid, {}, path, f"is too large (over {MAX_REQUEST} bytes)")
    data, script = _split_script(data)
    try:
        body = _load(data)
    except Exception:  # noqa: BLE001 - a broken request must not stop the daemon
        return Request(name, "invalid", st.st_uid, {}, path, "is not a request")
    kind = body.get("kind") if isinstance(body, dict) else None
    return Request(name, kind if isinstance(kind, str) else "invalid", st.st_uid, body, path,
                   script=script)


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
    """Daemon: remove hidden leftovers and script companions without a request that are
    older than STALE seconds."""
    now = now if now is not None else time.time()
    folder = _folder()
    try:
        names = set(posix.listdir(folder))
    except OSError:
        return
    for name in names:
        orphan = name.endswith(SUFFIX_SCRIPT) and name[:-len(SUFFIX_SCRIPT)] not in names
        if not (name.startswith(".") or orphan):
            continue
        path = ospaths.join(folder, name)
        try:
            if now - posix.lstat(path).st_mtime > STALE:
                posix.unlink(path)
        except OSError:
            pass


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


#: the prefix of a withdrawn request's file (``withdraw``): hidden, so never taken in
WITHDRAWN = ".withdrawn."


def withdraw(name):
    """Take back the caller's queued request ``name`` (and remove its script); True when it
    was still queued (no daemon answered it). Its file is renamed ``WITHDRAWN`` + name, not
    removed: a daemon that recorded the request in its journal and was killed before it
    answered finds it there when it starts again, and leaves the change undone
    (``daemon.journal.replay``), as the caller was told. The daemon sweeps such files
    after STALE seconds."""
    folder = _folder()
    try:
        posix.rename(ospaths.join(folder, name), ospaths.join(folder, WITHDRAWN + name))
    except OSError:
        return False
    try:
        posix.unlink(ospaths.join(folder, name + SUFFIX_SCRIPT))
    except OSError:
        pass
    return True


def withdrawn_by(name, uid):
    """True when request ``name`` was withdrawn by user ``uid`` (its ``withdraw`` file is a
    plain file of theirs)."""
    try:
        st = posix.lstat(ospaths.join(_folder(), WITHDRAWN + name))
    except OSError:
        return False
    return st.st_uid == uid and (st.st_mode & 0o170000) == 0o100000


def pending_submits():
    """Submit requests of the caller not yet taken in (for queries), each a plain
    file of the caller's with a job description that passes ``jobcheck``."""
    from gridtools.formats import jobcheck
    folder = _folder()
    try:
        names = sorted(n for n in posix.listdir(folder) if n.endswith(".submit") and not n.startswith("."))
    except FileNotFoundError:
        return []
    found = []
    me = None if posix.geteuid() == 0 else posix.getuid()
    for name in names:
        req = read(folder, name, uid=me)
        try:
            req.body = dict(req.body, job=jobcheck.check(req.body.get("job")))
        except (jobcheck.Invalid, AttributeError):
            continue
        found.append(req)
    return found
