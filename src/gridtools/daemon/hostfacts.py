"""What the daemon knows of an execution host when it builds the host's slot ads.

- Cpus: the slots of the host's queue instances (each cluster queue on the
  host adds its ``slots``), or ``NUM_CPUS`` of the host's condor_config.
- Memory: the host's ``mem_total`` load value in MB, or ``MEMORY``.
- Disk: free space (KB) of the file system the spool is on.
- LoadAvg: the host's ``load_avg``; CondorLoadAvg: the part of it that jobs
  of the cell make, counted as one per busy CPU of the host at most.
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


class Facts:
    """Facts of every host, with what is costly to measure remembered a little while."""

    def __init__(self, log=None):
        self.log = log or (lambda text: None)
        self._disk = (0.0, 0)
        self._files = {}            # path -> ((mtime, size), {name: Expr})
        self._idle = {}             # tuple of devices -> (time, seconds) within one second
        self.cron = None            # host -> its startd cron ads (daemon.probes), once the daemon runs
        self.schedd_cron = None     # () -> what the schedd cron jobs give the schedd's ad (daemon.probes)

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
        values, ``slots`` the slots of its queue instances, ``busy`` CPUs its jobs use,
        ``gpus`` the GPUs it offers, ``resources`` its other countable consumables."""
        now = time.time() if now is None else now
        devices = [d for d in (cfg.get("CONSOLE_DEVICES") or "").replace(",", " ").split() if d]
        load_avg = float(load.get("load_avg") or 0.0)
        idle = self.keyboard_idle(devices, now)
        domain = (cfg.get("UID_DOMAIN") or "").strip() or host
        facts = ads.HostFacts(
            host, cpus=max(1, _int(cfg.get("NUM_CPUS"), slots or 1)),
            memory=_int(cfg.get("MEMORY"), _mb(load.get("mem_total"))), disk=self.disk(now),
            load_avg=load_avg, condor_load_avg=min(load_avg, float(busy)), keyboard_idle=idle,
            console_idle=idle, arch=_arch(), opsys="LINUX", uid_domain=domain,
            filesystem_domain=(cfg.get("FILESYSTEM_DOMAIN") or "").strip() or domain, gpus=gpus,
            resources=resources)
        return facts, self.overlay((cfg.get("STARTD_FACTS_FILE") or "").strip())
