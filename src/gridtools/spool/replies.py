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

So that a client learns of its answer at once, it makes a FIFO ``wake`` in
its folder and waits on it; the daemon writes one byte into it after the
answer (it opens the entry only when it is a FIFO of the requester's, never
following a link). The client looks for the answer at growing intervals all
the same, so an answer whose byte went missing still arrives.
"""

import posix
import time

from gridtools import cell, ospaths
from gridtools.formats import spoolyaml
from gridtools.spool.files import NotRegular, open_regular, read_capped

ANSWER = "answer"
#: the FIFO in a reply folder that the daemon writes a byte into once the answer is there
WAKE = "wake"
#: largest answer a client reads
MAX_ANSWER = 16 << 20
#: seconds after which the daemon removes a reply folder nobody collected
KEEP = 600.0


def folder():
    return cell.spool("replies")


def prepare(name):
    """Client: create the private folder the answer to request ``name`` will go to, with
    its wake-up FIFO. Raises FileExistsError when someone already holds that name."""
    box = ospaths.join(folder(), name)
    posix.mkdir(box, 0o700)
    try:
        posix.mkfifo(ospaths.join(box, WAKE), 0o600)
    except OSError:
        pass                            # the answer is looked for all the same


def discard(name):
    """Client: remove the folder of a request (its answer read, or never sent)."""
    box = ospaths.join(folder(), name)
    for entry in (ANSWER, WAKE):
        try:
            posix.unlink(ospaths.join(box, entry))
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
            if not _write_answer(box, data):
                return False
            _wake(box, uid)
            return True
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


def _wake(box, uid):
    """Write a byte into the reply folder's FIFO when it is one of ``uid``'s (opened by
    its inode, so that nothing else is ever opened for writing); no reader, no matter."""
    import stat
    try:
        pin = posix.open(WAKE, posix.O_PATH | posix.O_NOFOLLOW | posix.O_CLOEXEC, dir_fd=box)
    except (OSError, AttributeError):
        return
    try:
        st = posix.fstat(pin)
        if not stat.S_ISFIFO(st.st_mode) or st.st_uid != uid:
            return
        fd = posix.open(f"/proc/self/fd/{pin}", posix.O_WRONLY | posix.O_NONBLOCK | posix.O_NOCTTY
                        | posix.O_CLOEXEC)
    except OSError:
        return                          # nobody listens (ENXIO), or no /proc
    finally:
        posix.close(pin)
    try:
        posix.write(fd, b"!")
    except OSError:
        pass
    finally:
        posix.close(fd)


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


#: what ``wait`` returns when the daemon stopped before it answered
STOPPED = "stopped"
#: seconds between two looks whether the daemon still runs, while waiting
ALIVE_EVERY = 0.5


def wait(name, timeout=30.0, alive=None):
    """Client: wait for the daemon's answer; returns (code, out, err), None on timeout, or
    STOPPED when ``alive()`` (looked at every ALIVE_EVERY seconds) says the daemon no
    longer runs. It is looked for at growing intervals, and at once when the wake-up
    FIFO says so."""
    trusted = daemon_uids()
    now = time.time()
    end, look = now + timeout, now + ALIVE_EVERY
    delay = 0.002
    listen = _listener(name)
    try:
        while True:
            body = _read(name, trusted)
            if body is not None:
                discard(name)
                return _int(body.get("code"), 1), _text(body.get("out")), _text(body.get("err"))
            now = time.time()
            if now >= end:
                break
            if alive is not None and now >= look:
                look = now + ALIVE_EVERY
                if not alive():
                    body = _read(name, trusted)         # (it may have answered, then gone)
                    if body is not None:
                        continue
                    return STOPPED
            listen = _pause(listen, delay)
            delay = min(delay * 1.5, 0.1)
    finally:
        if listen is not None:
            posix.close(listen)
    return None


def _listener(name):
    """The reading end of the reply folder's FIFO (None when there is none)."""
    try:
        return posix.open(ospaths.join(folder(), name, WAKE),
                          posix.O_RDONLY | posix.O_NONBLOCK | posix.O_NOFOLLOW | posix.O_CLOEXEC)
    except OSError:
        return None


def _pause(listen, delay):
    """Wait ``delay`` seconds, or until a byte comes through ``listen``; the listener to
    go on with (None once its writer came and went: from then on it is always ready)."""
    if listen is None:
        time.sleep(delay)
        return None
    import select
    ready, _, _ = select.select([listen], [], [], delay)
    if ready:
        try:
            got = posix.read(listen, 64)
        except BlockingIOError:
            got = b"!"
        if not got:                     # the writer closed: nothing more will come
            posix.close(listen)
            return None
    return listen


def _int(value, default):
    return value if type(value) is int else default


def _text(value):
    return value if isinstance(value, str) else ""


def sweep(now=None, keep=KEEP):
    """Daemon: remove reply folders (and anything else) last changed more than ``keep``
    seconds ago (``junk.remove``)."""
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
        if now - st.st_ctime < keep:    # (the kernel's time of its last change: no utime sets it)
            continue
        from gridtools.spool import junk
        junk.remove(path, st)   # (what cannot go now goes with the next sweep)
