"""Advance reservations in the pass (qrsub(1)): what they hold, who may use them, and
finding the slots of a new one.

An advance reservation (``AdvanceReservation``) holds queue instance slots
and the consumables it asked for, per slot, from its start to its end.
While it is in its window nothing else takes those: they are subtracted
from what the pass offers other jobs, and a job that would still run at an
AR's start must leave room for it (the reservation planner sees every AR's
window). A job submitted with ``-ar ID`` runs only in the reservation's
queue instances and slots, only in its window, and only when its owner may
use it (the ``-u`` list: names and ``@access lists``, ``!`` excluding;
empty: everyone). Tasks of an AR are counted inside it, not against the
cell or resource quotas; tasks still running when their AR is over (or
gone) get a ``Kill`` decision.

``advance_reservation(data, table)`` makes the record from the daemon's
spooled form; ``admit(snap, request, owner, start, end)`` finds the slots
of a requested reservation or says why there are none (qrsub, qrsub -w v,
the daemon's admission).
"""

import fnmatch

from gridtools.sched import inputs
from gridtools.sched.reasons import Reason, Why
from gridtools.sched.snapshot import AdvanceReservation, ARState, Kill


def advance_reservation(data, table):
    """The record of a spooled AR: ``{"id", "owner", "start", "end", "granted": [[q, h, n],
    ...], "name", "pe", "resources": {name: text}, "users": [...], "state", "hard_error"}``
    (``users`` entries starting with ``!`` exclude)."""
    users = [str(u) for u in data.get("users") or ()]
    asks = inputs.asks(data.get("resources"), table)
    amounts = tuple((a.name, a.value) for a in asks
                    if table[a.name].counted and isinstance(a.value, (int, float)))
    return AdvanceReservation(
        id=int(data["id"]), owner=str(data["owner"]), start=float(data["start"]),
        end=float(data["end"]), granted=tuple((str(q), str(h), int(n)) for q, h, n in data["granted"]),
        name=str(data.get("name") or ""), pe=str(data.get("pe") or ""), amounts=amounts,
        users=tuple(u for u in users if not u.startswith("!")),
        xusers=tuple(u[1:] for u in users if u.startswith("!")),
        state=ARState(data.get("state") or ARState.GRANTED.value),
        hard_error=bool(data.get("hard_error")))


def _listed(entries, owner, userlists):
    for entry in entries:
        if entry.startswith("@"):
            if any(fnmatch.fnmatchcase(u, entry[1:]) for u in userlists):
                return True
        elif fnmatch.fnmatchcase(owner, entry):
            return True
    return False


def may_use(ar, owner, userlists):
    """True when ``owner`` (member of ``userlists``) may run jobs in the reservation."""
    if ar.xusers and _listed(ar.xusers, owner, userlists):
        return False
    return not ar.users or owner == ar.owner or _listed(ar.users, owner, userlists)


def job_problem(snap, job):
    """Why a job submitted into an advance reservation cannot start now, or None."""
    ar_id = job.request.ar
    ar = snap.ars.get(ar_id)
    if ar is None or ar.state is ARState.DELETED or snap.now >= ar.end:
        return Reason(Why.AR_ABSENT, (ar_id,))
    if not may_use(ar, job.owner, job.request.userlists):
        return Reason(Why.AR_DENIED, (ar_id,))
    if ar.state is ARState.ERROR and ar.hard_error:
        return Reason(Why.AR_ERROR, (ar_id,))
    if snap.now < ar.start:
        return Reason(Why.START_TIME, (ar.start,))
    return None


def inside(snap, run):
    """True when a running task's resources are held by its (active) reservation."""
    if not run.ar:
        return False
    ar = snap.ars.get(run.ar)
    return ar is not None and ar.active(snap.now)


def holders(snap):
    """(amounts, granted) of what holds the cell's capacity now: tasks outside an active
    reservation, and every active reservation."""
    found = [(run.amounts, run.granted, run.job_id) for run in snap.running if not inside(snap, run)]
    found += [(ar.amounts, ar.granted, ("ar", ar.id)) for ar in snap.ars.values() if ar.active(snap.now)]
    return found


def kills(snap):
    """Kill decisions for tasks whose reservation is over or gone."""
    found = []
    for run in snap.running:
        if not run.ar:
            continue
        ar = snap.ars.get(run.ar)
        if ar is None or ar.state is ARState.DELETED or snap.now >= ar.end:
            found.append(Kill(run.job_id, run.task, run.ar))
    return found


class ARPool:
    """What one active reservation still offers its jobs during a pass: slots per queue
    instance and the consumables it holds; other consumables come from the cell."""

    def __init__(self, p, ar):
        self.p = p
        self.ar = ar
        self.free = {f"{q}@{h}": n for q, h, n in ar.granted}
        self.held = dict(ar.amounts)
        self.left = {}
        for q, h, n in ar.granted:
            for name, amount in ar.amounts:
                self.left[(f"{q}@{h}", name)] = amount * n
        for run in p.snap.running:
            if run.ar == ar.id:
                self._use(run.amounts, run.granted)

    def _use(self, amounts, granted):
        for i, (q, h, n) in enumerate(granted):
            name = f"{q}@{h}"
            if name in self.free:
                self.free[name] -= n
            for cx_name, amount in amounts:
                key = (name, cx_name)
                if key in self.left:
                    self.left[key] -= self._need(cx_name, amount, n, i == 0)

    def _need(self, name, amount, slots, master):
        from gridtools.sched.resources import per_grant
        return per_grant(self.p.table[name], amount, slots, master)

    def _outside(self, asks):
        return tuple(a for a in asks if a.name not in self.held)

    def short(self, job, qi, slots, master=True, pe_name=""):
        for ask in job.request.consumed:
            key = (qi.name, ask.name)
            if key in self.left and isinstance(ask.value, (int, float)):
                need = self._need(ask.name, ask.value, slots, master)
                if need > self.left[key] + 1e-9:
                    return Reason(Why.RESOURCE_SHORT, (ask.text, "queue", qi.name, ask.name,
                                                       float(self.left[key])))
        return self.p.cap.short(self.p.table, self._outside(job.request.consumed), qi.queue, qi.host,
                                slots, master, job.id)

    def room(self, job, qi, pe_name):
        return self.p.cap.room(self.p.table, self._outside(job.request.consumed), qi.queue, qi.host,
                               owner=job.id)

    def pe_room(self, pe_name):
        return self.ar.slots if pe_name == self.ar.pe else self.p.pe_room(pe_name)

    def grant_short(self, job, pe_name, granted):
        for i, (q, h, n) in enumerate(granted):
            why = self.short(job, self.p.instances[f"{q}@{h}"], n, i == 0)
            if why is not None:
                return why
        return None

    def take(self, job, pe_name, granted):
        amounts = inputs.consumable_amounts(job.request, self.p.table)
        self._use(amounts, granted)
        outside = tuple((n, a) for n, a in amounts if n not in self.held)
        self.p.cap.take(self.p.table, outside, granted, job.id)
        self.p.count_start(job, pe_name, granted, in_ar=True)
