"""Usage decayed with a half-life: what the share tree remembers of past work.

Jobs report what they have used so far (CPU seconds, memory integral,
I/O); the ledger adds what grew since the last report to the accounts of
the job's owner and project, after decaying each account to the time of
the report. A job submitted under a project is counted for the project and
for its user *within* that project; a job without a project for the user.
This is how Grid Engine keeps usage, and how the share tree reads it back
(a user leaf under a project node weighs the user's usage in that project).

Decay is Grid Engine's: a half-life of ``h`` minutes gives the per-minute
decay constant ``c = 1 - ln 2 / h`` (Grid Engine's usage interval is one
minute), and an account holding ``u`` at time ``t0`` holds
``u * c ** ((t - t0) / 60)`` at time ``t`` (seconds). For long half-lives
this is the exponential ``0.5 ** ((t - t0) / half_life)`` to a few parts in
a billion; for short ones it decays faster (a 2-minute half-life keeps
0.653 per minute, not 0.707). A half-life of 0 keeps usage forever. A
negative one gives the constant 0, and so does a half-life of ln 2 minutes
(about 41.6 seconds) or less, where Grid Engine's constant would be
negative: what was counted is held until the end of the scheduling pass that
reads it (``Ledger.end_pass``), so each pass sees only what was counted since
the previous one (Grid Engine's ``halflife_decay_list`` -1). Long-term usage
is never decayed.

Each account also counts the tasks that ended (Grid Engine's
``finished_jobs`` usage), decayed the same way with a half-life of its own
(``HalfLife.jobs``; negative, the default: an ended task is forgotten at
once). The share tree counts them against a user or project when it hands
out pending jobs' tickets.

Nothing here reads a clock or a file: times are arguments, and
``Ledger.to_data``/``Ledger.from_data`` give the plain data the daemon
persists and reloads.
"""

import math
from dataclasses import dataclass, field
from enum import Enum

#: version of the plain-data form of a ledger
DATA_VERSION = 1
#: the three kinds of usage, in the order the scheduler configuration lists them
KINDS = ("cpu", "mem", "io")
#: seconds between two applications of the decay constant (Grid Engine's SGE_USAGE_INTERVAL)
USAGE_INTERVAL = 60.0


@dataclass(frozen=True, slots=True)
class Usage:
    """Amounts of the three kinds of usage the share tree weighs."""
    cpu: float = 0.0     # CPU seconds
    mem: float = 0.0     # memory integral, GB * seconds
    io: float = 0.0      # data read and written, GB

    def __add__(self, other):
        return Usage(self.cpu + other.cpu, self.mem + other.mem, self.io + other.io)

    def growth_since(self, earlier):
        """What a cumulative amount added since ``earlier`` (never negative)."""
        return Usage(max(self.cpu - earlier.cpu, 0.0), max(self.mem - earlier.mem, 0.0),
                     max(self.io - earlier.io, 0.0))

    def most(self, other):
        """The larger amount of each kind."""
        return Usage(max(self.cpu, other.cpu), max(self.mem, other.mem), max(self.io, other.io))

    def times(self, factors):
        """Each kind multiplied by the same kind of ``factors``."""
        return Usage(self.cpu * factors.cpu, self.mem * factors.mem, self.io * factors.io)

    def combined(self, weights):
        """One number: the kinds weighted by ``weights`` divided by their sum."""
        total = weights.cpu + weights.mem + weights.io
        if total <= 0:
            return 0.0
        return (self.cpu * weights.cpu + self.mem * weights.mem + self.io * weights.io) / total

    def is_zero(self):
        return self.cpu == 0.0 and self.mem == 0.0 and self.io == 0.0


#: no usage at all
ZERO = Usage()


@dataclass(frozen=True, slots=True)
class HalfLife:
    """Half-life of each kind of usage in seconds (0: never decays, < 0: held until the
    end of the pass that reads it), and of the count of ended tasks (``jobs``)."""
    cpu: float
    mem: float
    io: float
    jobs: float = -1.0

    @classmethod
    def uniform(cls, seconds):
        return cls(float(seconds), float(seconds), float(seconds))

    @classmethod
    def hours(cls, hours):
        """The half-life of sched_conf's ``halftime`` (hours)."""
        return cls.uniform(float(hours) * 3600.0)

    def factors(self, elapsed):
        """The factors that decay usage over ``elapsed`` seconds."""
        return Usage(decay_factor(self.cpu, elapsed), decay_factor(self.mem, elapsed),
                     decay_factor(self.io, elapsed))

    def per_pass(self):
        """Which of cpu, mem and io have the decay constant 0 (counted per pass)."""
        return tuple(decay_constant(h) == 0.0 for h in (self.cpu, self.mem, self.io))

    def held_factors(self, elapsed):
        """``factors``, except 1 for the kinds counted per pass: those are held until
        the pass ends."""
        held = self.per_pass()
        found = self.factors(elapsed)
        return Usage(*(1.0 if h else f for h, f in zip(held, (found.cpu, found.mem, found.io))))


def decay_constant(half_life):
    """Grid Engine's per-minute decay constant of ``half_life`` seconds: 1 for 0 (no
    decay), 0 for a negative one, else ``1 - ln 2 * 60 / half_life``, and 0 where that
    is not positive (a half-life of ln 2 minutes or less)."""
    if half_life == 0:
        return 1.0
    if half_life < 0:
        return 0.0
    return max(1.0 - math.log(2.0) * USAGE_INTERVAL / half_life, 0.0)


def decay_factor(half_life, elapsed):
    """What is left of one unit after ``elapsed`` seconds with ``half_life``: the decay
    constant to the power of the minutes elapsed."""
    if elapsed <= 0:
        return 1.0
    constant = decay_constant(half_life)
    if constant == 1.0 or constant == 0.0:
        return constant
    return constant ** (elapsed / USAGE_INTERVAL)


class Holder(Enum):
    """Who an account belongs to."""
    USER = "user"                          # a user's jobs submitted without a project
    PROJECT = "project"                    # all jobs of a project
    USER_IN_PROJECT = "user_in_project"    # a user's jobs in one project


@dataclass(frozen=True, slots=True)
class AccountKey:
    holder: Holder
    name: str              # user or project name
    project: str = ""      # the project, for USER_IN_PROJECT

    def sort_key(self):
        return (self.holder.value, self.name, self.project)

    @classmethod
    def user(cls, name):
        return cls(Holder.USER, name)

    @classmethod
    def of_project(cls, name):
        return cls(Holder.PROJECT, name)

    @classmethod
    def user_in(cls, name, project):
        return cls(Holder.USER_IN_PROJECT, name, project)


@dataclass(slots=True)
class Account:
    """An account's decayed usage as of ``stamp`` and its undecayed total."""
    usage: Usage = ZERO
    long_term: Usage = ZERO
    stamp: float = 0.0
    finished: float = 0.0      # tasks that ended, decayed (Grid Engine's finished_jobs)


@dataclass(frozen=True, slots=True)
class Sample:
    """What one task of a job has used so far, as seen at ``time``."""
    job: int
    task: int
    user: str
    project: str | None
    used: Usage
    time: float


def keys_of(user, project):
    """The accounts a job of ``user`` under ``project`` (or None) is counted in."""
    if project:
        return (AccountKey.of_project(project), AccountKey.user_in(user, project))
    return (AccountKey.user(user),)


@dataclass
class Ledger:
    """Decayed usage of users and projects, fed by job samples."""
    half_life: HalfLife = field(default_factory=lambda: HalfLife.hours(168))
    accounts: dict = field(default_factory=dict)     # AccountKey -> Account
    debited: dict = field(default_factory=dict)      # (job, task) -> Usage already counted
    holders: dict = field(default_factory=dict)      # (job, task) -> (user, project) of a running one

    def record(self, sample):
        """Count what the sample's task used beyond what was counted before.

        Samples are cumulative; a reading lower than an earlier one adds
        nothing, and usage is never counted twice. Returns what it added.
        """
        key = (sample.job, sample.task)
        counted = self.debited.get(key, ZERO)
        grown = sample.used.growth_since(counted)
        self.debited[key] = sample.used.most(counted)
        self.holders[key] = (sample.user, sample.project)
        for account_key in keys_of(sample.user, sample.project):
            self._add(account_key, grown, sample.time)
        return grown

    def finish(self, sample):
        """Count a task's final usage and stop tracking it."""
        self.record(sample)
        self.debited.pop((sample.job, sample.task), None)
        self.holders.pop((sample.job, sample.task), None)

    def count_finished(self, user, project, time):
        """Count one ended task of ``user`` under ``project`` (or None) at ``time``."""
        for account_key in keys_of(user, project):
            account = self.accounts.get(account_key)
            if account is None:
                account = self.accounts[account_key] = Account(stamp=time)
            self._decay(account, time)
            account.finished += 1.0

    def finished_jobs(self, key, now):
        """The decayed count of ended tasks of an account at ``now`` (0 for an unknown one,
        and always 0 when that count is forgotten at once)."""
        account = self.accounts.get(key)
        if account is None or self.half_life.jobs < 0:
            return 0.0
        return account.finished * decay_factor(self.half_life.jobs, now - account.stamp)

    def drop(self, job, task):
        """Stop tracking a task that ended without a final sample; True when it was tracked."""
        found = self.debited.pop((job, task), None) is not None
        self.holders.pop((job, task), None)
        return found

    def usage(self, key, now):
        """The decayed usage of an account at ``now`` (zero for an unknown one); for the
        kinds counted per pass, what was counted since the previous ``end_pass``."""
        account = self.accounts.get(key)
        if account is None:
            return ZERO
        return account.usage.times(self.half_life.held_factors(now - account.stamp))

    def end_pass(self):
        """A scheduling pass has read the usage: the kinds counted per pass (decay
        constant 0) start again from nothing, as Grid Engine's decay by 0 at the next
        pass leaves them. True when an account changed."""
        held = self.half_life.per_pass()
        if not any(held):
            return False
        keep = Usage(*(0.0 if h else 1.0 for h in held))
        changed = False
        for account in self.accounts.values():
            if account.usage.times(keep) != account.usage:
                account.usage = account.usage.times(keep)
                changed = True
        return changed

    def long_term(self, key):
        account = self.accounts.get(key)
        return account.long_term if account else ZERO

    def stamp(self, key):
        """When the account was last decayed (0 for an unknown one)."""
        account = self.accounts.get(key)
        return account.stamp if account else 0.0

    def projects_of(self, user):
        """Projects in which ``user`` has an account, sorted."""
        return sorted(k.project for k in self.accounts
                      if k.holder is Holder.USER_IN_PROJECT and k.name == user)

    def set_half_life(self, half_life, now):
        """Switch half-life: what accrued so far decays with the old one up to ``now``."""
        for account in self.accounts.values():
            self._decay(account, now)
        self.half_life = half_life

    def clear(self, now):
        """Forget all usage (qconf -clearusage); running tasks count on from here."""
        self.accounts = {key: Account(stamp=now) for key in self.accounts}

    def forget(self, key):
        """Drop one account (its user or project was deleted)."""
        self.accounts.pop(key, None)

    def _add(self, key, grown, time):
        account = self.accounts.get(key)
        if account is None:
            account = self.accounts[key] = Account(stamp=time)
        self._decay(account, time)
        account.usage = account.usage + grown
        account.long_term = account.long_term + grown

    def _decay(self, account, time):
        if time > account.stamp:
            account.usage = account.usage.times(self.half_life.held_factors(time - account.stamp))
            account.finished *= decay_factor(self.half_life.jobs, time - account.stamp)
            account.stamp = time

    def to_data(self):
        """The ledger as plain data (lists, dicts, numbers, strings)."""
        return {
            "version": DATA_VERSION,
            "half_life": dict(_usage_data(self.half_life), finished_jobs=self.half_life.jobs),
            "accounts": [dict(holder=k.holder.value, name=k.name, project=k.project,
                              usage=_usage_data(a.usage), long_term=_usage_data(a.long_term),
                              stamp=a.stamp, finished_jobs=a.finished)
                         for k, a in sorted(self.accounts.items(), key=lambda i: i[0].sort_key())],
            "debited": [dict(job=job, task=task, used=_usage_data(u),
                             **_holder_data(self.holders.get((job, task))))
                        for (job, task), u in sorted(self.debited.items())],
        }

    @classmethod
    def from_data(cls, data):
        """A ledger from ``to_data``'s form; ValueError names what is wrong."""
        if not isinstance(data, dict) or data.get("version") != DATA_VERSION:
            raise ValueError("usage data: unknown format version")
        half_life = data.get("half_life")
        jobs = _number(half_life.get("finished_jobs", -1.0)) if isinstance(half_life, dict) else -1.0
        ledger = cls(half_life=HalfLife(*_usage_values(half_life), jobs))
        for item in _list(data, "accounts"):      # (finished_jobs: 0 in a record written before)
            key = _account_key(item)
            ledger.accounts[key] = Account(Usage(*_usage_values(item.get("usage"))),
                                           Usage(*_usage_values(item.get("long_term"))),
                                           _number(item.get("stamp")),
                                           _number(item.get("finished_jobs", 0.0)))
        for item in _list(data, "debited"):
            key = (_integer(item.get("job")), _integer(item.get("task")))
            ledger.debited[key] = Usage(*_usage_values(item.get("used")))
            user, project = item.get("user"), item.get("project")
            if isinstance(user, str) and user and (project is None or isinstance(project, str)):
                ledger.holders[key] = (user, project or None)
        return ledger


def _holder_data(holder):
    """The user and project a running task's usage counts for, as plain data."""
    if holder is None:
        return {}
    return {"user": holder[0], "project": holder[1]}


def _usage_data(u):
    return {"cpu": u.cpu, "mem": u.mem, "io": u.io}


def _usage_values(data):
    if not isinstance(data, dict):
        raise ValueError("usage data: usage is not a mapping")
    return tuple(_number(data.get(kind, 0.0)) for kind in KINDS)


def _list(data, name):
    items = data.get(name, [])
    if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
        raise ValueError(f"usage data: {name} is not a list of mappings")
    return items


def _account_key(item):
    try:
        holder = Holder(item.get("holder"))
    except ValueError:
        raise ValueError(f"usage data: unknown holder {item.get('holder')!r}") from None
    name, project = item.get("name"), item.get("project", "")
    if not isinstance(name, str) or not name or not isinstance(project, str):
        raise ValueError("usage data: account without a valid name")
    if (holder is Holder.USER_IN_PROJECT) != bool(project):
        raise ValueError(f"usage data: account {name!r} has a wrong project")
    return AccountKey(holder, name, project)


def _number(value):
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
        raise ValueError(f"usage data: {value!r} is not a number")
    return float(value)


def _integer(value):
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"usage data: {value!r} is not an integer")
    return value
