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

A request for a consumable, or a string, host or boolean value, that no
level of a queue instance offers is an unknown resource there (numbers
nobody offers, such as queue limits left at INFINITY or load values not
sampled, do not hold a job back); a queue instance, host or global host
that offers a FORCED complex only takes jobs that request it.
"""

from gridtools.model.resources import Consumable, CxType, Requestable, satisfies
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

    __slots__ = ("left",)

    def __init__(self):
        self.left = {}           # (level, complex name) -> remaining amount

    @classmethod
    def of(cls, snap, holders=None):
        """Capacities of the snapshot's configuration minus what holds them now:
        ``holders`` ((amounts, granted) pairs; by default every running task)."""
        cap = cls()
        table = snap.complexes
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
        pairs = holders if holders is not None else ((r.amounts, r.granted) for r in snap.running)
        for amounts, granted in pairs:
            cap.take(table, amounts, granted)
        return cap

    def get(self, level, name):
        return self.left.get((level, name))

    def copy(self):
        other = Capacity()
        other.left = dict(self.left)
        return other

    def take(self, table, amounts, granted):
        """Hold ``amounts`` (name, per-slot amount) on the granted queue instances."""
        for i, (queue, host, slots) in enumerate(granted):
            self.take_at(table, amounts, queue, host, slots, master=(i == 0))

    def take_at(self, table, amounts, queue, host, slots, master=True):
        """Hold ``amounts`` for ``slots`` slots on one queue instance."""
        left = self.left
        for key in ((GLOBAL, "slots"), (host_level(host), "slots")):
            if key in left:
                left[key] -= slots
        for name, amount in amounts:
            cx = table.get(name)
            if cx is None or not cx.counted:
                continue
            need = per_grant(cx, amount, slots, master)
            if not need:
                continue
            for level in levels(queue, host):
                key = (level, name)
                if key in left:
                    left[key] -= need

    def short(self, table, asks, queue, host, slots, master=True):
        """The reason ``slots`` slots with these requests do not fit on ``queue@host``, or None."""
        why = self._slots_short(queue, host, slots)
        if why is not None:
            return why
        for ask in asks:
            cx = table.get(ask.name)
            if cx is None or not cx.counted or not isinstance(ask.value, (int, float)):
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

    def room(self, table, asks, queue, host, master=True):
        """How many slots the consumables of ``asks`` leave on ``queue@host`` (None: no bound)."""
        best = None
        for level in (GLOBAL, host_level(host)):
            left = self.left.get((level, "slots"))
            if left is not None:
                best = int(left) if best is None else min(best, int(left))
        for ask in asks:
            cx = table.get(ask.name)
            if cx is None or not cx.counted or cx.consumable is Consumable.JOB \
                    or not isinstance(ask.value, (int, float)) or ask.value <= 0:
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
    """What ``slots`` slots of a task hold of consumable ``cx`` on one queue instance."""
    if cx.consumable is Consumable.JOB:
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
    return found


def check_fixed(ask, cx, qi, found):
    """Why ``qi`` does not meet a request for a non-consumed value (``found``: what it
    ``offered``), or None."""
    if not found:
        if cx.type.numeric and cx.type is not CxType.BOOL:
            return None                  # a queue limit left at INFINITY, a load value not sampled
        return Reason(Why.RESOURCE_ABSENT, (ask.text, qi.name, cx.name))
    for level, value, text in found:
        if level == "hl" and not isinstance(value, (int, float)) and cx.type.numeric:
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
