"""Resource reservation and backfilling: the pass's look into the future.

When a pass must look ahead (a ``-R y`` job found no room and fewer than
``max_reservation`` jobs got a reservation in this pass, or an advance
reservation starts later), a ``Planner`` builds a ``timeline.Timeline``
of every resource's use: running tasks until their expected end (start
plus ``h_rt``/``s_rt``, else ``default_duration``; a task already past it
is given one more ``schedule_interval``), advance reservations over their
windows, the periods in which queue calendars will close queue instances
(as all their slots in use), and the tasks started so far in the pass.
From then on:

- a task starts now only when what it uses stays free until its own
  expected end (backfilling: a lower-priority job runs before a
  reservation only if it ends before the reservation begins, or uses what
  the reservation does not need);
- a ``-R y`` job that cannot start gets a ``Reserve``: the earliest time
  at which its resources are free for its whole run time, on the queue
  instances that give it, which are then held for it.

Jobs without a run time last ``default_duration`` (INFINITY by default, so
they are never backfilled in front of a reservation, nor started in a queue
instance that its calendar will close).
"""

from gridtools.sched.reasons import Reason, Why
from gridtools.sched.resources import GLOBAL, host_level, levels, per_grant, where_of
from gridtools.sched.rqs import who_of_job, who_of_running
from gridtools.sched.snapshot import ARState, Ask, Reserve
from gridtools.sched.timeline import INFINITY, Timeline


def running_end(run, config, now):
    """When a running task is expected to end (Grid Engine's rule for late ones)."""
    end = run.end_time if run.end_time != INFINITY else run.start_time + config.default_duration
    return end if end > now else now + config.schedule_interval


def asks_of(amounts):
    return tuple(Ask(name, amount, "") for name, amount in amounts)


class Planner:
    """One pass's timeline and the reservations made on it."""

    def __init__(self, p):
        self.p = p
        self.now = p.snap.now
        self.timeline = Timeline()
        self._free_from = {}          # timeline key -> {amount: first time that much is free}
        self._demands = {}            # ((consumables, who), queue instance) -> demands of a slot
        self._caps()
        self._calendars()
        self._running()
        self._reservations()
        for job, pe_name, granted in p.started:
            self.add(who_of_job(job, pe_name), job.request.consumed, pe_name, granted,
                     self.now, self.now + self.duration(job))

    # ------------------------------------------------------------ building
    def _caps(self):
        snap, tl = self.p.snap, self.timeline
        for qi in snap.queues:
            tl.set_cap(("slots", qi.name), qi.slots)
        for key, _left in self.p.cap.left.items():
            tl.set_cap(("cx",) + key, self.p.configured[key])
        for name, pe in snap.pes.items():
            tl.set_cap(("pe", name), pe.slots)

    def _calendars(self):
        """A calendar's closed periods use all of its instance's slots (Grid Engine books
        them so: nothing that would still run then starts or is reserved there)."""
        snap, tl = self.p.snap, self.timeline
        for qi in snap.queues:
            for start, end in snap.closings.get(qi.name, ()):
                tl.add(("slots", qi.name), max(start, self.now), end, qi.slots)

    def _running(self):
        snap = self.p.snap
        for run in snap.running:
            if self.p.inside(run):
                continue
            end = running_end(run, snap.config, self.now)
            self.add(who_of_running(run), asks_of(run.amounts), run.pe, run.granted, self.now, end)

    def _reservations(self):
        snap = self.p.snap
        for ar in snap.ars.values():
            if ar.end > self.now and ar.state is not ARState.DELETED:
                demands = self.demands(None, asks_of(ar.amounts), ar.pe, ar.granted)
                for key, amount in demands:
                    self.timeline.add(key, max(ar.start, self.now), ar.end, amount)

    # ------------------------------------------------------------ demands
    def duration(self, job):
        runtime = job.request.runtime
        return runtime if runtime != INFINITY else self.p.snap.config.default_duration

    def demands(self, who, asks, pe_name, granted):
        """((key, amount), ...) a grant uses of the timeline's resources."""
        found = {}
        tl, table = self.timeline, self.p.table
        for i, (queue, host, slots) in enumerate(granted):
            _add(found, ("slots", f"{queue}@{host}"), slots)
            for level in (GLOBAL, host_level(host)):
                if tl.has(("cx", level, "slots")):
                    _add(found, ("cx", level, "slots"), slots)
            for ask in asks:
                cx = table.get(ask.name)
                if cx is None or not cx.counted or not isinstance(ask.value, (int, float)):
                    continue
                need = per_grant(cx, ask.value, slots, i == 0)
                for level in levels(queue, host):
                    if need and tl.has(("cx", level, cx.name)):
                        _add(found, ("cx", level, cx.name), need)
            if who is not None and self.p.quotas:
                self._quota_demands(found, who, asks, queue, host, slots, i == 0)
        if pe_name:
            _add(found, ("pe", pe_name), sum(g[2] for g in granted))
        return list(found.items())

    def _quota_demands(self, found, who, asks, queue, host, slots, master):
        for counter, amount, cap in self.p.quotas.demands(who, asks, queue, host, slots, master)[0]:
            key = ("rqs",) + counter
            if not self.timeline.has(key):
                self.timeline.set_cap(key, cap)
            _add(found, key, amount)

    def add(self, who, asks, pe_name, granted, start, end):
        for key, amount in self.demands(who, asks, pe_name, granted):
            self.timeline.add(key, start, end, amount)
            self._free_from.pop(key, None)

    # ------------------------------------------------------------ backfill checks
    def conflict(self, job, pe_name, granted):
        """Why starting this grant now would take what is planned for later, or None."""
        demands = self.demands(who_of_job(job, pe_name), job.request.consumed, pe_name, granted)
        found = self.timeline.conflict(demands, self.now, self.now + self.duration(job))
        if found is None:
            return None
        return reason_of(found[0], max(0.0, found[1]), job, granted)

    def qi_room(self, job, qi):
        """Slots free on ``qi`` from now until the job's expected end."""
        free = self.timeline.free(("slots", qi.name), self.now, self.now + self.duration(job))
        return int(max(0.0, free))

    # ------------------------------------------------------------ reservations
    def reserve(self, job, task, cands):
        """A Reserve for the job's task at the earliest time it fits, held on the timeline."""
        duration = self.duration(job)
        if job.request.pe is not None:
            from gridtools.sched.pe_plan import earliest_pe
            found = earliest_pe(self, job, cands, duration)
        else:
            found = self._earliest_serial(job, cands, duration)
        if found is None:
            return None
        start, pe_name, granted = found
        end = start + duration
        self.add(who_of_job(job, pe_name), job.request.consumed, pe_name, granted, start, end)
        return Reserve(job.id, task, start, granted, end, pe_name)

    def _earliest_serial(self, job, cands, duration):
        """The earliest (start, "", granted) on one instance; ties go to the instance first
        in the queue sort. Instances are looked at in the order in which all they would
        need is first free, and no further once that is later than the best start found."""
        order = []
        signature = (self.p.job_amounts(job), who_of_job(job) if self.p.quotas else None)
        for index, qi in enumerate(cands):
            demands = self._serial_demands(job, qi, signature)
            bound = max(self._first_free(key, amount) for key, amount in demands)
            order.append((bound, index, qi, demands))
        order.sort(key=lambda item: item[:2])
        best = None
        for bound, index, qi, demands in order:
            if bound == INFINITY or (best is not None and (bound, index) > best[:2]):
                break
            start = self.timeline.earliest(demands, duration, bound)
            if start < INFINITY and (best is None or (start, index) < best[:2]):
                best = (start, index, ((qi.queue, qi.host, 1),))
        return None if best is None else (best[0], "", best[2])

    def _serial_demands(self, job, qi, signature):
        """The demands of one slot of a job on ``qi``, cached by what they depend on:
        ``signature``, the job's consumables and (with quotas) whose they are."""
        key = (signature, qi.name)
        found = self._demands.get(key)
        if found is None:
            found = self._demands[key] = self.demands(signature[1], job.request.consumed, "",
                                                      ((qi.queue, qi.host, 1),))
        return found

    def _first_free(self, key, amount):
        """When ``amount`` of a resource is first free (cached until its use changes)."""
        known = self._free_from.setdefault(key, {})
        found = known.get(amount)
        if found is None:
            found = known[amount] = self.timeline.first_free(key, amount, self.now)
        return found


def _add(found, key, amount):
    found[key] = found.get(key, 0) + amount


def reason_of(key, free, job, granted):
    """The reason of a demand that does not fit because of what is planned later."""
    kind = key[0]
    if kind == "slots":
        return Reason(Why.RESOURCE_SHORT, ("slots=1", "queue", key[1], "slots", float(free), True))
    if kind == "cx":
        word, where = where_of(key[1])
        text = next((a.text for a in job.request.consumed if a.name == key[2]), f"{key[2]}=1")
        return Reason(Why.RESOURCE_SHORT, (text or f"{key[2]}", word, where, key[2], float(free), True))
    if kind == "rqs":
        return Reason(Why.QUOTA, (key[3], key[1]))
    return Reason(Why.PE_TOO_FEW, (key[1], int(free)))
