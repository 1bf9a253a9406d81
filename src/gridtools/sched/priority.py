"""A job's priority as Grid Engine computes it (sge_priority(5)), and the order of pending jobs.

    prio = weight_priority * npprior + weight_urgency * nurg + weight_ticket * ntckts

Each of the three is normalized over the pending jobs: the lowest value
among them maps to 0, the highest to 1, and when all are (nearly) equal
every job gets 0.5. POSIX priority (-p) is normalized that way too, as the
job-sorting example of the Grid Engine documentation computes it (a job
with -p 100 among jobs with -p 0 gets npprior 1), not over the fixed range
-1023..1024 that Grid Engine 8.1.9 uses. Running jobs are normalized with
the pending jobs' ranges, clipped to 0..1.

Pending jobs are tried highest priority first; equal priorities go to the
earlier submission, then to the lower job id.
"""

from dataclasses import dataclass, field
from typing import Mapping, NamedTuple

from gridtools.sched import urgency as urgency_mod
from gridtools.sched.policy import tickets as tickets_mod

#: a range narrower than this normalizes every value to 0.5 (as Grid Engine does)
EPSILON = 0.00001


def normalize(value, low, high):
    """``value`` mapped from low..high onto 0..1; 0.5 when the range is empty."""
    if high - low < EPSILON:
        return 0.5
    return (value - low) / (high - low)


@dataclass(frozen=True, slots=True)
class Range:
    """Lowest and highest value of one quantity over the pending jobs."""
    low: float = 0.0
    high: float = 0.0

    @classmethod
    def of(cls, values):
        values = list(values)
        return cls(min(values), max(values)) if values else cls()

    def normalized(self, value):
        if self.high - self.low < EPSILON:
            return 0.5
        share = (value - self.low) / (self.high - self.low)
        return 0.0 if share < 0.0 else 1.0 if share > 1.0 else share


class Priority(NamedTuple):
    """A job's priority, its three normalized parts and what they came from."""
    prio: float
    npprior: float
    nurg: float
    ntckts: float
    urgency: urgency_mod.Urgency
    tickets: float


@dataclass(frozen=True)
class Normalizer:
    """The pending jobs' ranges and the weights: turns raw values into a Priority."""
    posix: Range
    urgency: Range
    tickets: Range
    weights: tuple          # weight_priority, weight_urgency, weight_ticket

    def priority(self, posix, urg, tickets):
        npprior = self.posix.normalized(posix)
        nurg = self.urgency.normalized(urg.total)
        ntckts = self.tickets.normalized(tickets)
        wp, wu, wt = self.weights
        return Priority(wp * npprior + wu * nurg + wt * ntckts, npprior, nurg, ntckts, urg,
                        tickets)


@dataclass(frozen=True)
class Priorities:
    """Priorities of jobs (by id) and the normalizer that made them."""
    jobs: Mapping = field(default_factory=dict)
    normalizer: Normalizer = None

    def of_task(self, job, urg, tickets):
        """The priority a job would have with ``tickets`` (its next array task's)."""
        return self.normalizer.priority(job.priority, urg, tickets)


def prioritize(jobs, urgencies, tickets, config):
    """Priorities of ``jobs`` (PolicyJobs, pending and running).

    ``urgencies``: job id -> Urgency; ``tickets``: a TicketResult.
    Ranges are taken over the jobs with pending tasks.
    """
    by_job = tickets.jobs
    raw = [(job, urgencies[job.id], by_job[job.id].total if job.id in by_job else 0.0)
           for job in jobs]
    pending = [entry for entry in raw if entry[0].pending]
    normalizer = Normalizer(Range.of(job.priority for job, _, _ in pending),
                            Range.of(urg.total for _, urg, _ in pending),
                            Range.of(total for _, _, total in pending),
                            (config.weight_priority, config.weight_urgency, config.weight_ticket))
    make = normalizer.priority
    result = {job.id: make(job.priority, urg, total) for job, urg, total in raw}
    return Priorities(result, normalizer)


def dispatch_key(job, prio):
    """Sort key of a pending job: priority first, then first come, first served."""
    return (-prio, job.submit_time, job.id)


def pending_order(jobs, priorities):
    """The pending ones of ``jobs`` in the order they are tried."""
    return sorted((job for job in jobs if job.pending),
                  key=lambda job: dispatch_key(job, priorities.jobs[job.id].prio))


@dataclass(frozen=True)
class Evaluation:
    """Everything that decides the order of pending jobs, and that order."""
    tickets: tickets_mod.TicketResult
    urgencies: Mapping
    priorities: Priorities
    order: tuple            # pending job ids, first to try first


def evaluate(jobs, members, config, complexes, now, tree=None, free_slots=None):
    """Tickets, urgency, priority and the pending order of ``jobs`` at ``now``."""
    ticket_result = tickets_mod.compute(jobs, members, config, tree, free_slots)
    urgencies = urgency_mod.urgencies(jobs, complexes, config, now)
    priorities = prioritize(jobs, urgencies, ticket_result, config)
    order = tuple(job.id for job in pending_order(jobs, priorities))
    return Evaluation(ticket_result, urgencies, priorities, order)


# Legacy interface, used by sched.cycle until the typed core replaces it:
# jobs are snapshot.Job records, parameters the sched_conf dict; POSIX
# priority over the fixed range -1023..1024.

def posix_normalized(prio):
    return (prio + 1024) / 2048.0


def urgency(job, complexes, params, now):
    """(total, resource, waiting, deadline) urgency contributions of a pending job."""
    rr = _resource_urgency(job, complexes)
    wt = max(0.0, now - job.submit_time) * float(params.get("weight_waiting_time", 0.278))
    dl = 0.0
    if job.deadline:
        left = max(1.0, job.deadline - now)
        dl = float(params.get("weight_deadline", 3600000.0)) / left
    return (rr + wt + dl, rr, wt, dl)


def _resource_urgency(job, complexes):
    slots_cx = complexes.get("slots")
    rr = (slots_cx.urgency if slots_cx else 1000.0) * job.slots
    for name, _value in job.hard_resources:
        cx = complexes.get(name)
        if cx is not None and cx.urgency and cx.name != "slots":
            rr += cx.urgency * job.slots
    return rr


def urgencies(jobs, complexes, params, now):
    """job id -> (total, resource, waiting, deadline) for many jobs at once."""
    weight_wait = float(params.get("weight_waiting_time", 0.278))
    result = {}
    cache = {}
    for job in jobs:
        key = (job.slots, job.hard_resources)
        rr = cache.get(key)
        if rr is None:
            rr = cache[key] = _resource_urgency(job, complexes)
        if not weight_wait and not job.deadline:
            result[job.id] = (rr, rr, 0.0, 0.0)
        else:
            result[job.id] = urgency(job, complexes, params, now)
    return result


def priorities(jobs, complexes, params, now, tickets=None):
    """Map job id -> (prio, urgency tuple) for the given pending jobs."""
    tickets = tickets or {}
    urg = urgencies(jobs, complexes, params, now)
    if not urg:
        return {}
    ulo = min(u[0] for u in urg.values())
    uhi = max(u[0] for u in urg.values())
    tvals = [tickets.get(job.id, 0.0) for job in jobs]
    tlo, thi = min(tvals), max(tvals)
    wp = float(params.get("weight_priority", 0.0))
    wu = float(params.get("weight_urgency", 0.5))
    wt = float(params.get("weight_ticket", 0.5))
    result = {}
    for job in jobs:
        prio = (wp * posix_normalized(job.priority)
                + wu * normalize(urg[job.id][0], ulo, uhi)
                + wt * normalize(tickets.get(job.id, 0.0), tlo, thi))
        result[job.id] = (prio, urg[job.id])
    return result


def order(jobs, prios):
    """Pending jobs in dispatch order: priority, then POSIX priority, then submission order."""
    return sorted(jobs, key=lambda j: (-round(prios[j.id][0], 9), -j.priority, j.submit_time, j.id))
