"""The programs the dispatcher runs for the hosts its own machine serves (those no
``gridtools execd`` serves): Grid Engine's load sensors (``exec.loadsensor``)
and HTCondor's startd cron jobs (``daemon.startdcron``); and the schedd cron jobs
of the cell's condor_config (SCHEDD_CRON_JOBLIST), whose ads join the schedd's
(``schedd_attrs``).

The loop calls ``tick`` at every pass (it starts what is due and stops what
the configuration no longer names), watches ``fds`` in its wait and calls
``pump`` with the ones that are ready; ``pump`` tells whether load values
or slot ads changed, and the loop then samples the load again and
publishes. ``next_wake`` is the next time something is due. Nothing is run
while the configuration names no program.
"""

from gridtools.daemon import startdcron
from gridtools.exec import loadsensor


class Probes:
    """The load sensors and startd cron jobs of the dispatcher's hosts."""

    def __init__(self, state):
        self.state = state
        self.sensors = None         # loadsensor.LoadSensors, once a program is named
        self.cron = None            # startdcron.CronJobs, once a job is named
        self._key = None            # what the programs were last chosen from
        self._wake = None
        self.remote = {}            # host an execd serves -> (its report's cron rows, their CronAds)

    def tick(self, now, hosts):
        """Start and stop programs for ``hosts`` (the hosts this machine serves), ask for
        the load reports due and start the cron runs due."""
        self._configure(now, hosts)
        wakes = []
        if self.sensors is not None:
            wakes.append(self.sensors.tick(now, self._report_every))
        if self.cron is not None:
            wakes.append(self.cron.tick(now, self._machine_ad))
        wakes = [at for at in wakes if at is not None]
        self._wake = min(wakes) if wakes else None

    def _configure(self, now, hosts):
        condor = self.state.condor.conf
        key = (self.state.config_generation, condor.generation, tuple(hosts))
        if key == self._key:
            return
        reread = self._key is not None and self._key[1] != condor.generation
        self._key = key
        wanted = [(host, program) for host in hosts for program in loadsensor.programs_of(self.state.config, host)]
        if wanted or self.sensors is not None:
            if self.sensors is None:
                self.sensors = loadsensor.LoadSensors(self.state.log)
            self.sensors.configure(wanted, now)
        jobs = _cron_jobs(condor, hosts)
        if jobs or self.cron is not None:
            if self.cron is None:
                self.cron = startdcron.CronJobs(self.state.log)
            self.cron.configure(jobs, now)
            if reread:
                self.cron.reconfigured(now)

    def _machine_ad(self, host):
        """The ad a startd cron job's CONDITION is evaluated in: the host's first slot ad,
        as the last pass made it (None before the first pass); a schedd cron job's, the
        schedd's ad."""
        if host == startdcron.SCHEDD:
            from gridtools.daemon.intake import schedd_ad
            return schedd_ad(self.state)
        ctx = self.state.condor.ctx
        if ctx is None:
            return None
        try:
            found = ctx.host_ads(host)
        except (KeyError, ValueError):
            return None
        return next(iter(found.values()), None) if found else None

    def _report_every(self, host):
        from gridtools.daemon import hostreport
        return max(1.0, hostreport.setting(self.state.config, host, "load_report_time"))

    def next_wake(self):
        return self._wake

    def fds(self):
        found = list(self.sensors.fds()) if self.sensors is not None else []
        if self.cron is not None:
            found += self.cron.fds()
        return found

    def pump(self, ready=None):
        """Read what the programs wrote: (load values changed, slot ads changed)."""
        loads = self.sensors.pump(ready) if self.sensors is not None else False
        ads = self.cron.pump(ready) if self.cron is not None else False
        return loads, ads

    def load_values(self):
        """host -> {name: value} the load sensors reported (``global`` included)."""
        return self.sensors.values() if self.sensors is not None else {}

    def cron_ads(self, host):
        """The startd cron ads of ``host`` (``startdcron.CronAd``), in the order to merge them:
        those of the cron jobs run here, or those the execution daemon serving the host
        reported."""
        if host in self.remote:
            return self.remote[host][1]
        return self.cron.ads(host) if self.cron is not None else []

    def schedd_attrs(self):
        """[(name, Expr)] the schedd cron jobs' ads give the schedd's ad, in the order
        they merge."""
        found = {}
        for ad in self.cron.ads(startdcron.SCHEDD) if self.cron is not None else ():
            for name, expr in ad.merged():
                found[name] = expr
        return list(found.items())

    def reported(self, host, rows):
        """The cron ad rows of the load report of ``host``'s execution daemon (None: no
        execution daemon serves it); True when they changed."""
        if rows is None:
            return self.remote.pop(host, None) is not None
        known = self.remote.get(host)
        if known is not None and known[0] == rows:
            return False
        found = []
        for row in rows:
            try:
                found.append(startdcron.CronAd.from_row(row))
            except ValueError as exc:
                self.state.log(f"W|the load report of host {host}: {exc}")
        self.remote[host] = (rows, found)
        return True

    def stop(self):
        if self.sensors is not None:
            self.sensors.stop_all()
        if self.cron is not None:
            self.cron.stop_all()


def _cron_jobs(condor, hosts):
    """[(host, job name, configuration)] of STARTD_CRON_JOBLIST of each host's condor_config."""
    found = []
    for host in hosts:
        conf = condor.host(host)
        found += [(host, name, conf) for name in startdcron.job_names(conf)]
    if condor.main is not None:
        found += [(startdcron.SCHEDD, name, condor.main, "SCHEDD")
                  for name in startdcron.job_names(condor.main, "SCHEDD")]
    return found
