"""Placing parallel jobs: slot counts and the PE allocation rules (sge_pe(5)).

A job asks ``-pe NAME RANGES``; NAME may be a wildcard matching several
parallel environments, RANGES a list such as ``4``, ``2-8``, ``4-``, ``-8``
or ``1,2,4,8``. The pass grants the largest slot count the job accepts that
fits, spread over the suitable queue instances by the PE's allocation rule:
``$pe_slots`` (all slots on one host), ``$fill_up`` (fill the best hosts
first), ``$round_robin`` (one slot per host in turn) or a fixed number of
slots per host. The PE's own ``slots`` bounds what all its running jobs hold
together, and its ``user_lists``/``xuser_lists`` who may use it. Each queue
instance gives at most what its consumables and resource quotas leave for
the job's per-slot requests (JOB consumables count once, on the master);
the whole grant is checked again, since hosts, the global host and quota
counters are shared by several instances.

A job that asks ``-masterq QUEUES`` gets its master task (the first line of
the PE host file, where the job script runs) only in a queue instance those
name: each host with such an instance is tried as the master host in turn,
that instance first, and a grant whose first instance is not one of them is
no grant. An instance named by ``-masterq`` but not by the job's ``-q`` list
may hold the master task only, with one slot (as in Grid Engine); without a
master instance the job waits with the PE's "only offers" reason.
"""

import fnmatch

from gridtools.sched.queues import spec_matches
from gridtools.sched.reasons import Reason, Why
from gridtools.sched.snapshot import Allocation


def matching(pattern, pes):
    """Names of the PEs a (wildcard) PE request names, sorted."""
    return [name for name in sorted(pes) if fnmatch.fnmatchcase(name, pattern)]


def denied(pe, req):
    """True when the job's owner may not use the PE (its user lists)."""
    if pe.user_lists and not req.userlists.intersection(pe.user_lists):
        return True
    return bool(pe.xuser_lists and (pe.xuser_unknown or req.userlists.intersection(pe.xuser_lists)))


def free_by_host(cands, pool, job, pe_name, reasons=None):
    """Ordered [(host, [(qi, slots)])] of the candidates that list the PE, with the slots
    each could give the job (free slots, bounded by its consumables and quotas); why an
    instance with free slots gives none goes to ``reasons``."""
    hosts, order = {}, []
    for qi in cands:
        if pe_name not in qi.pe_list:
            continue
        room = pool.free.get(qi.name, 0)
        if room > 0:
            bound = pool.room(job, qi, pe_name)
            if bound is not None:
                room = min(room, bound)
            if room <= 0 and reasons is not None:
                why = pool.short(job, qi, 1, True, pe_name)
                if why is not None:
                    reasons.append(why)
        if room <= 0:
            continue
        if qi.host not in hosts:
            hosts[qi.host] = []
            order.append(qi.host)
        hosts[qi.host].append((qi, room))
    return [(h, hosts[h]) for h in order]


def _fill(items, want, grant):
    for qi, room in items:
        take = min(room, want)
        if take:
            grant[qi.name] = (qi, grant.get(qi.name, (qi, 0))[1] + take)
            want -= take
        if not want:
            break
    return grant


def _pe_slots(want, by_host):
    for _host, items in by_host:
        if sum(r for _, r in items) >= want:
            return _fill(items, want, {})
    return None


def _round_robin(want, by_host):
    left = {qi.name: room for _, items in by_host for qi, room in items}
    grant, got = {}, 0
    while got < want:
        progressed = False
        for _host, items in by_host:
            for qi, _room in items:
                if left[qi.name] > 0 and got < want:
                    left[qi.name] -= 1
                    grant[qi.name] = (qi, grant.get(qi.name, (qi, 0))[1] + 1)
                    got += 1
                    progressed = True
                    break
        if not progressed:
            return None
    return grant


def _fill_up(want, by_host, per_host=None):
    grant, got = {}, 0
    for _host, items in by_host:
        cap = sum(r for _, r in items)
        if per_host is None:
            take = min(cap, want - got)
        else:
            take = per_host if cap >= per_host and want - got >= per_host else 0
        if take:
            _fill(items, take, grant)
            got += take
        if got >= want:
            return grant
    return None


def distribute(pe, want, by_host):
    """{queue instance name: (queue instance, slots)} for ``want`` slots, or None."""
    if pe.allocation is Allocation.PE_SLOTS:
        return _pe_slots(want, by_host)
    if pe.allocation is Allocation.ROUND_ROBIN:
        return _round_robin(want, by_host)
    if pe.allocation is Allocation.FIXED:
        return _fill_up(want, by_host, pe.per_host) if want % max(1, pe.per_host) == 0 else None
    return _fill_up(want, by_host)


def _named(specs, qi):
    return any(spec_matches(s, qi) for s in specs)


def _master_orders(req, by_host):
    """The ``by_host`` orders to try for a job with ``-masterq``: for each host holding an
    instance the master queue list names, that host first with that instance first
    (one slot where the ``-q`` list does not name it); elsewhere only ``-q`` instances."""
    masters, hard = req.master_queues, req.hard_queues
    slaves = [(h, [(qi, r) for qi, r in items if not hard or _named(hard, qi)])
              for h, items in by_host]
    for host, items in by_host:
        for qi, room in items:
            if not _named(masters, qi):
                continue
            slave_ok = not hard or _named(hard, qi)
            first = [(qi, room if slave_ok else 1)]
            rest = [(q, r) for q, r in items if q is not qi and (not hard or _named(hard, q))]
            order = [(host, first + rest)]
            order += [(h, its) for h, its in slaves if h != host and its]
            yield qi, order


def distribute_job(req, pe, want, by_host):
    """``distribute`` honouring the job's master queue list (``-masterq``): the grant's
    first instance, which holds the master task, is one it names, or None."""
    if not req.master_queues:
        return distribute(pe, want, by_host)
    for master, order in _master_orders(req, by_host):
        grant = distribute(pe, want, order)
        if grant and next(iter(grant.values()))[0] is master:
            return grant
    return None


def place(job, cands, pool, snap, reasons):
    """(pe name, ((queue, host, slots), ...)) for a PE job, master first, or None."""
    req = job.request
    ar = getattr(pool, "ar", None)
    if ar is not None and ar.pe and ar.pe in snap.pes:
        names = [ar.pe]         # a job in a reservation runs in the PE it was granted
    else:
        names = matching(req.pe.pattern, snap.pes)
    if not names:
        reasons.append(Reason(Why.PE_ABSENT, (req.pe.pattern,)))
        return None
    for name in names:
        pe = snap.pes[name]
        if denied(pe, req):
            reasons.append(Reason(Why.PE_DENIED, (name,)))
            continue
        found = _try_pe(job, pe, cands, pool, reasons)
        if found is not None:
            return name, found
    return None


def _try_pe(job, pe, cands, pool, reasons):
    room = pool.pe_room(pe.name)
    by_host = free_by_host(cands, pool, job, pe.name, reasons)
    total = sum(r for _, items in by_host for _, r in items)
    why = None
    for want in job.request.pe.counts(min(total, room)):
        grant = distribute_job(job.request, pe, want, by_host)
        if not grant:
            continue
        granted = tuple((qi.queue, qi.host, n) for qi, n in grant.values())
        why = pool.grant_short(job, pe.name, granted)
        if why is None:
            return granted
    if why is not None:
        reasons.append(why)
    reasons.append(Reason(Why.PE_TOO_FEW, (pe.name, offered(job.request.pe, pe, room, by_host,
                                                                job.request.master_queues))))
    return None


def _fewest(pe_req, pe):
    """The smallest slot count of the request the PE could ever grant (at most its
    ``slots``; with a fixed allocation rule a multiple of it), or None."""
    step = max(1, pe.per_host) if pe.allocation is Allocation.FIXED else 1
    found = None
    for low, high in pe_req.ranges:
        first = -(-low // step) * step
        top = pe.slots if high is None else min(high, pe.slots)
        if first <= top and (found is None or first < found):
            found = first
    return found


def offered(pe_req, pe, room, by_host, master_queues=()):
    """The N of "cannot run in PE ... because it only offers N slots", as Grid Engine
    counts it: for the smallest slot count the job accepts (the last one its search
    tries), the PE's free slots when they are fewer, else the slots the allocation rule
    can gather from the hosts: ``$pe_slots`` that count from one host or nothing,
    a fixed N that many from each host with N free, ``$fill_up`` and ``$round_robin``
    all that is free (never more than the count; one less for a job whose ``-masterq``
    instances have no free slot)."""
    want = _fewest(pe_req, pe)
    if want is None:
        return 0
    if room < want:
        return max(0, room)
    per_host = [sum(r for _, r in items) for _host, items in by_host]
    # without a free instance of its -masterq list, the slave slots never take the last one
    most = want - 1 if master_queues and not any(_named(master_queues, qi) for _h, items in by_host
                                                   for qi, _r in items) else want
    if pe.allocation is Allocation.PE_SLOTS:
        return want if most == want and any(free >= want for free in per_host) else 0
    if pe.allocation is Allocation.FIXED:
        step = max(1, pe.per_host)
        return min(most // step * step, step * sum(1 for free in per_host if free >= step))
    return min(most, sum(per_host))
