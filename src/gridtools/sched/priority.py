"""Job priority as Grid Engine computes it (sge_priority(5)).

    prio = weight_priority * npprior + weight_urgency * nurg + weight_ticket * ntckts

``npprior`` is the POSIX priority (-1023..1024) mapped onto 0..1; ``nurg`` the
job's urgency normalized over all pending jobs; ``ntckts`` the tickets
normalized the same way. Urgency is the sum of the resource contribution
(each requested resource's complex urgency times the amount, slots included),
the waiting-time contribution (seconds waited times weight_waiting_time) and
the deadline contribution (weight_deadline divided by the seconds left until
the deadline). Normalizing a set whose values are all equal gives 0.5.
"""


def normalize(value, low, high):
    if high == low:
        return 0.5
    return (value - low) / (high - low)


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
