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
  set).

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

Not done: ``CONDITION``, ``METRICS`` (custom machine resource monitors),
``JOB_LOAD`` and ``STARTD_CRON_MAX_JOB_LOAD`` (every job runs when due),
``RECONFIG`` (no SIGHUP on reconfiguration), ``STARTD_CRON_LOG_NON_ZERO_EXIT``.
"""

import itertools
import os
import re
import time

from gridtools.exec.piped import Piped

MODES = {"periodic": "Periodic", "waitforexit": "WaitForExit", "oneshot": "OneShot", "ondemand": "OnDemand"}
#: attributes of a cron ad never merged into a slot's ad
NOT_MERGED = frozenset({"name", "slotid", "slotmergeconstraint", "slotname", "slottypeid"})
_PERIOD = re.compile(r"\s*([+-]?\d+)(.?)", re.S)
_PREFIX = re.compile(r"[A-Za-z0-9_]*\Z")
#: lines one ad may have (the rest are dropped)
MOST_LINES = 10000


def job_names(conf):
    """The job names of STARTD_CRON_JOBLIST (commas or blanks between them), once each."""
    return list(dict.fromkeys((conf.get("STARTD_CRON_JOBLIST") or "").replace(",", " ").split()))


class Params:
    """A job's settings (see the module docstring); ``problem`` says why it cannot run."""

    def __init__(self, host, name, conf):
        self.host, self.name = host, name

        def knob(what):
            value = conf.get(f"STARTD_CRON_{name}_{what}")
            return value.strip() if isinstance(value, str) else ("" if value is None else str(value))

        self.executable, self.cwd, self.prefix = knob("EXECUTABLE"), knob("CWD"), knob("PREFIX")
        self.mode = MODES.get(knob("MODE").lower(), None if knob("MODE") else "Periodic")
        self.kill = _truth(knob("KILL"))
        self.rerun = _truth(knob("RECONFIG_RERUN"))
        self.slots = _slots(knob("SLOTS"))
        self.period, self.problem = 0, None
        self.args, self.env = [], {}
        if not self.executable:
            self.problem = "no EXECUTABLE"
        elif self.mode is None:
            self.problem = f"unknown MODE {knob('MODE')}"
        elif not _PREFIX.match(self.prefix):
            self.problem = f"PREFIX {self.prefix} is not letters, digits and _"
        elif self.mode in ("Periodic", "WaitForExit"):
            self.period, self.problem = _period(knob("PERIOD"))
        if self.problem is None:
            self._args_env(knob("ARGS"), knob("ENV"))
        self.key = (self.executable, tuple(self.args), tuple(sorted(self.env.items())), self.cwd, self.mode,
                    self.period, self.prefix, self.kill, self.rerun, self.slots)

    def _args_env(self, args, env):
        from gridtools.errors import InputError
        from gridtools.formats.condor import argsenv
        try:
            if args:
                if argsenv.is_new_syntax(args):
                    self.args = argsenv.split_new(args)
                else:
                    self.args = argsenv.split_old_args(args)
            if env:
                self.env = argsenv.parse_environment(env)
        except InputError as exc:
            self.problem = str(exc).splitlines()[0]


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

    def schedule_first(self, now):
        self.due = None if self.params.mode == "OnDemand" else now

    def tick(self, now):
        """Start the run that is due; the next time this job wants a look."""
        p = self.params
        if self.piped is not None and self.piped.ended:
            self.piped = None       # (its output ended: the run is over, whatever still runs of it)
        if self.due is not None and now >= self.due:
            if self.piped is not None:
                if p.mode == "Periodic" and p.kill:
                    self._finish(kill=True)
                    self._start(now)
                elif p.mode == "Periodic":
                    self.due = now + p.period       # (the last run goes on: this one is skipped)
            else:
                self._start(now)
        return self.due

    def _start(self, now):
        p = self.params
        env = dict(os.environ, STARTD_CRON_NAME="STARTD", **p.env)
        self._lines = []
        self.due = now + p.period if p.mode == "Periodic" else None
        try:
            self.piped = Piped([p.name] + p.args, executable=p.executable, env=env, cwd=p.cwd or None)
        except (OSError, ValueError) as exc:
            self.piped = None
            self.log(f"E|startd cron job {p.name} of host {p.host} not started: {exc}")
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
                self.log(f"W|startd cron job {self.params.name} of host {self.params.host}: "
                         f"line {line[:100]!r} left out: {exc}")
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
            self.piped = None


class CronJobs:
    """The startd cron jobs of the dispatcher's hosts, by (host, job name)."""

    def __init__(self, log=None):
        self.log = log or (lambda text: None)
        self.jobs = {}
        self.ranks = itertools.count()

    def configure(self, wanted, now):
        """Run the jobs of ``wanted`` ((host, name, condor_config)); stop the others (their
        ads go). A job whose settings changed starts anew."""
        seen = set()
        for host, name, conf in wanted:
            params = Params(host, name, conf)
            key = (host, name)
            seen.add(key)
            job = self.jobs.get(key)
            if job is not None and job.params.key == params.key:
                continue
            if job is not None:
                job._finish(kill=True)
                self.jobs.pop(key)
            if params.problem is not None:
                self.log(f"W|startd cron job {name} of host {host} left out: {params.problem}")
                continue
            job = self.jobs[key] = CronJob(params, self.log, self.ranks)
            job.schedule_first(now)
        for key in [key for key in self.jobs if key not in seen]:
            self.jobs.pop(key)._finish(kill=True)

    def reconfigured(self, now):
        for job in self.jobs.values():
            if job.params.mode == "OneShot" and job.params.rerun and job.piped is None:
                job.due = now

    def tick(self, now):
        wakes = [job.tick(now) for job in self.jobs.values()]
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
