"""What a job leaves running when it ends: found, ended, and counted in its usage.

A job's processes may leave its process group and session (``setsid``,
``nohup``, a double fork), so that signalling the group (qdel, ``h_rt``, the
end of the job) misses them, and a process whose parent ended is taken in by
init, out of reach of the job's accounting. The shepherd therefore becomes
a *child subreaper* (``prctl(PR_SET_CHILD_SUBREAPER)``) before it starts the
job: a process of the job whose parent ends is re-parented to the shepherd
instead of init, so that every process the job started stays among the
shepherd's descendants, whatever session or group it moved to. When the job's
own process has ended (it exited, or was killed by qdel, a limit or the
end of its slot), ``end_all`` kills every descendant left (in rounds, so
that a process forking meanwhile cannot outrun it) and waits for each:
their CPU time and the other figures of their resource usage are added to
the job's, as Grid Engine's process data collector adds those of the
processes that carry the job's additional group id, and as HTCondor's
starter ends and counts what is left in the job's cgroup.

A job cannot leave the subtree by itself: only a process outside it (a
service asked to start one, such as ``at`` or a user systemd) could run
something for it, which no batch system sees either.
"""

import os
import signal

#: prctl's option that makes the calling process a subreaper of its orphaned descendants
PR_SET_CHILD_SUBREAPER = 36
#: most rounds of killing and waiting (each waits for what the round killed)
ROUNDS = 50

_SUBREAPER = []


def become_subreaper():
    """Make this process the subreaper of its descendants (once); False when the kernel
    or the C library does not let it (the job's leftovers are then only those still in
    its process group)."""
    if _SUBREAPER:
        return _SUBREAPER[0]
    done = False
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        done = libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        done = False
    _SUBREAPER.append(done)
    return done


def descendants(root):
    """The pids of the live processes whose chain of parents leads to ``root`` (not
    ``root`` itself), read from /proc."""
    parents = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return set()
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                data = fh.read()
        except OSError:
            continue
        fields = data[data.rfind(b")") + 2:].split()
        if len(fields) > 1 and fields[0] != b"Z":
            parents[int(name)] = int(fields[1])
    found, frontier = set(), {root}
    while frontier:
        frontier = {pid for pid, parent in parents.items() if parent in frontier and pid not in found}
        found |= frontier
    return found


class Usage:
    """The resource usage of the processes ``end_all`` waited for, summed as the kernel
    sums a process's children's (``ru_maxrss`` the largest)."""

    FIELDS = ("ru_ixrss", "ru_idrss", "ru_isrss", "ru_minflt", "ru_majflt", "ru_nswap", "ru_inblock",
              "ru_oublock", "ru_msgsnd", "ru_msgrcv", "ru_nsignals", "ru_nvcsw", "ru_nivcsw")

    def __init__(self):
        self.count = 0
        self.ru_utime = self.ru_stime = 0.0
        self.ru_maxrss = 0
        for name in self.FIELDS:
            setattr(self, name, 0)

    def add(self, rusage):
        self.count += 1
        self.ru_utime += rusage.ru_utime
        self.ru_stime += rusage.ru_stime
        self.ru_maxrss = max(self.ru_maxrss, rusage.ru_maxrss)
        for name in self.FIELDS:
            setattr(self, name, getattr(self, name) + getattr(rusage, name))


def end_all(root=None):
    """Kill every process left below ``root`` (this process by default) and wait for
    those that are its children; their usage (``Usage``). Children that had ended
    already are waited for too."""
    root = os.getpid() if root is None else root
    usage = Usage()
    if root == os.getpid() and not _children_left(usage):
        return usage                    # (no child: no descendant either, as this is their subreaper)
    for _ in range(ROUNDS):
        left = descendants(root)
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        _reap(usage, block=bool(left))
        if not left:
            break
    return usage


def _children_left(usage):
    """Wait for the children that ended (their usage added to ``usage``); True when some
    are still running."""
    while True:
        try:
            pid, _status, rusage = os.wait4(-1, os.WNOHANG)
        except ChildProcessError:
            return False
        except InterruptedError:
            continue
        if pid == 0:
            return True
        usage.add(rusage)


def _reap(usage, block):
    """Wait for the children that ended (with ``block``, for one at least when some
    are left); their usage added to ``usage``."""
    flags = 0 if block else os.WNOHANG
    while True:
        try:
            pid, _status, rusage = os.wait4(-1, flags)
        except ChildProcessError:
            return
        except InterruptedError:
            continue
        if pid == 0:
            return
        usage.add(rusage)
        flags = os.WNOHANG
