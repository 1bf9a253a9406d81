"""Answers to requests, and how a client knows an answer came from the daemon.

``spool/replies/`` is writable by everyone (sticky, like /tmp). A client that
wants an answer first creates ``replies/<request name>/`` itself, mode 0700:
nobody but its owner and the daemon can put anything in it. It then queues
the request. The daemon writes the answer into that folder, as ``answer``,
only after checking that the folder is a real directory owned by the uid that
wrote the request. The client believes ``answer`` only when it is a plain
file (not a link, one name) owned by the daemon's uid (the spool's owner, or
root), then removes it and its folder. The daemon removes what clients left
behind (``sweep``).
"""

import errno
import posix
import time

from gridtools import cell, ospaths
from gridtools.formats import spoolyaml
from gridtools.spool.files import NotRegular, open_regular, read_capped

ANSWER = "answer"
#: largest answer a client reads
MAX_ANSWER = 16 << 20
#: seconds after which the daemon removes a reply folder nobody collected
KEEP = 600.0


def folder():
    return cell.spool("replies")


def prepare(name):
    """Client: create the private folder the answer to request ``name`` will go to.

    Raises FileExistsError when someone already holds that name."""
    posix.mkdir(ospaths.join(folder(), name), 0o700)


def discard(name):
    """Client: remove the folder of a request (its answer read, or never sent)."""
    box = ospaths.join(folder(), name)
    try:
        posix.unlink(ospaths.join(box, ANSWER))
    except OSError:
        pass
    try:
        posix.rmdir(box)
    except OSError:
        import shutil           # something else was left inside
        shutil.rmtree(box, ignore_errors=True)


def answer(name, uid, code, out, err):
    """Daemon: write the answer to request ``name`` of ``uid``; False when its folder
    is missing or not the requester's own."""
    data = spoolyaml.dump({"code": int(code), "out": out, "err": err}).encode("utf-8", "surrogateescape")
    top = posix.open(folder(), posix.O_RDONLY | posix.O_DIRECTORY | posix.O_CLOEXEC)
    try:
        try:
            box = posix.open(name, posix.O_RDONLY | posix.O_DIRECTORY | posix.O_NOFOLLOW | posix.O_CLOEXEC,
                             dir_fd=top)
        except OSError:
            return False
        try:
            if posix.fstat(box).st_uid != uid:
                return False
            return _write_answer(box, data)
        finally:
            posix.close(box)
    finally:
        posix.close(top)


def _write_answer(box, data):
    tmp = f".{ANSWER}.{posix.getpid()}"
    try:
        flags = posix.O_WRONLY | posix.O_CREAT | posix.O_EXCL | posix.O_NOFOLLOW | posix.O_CLOEXEC
        fd = posix.open(tmp, flags, 0o644, dir_fd=box)
    except OSError:
        return False
    try:
        view = memoryview(data)
        while view:
            view = view[posix.write(fd, view):]
        posix.fchmod(fd, 0o644)
    finally:
        posix.close(fd)
    try:
        posix.rename(tmp, ANSWER, src_dir_fd=box, dst_dir_fd=box)
    except OSError:
        return False
    return True


def daemon_uids():
    """The uids an answer may come from: the spool's owner and root."""
    try:
        return {posix.stat(cell.spool()).st_uid, 0}
    except OSError:
        return {0}


def _read(name, trusted):
    """The answer's mapping when it is there and trustworthy, else None."""
    path = ospaths.join(folder(), name, ANSWER)
    try:
        fd, st = open_regular(path)
    except (FileNotFoundError, NotRegular, PermissionError):
        return None
    try:
        if st.st_uid not in trusted or st.st_nlink != 1:
            return None
        data = read_capped(fd, MAX_ANSWER)
    finally:
        posix.close(fd)
    try:
        body = spoolyaml.load(data.decode("utf-8", "surrogateescape")) if data is not None else None
    except spoolyaml.SpoolFormatError:
        return None
    return body if isinstance(body, dict) else None


def wait(name, timeout=30.0):
    """Client: wait for the daemon's answer; returns (code, out, err) or None on timeout."""
    trusted = daemon_uids()
    end = time.time() + timeout
    delay = 0.002
    while time.time() < end:
        body = _read(name, trusted)
        if body is not None:
            discard(name)
            return _int(body.get("code"), 1), _text(body.get("out")), _text(body.get("err"))
        time.sleep(delay)
        delay = min(delay * 1.5, 0.1)
    return None


def _int(value, default):
    return value if type(value) is int else default


def _text(value):
    return value if isinstance(value, str) else ""


def sweep(now=None, keep=KEEP):
    """Daemon: remove reply folders (and anything else) older than ``keep`` seconds."""
    now = now if now is not None else time.time()
    try:
        names = posix.listdir(folder())
    except OSError:
        return
    for name in names:
        path = ospaths.join(folder(), name)
        try:
            st = posix.lstat(path)
        except OSError:
            continue
        if now - st.st_mtime < keep:
            continue
        try:
            if st.st_mode & 0o170000 == 0o040000:          # a directory
                import shutil
                shutil.rmtree(path)
            else:
                posix.unlink(path)
        except OSError as exc:
            if exc.errno != errno.ENOENT:
                continue
