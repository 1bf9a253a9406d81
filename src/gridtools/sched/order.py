"""The first stage of a pass: the order in which pending jobs are considered.

Grid Engine's order (sge_priority(5))::

    prio = weight_priority * npprior + weight_urgency * nurg + weight_ticket * ntckts

each term normalized as ``sched.priority`` says (urgency over the pending
and running jobs, tickets from 0, POSIX priority over the fixed range
-1024..1024);
tickets come from the share
tree, functional and override policies (``sched.policy``), urgency from the
jobs' requests, waiting time and deadlines (``sched.urgency``). The
snapshot's jobs and running tasks become the policies' ``PolicyJob``
records here. ``order(snap)`` returns the pending jobs best first and each
job's ``JobOrder`` (running jobs included, for their tickets), which
``qstat -pri``/``-urg``/``-ext`` show.

Only pending tasks that may run now, and running tasks, take part in
tickets, urgency and normalization; jobs kept back by holds, a start time,
dependencies or an error come after the others and get no tickets. A task
that waits for its block of an array predecessor's tasks (-hold_jid_ad) is
held, as Grid Engine holds it until they have finished: an array all of
whose pending tasks are held so is kept back too, and one that is partly
released takes part with its released tasks alone (``free_tasks``).
"""

import itertools
from dataclasses import replace

from gridtools.model.predecessors import ad_waits
from gridtools.model.resources import PER_JOB, Consumable
from gridtools.sched import priority as priority_mod
from gridtools.sched import urgency as urgency_mod
from gridtools.sched.policy.config import PolicyConfig
from gridtools.sched.policy.inputs import Members, PolicyJob
from gridtools.sched.policy.inputs import Request as PolicyRequest
from gridtools.sched.snapshot import JobOrder

_NO_MEMBERS = Members()
_NO_TICKETS = (0.0, 0.0, 0.0, 0.0)          # total, override, functional, share tree


def _eligible(job, snap):
    """True when some pending task of the job may start now (holds, time, dependencies,
    array predecessors: ``free_tasks``)."""
    if job.error or job.held_all or (job.start_at and job.start_at > snap.now):
        return False
    if job.predecessors and any(p in snap.live for p in job.predecessors):
        return False
    return not (job.held or job.ad_predecessors) or next(free_tasks(job, snap), None) is not None


def waits_for_array(snap, job, task):
    """True when pending task ``task`` of the job waits for an array predecessor still in
    the system (-hold_jid_ad): some task of the block it waits for has not finished
    (``model.predecessors.ad_waits``)."""
    own = snap.ad_ranges.get(job.id)
    for pred in job.ad_predecessors:
        if pred in snap.live and ad_waits(task, own, snap.ad_ranges.get(pred),
                                          snap.ad_done.get(pred, frozenset())):
            return True
    return False


def free_tasks(job, snap):
    """The job's pending tasks that no hold keeps back, in order, as they are needed:
    neither held themselves nor waiting for an array predecessor (``waits_for_array``)."""
    if not (job.held or job.ad_predecessors):
        return iter(job.tasks)
    held = job.held
    return (t for t in job.tasks if t not in held and not waits_for_array(snap, job, t))


def _complex_urgencies(snap):
    found = {}
    for name, cx in snap.complexes.items():
        if name == cx.name:
            found[name] = urgency_mod.ComplexUrgency(name, cx.urgency, cx.type.numeric)
    return found


def _requests(req, table):
    found = []
    for ask in req.hard:
        cx = table.get(ask.name)
        if cx is None:
            continue
        amount = float(ask.value) if isinstance(ask.value, (int, float)) else 1.0
        found.append(PolicyRequest(cx.name, amount, cx.consumable is not Consumable.JOB
                                   and not isinstance(ask.value, PER_JOB)))
    return tuple(found)


def _slots(req, snap):
    """Slots urgency assumes for a request (the PE's urgency_slots for a range)."""
    if req.pe is None:
        return 1
    low, high = req.pe.ranges[0][0], req.pe.ranges[-1][1]
    if low == high:
        return low
    pes = [pe for name, pe in sorted(snap.pes.items()) if _matches(name, req.pe.pattern)]
    if not pes:
        return low
    try:
        return urgency_mod.urgency_slots(pes[0].urgency_slots, req.pe.ranges, pes[0].slots)
    except ValueError:
        return low


def _matches(name, pattern):
    import fnmatch
    return fnmatch.fnmatchcase(name, pattern)


def policy_jobs(snap, limit):
    """PolicyJobs of the eligible pending jobs and of the jobs with running tasks."""
    cache = {}
    found = {}
    for job in snap.jobs:
        if not _eligible(job, snap):
            continue
        req = job.request
        shape = _shape(req, snap, cache)
        tasks = tuple(itertools.islice(free_tasks(job, snap), limit))
        found[job.id] = PolicyJob(
            id=job.id, owner=job.owner, submit_time=job.submit_time, project=req.project or None,
            department=job.department, priority=job.priority, jobshare=job.jshare,
            oticket=job.oticket, slots=shape[0], min_slots=shape[1], requests=shape[2],
            deadline=job.deadline or None, deadline_user=job.deadline_user, pending=tasks)
    running = {}
    for run in snap.running:
        if not run.suspended:
            running.setdefault(run.job_id, (run, []))[1].append(run.task)
    for job_id, (run, tasks) in running.items():
        base = found.get(job_id)
        if base is not None:
            found[job_id] = _with_running(base, tasks)
        else:
            shape = (run.slots, run.slots, ()) if run.request is None else \
                _shape(run.request, snap, cache)
            found[job_id] = PolicyJob(id=job_id, owner=run.owner, project=run.project or None,
                                      department=run.department, slots=shape[0],
                                      min_slots=shape[1], requests=shape[2], pending=(),
                                      running=tuple(tasks), submit_time=run.submit_time,
                                      priority=run.priority, deadline=run.deadline or None,
                                      deadline_user=bool(run.deadline))
    return list(found.values())


def _shape(req, snap, cache):
    """(slots urgency assumes, lowest slot count, hard requests) of a Request, kept in
    ``cache``."""
    shape = cache.get(req)
    if shape is None:
        shape = cache[req] = (_slots(req, snap), req.min_slots, _requests(req, snap.complexes))
    return shape


def _with_running(job, tasks):
    return replace(job, running=tuple(tasks))


def _job_order(prio, tickets):
    urg = prio.urgency
    return JobOrder(prio=prio.prio, npprior=prio.npprior, nurg=prio.nurg, ntckts=prio.ntckts,
                    urgency=(urg.total, urg.rrcontr, urg.wtcontr, urg.dlcontr),
                    tickets=(tickets.total, tickets.otckt, tickets.ftckt, tickets.stckt),
                    share=tickets.share)


def _unreported(snap, numbers):
    """report_pjob_tickets FALSE: pending jobs' numbers ordered them but are not reported.

    As Grid Engine's qmaster clears them (ORT_clear_pri_info), a pending job
    shows no tickets and no share, priority, normalized tickets, urgency and
    normalized urgency 0 (its normalized POSIX priority stays), so qstat lists
    pending jobs by submission time. The order the pass dispatches in is not
    changed.
    """
    pending = {job.id for job in snap.jobs}
    hidden = {}

    def cleared(o):
        found = hidden.get(o.npprior)
        if found is None:
            found = hidden[o.npprior] = JobOrder(prio=0.0, npprior=o.npprior, urgency=_NO_TICKETS,
                                                 nurg=0.0, tickets=_NO_TICKETS, ntckts=0.0, share=0.0)
        return found
    return {job_id: cleared(o) if job_id in pending else o for job_id, o in numbers.items()}


def _no_tickets(snap, config, members):
    """True when no policy can give any job a ticket (both pools empty, no override tickets)
    and there is no share tree to report on."""
    if config.weight_tickets_share > 0 or config.weight_tickets_functional > 0:
        return False
    if snap.policy.tree is not None:
        return False
    if members is not None and any(m.oticket for group in (members.users, members.projects,
                                                             members.departments)
                                   for m in group.values()):
        return False
    if members is not None and members.auto_user is not None and members.auto_user.oticket:
        return False
    return not any(job.oticket for job in snap.jobs)


def _order_without_tickets(snap, config):
    """The order when every job has 0 tickets: urgency and POSIX priority alone.

    Jobs with the same request and priority share one JobOrder (the pass over
    100,000 jobs then costs a few dictionary lookups per job). Running jobs
    get their numbers too, and their urgency counts in its range.
    """
    eligible = [job for job in snap.jobs if _eligible(job, snap)]
    complexes = _complex_urgencies(snap)
    per_request, urgencies = {}, {}
    waiting, now = config.weight_waiting_time, snap.now

    def urgency_of(req, slots, submit_time, deadline, deadline_user):
        key = req if req is not None else slots
        found = per_request.get(key)
        if found is None:
            rr = urgency_mod.resource_contribution(
                _slots(req, snap) if req is not None else slots,
                _requests(req, snap.complexes) if req is not None else (), complexes)
            found = per_request[key] = urgency_mod.Urgency(rr, 0.0, 0.0)
        wt = waiting * max(0, int(now) - int(submit_time)) if waiting else 0.0   # whole seconds
        dl = (config.weight_deadline / max(1.0, deadline - now)
              if deadline and deadline_user else 0.0)
        return found if not (wt or dl) else urgency_mod.Urgency(found.rrcontr, wt, dl)

    for job in eligible:
        urgencies[job.id] = urgency_of(job.request, 1, job.submit_time, job.deadline,
                                       job.deadline_user)
    running = {}
    for run in snap.running:
        if not run.suspended and run.job_id not in urgencies and run.job_id not in running:
            running[run.job_id] = run
            urgencies[run.job_id] = urgency_of(run.request, run.slots, run.submit_time,
                                               run.deadline, True)
    urgency = priority_mod.Range.of(u.total for u in urgencies.values())
    # (the Normalizer's sum, written out: with waiting time every job has numbers of its own)
    wp, wu, wt = config.weight_priority, config.weight_urgency, config.weight_ticket
    ntckts = priority_mod.Range().normalized(0.0)
    posix = priority_mod.POSIX_RANGE
    shared, numbers = {}, {}

    def numbers_of(priority, urg):
        key = (priority, urg)
        found = shared.get(key)
        if found is None:
            npprior, total = posix.normalized(priority), urg.total
            nurg = urgency.normalized(total)
            found = shared[key] = JobOrder(wp * npprior + wu * nurg + wt * ntckts, npprior,
                                           (total, *urg), nurg, _NO_TICKETS, ntckts, 0.0)
        return found

    for job in eligible:
        numbers[job.id] = numbers_of(job.priority, urgencies[job.id])
    pending_keys = list(shared)
    for job_id, run in running.items():
        numbers[job_id] = numbers_of(run.priority, urgencies[job_id])
    if len(pending_keys) == 1:      # one priority for all: submission order decides
        ordered = sorted(eligible, key=lambda j: (j.submit_time, j.id))
    else:
        ordered = sorted(eligible, key=lambda j: (-numbers[j.id].prio, j.submit_time, j.id))
    return ordered, numbers, len(pending_keys) <= 1 or _one_key(config, pending_keys)


def _one_key(config, shared):
    """True when the order follows one key that neither time nor jobs leaving change:
    urgency alone (POSIX priorities all alike, or weighing nothing) or POSIX priority
    alone. Waiting time adds the same to every job's urgency as time passes; a
    deadline's contribution does not, so it never is such a key."""
    if any(urg.dlcontr for _prio, urg in shared):
        return False
    if config.weight_priority == 0 or config.weight_urgency == 0:
        return True
    return len({prio for prio, _urg in shared}) == 1 or len({urg.total for _prio, urg in shared}) == 1


def order(snap):
    """(pending jobs best first, {job id: JobOrder}, share tree report rows)."""
    return ordered_pass(snap)[:3]


def ordered_pass(snap):
    """``order(snap)`` and whether the order is *stable*: every eligible job got the
    same numbers, so that the jobs left after some of them start (or end) keep their
    order and their numbers as long as no job's own facts change."""
    view = snap.policy
    config = view.config or PolicyConfig()
    if _no_tickets(snap, config, view.members):
        ordered, numbers, stable = _order_without_tickets(snap, config)
        if not config.report_pjob_tickets:
            numbers = _unreported(snap, numbers)
        return _with_rest(snap, ordered, numbers) + ((), stable)
    return _order_with_tickets(snap, config) + (False,)


def _order_with_tickets(snap, config):
    view = snap.policy
    limit = max(1, config.max_pending_tasks_per_job)
    jobs = policy_jobs(snap, limit)
    free = sum(max(0, qi.slots) for qi in snap.queues) - sum(r.slots for r in snap.running)
    result = priority_mod.evaluate(jobs, view.members or _NO_MEMBERS, config, _complex_urgencies(snap),
                                   snap.now, view.tree, max(0, free))
    numbers = {job_id: _job_order(prio, result.tickets.of(job_id))
               for job_id, prio in result.priorities.jobs.items()}
    if not config.report_pjob_tickets:
        numbers = _unreported(snap, numbers)
    by_id = {job.id: job for job in snap.jobs}
    ordered, numbers = _with_rest(snap, [by_id[i] for i in result.order if i in by_id], numbers)
    return ordered, numbers, result.tickets.nodes


def by_job_prio(ordered):
    """HTCondor's JobPrio within each owner: an owner's jobs keep the places the order gave
    them, and fill them best JobPrio first (ties keep their order). Jobs of other owners
    do not move."""
    if not any(job.job_prio for job in ordered):
        return ordered
    places, mine = {}, {}
    for index, job in enumerate(ordered):
        places.setdefault(job.owner, []).append(index)
        mine.setdefault(job.owner, []).append(job)
    result = list(ordered)
    for owner, jobs in mine.items():
        for index, job in zip(places[owner], sorted(jobs, key=lambda j: -j.job_prio)):
            result[index] = job
    return result


def _with_rest(snap, ordered, numbers):
    """The ordered jobs, then those kept back (holds, start time, dependencies, array
    predecessors) by submission. No policy looked at these: they get no numbers (the
    daemon shows those of the last pass that ordered them, as Grid Engine's qstat does;
    none: 0)."""
    ordered = by_job_prio(ordered)
    placed = {job.id for job in ordered}
    rest = sorted((j for j in snap.jobs if j.id not in placed), key=lambda j: (j.submit_time, j.id))
    return ordered + rest, numbers
