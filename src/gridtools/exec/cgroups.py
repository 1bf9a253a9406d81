"""A job's kernel cgroup, as HTCondor's starter makes one.

A shepherd running as root whose plan asks for a cgroup
(``daemon.jobside.cgroup_plan``: an HTCondor job in a slot, or a local
universe job) puts the job in a cgroup of its own under BASE_CGROUP
(``htcondor`` by default) of the kernel's memory controller, named after its
slot and the shepherd's pid (``/sys/fs/cgroup/memory/htcondor/slot1_1_4242``
on a cgroup v1 machine, ``/sys/fs/cgroup/htcondor/slot1_1_4242`` on a v2 one),
and sets in it what the starter sets (``settings``), the limits those of the
plan's ``memory_limit`` (``daemon.jobside.memory_limit``):

- the hard limit (v1 ``memory.limit_in_bytes``, v2 ``memory.max``): the
  kernel kills a process of the job when the job's memory would go over it;
- with DISABLE_SWAP_FOR_JOB (true by default) no swap on top of it (v1
  ``memory.memsw.limit_in_bytes``, the same limit; v2 ``memory.swap.max`` 0);
- CGROUP_LOW_MEMORY_LIMIT, on v2 (``memory.low``: memory the kernel reclaims
  from the job last); v1 has no such setting;
- on v2, ``memory.oom.group`` 1: the kernel kills the whole job at once;
- its share of the CPUs, 100 per CPU of its slot: v1 ``cpu.shares`` (in a
  cgroup of the same name under the cpu controller), v2 ``cpu.weight`` (at
  most 10000), so that jobs competing for the machine's CPUs get them in
  proportion to their slots'.

The job process joins the cgroup before it becomes its owner and executes the
job, so that every process it starts is in it; the files stay root's, so the
job cannot raise its limit. The shepherd learns of the kernel's kill (v1: at
once, through an eventfd registered in ``cgroup.event_control``; v2: at each
sample of the job's usage, from ``memory.events``), kills what is left of the
job, and reports the job's peak (v1 ``memory.max_usage_in_bytes``, v2
``memory.peak``). When the job is over, whatever it left running in its cgroup
is killed and the cgroup removed, as the starter removes its own.

Where no memory controller can be written (a shepherd not root, no cgroup file
system, BASE_CGROUP's folder closed), ``make`` gives None and the shepherd
holds the job to its limit by sampling its processes instead
(``meter.UsageMonitor``).
"""

import os
import signal
import time

V1, V2 = 1, 2


def controller(mounts="/proc/self/mounts", name="memory"):
    """(version, folder) of the controller ``name`` this process can use: a cgroup v2 file
    system whose root offers it (``cgroup.controllers``), else a v1 hierarchy mounted
    with its option; None when there is neither."""
    try:
        with open(mounts, encoding="utf-8", errors="replace") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return None
    v1 = None
    for line in lines:
        fields = line.split()
        if len(fields) < 4:
            continue
        where, kind, opts = fields[1].replace("\\040", " "), fields[2], fields[3].split(",")
        if kind == "cgroup2":
            try:
                with open(os.path.join(where, "cgroup.controllers"), encoding="ascii") as fh:
                    if name in fh.read().split():
                        return V2, where
            except OSError:
                continue
        elif kind == "cgroup" and name in opts and v1 is None:
            v1 = (V1, where)
    return v1


def settings(version, limit, low=None, no_swap=True, cpus=None):
    """[(file, value)] to write in a new cgroup, in order: the hard ``limit`` (bytes, or
    None), no swap beyond it with ``no_swap``, the ``low`` limit (bytes, or None; v2
    only), on v2 one kill for the whole job, and the weight of the job's ``cpus`` (v2;
    v1's is ``cpu_settings``)."""
    out = []
    if version == V1:
        if limit:
            out.append(("memory.limit_in_bytes", str(limit)))
            if no_swap:
                out.append(("memory.memsw.limit_in_bytes", str(limit)))
        return out
    if limit:
        out.append(("memory.max", str(limit)))
        if no_swap:
            out.append(("memory.swap.max", "0"))
    if low:
        out.append(("memory.low", str(low)))
    out.append(("memory.oom.group", "1"))
    if cpus:
        out.append(("cpu.weight", str(min(100 * cpus, 10000))))
    return out


def cpu_settings(cpus):
    """[(file, value)] of a v1 cpu controller's cgroup for a job given ``cpus`` CPUs."""
    return [("cpu.shares", str(100 * cpus))] if cpus else []


def leaf_name(slot, pid):
    """The name of a job's cgroup: its slot's (``slot1_1``; ``local`` without one) and its
    shepherd's pid, slashes and dots made underscores."""
    text = f"{slot or 'local'}_{pid}"
    return "".join(c if c.isalnum() or c in "-_@" else "_" for c in text)


def write_control(path, text):
    """Write ``text`` into the control file ``path`` of a cgroup; OSError when it cannot."""
    fd = os.open(path, os.O_WRONLY | os.O_CLOEXEC)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def read_control(path):
    """What the control file ``path`` of a cgroup holds ("" when it cannot be read)."""
    try:
        with open(path, encoding="ascii", errors="replace") as fh:
            return fh.read()
    except OSError:
        return ""


def _counter(text, name):
    """The number after ``name`` on its line of a ``key value`` file; 0 when missing."""
    for line in text.splitlines():
        key, _, value = line.partition(" ")
        if key == name and value.strip().isdigit():
            return int(value)
    return 0


class Cgroup:
    """A job's cgroup (``make``): ``path``, the folder; ``version``, 1 or 2."""

    def __init__(self, version, path, others=()):
        self.version, self.path = version, path
        self.others = list(others)      # (v1: the job's cgroups under other controllers)
        self.efd = None

    @property
    def procs_file(self):
        return os.path.join(self.path, "cgroup.procs")

    @property
    def procs_files(self):
        """The ``cgroup.procs`` files a job process writes itself into (``join``)."""
        return [self.procs_file] + [os.path.join(other, "cgroup.procs") for other in self.others]

    def pids(self):
        return [int(word) for word in read_control(self.procs_file).split() if word.isdigit()]

    def oom_kills(self):
        """How many processes of the job the kernel killed for its memory."""
        if self.version == V1:
            return _counter(read_control(os.path.join(self.path, "memory.oom_control")), "oom_kill")
        return _counter(read_control(os.path.join(self.path, "memory.events")), "oom_kill")

    def peak(self):
        """The most memory the job used (bytes), 0 when the kernel does not say."""
        name = "memory.max_usage_in_bytes" if self.version == V1 else "memory.peak"
        text = read_control(os.path.join(self.path, name)).strip()
        return int(text) if text.isdigit() else 0

    def oom_events(self):
        """An eventfd the kernel counts the cgroup's OOM kills in (v1), to wait on with the
        job's other events; None on v2 or when it cannot be registered."""
        if self.version != V1 or self.efd is not None:
            return self.efd
        efd = ofd = None
        try:
            efd = os.eventfd(0, os.EFD_CLOEXEC | os.EFD_NONBLOCK)
            ofd = os.open(os.path.join(self.path, "memory.oom_control"), os.O_RDONLY | os.O_CLOEXEC)
            write_control(os.path.join(self.path, "cgroup.event_control"), f"{efd} {ofd}")
            self.efd = efd
        except OSError:
            if efd is not None:
                os.close(efd)
        finally:
            if ofd is not None:
                os.close(ofd)
        return self.efd

    def drain(self):
        """Empty the eventfd after it woke its reader."""
        try:
            os.eventfd_read(self.efd)
        except (OSError, TypeError):
            pass

    def kill_all(self, rounds=100):
        """SIGKILL every process left in the cgroup until none is (False if some stay)."""
        for _ in range(rounds):
            left = self.pids()
            if not left:
                return True
            for pid in left:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            time.sleep(0.01)
        return not self.pids()

    def remove(self):
        """Kill what the job left in the cgroup and remove it; True when it is gone."""
        if self.efd is not None:
            os.close(self.efd)
            self.efd = None
        self.kill_all()
        gone = True
        for path in self.others + [self.path]:
            gone = _rmdir(path) and gone
        return gone


def _rmdir(path):
    """Remove an emptied cgroup (its last processes may take a moment to leave)."""
    for _ in range(50):
        try:
            os.rmdir(path)
            return True
        except FileNotFoundError:
            return True
        except OSError:
            time.sleep(0.01)
    return False


def make(base, name, limit, low=None, no_swap=True, found=None, cpus=None):
    """The cgroup ``name`` made under ``base`` of the memory controller (``found``: its
    (version, folder), ``controller()`` when not given) with the ``settings`` of
    ``limit``, ``low``, ``no_swap`` and ``cpus``; None when it cannot be made (not root,
    no controller, an empty ``base``, a folder that cannot be written, a hard limit the
    kernel refuses). A swap limit or CPU weight the kernel refuses (no swap accounting,
    no cpu controller) is left unset; on v1 the CPUs' share is set in a cgroup of the
    same name under the cpu controller, when there is one. Empty cgroups of shepherds
    that are gone, beside it, go."""
    if not base or os.geteuid() != 0:
        return None
    found = found or controller()
    if found is None:
        return None
    version, root = found
    parts = [p for p in base.split("/") if p and p not in (".", "..")]
    if not parts:
        return None
    try:
        path = _leaf(root, parts, name, ("memory", "cpu") if version == V2 else ())
    except OSError:
        return None
    others = []
    if version == V1 and cpus:
        cpu = controller(name="cpu")
        if cpu is not None and cpu[0] == V1 and cpu[1] != root:
            try:
                others.append(_leaf(cpu[1], parts, name, ()))
            except OSError:
                pass
    group = Cgroup(version, path, others)
    for file_name, value in settings(version, limit, low, no_swap, cpus):
        try:
            write_control(os.path.join(path, file_name), value)
        except OSError:
            if file_name in ("memory.limit_in_bytes", "memory.max"):
                group.remove()
                return None
    for other in others:
        for file_name, value in cpu_settings(cpus):
            try:
                write_control(os.path.join(other, file_name), value)
            except OSError:
                pass
    return group


def _leaf(root, parts, name, enabled):
    """Make ``root``/``parts``.../``name`` (the folders between kept, empty cgroups of
    gone shepherds in the last removed); on v2 each folder above it lets its children
    have the controllers ``enabled`` (the memory controller must be had)."""
    folder = root
    _enable(folder, enabled)
    for part in parts:
        folder = os.path.join(folder, part)
        try:
            os.mkdir(folder, 0o755)
        except FileExistsError:
            pass
        _enable(folder, enabled)
    remove_stale(folder)
    path = os.path.join(folder, name)
    os.mkdir(path, 0o755)
    return path


def _enable(folder, names):
    """v2: let the children of ``folder`` have the controllers ``names`` (only the first
    must be had; the others are asked for when offered)."""
    control = os.path.join(folder, "cgroup.subtree_control")
    had = read_control(control).split()
    for i, name in enumerate(names):
        if name in had:
            continue
        try:
            write_control(control, "+" + name)
        except OSError:
            if i == 0:
                raise


def remove_stale(folder, sep="_"):
    """Remove the empty cgroups in ``folder`` whose shepherd (the pid their name ends
    with, after ``sep``) is gone; a cgroup that still holds a process cannot be removed."""
    try:
        names = os.listdir(folder)
    except OSError:
        return
    for name in names:
        pid = name.rpartition(sep)[2]
        if not pid.isdigit() or os.path.exists(f"/proc/{pid}"):
            continue
        path = os.path.join(folder, name)
        if os.path.isdir(path) and not read_control(os.path.join(path, "cgroup.procs")).split():
            try:
                os.rmdir(path)
            except OSError:
                pass


def join(procs_files):
    """In a job process not yet its owner: enter the cgroups whose ``cgroup.procs`` are
    ``procs_files``; False when that failed for one."""
    done = True
    for path in procs_files:
        try:
            write_control(path, str(os.getpid()))
        except OSError:
            done = False
    return done
