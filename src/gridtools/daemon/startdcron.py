"""HTCondor's startd cron jobs (daemon ClassAd hooks): programs whose output joins a
host's slot ads. The dispatcher runs them for the hosts of its own machine
(``daemon.probes``), an execution daemon for its host (``daemon.hostreport``,
whose load report carries the ads to the dispatcher).

Each name of ``STARTD_CRON_JOBLIST`` in a host's condor_config is a job, set
by ``STARTD_CRON_<name>_<knob>``:

- ``EXECUTABLE`` (required): the program, run as the daemon's user with the
  job's name as its argv[0] and ``ARGS`` after it (old or new argument
  syntax), with the daemon's environment, ``STARTD_CRON_NAME`` and ``ENV``
  (old or new environment syntax) and in ``CWD``;
- ``MODE``: ``Periodic`` (the default: a run every ``PERIOD``, counted from
  the start of the last), ``WaitForExit`` (run again ``PERIOD`` after a
  run ended), ``OneShot`` (once, and again on condor_reconfig when
  ``RECONFIG_RERUN`` is true) or ``OnDemand`` (never run);
- ``PERIOD``: seconds, or a number with ``s``, ``m`` or ``h`` (required
  but for OneShot and OnDemand);
- ``KILL``: when a periodic run is due and the last still runs, kill it
  and start anew (else the last goes on and this run is skipped);
- ``PREFIX``: put before every attribute name the job writes (letters,
  digits and ``_``);
- ``SLOTS``: the slot ids whose ads may take the job's output (all when not
  set);
- ``CONDITION``: a ClassAd expression; a run that is due starts only when it
  is true, evaluated in the host's machine ad (the first slot ad, as the
  dispatcher last made it; on an execution daemon's host, the ad of what the
  execution daemon measures of its host): else the run is skipped (a
  Periodic or WaitForExit job tries again a PERIOD later, a OneShot job at
  condor_reconfig when RECONFIG_RERUN);
- ``JOB_LOAD`` (default 0.01): the load the job is assumed to put on the
  host; a run that is due waits while the loads of the host's jobs that run
  and its own would exceed ``STARTD_CRON_MAX_JOB_LOAD`` (default 0.1: ten
  jobs at the default load), and starts when a run ends;
- ``RECONFIG``: on condor_reconfig a run that goes on (a WaitForExit job's)
  is sent SIGHUP.

``STARTD_CRON_LOG_NON_ZERO_EXIT``: a run that exits with a status other than
0 is logged with it, and the lines it wrote that were not taken; a run ended
by a signal is logged always. (An execution daemon's own reaping of its
children may take a run's status before it is seen: that run is not logged.)

A job that lacks what it needs, or gives an unknown mode or a period that
does not read, is left out and logged (as the startd does).

A job writes ``Name = expression`` lines. A line starting with ``-`` ends an
ad; what follows the dash may name it (a first word without a colon: the
ad is then ``<job>.<word>``) and says ``update:true|false`` (taken, no
difference here: slot ads are published at every change). The lines written
since the last dash form one more ad when the run ends. An ad replaces the
job's last ad of its name, and gets ``<PREFIX>LastUpdate``, the time it was
made. An ad is merged into a slot's ad (every attribute but Name, SlotID,
SlotMergeConstraint, SlotName and SlotTypeId) when the slot is in the job's
``SLOTS`` and the ad's first of these holds: ``SlotMergeConstraint`` is true
with the slot's ad as TARGET; the slot's Name starts with ``SlotName`` (or
``Name``); ``SlotTypeId`` is the slot's; ``SlotId`` is the slot's; none of
them is in the ad. (The prefix is put before those names too, as HTCondor
does: a job with a prefix merges into every slot of its list.) A job's ads go
when the job leaves the configuration.

The schedd cron jobs (``SCHEDD_CRON_JOBLIST`` of the cell's condor_config,
``SCHEDD_CRON_<name>_<knob>``, ``kind`` SCHEDD) are the same programs, run by the
daemon for its own host ``SCHEDD`` with ``SCHEDD_CRON_NAME``; their ads join the
schedd's (``daemon.probes``).

Not done: ``METRICS`` (custom machine resource monitors) and
``STARTD_CRON_AUTOPUBLISH`` (an ad a run writes is in the slot ads at once,
as with ``Always``).
"""

import itertools
import os
import re
import signal
import time

from gridtools.exec.piped import Piped

MODES = {"periodic": "Periodic", "waitforexit": "WaitForExit", "oneshot": "OneShot", "ondemand": "OnDemand"}
#: attributes of a cron ad never merged into a slot's ad
NOT_MERGED = frozenset({"name", "slotid", "slotmergeconstraint", "slotname", "slottypeid"})
_PERIOD = re.compile(r"\s*([+-]?\d+)(.?)", re.S)
_PREFIX = re.compile(r"[A-Za-z0-9_]*\Z")
#: lines one ad may have (the rest are dropped)
MOST_LINES = 10000


#: the host of the schedd cron jobs (``kind`` SCHEDD): the daemon's own, whose ads join the schedd's
SCHEDD = "#schedd"


def job_names(conf, kind="STARTD"):
    """The job names of STARTD_CRON_JOBLIST (SCHEDD_CRON_JOBLIST for ``kind`` SCHEDD;
    commas or blanks between them), once each."""
    return list(dict.fromkeys((conf.get(f"{kind}_CRON_JOBLIST") or "").replace(",", " ").split()))


class Params:
    """A job's settings (see the module docstring); ``problem`` says why it cannot run."""

    def __init__(self, host, name, conf, kind="STARTD"):
        self.host, self.name, self.kind = host, name, kind
        self.what = f"schedd cron job {name}" if kind == "SCHEDD" else f"startd cron job {name} of host {host}"

        def knob(what):
            value = conf.get(f"{kind}_CRON_{name}_{what}")
            return value.strip() if isinstance(value, str) else ("" if value is None else str(value))

        self.executable, self.cwd, self.prefix = knob("EXECUTABLE"), knob("CWD"), knob("PREFIX")
        self.mode = MODES.get(knob("MODE").lower(), None if knob("MODE") else "Periodic")
        self.kill = _truth(knob("KILL"))
        self.rerun = _truth(knob("RECONFIG_RERUN"))
        self.slots = _slots(knob("SLOTS"))
        self.reconfig = _truth(knob("RECONFIG"))
        self.log_exit = _truth(str(conf.get(f"{kind}_CRON_LOG_NON_ZERO_EXIT") or "").strip())
        self.condition = knob("CONDITION")
        self.period, self.problem = 0, None
        self.job_load, load_problem = _load(knob("JOB_LOAD"), 0.01, "JOB_LOAD")
        self.max_load, max_problem = _load(str(conf.get(f"{kind}_CRON_MAX_JOB_LOAD") or "").strip(), 0.1,
                                           f"{kind}_CRON_MAX_JOB_LOAD")
        self.args, self.env = [], {}
        if not self.executable:
            self.problem = "no EXECUTABLE"
        elif self.mode is None:
            self.problem = f"unknown MODE {knob('MODE')}"
        elif not _PREFIX.match(self.prefix):
            self.problem = f"PREFIX {self.prefix} is not letters, digits and _"
        elif load_problem or max_problem:
            self.problem = load_problem or max_problem
        elif self.mode in ("Periodic", "WaitForExit"):
            self.period, self.problem = _period(knob("PERIOD"))
        self.condition_expr = None      # CONDITION parsed (once)
        if self.problem is None and self.condition:
            self.condition_expr, self.problem = _condition(self.condition)
        if self.problem is None:
            self._args_env(knob("ARGS"), knob("ENV"))
        self.key = (self.executable, tuple(self.args), tuple(sorted(self.env.items())), self.cwd, self.mode,
                    self.period, self.prefix, self.kill, self.rerun, self.slots, self.reconfig, self.log_exit,
                    self.condition, self.job_load, self.max_load)

    def _args_env(self, args, env):
        from gridtools.errors import InputError
        from gridtools.formats.condor import args as syntax, argsenv
        try:
            if args:
                if syntax.is_new_syntax(args):
                    self.args = syntax.split_new(args)
                else:
                    self.args = syntax.split_old_args(args)
            if env:
                self.env = argsenv.parse_environment(env)
        except InputError as exc:
            self.problem = str(exc).splitlines()[0]


def _load(text, default, knob):
    """(the load ``text`` gives, None) or (``default``, why it does not read)."""
    if not text:
        return default, None
    try:
        value = float(text)
    except ValueError:
        return default, f"{knob} {text} is not a number"
    if not value >= 0.0:
        return default, f"{knob} {text} is not a number of 0 or more"
    return value, None


def _condition(text):
    """(the CONDITION expression, None), or (None, why it does not read)."""
    from gridtools.classad import ClassAdSyntaxError, parse
    try:
        return parse(text), None
    except ClassAdSyntaxError as exc:
        return None, f"CONDITION {text} does not read: {exc}"


def _truth(text):
    return text.lower() in ("true", "t", "yes", "y", "1")


def _slots(text):
    """The slot ids of SLOTS (None: every slot; a word that is no number voids the list)."""
    words = text.replace(",", " ").split()
    if not words or not all(word[:1].isdigit() for word in words):
        return None
    return frozenset(int(re.match(r"\d+", word).group()) for word in words)


def _period(text):
    """(seconds, None) of a PERIOD, or (0, why it does not read)."""
    if not text:
        return 0, "no PERIOD"
    found = _PERIOD.match(text)
    if found is None:
        return 0, f"PERIOD {text} does not read"
    number, unit = int(found.group(1)), found.group(2).upper() or "S"
    factor = {"S": 1, "M": 60, "H": 3600}.get(unit)
    if factor is None:
        return 0, f"PERIOD {text} has an unknown unit"
    return max(1, number * factor), None


class CronAd:
    """One ad a job published: ``attrs`` name -> Expr, in the order written."""

    def __init__(self, name, attrs, slots):
        self.name, self.attrs, self.slots = name, attrs, slots
        self.lower = {key.lower(): key for key in attrs}

    def merges_into(self, slot):
        """True when this ad joins the slot ad ``slot`` (a ClassAd)."""
        slot_id = _integer(slot.eval("SlotID"))
        if self.slots is not None and slot_id not in self.slots:
            return False
        if "slotmergeconstraint" in self.lower:
            from gridtools.classad import ClassAd
            mine = ClassAd(dict(self.attrs))
            return mine.eval(self.lower["slotmergeconstraint"], target=slot) is True
        for attr in ("slotname", "name"):
            if attr in self.lower:
                wanted = _value(self.attrs[self.lower[attr]])
                name = slot.eval("Name")
                if isinstance(wanted, str) and wanted and isinstance(name, str):
                    return name.startswith(wanted)
        for attr, slot_attr in (("slottypeid", "SlotTypeID"), ("slotid", "SlotID")):
            if attr in self.lower:
                mine, theirs = _integer(_value(self.attrs[self.lower[attr]])), _integer(slot.eval(slot_attr))
                if mine is not None and theirs is not None:
                    return mine == theirs
        return True

    def merged(self):
        """(name, Expr) of the attributes merged into a slot's ad."""
        return [(name, expr) for name, expr in self.attrs.items() if name.lower() not in NOT_MERGED]

    def row(self):
        """The ad as an execution daemon's load report carries it (JSON)."""
        from gridtools.classad import unparse
        return [self.name, sorted(self.slots) if self.slots is not None else None,
                [[name, unparse(expr)] for name, expr in self.attrs.items()]]

    @classmethod
    def from_row(cls, row):
        """The ad of a report's ``row``; ValueError when it does not read."""
        from gridtools.classad import ClassAdSyntaxError, parse
        try:
            name, slots, attrs = row
            return cls(str(name), {str(attr): parse(str(text)) for attr, text in attrs},
                       None if slots is None else frozenset(int(slot) for slot in slots))
        except (ClassAdSyntaxError, TypeError) as exc:
            raise ValueError(f"a startd cron ad that does not read: {exc}") from None


#: seconds between looks for the exit of a run whose output ended
EXIT_LOOK = 0.5


def _holds(expr, ad):
    """True when a CONDITION expression evaluates to true in ``ad`` (a ClassAd)."""
    scope = ad.copy()
    scope["GridtoolsCronCondition"] = expr
    return scope.eval("GridtoolsCronCondition") is True


def _value(expr):
    from gridtools.classad import ClassAd
    return ClassAd({"x": expr}).eval("x")


def _integer(value):
    if type(value) is int:
        return value
    if type(value) is float and value == int(value):
        return int(value)
    return None


class CronJob:
    """One job of one host: its runs and the ads they published. ``ranks`` gives each ad
    name its place among the host's ads when it is first seen: the job's own ad (named
    as the job) has its place from the job's start, the others from their first
    publication; ads merge in that order (so an ad for some slots, published after the
    job's own, wins over it there)."""

    def __init__(self, params, log, ranks):
        self.params, self.log, self.ranks = params, log, ranks
        self.piped = None
        self.due = None             # when the next run starts (None: not again)
        self.ads = {}               # ad name -> CronAd
        self.rank = {params.name: next(ranks)}
        self._lines = []
        self._changed = False
        self.waiting = False        # a run is due and waits for the host's job load to allow it
        self.exiting = []           # runs whose output ended, whose exit is still to be seen

    def schedule_first(self, now):
        self.due = None if self.params.mode == "OnDemand" else now

    def busy(self):
        """True while a run's output is open (its load counts)."""
        return self.piped is not None and not self.piped.ended

    def tick(self, now, gate=None):
        """Start the run that is due when ``gate(job)`` says "start" ("skip": not this time;
        "wait": when the host's job load allows); the next time this job wants a look."""
        p = self.params
        if self.piped is not None and self.piped.ended:
            self.exiting.append(self.piped)
            self.piped = None       # (its output ended: the run is over, whatever still runs of it)
        if self.exiting:
            self._exits()
        if self.due is not None and now >= self.due:
            if self.piped is not None:
                if p.mode == "Periodic" and p.kill:
                    self._finish(kill=True)
                    self._exits()
                    self._try(now, gate)
                elif p.mode == "Periodic":
                    self.due = now + p.period       # (the last run goes on: this one is skipped)
            else:
                self._try(now, gate)
        wake = None if self.waiting else self.due
        if self.exiting:
            wake = now + EXIT_LOOK if wake is None else min(wake, now + EXIT_LOOK)
        return wake

    def _try(self, now, gate):
        verdict = gate(self) if gate is not None else "start"
        self.waiting = verdict == "wait"
        if verdict == "skip":
            p = self.params
            self.due = now + p.period if p.mode in ("Periodic", "WaitForExit") else None
        elif verdict == "start":
            self._start(now)

    def _exits(self):
        """Log the runs that ended as STARTD_CRON_LOG_NON_ZERO_EXIT asks."""
        left = []
        for piped in self.exiting:
            try:
                code = piped.proc.poll()
            except OSError:
                code = 0
            if code is None:
                left.append(piped)
            elif code < 0:
                self.log(f"W|{self.params.what} (pid {piped.pid}) exit_signal={-code}")
            elif code > 0 and self.params.log_exit:
                self.log(f"W|{self.params.what} (pid {piped.pid}) exit_status={code}")
        self.exiting = left

    def reconfigure(self):
        """condor_reconfig: SIGHUP to a run that goes on, when RECONFIG says so."""
        if self.params.reconfig and self.busy() and self.piped.running():
            try:
                os.kill(self.piped.pid, signal.SIGHUP)
            except OSError:
                pass

    def _start(self, now):
        p = self.params
        env = dict(os.environ, **{f"{p.kind}_CRON_NAME": p.kind}, **p.env)
        self._lines = []
        self.due = now + p.period if p.mode == "Periodic" else None
        try:
            self.piped = Piped([p.name] + p.args, executable=p.executable, env=env, cwd=p.cwd or None)
        except (OSError, ValueError) as exc:
            self.piped = None
            self.log(f"E|{p.what} not started: {exc}")
            if p.mode == "WaitForExit":
                self.due = now + p.period       # (as after a run that ended)

    def fileno(self):
        return self.piped.fd if self.piped is not None and not self.piped.ended else None

    def pump(self, now):
        """Read the run's output; True when an ad was published."""
        if self.piped is None or self.piped.ended:
            return False
        self._changed = False
        for line in self.piped.lines():
            if not line:
                continue
            if line.startswith("-"):
                self._publish(line[1:].strip(), now)
            elif len(self._lines) < MOST_LINES:
                self._lines.append(self.params.prefix + line)
        if self.piped.ended:
            self._publish("", now)
            self._ended(now)
        return self._changed

    def _ended(self, now):
        self.piped.close()
        if self.params.mode == "WaitForExit":
            self.due = now + self.params.period

    def _publish(self, args, now):
        lines, self._lines = self._lines, []
        if not lines:
            return
        from gridtools.classad import ClassAdSyntaxError, parse
        attrs = {}
        for line in lines:
            name, eq, text = line.partition("=")
            name = name.strip()
            try:
                if not eq or not name or not re.match(r"[A-Za-z_][A-Za-z0-9_.]*\Z", name):
                    raise ClassAdSyntaxError("not Name = expression")
                attrs[name] = parse(text.strip())
            except (ClassAdSyntaxError, ValueError) as exc:
                self.log(f"W|{self.params.what}: line {line[:100]!r} left out: {exc}")
        if not attrs:
            return
        from gridtools.classad.nodes import Literal
        attrs[self.params.prefix + "LastUpdate"] = Literal(int(now))
        words = args.split()
        name = self.params.name
        if words and ":" not in words[0]:
            name = f"{name}.{words[0]}"
        self.ads[name] = CronAd(name, attrs, self.params.slots)
        if name not in self.rank:
            self.rank[name] = next(self.ranks)
        self._changed = True

    def _finish(self, kill=False):
        if self.piped is not None:
            if kill:
                self.piped.kill()
            else:
                self.piped.close()
            self.exiting.append(self.piped)
            self.piped = None


class CronJobs:
    """The startd cron jobs of the dispatcher's hosts, by (host, job name)."""

    def __init__(self, log=None):
        self.log = log or (lambda text: None)
        self.jobs = {}
        self.ranks = itertools.count()

    def configure(self, wanted, now):
        """Run the jobs of ``wanted`` ((host, name, condor_config[, kind])); stop the others
        (their ads go). A job whose settings changed starts anew."""
        seen = set()
        for host, name, conf, *kind in wanted:
            params = Params(host, name, conf, *kind)
            key = (host, name)
            seen.add(key)
            job = self.jobs.get(key)
            if job is not None and job.params.key == params.key:
                continue
            if job is not None:
                job._finish(kill=True)
                self.jobs.pop(key)
            if params.problem is not None:
                self.log(f"W|{params.what} left out: {params.problem}")
                continue
            job = self.jobs[key] = CronJob(params, self.log, self.ranks)
            job.schedule_first(now)
        for key in [key for key in self.jobs if key not in seen]:
            self.jobs.pop(key)._finish(kill=True)

    def reconfigured(self, now):
        for job in self.jobs.values():
            if job.params.mode == "OneShot" and job.params.rerun and job.piped is None:
                job.due = now
            job.reconfigure()

    def tick(self, now, context=None):
        """Start the runs that are due, as their CONDITION and the hosts' job loads allow
        (``context(host)``: the ad a CONDITION is evaluated in, or None while there is
        none: the run waits); the next time a job wants a look."""
        loads = {}
        for job in self.jobs.values():
            if job.busy():
                loads[job.params.host] = loads.get(job.params.host, 0.0) + job.params.job_load

        def gate(job):
            p = job.params
            if p.condition:
                ad = context(p.host) if context is not None else None
                if ad is None:
                    return "wait"
                if not _holds(p.condition_expr, ad):
                    return "skip"
            running = loads.get(p.host, 0.0)
            if running + p.job_load > p.max_load + 1e-9:
                return "wait"
            loads[p.host] = running + p.job_load
            return "start"

        order = sorted(self.jobs.values(), key=lambda job: (job.due is None, job.due or 0.0))
        wakes = [job.tick(now, gate) for job in order]
        wakes = [at for at in wakes if at is not None]
        return min(wakes) if wakes else None

    def fds(self):
        return [fd for fd in (job.fileno() for job in self.jobs.values()) if fd is not None]

    def pump(self, ready=None, now=None):
        now = time.time() if now is None else now
        changed = False
        for job in self.jobs.values():
            fd = job.fileno()
            if fd is not None and (ready is None or fd in ready):
                changed = job.pump(now) or changed
        return changed

    def ads(self, host):
        """The ads of the host's jobs, in the order they merge."""
        found = [(job.rank[name], ad) for (owner, _name), job in self.jobs.items() if owner == host
                 for name, ad in job.ads.items()]
        return [ad for _rank, ad in sorted(found, key=lambda pair: pair[0])]

    def stop_all(self):
        for job in self.jobs.values():
            job._finish(kill=True)
        self.jobs = {}
