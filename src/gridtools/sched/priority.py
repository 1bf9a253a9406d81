"""A job's priority as Grid Engine computes it (sge_priority(5)), and the order of pending jobs.

    prio = weight_priority * npprior + weight_urgency * nurg + weight_ticket * ntckts

Urgency is normalized as Grid Engine normalizes it, over the pending and
the running jobs (the lowest value among them maps to 0, the highest to 1;
a running job's urgency counts its waiting time up to now, as a pending
job's does), and tickets from 0 to the most any pending or running job has.
POSIX priority (-p) is normalized over a fixed range, as Grid Engine 8.1.9
does: npprior = (ppri + 1024) / 2048, so -p 0 gives 0.5 and -p -100 gives
0.45117 whatever the other jobs are, for pending and running jobs alike
(``POSIX_RANGE``). When the urgency or ticket range is (nearly) empty every
job gets 0.5 for it.

Pending jobs are tried highest priority first; equal priorities go to the
earlier submission, then to the lower job id.
"""

from dataclasses import dataclass, field
from typing import Mapping, NamedTuple

from gridtools.sched import urgency as urgency_mod
from gridtools.sched.policy import tickets as tickets_mod

#: a range narrower than this normalizes every value to 0.5 (as Grid Engine does)
EPSILON = 0.00001

#: the range POSIX priority is normalized over: ppri + 1024 (the stored priority, 0..2048)
#: divided by 2048
POSIX_LOW, POSIX_HIGH = -1024.0, 1024.0


def normalize(value, low, high):
    """``value`` mapped from low..high onto 0..1; 0.5 when the range is empty."""
    if high - low < EPSILON:
        return 0.5
    return (value - low) / (high - low)


@dataclass(frozen=True, slots=True)
class Range:
    """Lowest and highest value of one quantity over a set of jobs."""
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


#: npprior of every job: its POSIX priority over -1024..1024
POSIX_RANGE = Range(POSIX_LOW, POSIX_HIGH)


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
    """The ranges and the weights: turns raw values into a Priority."""
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
    Urgency is normalized over all of them, tickets from 0 to their most, POSIX
    priority over the fixed range (``POSIX_RANGE``).
    """
    by_job = tickets.jobs
    raw = [(job, urgencies[job.id], by_job[job.id].total if job.id in by_job else 0.0)
           for job in jobs]
    normalizer = Normalizer(POSIX_RANGE, Range.of(urg.total for _, urg, _ in raw),
                            Range(0.0, max((total for _, _, total in raw), default=0.0)),
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
