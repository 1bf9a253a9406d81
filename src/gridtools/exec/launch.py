"""Starting a shepherd for a task: a fork of the calling daemon, detached at once.

Forking the already-initialised daemon costs about a millisecond, where a
new interpreter would cost tens. The child leaves the daemon's session,
closes every descriptor it inherited (so it holds none of the daemon's
locks), and runs the shepherd to the end; the daemon reaps it when it exits.
A shepherd outlives the daemon that started it.
"""

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
        os.setsid()
        devnull = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(devnull, fd)
        os.closerange(3, _max_fd())
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGCHLD):
            signal.signal(sig, signal.SIG_DFL)
        from gridtools.exec import shepherd
        code = shepherd.main(plan, task_dir)
    finally:
        os._exit(code)


def _max_fd():
    try:
        return os.sysconf("SC_OPEN_MAX")
    except (ValueError, OSError):
        return 1024
