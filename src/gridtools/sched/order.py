"""The first stage of a pass: the order in which pending jobs are considered.

Grid Engine's order (sge_priority(5))::

    prio = weight_priority * npprior + weight_urgency * nurg + weight_ticket * ntckts

each term normalized over the pending jobs. ``order(snap)`` returns the
pending jobs sorted best first (priority, then POSIX priority, then
submission order) and each job's ``JobOrder`` with the numbers behind it,
which ``qstat -pri``/``-urg``/``-ext`` show.
"""

from gridtools.sched.snapshot import JobOrder


def normalize(value, low, high):
    """``value`` mapped onto 0..1 over [low, high]; 0.5 when all values are equal."""
    if high == low:
        return 0.5
    return (value - low) / (high - low)


def posix_normalized(prio):
    return (prio + 1024) / 2048.0


def resource_urgency(job, complexes):
    """Slots and every requested complex with an urgency, times the job's slots."""
    slots = job.request.min_slots
    slots_cx = complexes.get("slots")
    rr = (slots_cx.urgency if slots_cx else 1000.0) * slots
    for ask in job.request.hard:
        cx = complexes.get(ask.name)
        if cx is not None and cx.urgency and cx.name != "slots":
            rr += cx.urgency * slots
    return rr


def urgency(job, snap, cache):
    """(total, resource, waiting time, deadline) urgency of a pending job."""
    rr = cache.get(job.request)
    if rr is None:
        rr = cache[job.request] = resource_urgency(job, snap.complexes)
    conf = snap.config
    if not conf.weight_waiting_time and not job.deadline:
        return (rr, rr, 0.0, 0.0)
    wt = max(0.0, snap.now - job.submit_time) * conf.weight_waiting_time
    dl = 0.0
    if job.deadline:
        dl = conf.weight_deadline / max(1.0, job.deadline - snap.now)
    return (rr + wt + dl, rr, wt, dl)


def job_orders(snap):
    """{job id: JobOrder} of the pending jobs."""
    cache = {}
    urg = [urgency(job, snap, cache) for job in snap.jobs]
    if not urg:
        return {}
    totals = [u[0] for u in urg]
    ulo, uhi = min(totals), max(totals)
    conf = snap.config
    wp, wu, wt = conf.weight_priority, conf.weight_urgency, conf.weight_ticket
    span = uhi - ulo
    found = {}
    for job, u in zip(snap.jobs, urg):
        npprior = (job.priority + 1024) / 2048.0
        nurg = (u[0] - ulo) / span if span else 0.5
        found[job.id] = JobOrder(wp * npprior + wu * nurg + wt * 0.5, npprior, u, nurg)
    return found


def order(snap):
    """(pending jobs best first, {job id: JobOrder})."""
    numbers = job_orders(snap)
    jobs = sorted(snap.jobs, key=lambda j: (-round(numbers[j.id].prio, 9), -j.priority,
                                            j.submit_time, j.id))
    return jobs, numbers
