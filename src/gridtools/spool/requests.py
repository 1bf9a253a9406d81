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

This module is the clients' side: queueing a request (``write``), waiting for
its answer and withdrawing it. The daemon's side, taking, reading, sweeping
and answering requests, and the queries' look at the submits still queued, is
``spool.inbox``: the short-lived commands that only queue requests load none
of it.

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


def reply_path(name):
    from gridtools.spool import replies
    return ospaths.join(replies.folder(), name)


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
