"""Building the scheduler's Snapshot from the daemon's state.

The typed records come from ``sched.inputs``; this module adds what only the
daemon knows (its jobs and tasks, queue and host states, load samples) and
caches what depends on the configuration only, or on one job's version.
"""

import operator
from dataclasses import fields

from gridtools.daemon import arreq
from gridtools.formats.sge import states as letters
from gridtools.model.job import TaskState
from gridtools.sched import inputs, rqs
from gridtools.sched.inputs import (  # noqa: F401 - the daemon's modules use these from here
    LIMIT_NAMES, exec_hosts, groups_of, hostgroups, qvalue, queue_hosts, userlists_of)
from gridtools.sched.snapshot import PendingJob, PolicyView, Snapshot


def queue_priority(conf, qname, host):
    """The ``priority`` (nice value) of queue instance ``qname@host`` (0 for a queue that
    is gone): what a task's accounting record keeps, as Grid Engine's does."""
    queue = conf.objects["queue"].get(qname)
    value = qvalue(queue, "priority", host, hostgroups(conf)) if queue is not None else 0
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _pairs(mapping):
    return tuple((str(k), str(v)) for k, v in (mapping or {}).items())


def complexes(conf):
    return inputs.complexes(conf)


def config_parts(state):
    """Snapshot parts that depend on the configuration only, cached per configuration."""
    cached = state.view_cache.get("config")
    if cached is not None and cached[0] == state.config_generation:
        return cached[1]
    conf = state.config
    table = inputs.complexes(conf)
    deadline = conf.objects["userset"].get("deadlineusers") or {}
    parts = {"groups": inputs.hostgroups(conf), "complexes": table,
             "config": inputs.sched_config(conf), "pes": inputs.pes(conf),
             "policy_config": inputs.policy_config(conf), "tree": inputs.share_tree(conf),
             "quotas": rqs.quota_sets(conf, table),
             "global_values": inputs.global_values(conf, table),
             "deadline_users": frozenset(deadline.get("entries") or ())}
    state.view_cache["config"] = (state.config_generation, parts)
    return parts



def _queues(state, parts):
    """Queue instances, cached until the configuration or a queue state changes."""
    key = (state.config_generation, tuple(sorted(state.queue_states.items())),
           tuple(sorted(state.derived_states.items())))
    cached = state.view_cache.get("queues")
    if cached is None or cached[0] != key:
        queues = inputs.queue_instances(state.config, parts["groups"], parts["complexes"],
                                        lambda name: letters.from_letters(state_letters(state, name)))
        cached = (key, queues)
        state.view_cache["queues"] = cached
    return cached[1]


def _department(spec):
    """The department fixed when the job was taken in (a description names it only
    when it is not defaultdepartment)."""
    return spec.get("department") or "defaultdepartment"


def pending_job(job, state, parts, running_count):
    """The PendingJob of a daemon job with pending tasks."""
    return inputs.pending_job(job, state.config, parts["complexes"], _request(job, state, parts),
                              running_count, _department(job.spec),
                              parts["deadline_users"], _task_requests(job, state, parts))


#: most distinct requests remembered for interning before the table starts again
INTERN_LIMIT = 50_000


def _interned(parts, req):
    """One Request object for all equal requests: the pass's category lookups then find
    them by identity, and memory holds each profile once."""
    table = parts.setdefault("requests", {})
    if len(table) > INTERN_LIMIT:
        table.clear()
    return table.setdefault(req, req)


def running_record(job, task, state, parts):
    """The Running record of a running task."""
    return inputs.running_record(job, task, parts["complexes"], _task_request(job, task.number, state, parts),
                                 _department(job.spec))


def task_request(job, number, state):
    """The Request of task ``number`` of a job: its own when it asks for other resources
    than the job (``_task_requests``), else the job's."""
    return _task_request(job, number, state, config_parts(state))


def _task_request(job, number, state, parts):
    req = _request(job, state, parts)
    own = job.derived.task_requests
    if own is None:
        own = _task_requests(job, state, parts)
    if own:
        return _by_task(job.derived).get(number, req)
    return req


def task_asks(job, state):
    """task -> (parallel environment request in the description's form or None, hard
    requests {name: value}) of the procs of an HTCondor cluster that ask for other
    resources than the job (its proc 0): what their rows show as their slots and
    resources (``spool.rows.job_rows``); {} for every other job."""
    if not job.spec.get("condor_ad"):
        return {}
    parts = config_parts(state)
    own = _task_requests(job, state, parts)
    if not own:
        return {}
    base = _request(job, state, parts)
    return {task: ([req.pe.pattern, [[low, high or 0] for low, high in req.pe.ranges]] if req.pe else None,
                   dict(a.text.split("=", 1) for a in req.hard))
            for task, req in own if req != base}


def _by_task(held):
    """task -> Request of ``held.task_requests``, made once (a cluster of ten thousand procs
    that ask otherwise is not searched through for each of its running tasks)."""
    table = held.task_table
    if table is None or table[0] is not held.task_requests:
        table = held.task_table = (held.task_requests, dict(held.task_requests))
    return table[1]


def _request(job, state, parts):
    """The job's Request, interned, cached with its description for the configuration."""
    held = job.spec_cache()
    if held.request is None or held.generation != state.config_generation:
        held.request = _interned(parts, inputs.request(job.spec, state.config, parts["complexes"]))
        held.task_requests = None
        held.generation = state.config_generation
    return held.request


def _task_requests(job, state, parts):
    """((task, Request), ...) of the procs of an HTCondor cluster that ask for other
    resources than proc 0 (``daemon.procasks.task_requests``), cached beside the
    job's Request; () for every other job."""
    held = job.spec_cache()
    _request(job, state, parts)
    if held.task_requests is None:
        held.task_requests = ()
        if job.spec.get("condor_ad"):
            held.task_requests = _proc_requests(job.spec, state, parts)
    return held.task_requests


def _proc_requests(spec, state, parts):
    from gridtools.daemon.devices import countable_complexes
    from gridtools.daemon.procasks import task_requests
    counted = countable_complexes(state.config)
    try:
        found = task_requests(spec, counted)
    except Exception as exc:  # noqa: BLE001 - a client's ad must not stop the pass
        state.log(f"W|job {spec['id']}: the requests of its procs cannot be read, "
                  f"proc 0's stand in: {exc}")
        return ()
    from gridtools.formats.condor.spec import per_job_requests
    table, soft = parts["complexes"], (spec.get("resources") or {}).get("soft") or {}
    made = {}                   # procs that ask alike share one Request (ProcId % 7 + 1: seven)
    out = []
    for task, (pe, hard) in sorted(found.items()):
        key = (tuple(pe) if pe else None, tuple(sorted(hard.items())))
        req = made.get(key)
        if req is None:
            req = made[key] = _interned(parts, inputs.request(
                dict(spec, pe=pe, resources={"hard": hard, "soft": soft},
                     per_job_requests=per_job_requests(pe, hard, counted)),
                state.config, table))
        out.append((task, req))
    return tuple(out)


def build(state, now, loads):
    """The Snapshot of ``state`` at time ``now``."""
    conf = state.config
    parts = config_parts(state)
    running, counts = [], {}
    for job, task in state.running_tasks():
        counts[job.id] = counts.get(job.id, 0) + 1
        running.append(running_record(job, task, state, parts))
    live = state.live_ids()
    pending, ad_done, ad_ranges = _pending(state, parts, live, counts)
    return Snapshot(
        now=now, jobs=pending, running=tuple(running), queues=_queues(state, parts),
        hosts=inputs.hosts(conf, loads, state.host_states, parts["complexes"]),
        complexes=parts["complexes"], config=parts["config"], pes=parts["pes"],
        global_values=parts["global_values"], global_load=inputs.numeric_load(state.global_load, parts["complexes"]),
        live=frozenset(live), ad_done=ad_done,
        ad_ranges=ad_ranges,
        policy=policy_view(state, parts, now), quotas=parts["quotas"],
        ars=arreq.records(state, parts["complexes"]), closings=_closings(state, now))


#: seconds after which the calendars' closed periods are worked out again at the latest
#: (their look ahead moves on)
CLOSINGS_REFRESH = 3600.0


def _closings(state, now):
    """The coming closed periods of the queue instances' calendars (``Snapshot.closings``),
    kept until the first of them begins or ends, the configuration changes or
    ``CLOSINGS_REFRESH`` passed; nothing to do in a cell without calendars."""
    cached = state.view_cache.get("closings")
    if cached is not None and cached[0] == state.config_generation and cached[1] <= now < cached[2]:
        return cached[3]
    from gridtools.daemon import qcontrol
    from gridtools.sched.calendar import closings
    calendars = qcontrol.calendars(state)
    found = closings(calendars, now) if calendars else {}
    until = min((p[0] if p[0] > now else p[1] for periods in found.values() for p in periods[:1]),
                default=now + CLOSINGS_REFRESH)
    if not calendars:
        until = float("inf")
    state.view_cache["closings"] = (state.config_generation, now,
                                    min(until, now + CLOSINGS_REFRESH), found)
    return found


def _pending(state, parts, live, counts):
    """(PendingJob records by job id, {array job id: its finished tasks}, {array job id:
    its task range}) of the live jobs. They are kept between passes and redone only for the jobs that changed since the last
    build (``State.view_stale``), or for all when the configuration changed."""
    cached = state.view_cache.get("pending")
    if cached is None or cached[0] != state.config_generation:
        cached = state.view_cache["pending"] = (state.config_generation, {}, {}, {}, [None])
        stale = set(live)
        state.view_stale.clear()
        _order_changed(state)
    else:
        stale = state.view_stale
        state.view_stale = set()
    _generation, records, done, ranges, result = cached
    for job_id in stale:
        old = records.pop(job_id, None)
        done.pop(job_id, None)
        ranges.pop(job_id, None)
        job = state.jobs.get(job_id)
        if job is None or job_id not in live:
            continue
        if job.spec.get("tasks"):
            done[job_id] = frozenset(n for n, t in job.tasks.items() if t.state is TaskState.FINISHED)
            ranges[job_id] = tuple(job.spec["tasks"])
        if job.pending_numbers() and not job.deleted:
            new = records[job_id] = pending_job(job, state, parts, counts.get(job_id, 0))
            if old is None or _order_facts(old) != _order_facts(new):
                _order_changed(state)
    if stale or result[0] is None:
        result[0] = tuple(records[i] for i in sorted(records))
    return result[0], dict(done), dict(ranges)


#: the fields of a PendingJob that place it in the order and decide what blocks it: all
#: but its pending and running tasks, which starts and ends change
_ORDER_FIELDS = operator.attrgetter(*(f.name for f in fields(PendingJob)
                                      if f.name not in ("tasks", "running_tasks")))


def _order_facts(pending):
    """What places a pending job in the order and decides what blocks it (_ORDER_FIELDS),
    as a tuple."""
    return _ORDER_FIELDS(pending)


def _order_changed(state):
    state.view_cache["order_epoch"] = order_epoch(state) + 1


def order_epoch(state):
    """A number that changes whenever a job joins the pending jobs or a pending job's
    own facts change (``sched.cycle.Memo``: the order a full pass found holds while
    it does not)."""
    return state.view_cache.get("order_epoch", 0)


def pending_of(state):
    """job id -> PendingJob of the last ``build``."""
    cached = state.view_cache.get("pending")
    return cached[1] if cached is not None else {}


def policy_view(state, parts, now):
    """Members with their usage decayed to ``now``, the policy settings and the share tree."""
    members = inputs.members(state.config, state.usage.usage_of(now), state.usage.users())
    return PolicyView(parts["policy_config"], members, parts["tree"])


#: derived letters the scheduler works out itself from the thresholds (load and suspend alarms)
_ALARMS = "aA"


def state_letters(state, name):
    """Queue instance state letters: those set by qmod and those calendars and
    subordination give (alarms are computed by the pass, host states come with the host)."""
    derived = "".join(c for c in state.derived_states.get(name, "") if c not in _ALARMS)
    return state.queue_states.get(name, "") + derived
