"""Appending events to the user logs of HTCondor jobs (``log = FILE``).

A job's user log lives wherever its owner said, so the daemon never opens it
with its own rights: when it runs as root it takes the owner's identity
(uid, gid and groups) for the open, which creates the file as the owner
would, and refuses a symbolic link in the last place of the path, anything
that is not a plain file, and a file of another owner. The open never
blocks (a FIFO planted there is refused). What cannot be written is noted
in the daemon's messages; it never stops the daemon. The text of each event
comes from ``formats.condor.userlog``.
"""

import os
import stat

from gridtools.exec.jobproc import owner_rights
from gridtools.formats.condor import userlog

_FLAGS = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


def open_log(path, owner, uid, gid):
    """A descriptor of the log at ``path`` opened for appending as its owner, or
    raise OSError (a link, not a plain file, another owner's file, a link another user
    planted in a sticky folder on the way to it: ``ownfiles.open_own``)."""
    from gridtools.ownfiles import open_own
    with owner_rights({"owner": owner, "uid": uid, "gid": gid}):
        fd = open_own(path, _FLAGS, 0o644, follow_last=False)     # (no link planted in a sticky folder on the way)
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode) or (uid != 0 and st.st_uid != uid):
        os.close(fd)
        raise OSError(f"{path} is not a plain file of {owner}")
    return fd


def append(spec, path, events, log=None):
    """Append ``events`` (formats.condor.userlog.Event) to the log at ``path`` of the
    job described by ``spec``; True when written. ``log(text)`` hears of failures."""
    if not path or not path.startswith("/") or not events:
        return False
    text = userlog.render_events(events).encode("utf-8", "backslashreplace")
    try:
        fd = open_log(path, spec["owner"], int(spec["uid"]), int(spec["gid"]))
    except OSError as exc:
        if log:
            log(f"W|job {spec['id']}: cannot open its user log {path}: {exc.strerror or exc}")
        return False
    try:
        view = memoryview(text)
        while view:
            view = view[os.write(fd, view):]
    except OSError as exc:
        if log:
            log(f"W|job {spec['id']}: cannot write its user log {path}: {exc.strerror}")
        return False
    finally:
        os.close(fd)
    return True
