"""Resource requests against what the cluster offers (complex(5) semantics).

Fixed values (a queue's ``complex_values`` and limits, a host's
``complex_values`` and load, the global host's values) are compared with
the complex's relation operator: ``check_fixed`` gives the reason a queue
instance does not meet a request, or None. Consumables count down:
``Capacity`` holds what is left of each consumable at each level where it
has a capacity (the global host, a host, a queue instance); every running
task holds ``slots x amount`` of a YES consumable, or ``amount`` once for a
JOB consumable (on its master host).
"""

from gridtools.model.resources import Consumable, satisfies
from gridtools.sched.reasons import Reason, Why

GLOBAL = ("global",)


def host_level(host):
    return ("host", host)


def queue_level(queue, host):
    return ("queue", queue, host)


def levels(queue, host):
    return (GLOBAL, host_level(host), queue_level(queue, host))


class Capacity:
    """What is left of each consumable at each level, while one pass takes from it."""

    __slots__ = ("left",)

    def __init__(self):
        self.left = {}           # (level, complex name) -> remaining amount

    @classmethod
    def of(cls, snap):
        """Capacities of the snapshot's configuration minus what running tasks hold."""
        cap = cls()
        table = snap.complexes
        for name, value, _text in snap.global_values:
            if table[name].counted:
                cap.left[(GLOBAL, name)] = value
        for host in snap.hosts.values():
            for name, value, _text in host.values:
                if table[name].counted:
                    cap.left[(host_level(host.name), name)] = value
        for qi in snap.queues:
            for name, value, _text in qi.values:
                if table[name].counted:
                    cap.left[(queue_level(qi.queue, qi.host), name)] = value
        for run in snap.running:
            cap.take(table, run.amounts, run.granted)
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
        for name, amount in amounts:
            cx = table.get(name)
            if cx is None or not cx.counted:
                continue
            if cx.consumable is Consumable.JOB:
                if not master:
                    continue
                need = amount
            else:
                need = amount * slots
            for level in levels(queue, host):
                key = (level, name)
                if key in self.left:
                    self.left[key] -= need

    def short(self, table, asks, queue, host, slots, master=True):
        """The reason ``slots`` slots with these requests do not fit on ``queue@host``, or None."""
        for ask in asks:
            cx = table.get(ask.name)
            if cx is None or not cx.counted or not isinstance(ask.value, (int, float)):
                continue
            if cx.consumable is Consumable.JOB:
                if not master:
                    continue
                need = ask.value
            else:
                need = ask.value * slots
            for level in levels(queue, host):
                left = self.left.get((level, cx.name))
                if left is not None and left < need - 1e-9:
                    where = host if level[0] == "host" else (f"{queue}@{host}" if level[0] == "queue" else "")
                    return Reason(Why.RESOURCE_SHORT, (ask.text, level[0], where, cx.name, float(left)))
        return None


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
            found.append(("hl", value, str(value)))
    found += [("gf", v, t) for n, v, t in snap.global_values if n == cx.name]
    return found


def check_fixed(ask, cx, qi, found):
    """Why ``qi`` does not meet a request for a non-consumed value (``found``: what it
    ``offered``), or None."""
    if not found and (not cx.type.numeric or cx.type.name == "BOOL"):
        return Reason(Why.RESOURCE_ABSENT, (ask.text, qi.name, cx.name))
    for level, value, text in found:
        if level == "hl" and not isinstance(value, (int, float)) and cx.type.numeric:
            value = _load_number(cx, value)
            if value is None:
                continue
        if not satisfies(cx, ask.value, value):
            return Reason(Why.RESOURCE_VALUE, (ask.text, qi.name, level, cx.name, text))
    return None


def _load_number(cx, text):
    """A load value reported as text (``1.5G``), as a number of the complex's type."""
    from gridtools.sched.inputs import value_or_none
    return value_or_none(cx, text)
