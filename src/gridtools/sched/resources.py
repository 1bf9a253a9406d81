"""Resource requests against what the cluster offers (complex(5) semantics).

Fixed values (a queue's ``complex_values`` and limits, a host's
``complex_values`` and load, the global host's values) are compared with
the complex's relation operator: ``check_fixed`` gives the reason a queue
instance does not meet a request, or None. Consumables count down:
``Capacity`` holds what is left of each consumable at each level where it
has a capacity (the global host, a host, a queue instance); every running
task holds ``slots x amount`` of a YES consumable, or ``amount`` once for a
JOB consumable (on its master host). A consumable's default is requested
implicitly by jobs that do not name it (``Request.implicit``).

An EXCL complex (a consumable BOOL) makes the levels that offer it exclusive:
a job that requests it true runs there only where no other job runs, and
while it runs no other job starts there (``Capacity.excl``, ``Capacity.busy``).

A request for a consumable, or a string, host or boolean value, that no
level of a queue instance offers is an unknown resource there (numbers
nobody offers, such as queue limits left at INFINITY or load values not
sampled, do not hold a job back); a queue instance, host or global host
that offers a FORCED complex only takes jobs that request it.
"""

from gridtools.model.resources import PER_JOB, Consumable, CxType, Relop, Requestable, satisfies
from gridtools.sched.inputs import value_or_none
from gridtools.sched.reasons import Reason, Why

GLOBAL = ("global",)


def host_level(host):
    return ("host", host)


def queue_level(queue, host):
    return ("queue", queue, host)


def levels(queue, host):
    return (GLOBAL, host_level(host), queue_level(queue, host))


class Capacity:
    """What is left of each consumable at each level, while one pass takes from it.

    ``slots`` counts here too where the global host or a host gives it a
    capacity in its ``complex_values`` (queue instances count their own slots).
    """

    __slots__ = ("left", "exclusive", "excl", "busy")

    def __init__(self, exclusive=frozenset()):
        self.left = {}           # (level, complex name) -> remaining amount
        self.exclusive = exclusive   # names of the EXCL complexes
        self.excl = {}           # level -> owner of the exclusive job running there
        self.busy = {}           # level -> owners of the jobs running there (EXCL cells only)

    @classmethod
    def of(cls, snap, holders=None):
        """Capacities of the snapshot's configuration minus what holds them now:
        ``holders`` ((amounts, granted[, owner]); by default every running task)."""
        table = snap.complexes
        cap = cls(frozenset(cx.name for cx in table.values() if cx.relop is Relop.EXCL and cx.counted))
        for name, value, _text in snap.global_values:
            if capacity_kind(table[name]):
                cap.left[(GLOBAL, name)] = value
        for host in snap.hosts.values():
            for name, value, _text in host.values:
                if capacity_kind(table[name]):
                    cap.left[(host_level(host.name), name)] = value
        for qi in snap.queues:
            for name, value, _text in qi.values:
                if table[name].counted:
                    cap.left[(queue_level(qi.queue, qi.host), name)] = value
        held = holders if holders is not None else ((r.amounts, r.granted, r.job_id) for r in snap.running)
        for amounts, granted, *owner in held:
            cap.take(table, amounts, granted, owner[0] if owner else None)
        return cap

    def get(self, level, name):
        return self.left.get((level, name))

    def copy(self):
        other = Capacity(self.exclusive)
        other.left = dict(self.left)
        other.excl = dict(self.excl)
        other.busy = {level: set(owners) for level, owners in self.busy.items()}
        return other

    def take(self, table, amounts, granted, owner=None):
        """Hold ``amounts`` (name, per-slot amount) on the granted queue instances."""
        for i, (queue, host, slots) in enumerate(granted):
            self.take_at(table, amounts, queue, host, slots, master=(i == 0), owner=owner)

    def take_at(self, table, amounts, queue, host, slots, master=True, owner=None):
        """Hold ``amounts`` for ``slots`` slots on one queue instance (``owner``: the job,
        which EXCL complexes need to know)."""
        if self.exclusive:
            self._occupy(amounts, queue, host, owner)
        left = self.left
        for key in ((GLOBAL, "slots"), (host_level(host), "slots")):
            if key in left:
                left[key] -= slots
        for name, amount in amounts:
            cx = table.get(name)
            if cx is None or not cx.counted or name in self.exclusive:
                continue
            need = per_grant(cx, amount, slots, master)
            if not need:
                continue
            for level in levels(queue, host):
                key = (level, name)
                if key in left:
                    left[key] -= need

    def _occupy(self, amounts, queue, host, owner):
        wants = [name for name, amount in amounts if name in self.exclusive and amount]
        for level in levels(queue, host):
            self.busy.setdefault(level, set()).add(owner)
            if any((level, name) in self.left for name in wants):
                self.excl[level] = owner

    def excl_short(self, asks, queue, host, owner=None):
        """Why EXCL complexes keep a job (``owner``, requesting ``asks``) off ``queue@host``:
        an exclusive job of another owner runs on one of its levels, or the job asks to be
        exclusive where another job runs; or None."""
        wants = [a for a in asks if a.name in self.exclusive and a.value]
        for level in levels(queue, host):
            holder = self.excl.get(level, owner)
            if holder != owner:
                name = next(n for n in sorted(self.exclusive) if (level, n) in self.left)
                text = next((a.text for a in wants if a.name == name), f"{name}=false")
                return short_reason(text, level, name, 0.0)
            for ask in wants:
                if (level, ask.name) in self.left and self.busy.get(level, set()) - {owner}:
                    return short_reason(ask.text, level, ask.name, 0.0)
        return None

    def short(self, table, asks, queue, host, slots, master=True, owner=None):
        """The reason ``slots`` slots with these requests do not fit on ``queue@host``, or None."""
        why = self._slots_short(queue, host, slots)
        if why is None and self.exclusive:
            why = self.excl_short(asks, queue, host, owner)
        if why is not None:
            return why
        for ask in asks:
            cx = table.get(ask.name)
            if cx is None or not cx.counted or not isinstance(ask.value, (int, float)) \
                    or cx.name in self.exclusive:
                continue
            need = per_grant(cx, ask.value, slots, master)
            for level in levels(queue, host):
                left = self.left.get((level, cx.name))
                if left is not None and left < need - 1e-9:
                    return short_reason(ask.text, level, cx.name, left)
        return None

    def _slots_short(self, queue, host, slots):
        for level in (GLOBAL, host_level(host)):
            left = self.left.get((level, "slots"))
            if left is not None and left < slots:
                return short_reason(f"slots={slots}", level, "slots", left)
        return None

    def room(self, table, asks, queue, host, master=True, owner=None):
        """How many slots the consumables of ``asks`` leave on ``queue@host`` (None: no bound)."""
        if self.exclusive and self.excl_short(asks, queue, host, owner) is not None:
            return 0
        best = None
        for level in (GLOBAL, host_level(host)):
            left = self.left.get((level, "slots"))
            if left is not None:
                best = int(left) if best is None else min(best, int(left))
        for ask in asks:
            cx = table.get(ask.name)
            if cx is None or not cx.counted or cx.consumable is Consumable.JOB \
                    or not isinstance(ask.value, (int, float)) or ask.value <= 0 \
                    or isinstance(ask.value, PER_JOB) \
                    or cx.name in self.exclusive:
                continue
            for level in levels(queue, host):
                left = self.left.get((level, cx.name))
                if left is not None:
                    fit = int((left + 1e-9) // ask.value)
                    best = fit if best is None else min(best, fit)
        return best


def capacity_kind(cx):
    """True for a complex whose global or host value is a capacity counted down."""
    return cx.counted or cx.name == "slots"


def per_grant(cx, amount, slots, master):
    """What ``slots`` slots of a task hold of consumable ``cx`` on one queue instance (an
    amount the job as a whole holds, ``model.resources.per_job``, as of a consumable JOB)."""
    if cx.consumable is Consumable.JOB or isinstance(amount, PER_JOB):
        return amount if master else 0
    return amount * slots


def where_of(level):
    """(level word, object name) of a capacity level."""
    if level[0] == "queue":
        return "queue", f"{level[1]}@{level[2]}"
    if level[0] == "host":
        return "host", level[1]
    return "global", ""


def short_reason(text, level, name, left):
    word, where = where_of(level)
    return Reason(Why.RESOURCE_SHORT, (text, word, where, name, float(left)))


def offered(cx, qi, host, snap):
    """[(level letters, value, text)] a queue instance offers for complex ``cx``."""
    if cx.name == "qname":
        return [("qf", qi.queue, qi.queue)]
    if cx.name == "hostname":
        return [("hf", qi.host, qi.host)]
    found = [("qf", v, t) for n, v, t in qi.values if n == cx.name]
    if host is not None:
        found += [("hf", v, t) for n, v, t in host.values if n == cx.name]
        if cx.name in host.load:
            value = host.load[cx.name]
            found.append(("hl", value, f"{value:.6f}" if isinstance(value, float) else str(value)))
    found += [("gf", v, t) for n, v, t in snap.global_values if n == cx.name]
    if cx.name in snap.global_load:
        value = snap.global_load[cx.name]
        found.append(("gl", value, f"{value:.6f}" if isinstance(value, float) else str(value)))
    return found


def check_fixed(ask, cx, qi, found):
    """Why ``qi`` does not meet a request for a non-consumed value (``found``: what it
    ``offered``), or None."""
    if not found:
        if cx.type.numeric and cx.type is not CxType.BOOL:
            return None                  # a queue limit left at INFINITY, a load value not sampled
        return Reason(Why.RESOURCE_ABSENT, (ask.text, qi.name, cx.name))
    for level, value, text in found:
        if level in ("hl", "gl") and not isinstance(value, (int, float)) and cx.type.numeric:
            value = _load_number(cx, value)
            if value is None:
                continue
        if not satisfies(cx, ask.value, value):
            return Reason(Why.RESOURCE_VALUE, (ask.text, qi.name, level, cx.name, text))
    return None


def check_known(ask, cx, qi, found):
    """Why ``qi`` cannot serve a request for consumable ``cx`` that no level of it
    offers a capacity of (complex(5): an unknown resource), or None."""
    if found:
        return None
    return Reason(Why.RESOURCE_ABSENT, (ask.text, qi.name, cx.name))


def forced_missing(table, req, qi, host, snap):
    """The reason ``qi`` refuses a job that does not request a FORCED complex it, its
    host or the global host offers, or None."""
    asked = {a.name for a in req.hard}
    for name, cx in table.items():
        if name != cx.name or cx.requestable is not Requestable.FORCED or name in asked:
            continue
        if any(n == name for n, _v, _t in qi.values):
            return Reason(Why.FORCED, (name, "queue", qi.name))
        if host is not None and any(n == name for n, _v, _t in host.values):
            return Reason(Why.FORCED, (name, "host", host.name))
        if any(n == name for n, _v, _t in snap.global_values):
            return Reason(Why.FORCED, (name, "global", ""))
    return None


def _load_number(cx, text):
    """A load value reported as text (``1.5G``), as a number of the complex's type."""
    return value_or_none(cx, text)
