"""What a running job uses, sampled, and the wall-clock deadlines it meets.

``UsageMonitor`` samples the job's processes (all the shepherd's descendants when the
job is its child: ``exec.leftovers``) for CPU time and memory, more and more seldom,
and holds an HTCondor job to its memory limit where no cgroup does; ``Timers`` keeps
its s_rt, h_rt and notify deadlines.
"""

import os
import time


class Timers:
    """Wall-clock deadlines of a running job: s_rt, h_rt and the notify grace."""

    def __init__(self, start, limits, notify):
        self.pending = {}
        for name in ("s_rt", "h_rt"):
            value = limits.get(name)
            if value is not None and value != float("inf"):
                self.pending[name] = start + float(value)

    def next_due(self):
        return min(self.pending.values(), default=time.time() + 3600)

    def due(self, now):
        fired = [name for name, at in self.pending.items() if at <= now]
        for name in fired:
            del self.pending[name]
        return fired


#: the longest wait between two samples of a job held to a memory limit (seconds)
LIMITED_EVERY = 0.5


class UsageMonitor:
    """Samples the job's process tree for CPU time, virtual memory (the most of it, and its
    resident part's), and integral memory usage, more and more seldom (every 0.2 s at
    first, at last every 5 s). With a ``folder`` (an HTCondor job's scratch folder) and
    ``measure`` ((first, then every), seconds), it measures the folder too, as
    HTCondor's starter does for its updates: at the first sample ``first`` seconds
    after the start, then every ``every`` seconds (``disk``: its KiB, rounded up;
    ``files``: its entries; ``tmpdir.folder_usage``). With a ``limit`` (bytes: an HTCondor
    job's memory limit, ``daemon.jobside.memory_limit``) it samples at least every
    LIMITED_EVERY seconds, and ``over`` is the resident memory of the first sample
    that went over it (else 0); ``often``, as often without a limit of its own (the
    kernel holds the job to its limit, and the shepherd looks at its cgroup then)."""

    def __init__(self, pid, folder=None, measure=None, limit=None, often=False):
        self.pid = pid
        self.limit, self.over = limit or 0, 0
        self.longest = LIMITED_EVERY if limit or often else 5.0
        self.last = time.time()
        self.interval = 0.2
        self.next_at = self.last + self.interval
        self.folder = folder if measure else None
        self.measure = measure
        self.measure_at = self.last + float(measure[0]) if self.folder else None

    def next_due(self):
        return self.next_at

    def sample(self, usage, final=False):
        """Add a sample to ``usage`` when one is due; True when it took a running one."""
        now = time.time()
        if now < self.next_at and not final:
            return False
        if not final:
            vmem, rss, cpu = _tree_usage(self.pid)
            usage["maxvmem"] = max(usage.get("maxvmem", 0), vmem)
            usage["maxrss"] = max(usage.get("maxrss", 0), rss)
            usage["vmem"] = vmem
            usage["mem"] = usage.get("mem", 0.0) + vmem / 1024 ** 3 * (now - self.last)
            usage["cpu"] = max(usage.get("cpu", 0.0), cpu)
            if self.limit and rss > self.limit and not self.over:
                self.over = rss
            if self.measure_at is not None and now >= self.measure_at:
                from gridtools.exec.tmpdir import folder_usage
                usage["disk"], usage["files"] = folder_usage(self.folder)
                self.measure_at = now + max(float(self.measure[1]), 1.0)
        self.last = now
        self.interval = min(self.interval * 2, self.longest)
        self.next_at = now + self.interval
        return not final


def _tree_usage(pid):
    """(virtual memory bytes, resident memory bytes, CPU seconds) of the job's process
    tree: its live processes' own memory and times, and what their ended children used.
    When the job is this process's child, the tree is all this process's descendants:
    the job's processes whose parent ended were taken in by it (``exec.leftovers``)."""
    import psutil
    try:
        proc = psutil.Process(pid)
        if proc.ppid() == os.getpid():
            procs = psutil.Process().children(recursive=True)
        else:
            procs = [proc] + proc.children(recursive=True)
    except psutil.Error:
        return 0, 0, 0.0
    vmem, rss, cpu = 0, 0, 0.0
    for p in procs:
        try:
            with p.oneshot():
                memory = p.memory_info()
                vmem, rss = vmem + memory.vms, rss + memory.rss
                times = p.cpu_times()
                cpu += times.user + times.system + times.children_user + times.children_system
        except psutil.Error:
            pass
    return vmem, rss, cpu
