"""HTCondor's user priorities: what the negotiator's accountant keeps per submitter.

Every accounting name (a user, ``group.user`` for a job with an accounting
group, or a group's own name) has a *real priority* that moves toward the
number of resources it holds. Between two updates ``dt`` seconds apart, with
``beta = 0.5 ** (dt / PRIORITY_HALFLIFE)``::

    real' = real * beta + (1 - beta) * in_use

where ``in_use`` is the weighted number of slots held during the interval;
the best (lowest) real priority is 0.5. The *effective priority* the
negotiator uses is ``real * factor``: a factor set with ``condor_userprio
-setfactor``, else ``NICE_USER_PRIO_FACTOR`` for ``nice-user.*`` names,
``GROUP_PRIO_FACTOR_<group>`` for members of a group that has one,
``REMOTE_PRIO_FACTOR`` for names outside ``ACCOUNTANT_LOCAL_DOMAIN`` (when
set), else ``DEFAULT_PRIO_FACTOR``. Accumulated usage counts weighted
slot-seconds (shown in hours); it is never decayed. A priority set with
``condor_userprio -setprio`` is kept as given, as HTCondor's accountant keeps
it; below the best one (0.5) it counts as 0.5 (``real``), and the next aging
raises it there.

A submitter's ceiling (``-setceiling``, -1: none) and floor (``-setfloor``,
0: none) are kept and shown, as HTCondor's accountant keeps them; the
negotiator (``sched.negotiator``) is given them and acts on them.

Worked numbers: a user at 0.5 who holds 4 slots for one half-life reaches
``0.5 * 0.5 + 0.5 * 4 = 2.25``; after a second half-life, 3.125.

Usage is piecewise constant: ``update(now, in_use)`` charges the interval
since the last update with what each name held *during* it (the figures of
the previous update) and then records ``in_use`` for the next interval. The
daemon calls it whenever the set of running jobs changes and before each
negotiation, so the charge is exact. ``charge()`` adds slot-seconds of a
claim that started and ended between two updates.

A group's own record (``group`` for ``group.user``) is charged with what its
own members hold (In Use, accumulated usage), as HTCondor's accountant
charges it; its real priority moves toward what the whole subtree holds (its
members and those of its subgroups: ``hier_in_use``, HTCondor's
HierWeightedResourcesUsed). ``rows(rollup=True)`` (condor_userprio
-grouprollup) adds each group's figures to its parent's, as HTCondor's
accountant reports them rolled up. Nothing here reads a clock or a file; ``to_data`` and
``from_data`` give the plain data the daemon persists.
"""

from dataclasses import dataclass, field

#: version of the plain-data form
DATA_VERSION = 1
#: the best (lowest) real priority
MIN_PRIORITY = 0.5
#: the smallest priority factor condor_userprio -setfactor accepts
MIN_PRIORITY_FACTOR = 1.0
#: the prefix of the accounting names of nice_user jobs
NICE_USER_PREFIX = "nice-user."
#: the root accounting group: submitters in none of the configured groups (GROUP_NAMES)
ROOT_GROUP = "<none>"
#: a user is active (listed without -allusers) if it used resources this recently, seconds
ACTIVE_WINDOW = 24 * 3600.0
#: the ceiling of a submitter without one (no limit) and the least -setceiling takes
NO_CEILING = -1
#: the floor of a submitter without one and the least -setfloor takes
NO_FLOOR = 0


@dataclass(frozen=True, slots=True)
class Settings:
    """The accountant's configuration knobs (condor_config(5)); each default once."""
    halflife: float = 86400.0             # PRIORITY_HALFLIFE, seconds
    default_factor: float = 1.0           # DEFAULT_PRIO_FACTOR
    nice_factor: float = 1e6              # NICE_USER_PRIO_FACTOR
    remote_factor: float = 1e7            # REMOTE_PRIO_FACTOR
    local_domain: str = ""                # ACCOUNTANT_LOCAL_DOMAIN ("" : every user is local)
    groups: tuple = ()                    # GROUP_NAMES
    group_factors: tuple = ()             # ((group, GROUP_PRIO_FACTOR_<group>), ...)

    @classmethod
    def from_config(cls, config):
        """Settings from an object with ``get(name)`` giving expanded text or None."""
        d = cls()
        groups = tuple(g for g in _split(config.get("GROUP_NAMES") or "") if g != ROOT_GROUP)
        factors = []
        for g in groups:
            value = _float(config.get(f"GROUP_PRIO_FACTOR_{g}"), 0.0)
            if value > 0:
                factors.append((g, value))
        return cls(halflife=_float(config.get("PRIORITY_HALFLIFE"), d.halflife),
                   default_factor=_float(config.get("DEFAULT_PRIO_FACTOR"), d.default_factor),
                   nice_factor=_float(config.get("NICE_USER_PRIO_FACTOR"), d.nice_factor),
                   remote_factor=_float(config.get("REMOTE_PRIO_FACTOR"), d.remote_factor),
                   local_domain=(config.get("ACCOUNTANT_LOCAL_DOMAIN") or "").strip(),
                   groups=groups, group_factors=tuple(factors))

    def group_of(self, name):
        """The configured group an accounting name belongs to ('' for none).

        ``a.b.user@domain`` belongs to the deepest configured group among
        ``a``, ``a.b``; a name that is itself a configured group belongs to it."""
        base = name.split("@", 1)[0]
        known = {g.lower(): g for g in self.groups}
        if base.lower() in known:
            return known[base.lower()]
        parts = base.split(".")[:-1]
        found = ""
        for i in range(1, len(parts) + 1):
            prefix = ".".join(parts[:i]).lower()
            if prefix not in known:
                break
            found = known[prefix]
        return found

    def default_factor_of(self, name):
        """The factor of a name without an explicitly set one."""
        if name.startswith(NICE_USER_PREFIX):
            return self.nice_factor
        group = self.group_of(name)
        for g, value in self.group_factors:
            if g == group:
                return value
        if self.local_domain and "@" in name and name.split("@", 1)[1] != self.local_domain:
            return self.remote_factor
        return self.default_factor


@dataclass(slots=True)
class Record:
    """One accounting name's priority and usage."""
    priority: float = MIN_PRIORITY        # real priority
    factor: float = 0.0                   # set with -setfactor (0: the default applies)
    in_use: float = 0.0                   # weighted slots held since the last update
    accumulated: float = 0.0              # weighted slot-seconds, never decayed
    begin_usage: float = 0.0              # when usage was first recorded (0: never)
    last_usage: float = 0.0               # when resources were last held (0: never)
    uncharged: float = 0.0                # slot-seconds to add at the next update
    hier_in_use: float = 0.0              # a group's: what its subtree holds (0: not a group)
    ceiling: float = NO_CEILING           # set with -setceiling (-1: none)
    floor: float = NO_FLOOR               # set with -setfloor (0: none)


@dataclass(frozen=True, slots=True)
class Row:
    """One line of condor_userprio for an accounting name."""
    name: str
    effective: float
    real: float
    factor: float
    in_use: float
    accumulated_hours: float
    begin_usage: float
    last_usage: float
    since_last_usage: float | None        # seconds (None: never used anything)
    is_group: bool
    ceiling: float = NO_CEILING           # -1: none
    floor: float = NO_FLOOR               # 0: none


@dataclass
class Accountant:
    """User priorities of every accounting name seen, as of ``last_update``."""
    settings: Settings = field(default_factory=Settings)
    records: dict = field(default_factory=dict)      # name -> Record
    last_update: float | None = None                 # None: never updated

    # ------------------------------------------------------------ reading
    def factor(self, name):
        record = self.records.get(name)
        if record is not None and record.factor >= MIN_PRIORITY_FACTOR:
            return record.factor
        return self.settings.default_factor_of(name)

    def real(self, name):
        record = self.records.get(name)
        return max(record.priority, MIN_PRIORITY) if record else MIN_PRIORITY

    def effective(self, name):
        """Real priority times factor: what the negotiator orders submitters by."""
        return self.real(name) * self.factor(name)

    def effective_map(self, names):
        """name -> effective priority for the given names (the negotiator's input)."""
        return {name: self.effective(name) for name in names}

    # ------------------------------------------------------------ aging
    def update(self, now, in_use):
        """Charge the time since the last update and age every real priority.

        ``in_use``: accounting name -> weighted slots held from now on. Names
        not in it hold nothing. A first update, or a clock that went
        backwards, only records ``in_use``."""
        usage, subtree = self._with_groups(in_use)
        dt = 0.0 if self.last_update is None else now - self.last_update
        if dt > 0:
            beta = 0.5 ** (dt / self.settings.halflife) if self.settings.halflife > 0 else 0.0
            for name, record in self.records.items():
                _age(record, dt, beta, now)
        for name in list(usage) + list(subtree):
            self.records.setdefault(name, Record())
        for name, record in self.records.items():
            record.in_use = usage.get(name, 0.0)
            record.hier_in_use = subtree.get(name, 0.0)
            if record.in_use > 0:
                record.last_usage = now
                if record.begin_usage == 0:
                    record.begin_usage = now
        self.last_update = now

    def charge(self, name, slot_seconds, when):
        """Add weighted slot-seconds used between two updates (a short claim)."""
        if slot_seconds <= 0:
            return
        for key in [name] + self._groups_of(name)[:1]:       # (itself and its own group)
            record = self.records.setdefault(key, Record())
            record.uncharged += slot_seconds
            record.last_usage = max(record.last_usage, when)

    def _with_groups(self, in_use):
        """(name -> what it holds, each group's own record charged with its own members;
        group -> what its subtree holds)."""
        usage = {name: float(v) for name, v in in_use.items() if v}
        subtree = {}
        for name, value in list(usage.items()):
            groups = self._groups_of(name)
            if groups:
                usage[groups[0]] = usage.get(groups[0], 0.0) + value
            for group in groups:
                subtree[group] = subtree.get(group, 0.0) + value
        return usage, subtree

    def _groups_of(self, name):
        """The group of a member and the group's ancestors, deepest first. With groups
        configured, a name in none of them belongs to the root group ``<none>`` (as in
        HTCondor's accountant, which charges that group's record too)."""
        group = self.settings.group_of(name)
        if not group:
            return [ROOT_GROUP] if self.settings.groups and not self._is_group(name) else []
        if group == name.split("@", 1)[0]:
            return []
        found = [group]
        while "." in group:
            group = group.rsplit(".", 1)[0]
            if group in self.settings.groups:
                found.append(group)
        return found

    # ------------------------------------------------------------ condor_userprio edits
    def set_factor(self, name, factor):
        if not factor >= MIN_PRIORITY_FACTOR:
            raise ValueError(f"the priority factor must be at least {MIN_PRIORITY_FACTOR:g}")
        self.records.setdefault(name, Record()).factor = float(factor)

    def set_priority(self, name, priority):
        """-setprio: kept as given (a value under 0.5 counts as 0.5: ``real``)."""
        self.records.setdefault(name, Record()).priority = float(priority)

    def set_ceiling(self, name, ceiling):
        """-setceiling: at most ``ceiling`` weighted slots (-1: no limit)."""
        if not ceiling >= NO_CEILING:
            raise ValueError(f"the ceiling must be at least {NO_CEILING}")
        self.records.setdefault(name, Record()).ceiling = float(int(ceiling))

    def set_floor(self, name, floor):
        """-setfloor: the weighted slots negotiated for first (0: none)."""
        if not floor >= NO_FLOOR:
            raise ValueError(f"the floor must be at least {NO_FLOOR}")
        self.records.setdefault(name, Record()).floor = float(int(floor))

    def ceiling(self, name):
        record = self.records.get(name)
        return int(record.ceiling) if record is not None and record.ceiling >= 0 else NO_CEILING

    def floor(self, name):
        record = self.records.get(name)
        return int(record.floor) if record is not None and record.floor > 0 else NO_FLOOR

    def reset_usage(self, name, now):
        """-resetusage: accumulated usage to zero, usage counted from ``now``."""
        record = self.records.setdefault(name, Record())
        record.accumulated = 0.0
        record.begin_usage = now

    def reset_all(self, now):
        for name in self.records:
            self.reset_usage(name, now)

    def set_accumulated(self, name, value):
        self.records.setdefault(name, Record()).accumulated = float(value)

    def set_begin(self, name, when):
        self.records.setdefault(name, Record()).begin_usage = float(when)

    def set_last(self, name, when):
        self.records.setdefault(name, Record()).last_usage = float(when)

    def delete(self, name):
        self.records.pop(name, None)

    # ------------------------------------------------------------ display
    def rows(self, now, all_users=False, names=None, rollup=False):
        """condor_userprio's rows, best effective priority first.

        Without ``all_users`` only active names are listed: those holding
        resources or having used some within the last day. With ``rollup``
        (-grouprollup) a group's row adds up its own figures and its subgroups'
        (the top-level groups' go to the root group ``<none>``): resources in use
        and accumulated usage summed, the earliest usage start, the latest last
        usage; its priority is 0 and its factor the one set with -setfactor (0 without),
        as HTCondor's accountant reports rolled-up groups."""
        out = []
        rolled = self._rolled_up(now) if rollup else {}
        for name, record in self.records.items():
            if names is not None and name not in names:
                continue
            if names is None and not all_users and not self._active(record, now):
                continue
            out.append(rolled.get(name) or self._row(name, record, now))
        out.sort(key=lambda r: (r.effective, r.name))
        return out

    def _rolled_up(self, now):
        """group -> its rolled-up row (``rows``)."""
        if not self.settings.groups:
            return {}
        known = {g.lower(): g for g in self.settings.groups}
        own = {g: self._row(g, self.records.get(g) or Record(), now)
               for g in list(self.settings.groups) + [ROOT_GROUP]}
        sums = {g: [r.in_use, r.accumulated_hours, r.begin_usage, r.last_usage] for g, r in own.items()}

        def parent(group):
            if group == ROOT_GROUP:
                return None
            head = group.rsplit(".", 1)[0] if "." in group else ""
            return known.get(head.lower(), ROOT_GROUP) if head else ROOT_GROUP
        for group in sorted(self.settings.groups, key=lambda g: -g.count(".")):   # deepest first
            up, mine = parent(group), sums[group]
            total = sums[up]
            total[0] += mine[0]
            total[1] += mine[1]
            total[2] = min(total[2], mine[2])
            total[3] = max(total[3], mine[3])
        out = {}
        for group, (in_use, hours, begin, last) in sums.items():
            record = self.records.get(group)
            factor = record.factor if record is not None and record.factor >= MIN_PRIORITY_FACTOR else 0.0
            row = own[group]
            out[group] = Row(group, 0.0, 0.0, factor, in_use, hours, begin, last,
                             now - last if last > 0 else None, True, row.ceiling, row.floor)
        return out

    def _active(self, record, now):
        return record.in_use > 0 or record.hier_in_use > 0 or \
            (record.last_usage > 0 and now - record.last_usage <= ACTIVE_WINDOW)

    def _row(self, name, record, now):
        real = max(record.priority, MIN_PRIORITY)
        factor = self.factor(name)
        since = now - record.last_usage if record.last_usage > 0 else None
        return Row(name, real * factor, real, factor, record.in_use, record.accumulated / 3600.0,
                   record.begin_usage, record.last_usage, since, self._is_group(name),
                   self.ceiling(name), self.floor(name))

    def _is_group(self, name):
        """Whether ``name`` is a configured group, or the root group beside them."""
        return name in self.settings.groups or (name == ROOT_GROUP and bool(self.settings.groups))

    # ------------------------------------------------------------ persistence
    def to_data(self):
        """Plain data (dicts, lists, numbers, strings) to persist."""
        return {"version": DATA_VERSION, "last_update": self.last_update,
                "records": {name: {k: getattr(r, k) for k in _FIELDS}
                            for name, r in sorted(self.records.items())}}

    @classmethod
    def from_data(cls, data, settings=None):
        """An accountant from ``to_data``'s form; ValueError names what is wrong."""
        if not isinstance(data, dict) or data.get("version") != DATA_VERSION:
            raise ValueError("user priorities: unknown format version")
        records = data.get("records")
        if not isinstance(records, dict):
            raise ValueError("user priorities: records is not a mapping")
        last = data.get("last_update")
        acc = cls(settings or Settings(), last_update=None if last is None else _number(last))
        for name, item in records.items():
            if not isinstance(name, str) or not name or not isinstance(item, dict):
                raise ValueError("user priorities: a record without a valid name")
            acc.records[name] = Record(**{k: _number(item.get(k, getattr(_DEFAULT, k))) for k in _FIELDS})
        return acc


_DEFAULT = Record()
_FIELDS = ("priority", "factor", "in_use", "accumulated", "begin_usage", "last_usage", "uncharged",
           "hier_in_use", "ceiling", "floor")


def _age(record, dt, beta, now):
    """Move one record's real priority toward its usage over ``dt`` seconds."""
    recent = own = record.in_use + record.uncharged / dt
    if record.hier_in_use > 0:          # (a group: what its whole subtree held)
        recent = record.hier_in_use
    record.priority = max(record.priority * beta + (1.0 - beta) * recent, MIN_PRIORITY)
    record.accumulated += record.in_use * dt + record.uncharged
    if record.accumulated > 0 and record.begin_usage == 0:
        record.begin_usage = now
    if own > 0:
        record.last_usage = now
    record.uncharged = 0.0


def _split(text):
    return [p for p in text.replace(",", " ").split() if p]


def _float(text, default):
    if text is None or not str(text).strip():
        return default
    try:
        return float(str(text).strip())
    except ValueError:
        return default


def _number(value):
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
        raise ValueError(f"user priorities: {value!r} is not a number")
    return float(value)
