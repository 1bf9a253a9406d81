"""Admitting a new advance reservation: which slots it gets, or why there are none.

``admit(snap, request, owner, start, end)`` takes the reservation's request
as a ``Request`` (qrsub's ``-q``, ``-pe``, ``-l``, ``-now`` read by the same
option table as qsub's), its owner and window, and the snapshot: running
tasks hold their resources until their expected end (a task without a run
time limit, with ``default_duration`` INFINITY, for ever), other advance
reservations over their windows, and ``reserves`` (the last pass's job
reservations) if given. Queue instances are tried in the pass's order
(static suitability, soft requests, queue sort); a parallel request goes
through its PE's allocation rule. Resource quotas do not apply (the tasks
of a reservation are not counted against them), nor do load thresholds (the
load now says nothing about the window). Calendars are judged over the
window, not now (Grid Engine's qmaster does the same): ``calendars`` maps
"queue@host" to the (year, week) entries of the instance's calendar; an
instance whose calendar disables or suspends it at any moment of ``[start,
end)`` is left out (and named in ``Admission.closed``), one that is open
then is tried even while its calendar closes it now. The answer is an
``Admission``: the granted ((queue, host, slots), ...) and PE, or the
reasons (qrsub -w v, and the daemon's "no suitable queues").
"""

from dataclasses import dataclass, replace

from gridtools.sched import pe as pe_stage
from gridtools.sched import place as place_stage
from gridtools.sched.calendar import open_during
from gridtools.sched.cycle import Pass
from gridtools.sched.pe_plan import fit_window
from gridtools.sched.reasons import Reason, Why, capped
from gridtools.sched.reserve import Planner, reason_of
from gridtools.sched.snapshot import PendingJob, QState

#: the states a calendar gives a queue instance now (they say nothing about the window)
CALENDAR_STATES = QState.CAL_DISABLED | QState.CAL_SUSPENDED


@dataclass(frozen=True, slots=True)
class Admission:
    granted: tuple = ()                  # ((queue, host, slots), ...); empty when refused
    pe: str = ""
    reasons: tuple = ()                  # Reason, when refused
    closed: tuple = ()                   # "queue@host" its calendar closes within the window

    @property
    def ok(self):
        return bool(self.granted)


def admit(snap, request, owner, start, end, reserves=(), calendars=None):
    """The Admission of a reservation request over ``[start, end)``."""
    if end <= start:
        return Admission(reasons=(Reason(Why.START_TIME, (start,)),))
    job = PendingJob(id=0, owner=owner, request=replace(request, ar=0, reserve=False),
                     submit_time=snap.now, tasks=(1,))
    queues, closed = _calendar_open(snap.queues, calendars or {}, start, end)
    p = Pass(replace(snap, jobs=(job,), quotas=(), queues=_without_load_thresholds(queues)))
    planner = p.planner or Planner(p)
    for item in reserves:
        planner.add(None, (), item.pe, item.granted, item.start, item.end)
    cat = p.category(job)
    reasons = list(cat.static)
    cands = place_stage.candidates(p, job, cat, reasons)
    if request.pe is not None:
        found = _pe_grant(planner, job, cands, start, end, reasons)
    else:
        found = _serial_grant(planner, job, cands, start, end, reasons)
    if found is None:
        return Admission(reasons=capped(reasons), closed=closed)
    return Admission(granted=found[1], pe=found[0], closed=closed)


def _calendar_open(queues, calendars, start, end):
    """(the queue instances whose calendar keeps them open over ``[start, end)``, with
    the calendar's state of now taken off; names of those it closes in the window)."""
    kept, closed = [], []
    for qi in queues:
        entries = calendars.get(qi.name)
        if entries and not open_during(entries[0], entries[1], start, end):
            closed.append(qi.name)
            continue
        kept.append(replace(qi, states=qi.states & ~CALENDAR_STATES) if qi.states & CALENDAR_STATES else qi)
    return tuple(kept), tuple(closed)


def _without_load_thresholds(queues):
    """The queue instances as a window in the future sees them: today's load, and a
    load threshold it crosses, say nothing about then (Grid Engine reserves in
    overloaded queue instances too)."""
    return tuple(replace(qi, load_thresholds=(), suspend_thresholds=())
                 if qi.load_thresholds or qi.suspend_thresholds else qi for qi in queues)


def _serial_grant(planner, job, cands, start, end, reasons):
    for qi in cands:
        granted = ((qi.queue, qi.host, 1),)
        demands = planner.demands(None, job.request.consumed, "", granted)
        clash = planner.timeline.conflict(demands, start, end)
        if clash is None:
            return "", granted
        reasons.append(reason_of(clash[0], max(0.0, clash[1]), job, granted))
    return None


def _pe_grant(planner, job, cands, start, end, reasons):
    snap, req = planner.p.snap, job.request
    names = pe_stage.matching(req.pe.pattern, snap.pes)
    if not names:
        reasons.append(Reason(Why.PE_ABSENT, (req.pe.pattern,)))
    for name in names:
        pe = snap.pes[name]
        if pe_stage.denied(pe, req):
            reasons.append(Reason(Why.PE_DENIED, (name,)))
            continue
        granted, offered = fit_window(planner, job, cands, pe, start, end, None)
        if granted is not None:
            return name, granted
        reasons.append(Reason(Why.PE_TOO_FEW, (name, offered)))
    return None
