"""What the daemon knows of an execution host when it builds the host's slot ads.

- Cpus: the slots of the host's queue instances (each cluster queue on the
  host adds its ``slots``), or ``NUM_CPUS`` of the host's condor_config.
- Memory: the host's ``mem_total`` load value in MB, or ``MEMORY``.
- Disk: free space (KB) of the file system the spool is on.
- TotalLoadAvg: the host's 1-minute load average (``load_short``, as HTCondor's
  sysapi reads it; Grid Engine's ``load_avg`` is the 5-minute one).
  TotalCondorLoadAvg: the part of it that jobs of the cell make: the sum of
  their loads as ``JobLoads`` measures them, each the CPU time its processes
  used over the last minute per second, as HTCondor's startd measures a slot's
  CondorLoadAvg; where none was measured, one per busy CPU of the host at most.
  ``ads.machine_ads`` shares them out among the slots (LoadAvg, CondorLoadAvg).
- KeyboardIdle and ConsoleIdle: seconds since the last access of the host's
  input devices (``exec.load.idle_seconds``): the files ``CONSOLE_DEVICES``
  names (a name without ``/`` is under /dev) or, without it, every terminal
  and input device of this machine.
- ``STARTD_FACTS_FILE``: a file of ``Name = value`` lines (ClassAd syntax)
  laid over the measured values of every slot ad of the host; read again
  when it changes. Tests and site scripts set KeyboardIdle, LoadAvg or any
  custom attribute with it.
"""

import os
import platform
import shutil
import time

from gridtools import ads, cell
from gridtools.exec import load as host_load

#: seconds a measurement of free disk space is reused
DISK_EVERY = 30.0
#: seconds of a job's CPU use its measured load averages (HTCondor's startd keeps a
#: minute of samples of each slot's job)
LOAD_WINDOW = 60.0


def _mb(text):
    if text is None:
        return 0
    from gridtools.formats.values import parse_memory
    try:
        return int(parse_memory(str(text)) // (1024 * 1024))
    except Exception:  # noqa: BLE001 - a load value that does not read as memory
        return 0


def _int(text, default):
    try:
        return int(str(text).strip()) if text is not None and str(text).strip() else default
    except ValueError:
        return default


def _arch():
    machine = platform.machine().upper()
    return {"AMD64": "X86_64", "AARCH64": "AARCH64"}.get(machine, machine or "X86_64")


class JobLoads:
    """The load each running job puts on its host, as HTCondor's startd measures a
    slot's CondorLoadAvg: the CPU time the job's processes used over the last
    LOAD_WINDOW seconds (since it started, before), per second: the CPUs it kept busy.
    The daemon notes what each running job's shepherd reported as it samples them."""

    def __init__(self):
        self._runs = {}             # job "cluster.proc" -> [host, start, [(time, CPU seconds), ...]]

    def note(self, job, host, start, cpu, when):
        """Job ``job`` (started at ``start`` on ``host``) had used ``cpu`` seconds at ``when``."""
        run = self._runs.get(job)
        if run is None or run[0] != host or run[1] != start or cpu < run[2][-1][1]:
            run = self._runs[job] = [host, start, [(float(start), 0.0)]]
        samples = run[2]
        if when <= samples[-1][0]:
            return
        samples.append((float(when), float(cpu)))
        while len(samples) > 2 and samples[1][0] <= when - LOAD_WINDOW:
            del samples[0]          # (the oldest kept is the last one a window back)

    def keep(self, jobs):
        """Forget the jobs not in ``jobs`` (those no longer running)."""
        for job in [j for j in self._runs if j not in jobs]:
            del self._runs[job]

    def of(self, host):
        """job -> the CPUs it keeps busy, of the jobs measured on ``host``."""
        found = {}
        for job, (where, _start, samples) in self._runs.items():
            (began, first), (ended, last) = samples[0], samples[-1]
            if where == host and len(samples) > 1 and ended > began:
                found[job] = max(last - first, 0.0) / (ended - began)
        return found


def job_loads(busy, cpus, load_avg):
    """((job, CondorLoadAvg), ...) from ``busy`` (job -> CPUs it keeps busy) on a host of
    ``cpus`` CPUs and that load average, as HTCondor's startd scales them: by the load
    over the CPUs when the host is loaded beyond its CPUs, and none above the load."""
    scale = max(float(cpus), load_avg) / max(float(cpus), 1.0)
    return tuple((job, min(used * scale, load_avg)) for job, used in sorted(busy.items()))


class Facts:
    """Facts of every host, with what is costly to measure remembered a little while."""

    def __init__(self, log=None):
        self.log = log or (lambda text: None)
        self._disk = (0.0, 0)
        self._files = {}            # path -> ((mtime, size), {name: Expr})
        self._idle = {}             # tuple of devices -> (time, seconds) within one second
        self.cron = None            # host -> its startd cron ads (daemon.probes), once the daemon runs
        self.schedd_cron = None     # () -> what the schedd cron jobs give the schedd's ad (daemon.probes)
        self.jobs = JobLoads()      # the running jobs' measured loads (noted by daemon.loop)

    def disk(self, now):
        measured, value = self._disk
        if now - measured >= DISK_EVERY:
            try:
                value = shutil.disk_usage(cell.spool()).free // 1024
            except OSError:
                value = 0
            self._disk = (now, value)
        return value

    def keyboard_idle(self, devices, now):
        key = tuple(devices)
        found = self._idle.get(key)
        if found is None or now - found[0] >= 1.0 or now < found[0]:
            found = self._idle[key] = (now, host_load.idle_seconds(host_load.input_devices(devices), now))
        return found[1]

    def overlay(self, path):
        """``{name: Expr}`` of a STARTD_FACTS_FILE (empty when it cannot be read)."""
        if not path:
            return {}
        try:
            st = os.stat(path)
        except OSError:
            return {}
        stamp = (st.st_ino, st.st_mtime_ns, st.st_size)
        cached = self._files.get(path)
        if cached is not None and cached[0] == stamp:
            return cached[1]
        found = {}
        try:
            from gridtools.classad import parse_ad
            with open(path, encoding="utf-8", errors="replace") as fh:
                ad = parse_ad(fh.read())
            found = {name: ad.lookup(name) for name in ad}
        except Exception as exc:  # noqa: BLE001 - a broken file is reported, not fatal
            self.log(f"E|STARTD_FACTS_FILE {path} not read: {exc}")
        self._files[path] = (stamp, found)
        return found

    def of(self, host, cfg, load, slots, busy, now=None, gpus=0, resources=()):
        """(HostFacts, overlay) of ``host``: ``cfg`` its condor_config, ``load`` its load
        values, ``slots`` the slots of its queue instances, ``busy`` CPUs its jobs use
        (their load where none of them was measured: ``jobs``),
        ``gpus`` the GPUs it offers, ``resources`` its other countable consumables."""
        now = time.time() if now is None else now
        devices = [d for d in (cfg.get("CONSOLE_DEVICES") or "").replace(",", " ").split() if d]
        load_avg = ads.short_load(load)
        idle = self.keyboard_idle(devices, now)
        domain = (cfg.get("UID_DOMAIN") or "").strip() or host
        cpus = max(1, _int(cfg.get("NUM_CPUS"), slots or 1))
        measured = job_loads(self.jobs.of(host), cpus, load_avg)
        condor = min(load_avg, sum(load for _job, load in measured)) if measured else min(load_avg, float(busy))
        facts = ads.HostFacts(
            host, cpus=cpus,
            memory=_int(cfg.get("MEMORY"), _mb(load.get("mem_total"))), disk=self.disk(now),
            load_avg=load_avg, condor_load_avg=condor, keyboard_idle=idle,
            console_idle=idle, arch=_arch(), opsys="LINUX", uid_domain=domain,
            filesystem_domain=(cfg.get("FILESYSTEM_DOMAIN") or "").strip() or domain, gpus=gpus,
            resources=resources, job_loads=measured)
        return facts, self.overlay((cfg.get("STARTD_FACTS_FILE") or "").strip())
