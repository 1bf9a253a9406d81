"""Job categories: what jobs with one request share during a pass.

Which queue instances could ever serve a request depends on the request and
the configuration only: the instance's type, queue lists, PE and
checkpointing lists, access lists, the advance reservation the job asks
for, FORCED complexes, fixed values (``-l arch=...``) and whether every
requested consumable is known there. ``build`` works that out once for a
category, with the reasons for the instances it rules out, and how the
instances meet the category's soft requests. Once a job of a category found
no room, later jobs of the category share its reasons (room only shrinks
during a pass).
"""

from gridtools.sched import queues as qsel
from gridtools.sched.reasons import Reason, Why
from gridtools.sched.resources import check_fixed, check_known, forced_missing, offered


class Category:
    """What jobs with one request share during a pass."""

    __slots__ = ("suitable", "static", "failed", "shared", "fixed_rejects", "soft")

    def __init__(self, suitable, static, fixed_rejects=0, soft=None):
        self.suitable = suitable      # queue instances that could serve it, in configuration order
        self.static = static          # reasons for the others
        self.fixed_rejects = fixed_rejects   # instances that lack a requested value
        self.soft = soft or {}        # queue instance name -> soft requests it does not meet
        self.failed = None            # reasons of the job of this category that found no room
        self.shared = None            # the same, capped: what later jobs of the category get


class Offers:
    """What each queue instance offers of each complex, looked up once per pass."""

    __slots__ = ("snap", "cache")

    def __init__(self, snap):
        self.snap = snap
        self.cache = {}

    def of(self, qi, cx):
        key = (qi.name, cx.name)
        found = self.cache.get(key)
        if found is None:
            found = self.cache[key] = offered(cx, qi, self.snap.hosts.get(qi.host), self.snap)
        return found


def _split_asks(asks, table):
    fixed, counted = [], []
    for ask in asks:
        cx = table.get(ask.name)
        if cx is None or ask.name == "slots":
            continue
        (counted if cx.counted else fixed).append((ask, cx))
    return fixed, counted


def _value_problem(offers, fixed, counted, qi):
    for ask, cx in fixed:
        why = check_fixed(ask, cx, qi, offers.of(qi, cx))
        if why is not None:
            return why
    for ask, cx in counted:
        why = check_known(ask, cx, qi, offers.of(qi, cx))
        if why is not None:
            return why
    return None


def _soft_misses(offers, soft, qi):
    misses = 0
    for ask, cx in soft:
        found = offers.of(qi, cx)
        if not found or (not cx.counted and check_fixed(ask, cx, qi, found) is not None):
            misses += 1
    return misses


def build(p, job):
    """The Category of a job's request for pass ``p``."""
    req = job.request
    snap = p.snap
    fixed, counted = _split_asks(req.hard, p.table)
    soft_fixed, soft_counted = _split_asks(req.soft, p.table)
    soft = soft_fixed + soft_counted
    forced = p.forced
    reserved = _ar_instances(snap, req.ar)
    refused, unwanted = p.refusals(job)
    suitable, static, rejects, misses = [], list(p.closed), 0, {}
    for qi in p.open:
        why = None
        if reserved is not None and qi.name not in reserved:
            why = Reason(Why.NOT_IN_AR, (qi.name, req.ar))
        why = why or qsel.unsuitable(req, job.owner, qi, None)
        if why is None and qi.host in refused:
            why = Reason(Why.START_REFUSED, (qi.name, qi.host))
        if why is None and qi.host in unwanted:
            why = Reason(Why.UNWANTED, (qi.name, qi.host))
        if why is None and forced:
            why = forced_missing(p.table, req, qi, snap.hosts.get(qi.host), snap)
        if why is None and (fixed or counted):
            why = _value_problem(p.offers, fixed, counted, qi)
            rejects += why is not None
        if why is None:
            suitable.append(qi)
            if soft:
                misses[qi.name] = _soft_misses(p.offers, soft, qi)
        else:
            static.append(why)
    return Category(tuple(suitable), tuple(static), rejects, misses)


def _ar_instances(snap, ar_id):
    if not ar_id:
        return None
    ar = snap.ars.get(ar_id)
    return frozenset() if ar is None else frozenset(f"{q}@{h}" for q, h, _n in ar.granted)


def possible_hosts(p, job):
    """The hosts with a queue instance, open or not, that the job's request could be served
    by as the configuration stands (its type, queue lists, access lists, fixed values):
    where the negotiator may match it (``sched.matchpass``). An instance closed now
    (disabled, suspended, in error) counts: it may open, and the match says where the
    job would go."""
    req = job.request
    fixed, counted = _split_asks(req.hard, p.table)
    found = set()
    for qi in p.snap.queues:
        if qi.host in found or qsel.unsuitable(req, job.owner, qi, None) is not None:
            continue
        if (fixed or counted) and _value_problem(p.offers, fixed, counted, qi) is not None:
            continue
        found.add(qi.host)
    return frozenset(found)

