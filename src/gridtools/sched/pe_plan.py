"""Reservations for parallel jobs: the earliest time a PE's allocation rule fits.

The candidate start times are now and every later time at which the use of
a queue instance, consumable or PE the job could take changes. At each, in
order, the slots each queue instance keeps free for the job's whole run
time are spread by the PE's allocation rule (``sched.pe.distribute``), the
largest slot count the job accepts first (the master task in an instance
of the job's ``-masterq`` list when it has one), and the first grant whose
every demand fits over the window is the reservation.
"""

from gridtools.sched import pe as pe_stage
from gridtools.sched.rqs import who_of_job


def window_hosts(timeline, cands, pe_name, start, end):
    """Ordered [(host, [(qi, slots)])]: the slots each candidate listing the PE keeps
    free over the whole of ``[start, end)``."""
    hosts, order = {}, []
    for qi in cands:
        if pe_name not in qi.pe_list:
            continue
        room = int(max(0.0, timeline.free(("slots", qi.name), start, end)))
        if room <= 0:
            continue
        if qi.host not in hosts:
            hosts[qi.host] = []
            order.append(qi.host)
        hosts[qi.host].append((qi, room))
    return [(h, hosts[h]) for h in order]


def fit_window(planner, job, cands, pe, start, end, who):
    """The grant of the largest slot count the job accepts that fits over ``[start, end)``
    (``who``: whose quotas count, None for none), or None; and the most slots offered."""
    timeline = planner.timeline
    by_host = window_hosts(timeline, cands, pe.name, start, end)
    total = sum(r for _, items in by_host for _, r in items)
    offered = max(0, min(total, int(max(0.0, timeline.free(("pe", pe.name), start, end)))))
    for want in job.request.pe.counts(offered):
        grant = pe_stage.distribute_job(job.request, pe, want, by_host)
        if not grant:
            continue
        granted = tuple((qi.queue, qi.host, n) for qi, n in grant.values())
        demands = planner.demands(who, job.request.consumed, pe.name, granted)
        if timeline.conflict(demands, start, end) is None:
            return granted, offered
    return None, offered


def earliest_pe(planner, job, cands, duration):
    """(start, pe name, granted) of the earliest reservation for a PE job, or None."""
    snap, req = planner.p.snap, job.request
    pes = [snap.pes[n] for n in pe_stage.matching(req.pe.pattern, snap.pes)
           if not pe_stage.denied(snap.pes[n], req)]
    if not pes:
        return None
    keys = [("slots", qi.name) for qi in cands] + [("pe", pe.name) for pe in pes]
    keys += [k for k in planner.timeline.caps if k[0] in ("cx", "rqs")]
    for start in [planner.now] + planner.timeline.changes(keys, planner.now):
        for pe in pes:
            granted, _offered = fit_window(planner, job, cands, pe, start, start + duration,
                                           who_of_job(job, pe.name))
            if granted is not None:
                return start, pe.name, granted
    return None
