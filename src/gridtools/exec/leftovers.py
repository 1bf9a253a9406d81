"""What a job leaves running when it ends: found, ended, and counted in its usage.

A job's processes may leave its process group and session (``setsid``,
``nohup``, a double fork), so that signalling the group (qdel, ``h_rt``, the
end of the job) misses them, and a process whose parent ended is taken in by
init, out of reach of the job's accounting. So:

- A shepherd running as root puts the task (its job, and the processes it
  forks for the task: file transfer and its plugins, prolog, epilog, PE
  procedures) in a cgroup of its own in the kernel's cgroup v2 hierarchy (``Tracker``: ``gridtools/<name>`` under where
  cgroup2 is mounted, which needs no controller), which no process of the job
  can leave. When the job's own process has ended (it exited, or was killed by
  qdel, a limit or the end of its slot), ``end_all`` has the kernel kill
  every process left in it at once (``cgroup.kill``; on kernels without it
  the group is frozen first, so that none forks meanwhile), and the job's CPU
  time is the cgroup's (``cpu.stat``) when it is more than what waiting for
  the job's process counted: the time of children nobody waited for (their
  parent ignored SIGCHLD) counts too.
- In every case the shepherd is the *child subreaper* of the job's processes
  (``prctl(PR_SET_CHILD_SUBREAPER)``): one whose parent ends is re-parented to
  the shepherd instead of init, so that every process the job started stays
  among the shepherd's descendants, whatever session or group it moved to.
  Without a cgroup (a cell not run by root, no cgroup2 file system) ``end_all``
  kills the descendants it finds in /proc, round after round, until none is
  left (a chain of processes that fork and exit at once may outrun a round,
  never a cgroup). The shepherd waits for every child that ends while the job
  runs (``reap_others``), so that no process table fills with zombies.

- A task ended from outside (a forced deletion, a lost host) while its
  shepherd lives: ``kill_group`` has the kernel kill what is in the task's
  cgroup, found by the job and task numbers and the shepherd's verified pid.

What is ended is waited for: its CPU time and the other figures of its usage
are added to the job's, as Grid Engine's process data collector adds those of
the processes that carry the job's additional group id, and as HTCondor's
starter ends and counts what is left in the job's cgroup.

A job cannot leave its cgroup or the subtree by itself: only a process outside
it (a service asked to start one, such as ``at`` or a user systemd) could run
something for it, which no batch system sees either.
"""

import os
import signal

from gridtools.exec.cgroups import read_control, remove_stale, write_control

#: prctl's option that makes the calling process a subreaper of its orphaned descendants
PR_SET_CHILD_SUBREAPER = 36
#: seconds ``end_all`` goes on killing a job's descendants without a cgroup before it
#: gives up (a chain that keeps forking; the shepherd then serves no other task)
GIVE_UP_AFTER = 30.0
#: the folder of the tasks' cgroups under the cgroup2 mount
BASE = "gridtools"
#: the jobs whose leftovers ``end_all`` could not end (the shepherd then serves no other task)
STRAYS = []
#: whether this process removed the empty cgroups of shepherds that are gone
_SWEPT = []
#: the Tracker of the task this process runs (``adopt``), which the processes it forks
#: for the task enter (``join``)
_CURRENT = [None]
#: whether this process is the subreaper of its descendants (known once tried)
_SUBREAPER = []


def adopt(tracker):
    """Make ``tracker`` (or None) the task's: ``join`` enters it."""
    _CURRENT[0] = tracker


def join():
    """In a process forked for the task (a transfer's copying child, a prolog, an
    epilog, a PE procedure), before it takes another identity: enter the task's cgroup,
    so that what it starts, and leaves, ends with the task and counts for it (not while
    the task is frozen: it would stop there)."""
    if _CURRENT[0] is not None and not _CURRENT[0].frozen:
        _CURRENT[0].enter()


#: seconds ``freeze`` lets the processes of a job just sent SIGSTOP take it first
STOP_SETTLE = 0.2


def freeze(on):
    """Freeze (``on``) or thaw the task's cgroup, when it has one: a suspended job stays
    stopped whatever its processes are sent meanwhile (its owner's SIGCONT), and what
    escaped its process group is stopped with it. Before it freezes, the job's processes
    just sent SIGSTOP are given STOP_SETTLE seconds to stop (they show as stopped, "T",
    as a suspended job's processes do; one frozen first would show as sleeping). True
    when done."""
    tracker = _CURRENT[0]
    if tracker is None:
        return False
    if on:
        _settle(tracker)
    return tracker.freeze(on)


def _settle(tracker):
    """Wait (up to STOP_SETTLE seconds) until every process in ``tracker`` is stopped."""
    import time
    from gridtools.exec.jobproc import stat_fields
    until = time.monotonic() + STOP_SETTLE
    while True:
        running = False
        for pid in tracker.pids():
            try:
                running = stat_fields(pid)[0] not in (b"T", b"t", b"Z", b"X")
            except (OSError, IndexError):
                continue
            if running:
                break
        if not running or time.monotonic() > until:
            return
        time.sleep(0.005)


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
        self.stuck = False
        self.cgroup_cpu = None          # (user, system) seconds of the task's cgroup, when it has one
        self.ru_utime = self.ru_stime = 0.0
        self.ru_maxrss = 0
        for name in self.FIELDS:
            setattr(self, name, 0)

    def merge(self, other):
        """Add what ``other`` (a Usage) counted."""
        self.add(other)
        self.count += other.count - 1

    def add(self, rusage):
        self.count += 1
        self.ru_utime += rusage.ru_utime
        self.ru_stime += rusage.ru_stime
        self.ru_maxrss = max(self.ru_maxrss, rusage.ru_maxrss)
        for name in self.FIELDS:
            setattr(self, name, getattr(self, name) + getattr(rusage, name))


def end_all(tracker=None):
    """Kill every process left below this process, or in the task's cgroup
    (``tracker``), and wait for those that are its children; their usage (``Usage``).
    Children that had ended already are waited for too. ``Usage.stuck`` is true when
    some could not be ended (without a cgroup, after GIVE_UP_AFTER)."""
    import time
    usage = Usage()
    if tracker is not None:
        tracker.kill()
    if not _reap(usage, block=False):
        return usage                    # (no child: no descendant either, as this is their subreaper)
    end = time.monotonic() + GIVE_UP_AFTER
    while True:
        left = descendants(os.getpid())
        if tracker is not None:
            left |= set(tracker.pids())
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        _reap(usage, block=bool(left))
        if not left:
            return usage
        if time.monotonic() > end:
            usage.stuck = True
            return usage


def reap_others(job_pid, usage):
    """Wait for the children of this process that ended, but ``job_pid`` (left to its
    own wait); their usage added to ``usage``. A job's processes whose parent ended
    are this process's children (its subreaper): their zombies must not pile up."""
    while True:
        try:
            info = os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:
            return
        except InterruptedError:
            continue
        if info is None or info.si_pid == job_pid:
            return
        try:
            _pid, _status, rusage = os.wait4(info.si_pid, os.WNOHANG)
        except ChildProcessError:
            continue
        if _pid:
            usage.add(rusage)


class Tracker:
    """The task's cgroup in the cgroup2 hierarchy (see the module's docstring)."""

    def __init__(self, path, home):
        self.path = path
        self.home = home                # the folder of the shepherd's own cgroup
        self.frozen = False

    @classmethod
    def make(cls, name):
        """A new cgroup ``name`` for a task, or None (not root, no cgroup2 file system,
        a folder that cannot be made)."""
        if os.geteuid() != 0:
            return None
        mount = _cgroup2_mount()
        if mount is None:
            return None
        base = os.path.join(mount, BASE)
        try:
            os.makedirs(base, 0o755, exist_ok=True)
            if not _SWEPT:              # (once a process: those of shepherds killed before their end)
                _SWEPT.append(True)
                remove_stale(base, sep=".")
            path = os.path.join(base, name)
            try:
                os.mkdir(path, 0o755)
            except FileExistsError:
                pass
        except OSError:
            return None
        return cls(path, os.path.join(mount, _own_cgroup()))

    @property
    def procs_file(self):
        return os.path.join(self.path, "cgroup.procs")

    def enter(self):
        """Move this process into the cgroup (what it starts next is in it); False when
        that failed."""
        return _write(self.procs_file, str(os.getpid()))

    def leave(self):
        """Move this process back to its own cgroup."""
        return _write(os.path.join(self.home, "cgroup.procs"), str(os.getpid()))

    def pids(self):
        return [int(word) for word in read_control(self.procs_file).split() if word.isdigit()]

    def cpu(self):
        """(user, system) seconds the cgroup's processes used, from ``cpu.stat``; None
        when it cannot be read."""
        fields = dict(line.split() for line in read_control(os.path.join(self.path, "cpu.stat")).splitlines()
                      if len(line.split()) == 2)
        try:
            return int(fields["user_usec"]) / 1e6, int(fields["system_usec"]) / 1e6
        except (KeyError, ValueError):
            return None

    def freeze(self, on):
        """Freeze or thaw every process in the cgroup (``cgroup.freeze``); True when done."""
        done = _write(os.path.join(self.path, "cgroup.freeze"), "1" if on else "0")
        if done:
            self.frozen = bool(on)
        return done

    def kill(self):
        """Have the kernel kill every process in the cgroup (``cgroup.kill``), or freeze
        it and kill them where the kernel has no ``cgroup.kill``."""
        if _write(os.path.join(self.path, "cgroup.kill"), "1"):
            return
        frozen = _write(os.path.join(self.path, "cgroup.freeze"), "1")
        for pid in self.pids():
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        if frozen:
            _write(os.path.join(self.path, "cgroup.freeze"), "0")

    def remove(self):
        """Remove the emptied cgroup (its last processes may take a moment to go)."""
        import time
        for _ in range(200):
            try:
                os.rmdir(self.path)
                return True
            except FileNotFoundError:
                return True
            except OSError:
                if self.pids():
                    self.kill()
                time.sleep(0.005)
        return False


def group_name(job_id, number, shepherd):
    """The name of the cgroup of task ``number`` of job ``job_id`` whose shepherd has the
    pid ``shepherd`` (the shepherd makes it: ``Tracker.make``)."""
    return f"{int(job_id)}.{int(number)}.{int(shepherd)}"


def kill_group(job_id, number, shepherd):
    """From outside the task (its forced end): have the kernel kill every process in the
    cgroup of the task whose live, verified shepherd has the pid ``shepherd``, or freeze
    the cgroup and kill them where the kernel has no ``cgroup.kill``. False when the task
    has no such cgroup (a cell not run by root, no cgroup2 file system, a cgroup removed).

    The path is made of the cgroup2 mount this process sees and of numbers alone, and is
    walked without following a link; each folder on it must be root's and on the
    mount's file system, so that nothing a user could have made is written to."""
    mount = _cgroup2_mount()
    if mount is None:
        return False
    fds = []
    try:
        fds.append(os.open(mount, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC))
        device = os.fstat(fds[0]).st_dev
        for name in (BASE, group_name(job_id, number, shepherd)):
            fds.append(os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC,
                               dir_fd=fds[-1]))
            st = os.fstat(fds[-1])
            if st.st_uid != 0 or st.st_dev != device:
                return False
        _kill_in(fds[-1])
        return True
    except OSError:
        return False
    finally:
        for fd in fds:
            os.close(fd)


def _kill_in(folder):
    """``Tracker.kill`` for the cgroup whose folder is open as ``folder``."""
    if _write_at(folder, "cgroup.kill", "1"):
        return
    frozen = _write_at(folder, "cgroup.freeze", "1")
    try:
        fd = os.open("cgroup.procs", os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=folder)
        try:
            words = os.read(fd, 1 << 20).split()
        finally:
            os.close(fd)
    except OSError:
        words = []
    for word in words:
        if word.isdigit():
            try:
                os.kill(int(word), signal.SIGKILL)
            except OSError:
                pass
    if frozen:
        _write_at(folder, "cgroup.freeze", "0")


def _write_at(folder, name, text):
    """Write ``text`` into the control file ``name`` of the cgroup folder open as
    ``folder``; False when it could not."""
    try:
        fd = os.open(name, os.O_WRONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=folder)
    except OSError:
        return False
    try:
        os.write(fd, text.encode())
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


def _write(path, text):
    """``cgroups.write_control``: True when it wrote, False when it could not."""
    try:
        write_control(path, text)
        return True
    except OSError:
        return False


def _cgroup2_mount(mounts="/proc/self/mounts"):
    """Where the cgroup2 file system is mounted, or None."""
    try:
        with open(mounts, encoding="utf-8", errors="replace") as fh:
            for line in fh:
                fields = line.split()
                if len(fields) > 2 and fields[2] == "cgroup2":
                    return fields[1].replace("\\040", " ")
    except OSError:
        pass
    return None


def _own_cgroup():
    """This process's cgroup in the cgroup2 hierarchy (relative to its mount)."""
    try:
        with open("/proc/self/cgroup", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if line.startswith("0::"):
                    return line[3:].strip().lstrip("/")
    except OSError:
        pass
    return ""


def _reap(usage, block):
    """Wait for the children that ended (with ``block``, for one at least when some
    are left); their usage added to ``usage``. True when some are still running."""
    flags = 0 if block else os.WNOHANG
    while True:
        try:
            pid, _status, rusage = os.wait4(-1, flags)
        except ChildProcessError:
            return False
        except InterruptedError:
            continue
        if pid == 0:
            return True
        usage.add(rusage)
        flags = os.WNOHANG
