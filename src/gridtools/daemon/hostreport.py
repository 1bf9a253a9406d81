"""Load reports of execution daemons (``gridtools execd --host NAME``).

An execution daemon samples the load of the machine it runs on (``exec.load``)
every ``load_report_time`` of its host's configuration (sge_conf(5)) and
writes it to ``spool/execd/NAME/load``: the time of the sample and its values
(with its load sensors' values; what they gave for other hosts and for
``global`` under ``hosts``), the ads of its startd cron jobs
(``daemon.startdcron``; written again at once when a run published one), and,
when the host's condor_config names any, what the pool's file transfer plugins
offer on it (``exec.poolplugins``, asked there), as JSON. The dispatcher takes a host's load values from its report, so that
each machine of a cluster shows its own load. A host whose execution daemon
holds its lock but has reported before and not for longer than
``max_unheard`` counts as unknown, like one whose daemon went away.
"""

import json
import sys
import time

from gridtools.errors import GridError
from gridtools.formats import values
from gridtools.spool import files

#: the report's file in the host's execd folder
REPORT = "load"


def path(host):
    from gridtools.daemon.execd import host_dir
    return host_dir(host, REPORT)


def write(host, sample=None, now=None, cron=None, others=None, plugins=None):
    """Write the host's report (``sample``: load values, this machine's by default;
    ``cron``: the rows of its startd cron ads, ``startdcron.CronAd.row``; ``others``:
    the values its load sensors gave for other hosts and ``global``, by host;
    ``plugins``: ``poolplugins.PoolPlugins.row``)."""
    if sample is None:
        from gridtools.exec import load
        sample = load.sample()
    report = {"time": time.time() if now is None else now, "values": sample}
    if cron:
        report["cron"] = cron
    if others:
        report["hosts"] = others
    if plugins is not None:
        report["plugins"] = plugins
    files.atomic_write(path(host), json.dumps(report), fsync=False)


def read(host):
    """(time, load values, startd cron ad rows, values of other hosts by host, the pool
    plugins' row or None) of the host's last report, or None without a readable one."""
    try:
        with open(path(host), encoding="utf-8") as fh:
            data = json.loads(fh.read(1 << 20))
        cron = data.get("cron") or []
        others = data.get("hosts") or {}
        others = {str(h): dict(v) for h, v in others.items()} if isinstance(others, dict) else {}
        plugins = data.get("plugins")
        return float(data["time"]), dict(data["values"]), cron if isinstance(cron, list) else [], others, \
            plugins if isinstance(plugins, dict) else None
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def setting(conf, host, name):
    """Seconds of the time attribute ``name`` of sge_conf(5) (load_report_time,
    max_unheard, reschedule_unknown) for ``host``: its own configuration's, else the
    global one's, else the format's default."""
    for which in (host, "global"):
        value = (conf.objects["conf"].get(which) or {}).get(name)
        if value is not None and str(value).strip():
            try:
                return float(values.parse_time(str(value)))
            except (GridError, ValueError):
                continue
    from gridtools.formats.sge.conf import SCHEMA
    return float(values.parse_time(str(SCHEMA.by_name[name].default)))


def unheard(conf, host, heard, now):
    """True when the host's execution daemon, last heard at ``heard`` (None: it has not
    reported yet), has not reported for longer than its max_unheard."""
    return heard is not None and now - heard > setting(conf, host, "max_unheard")


class Reporter:
    """The execution daemon's side: a report now and then every load_report_time, with
    the values of the host's load sensors (``exec.loadsensor``: those named by the
    host's ``load_sensor``, else the global one's), each from the sensor's last
    complete report: those for the host itself among its values, those for other hosts
    and for ``global`` beside them (``hosts``), for the dispatcher to pass on."""

    def __init__(self, host):
        self.host = host
        self.due = 0.0
        self.sensors = None
        self.cron = None            # startdcron.CronJobs, once the host's configuration names one
        self.sample = None          # the load values last reported
        self.others = {}            # what its load sensors reported of other hosts and ``global``
        self._cron_wake = None
        self._facts = None          # hostfacts.Facts, once a CONDITION asks for the machine ad
        self._condor = (None, None)     # (the condor_config files' stamp, the host's reading)
        self.plugins = None         # what the pool's plugins offer here (PoolPlugins.row), when configured

    def tick(self, now):
        """Report when due, start the cron runs due; the seconds until the next of them."""
        if now >= self.due:
            conf = self._conf()
            self._sense(conf, now)
            self._configure_cron(now)
            from gridtools.exec import load
            self.sample = load.sample()
            self.others = {}
            if self.sensors is not None:
                self.sensors.pump()
                sensed = self.sensors.values()
                own = sensed.get(self.host)
                if own:
                    self.sample = {**self.sample, **own}
                self.others = {host: values for host, values in sensed.items() if host != self.host}
            self._write(now)
            every = max(1.0, setting(conf, self.host, "load_report_time"))
            if self.sensors is not None:
                self.sensors.tick(now, lambda _host: every)
            self.due = now + every
        self._cron_wake = self.cron.tick(now, self._machine_ad) if self.cron is not None else None
        wake = self.due if self._cron_wake is None else min(self.due, self._cron_wake)
        return max(0.0, wake - now)

    def _write(self, now):
        cron = [ad.row() for ad in self.cron.ads(self.host)] if self.cron is not None else None
        try:
            write(self.host, self.sample, now=now, cron=cron, others=self.others, plugins=self.plugins)
        except GridError as exc:
            sys.stderr.write(f"gridtools execd: cannot write the load report: {exc}\n")

    def fds(self):
        """The descriptors of the cron runs' output."""
        return self.cron.fds() if self.cron is not None else []

    def ready(self, ready, now):
        """Read the cron runs whose output is ``ready``; report at once when an ad changed."""
        if self.cron is not None and self.cron.pump(set(ready), now=now):
            self._write(now)

    def _machine_ad(self, host):
        """The ad a startd cron job's CONDITION is evaluated in: the host's machine ad made
        of what this daemon measures (its first slot ad, NUM_CPUS or this machine's CPUs)."""
        reading = self._condor[1]
        if reading is None:
            return None
        import os
        from gridtools import ads
        from gridtools.daemon import hostfacts
        if self._facts is None:
            self._facts = hostfacts.Facts()
        facts, overlay = self._facts.of(host, reading, self.sample or {}, os.cpu_count() or 1, 0)
        built = ads.machine_ads(facts, reading, time.time())
        if not built:
            return None
        ad = built[0]
        for name, expr in overlay.items():
            ad[name] = expr
        return ad

    def _configure_cron(self, now):
        """Start and stop the host's startd cron jobs as its condor_config names them (read
        as the host reads it; again when a file of it changed)."""
        from gridtools.daemon import condorconf, startdcron
        if self._condor[1] is None or condorconf.stamp(self._condor[1]) != self._condor[0]:
            try:
                reading = condorconf.read_for(self.host)
            except Exception as exc:  # noqa: BLE001 - a broken file keeps the jobs as they are
                sys.stderr.write(f"gridtools execd: condor_config not read: {exc}\n")
                return
            self._condor = (condorconf.stamp(reading), reading)
            self._ask_plugins(reading)
        reading = self._condor[1]
        names = startdcron.job_names(reading)
        if names or self.cron is not None:
            if self.cron is None:
                self.cron = startdcron.CronJobs(lambda line: sys.stderr.write(f"gridtools execd: {line}\n"))
            self.cron.configure([(self.host, name, reading) for name in names], now)

    def _ask_plugins(self, reading):
        """Ask the pool's file transfer plugins the host's condor_config names what they
        offer (``exec.poolplugins``), for the next reports."""
        from gridtools.exec import poolplugins
        if not poolplugins.configured(reading):
            self.plugins = None
            return
        found = poolplugins.query(reading)
        for line in found.problems:
            sys.stderr.write(f"gridtools execd: {line}\n")
        self.plugins = found.row()

    def _conf(self):
        from gridtools.spool import config as confstore
        try:
            return confstore.load(on_error=lambda *_args: None)
        except GridError:
            return confstore.CellConfig()

    def _sense(self, conf, now):
        """Start and stop the host's load sensors as its configuration names them."""
        from gridtools.exec import loadsensor
        wanted = [(self.host, program) for program in loadsensor.programs_of(conf, self.host)]
        if wanted or self.sensors is not None:
            if self.sensors is None:
                self.sensors = loadsensor.LoadSensors(lambda line: sys.stderr.write(f"gridtools execd: {line}\n"))
            self.sensors.configure(wanted, now)

    def stop(self):
        if self.sensors is not None:
            self.sensors.stop_all()
        if self.cron is not None:
            self.cron.stop_all()
