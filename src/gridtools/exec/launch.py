"""Starting a shepherd for a task: a fork of the calling server, detached at once.

Forking the already-initialised server costs about a millisecond, where a
new interpreter would cost tens. The child leaves the server's session,
closes every descriptor it inherited (so it holds none of the daemon's
locks), and runs the shepherd to the end; the server reaps it when it exits.
A shepherd outlives the daemon that started it.

A server may fork a *spare* ahead of time (``fork_spare``): a child detached
the same way that waits for its task on a pipe of its own, so that a task
handed to it (``hand``) starts without waiting for a fork.
"""

import marshal
import os
import signal

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


def fork_spare():
    """Fork a shepherd that waits for its task; returns (pid, the pipe to hand it over)."""
    rfd, wfd = os.pipe()
    pid = os.fork()
    if pid:
        os.close(rfd)
        return pid, wfd
    code = 1
    try:
        os.close(wfd)
        _detach(keep=rfd)
        from gridtools.exec import shepherd
        shepherd.ready()
        task = _receive(rfd)
        code = shepherd.main(task[1], task[0]) if task is not None else 1
    finally:
        os._exit(code)


def hand(wfd, task_dir, plan):
    """Give a spare its task (its pipe is closed); False when the spare is gone."""
    body = marshal.dumps((task_dir, plan))
    view = memoryview(len(body).to_bytes(4, "big") + body)
    try:
        while view:
            view = view[os.write(wfd, view):]
        return True
    except OSError:
        return False
    finally:
        os.close(wfd)


def _receive(rfd):
    """(task folder, plan) read from a spare's pipe; None when it closed without one."""
    data = b""
    while True:
        chunk = os.read(rfd, 1 << 16)
        if not chunk:
            break
        data += chunk
    os.close(rfd)
    if len(data) < 4 or int.from_bytes(data[:4], "big") != len(data) - 4:
        return None
    return marshal.loads(data[4:])


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
