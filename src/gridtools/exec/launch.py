"""Starting a shepherd for a task: a fork of the calling server, detached at once.

Forking the already-initialised server costs about a millisecond, where a
new interpreter would cost tens. The child leaves the server's session,
closes every descriptor it inherited (so it holds none of the daemon's
locks), and runs the shepherd to the end; the server reaps it when it exits.
A shepherd outlives the daemon that started it.

A server may fork a *spare* ahead of time (``fork_spare``): a child detached
the same way that waits for its task on a socket of its own, so that a task
handed to it (``hand``) starts without waiting for a fork. A spare serves
one task after another: once it has delivered a task's result (and let go
of the task's lock) it says so with one byte on its socket and waits for the
next, so that the server need not fork again (a fork, and the copies of the
pages a Python process touches after it, cost a task more than the rest of
its shepherd's work). It leaves when its socket closes, after REUSE_MOST
tasks, or after a task that changed the process for good (a nice value).
"""

import marshal
import os
import signal
import socket

from gridtools.formats import spoolyaml
from gridtools.spool.files import atomic_write


def write_plan(task_dir, plan):
    atomic_write(os.path.join(task_dir, "plan.yaml"), spoolyaml.dump(plan), mode=0o600, fsync=False)


def read_plan(task_dir):
    with open(os.path.join(task_dir, "plan.yaml"), encoding="utf-8") as fh:
        return spoolyaml.load(fh.read())


def spawn(plan, task_dir):
    """Fork a shepherd for ``plan``; returns its pid (in the parent)."""
    pid = os.fork()
    if pid:
        return pid
    code = 1
    try:
        _detach()
        from gridtools.exec import shepherd
        code = shepherd.main(plan, task_dir)
    finally:
        os._exit(code)


#: most tasks one spare serves before it leaves (what a long life might accumulate)
REUSE_MOST = 500
#: the byte a spare sends when it is ready for another task
DONE = b"d"


def fork_spare():
    """Fork a shepherd that waits for its tasks; returns (pid, the socket to hand them
    over and to hear it is done, as a descriptor)."""
    ours, theirs = socket.socketpair()
    ours, theirs = ours.detach(), theirs.detach()
    pid = os.fork()
    if pid:
        os.close(theirs)
        return pid, ours
    code = 1
    try:
        os.close(ours)
        _detach(keep=theirs)
        from gridtools.exec import shepherd, tasklife
        tasklife.ready()
        for served in range(1, REUSE_MOST + 1):
            task = _receive(theirs)
            if task is None:
                break
            last = served == REUSE_MOST or not shepherd.reusable(task[1])
            code = 1                    # (a task it failed to start on is left with an obituary)
            code = shepherd.main(task[1], task[0], reuse=not last)
            _reap_strays()
            os.chdir("/")
            if last or not _done(theirs):       # (never "done" before leaving: no task
                break                           # may be handed to a spare on its way out)
    finally:
        _leave()
        os._exit(code)


def _leave():
    """What a spare that leaves takes with it: the TMPDIR it kept for a next task."""
    try:
        from gridtools.exec import tmpdir
        tmpdir.drop_kept()
    except BaseException:  # noqa: BLE001 - leaving goes on whatever happens
        pass


def ended_children():
    """waitpid() every child of this process that has ended: (pid, wait status) each."""
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        yield pid, status


def _reap_strays():
    """Children of the task that ended that nobody waited for are let go."""
    for _ended in ended_children():
        pass


def hand(sock, task_dir, plan):
    """Give a spare its task; False when the spare is gone (its socket is then closed)."""
    body = marshal.dumps((task_dir, plan))
    view = memoryview(len(body).to_bytes(4, "big") + body)
    try:
        while view:
            view = view[os.write(sock, view):]
        return True
    except OSError:
        os.close(sock)
        return False


def _done(sock):
    try:
        return os.write(sock, DONE) == 1
    except OSError:
        return False


def _receive(sock):
    """(task folder, plan) of the next frame on a spare's socket; None when it closed
    (or sent something that is not a frame)."""
    head = _read_exactly(sock, 4)
    if head is None:
        return None
    body = _read_exactly(sock, int.from_bytes(head, "big"))
    if body is None:
        return None
    try:
        return marshal.loads(body)
    except (ValueError, EOFError, TypeError):
        return None


def _read_exactly(fd, size):
    data = b""
    while len(data) < size:
        try:
            chunk = os.read(fd, size - len(data))
        except InterruptedError:
            continue
        except OSError:
            return None
        if not chunk:
            return None
        data += chunk
    return data


def _detach(keep=-1):
    """In a new shepherd: a session of its own, the standard streams on /dev/null, no
    inherited descriptor but ``keep``, default signal handling."""
    signal.set_wakeup_fd(-1)
    os.setsid()
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    if keep > 2:
        os.closerange(3, keep)
        os.closerange(keep + 1, _max_fd())
    else:
        os.closerange(3, _max_fd())
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGCHLD):
        signal.signal(sig, signal.SIG_DFL)


def _max_fd():
    try:
        return os.sysconf("SC_OPEN_MAX")
    except (ValueError, OSError):
        return 1024
