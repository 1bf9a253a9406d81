"""Building the scheduler's Snapshot from the daemon's state and configuration.

This is where Grid Engine configuration objects (queues with per-host values,
host groups, execution hosts, the complex, PEs, access lists) become the
flat, immutable records of ``sched.snapshot``.
"""

from gridtools.formats import values
from gridtools.model.job import TaskState
from gridtools.sched.snapshot import Complex, Host, PendingJob, QueueInstance, Running, Snapshot

LIMIT_NAMES = ("s_rt", "h_rt", "s_cpu", "h_cpu", "s_fsize", "h_fsize", "s_data", "h_data",
               "s_stack", "h_stack", "s_core", "h_core", "s_rss", "h_rss", "s_vmem", "h_vmem")


def hostgroups(conf):
    """``@group`` -> set of host names, nested groups resolved."""
    groups = {name: list(obj.get("hostlist") or []) for name, obj in conf.objects["hostgroup"].items()}
    resolved = {}

    def expand(name, seen):
        if name in resolved:
            return resolved[name]
        out = set()
        for member in groups.get(name, ()):
            if member.startswith("@"):
                if member not in seen:
                    out |= expand(member, seen | {member})
            else:
                out.add(member)
        resolved[name] = out
        return out

    for name in groups:
        expand(name, {name})
    return resolved


def exec_hosts(conf):
    """Names of the execution hosts (the ``global`` pseudo host excluded)."""
    return sorted(n for n in conf.objects["exechost"] if n != "global")


def queue_hosts(queue, groups, known):
    hosts = set()
    for entry in queue.get("hostlist") or []:
        hosts |= groups.get(entry, set()) if entry.startswith("@") else {entry}
    return sorted(h for h in hosts if h in known)


def qvalue(queue, attr, host, groups):
    """A queue attribute's value on ``host`` (per-host overrides applied)."""
    value = queue.get(attr)
    return value.for_host(host, groups) if hasattr(value, "for_host") else value


def groups_of(host, groups):
    return frozenset(g for g, members in groups.items() if host in members)


def complexes(conf):
    """name and shortcut -> Complex."""
    table = {}
    for row in (conf.single.get("complex") or {}).values():
        cx = Complex(row["name"], row["shortcut"], row["type"], row["relop"],
                     str(row["requestable"]), str(row["consumable"]), str(row["default"]),
                     float(row["urgency"]))
        table[cx.name] = cx
        table.setdefault(cx.shortcut, cx)
    return table


def _pairs(mapping):
    return tuple((str(k), str(v)) for k, v in (mapping or {}).items())


def queue_instances(conf, groups, state_letters):
    known = set(exec_hosts(conf))
    result = []
    for qname, queue in sorted(conf.objects["queue"].items()):
        for host in queue_hosts(queue, groups, known):
            def v(attr, _q=queue, _h=host):
                return qvalue(_q, attr, _h, groups)
            limits = tuple((n, str(v(n))) for n in LIMIT_NAMES if str(v(n)).upper() != "INFINITY")
            result.append(QueueInstance(
                queue=qname, host=host, slots=int(v("slots") or 0), seq_no=int(v("seq_no") or 0),
                qtype=frozenset(v("qtype") or ()), states=state_letters(qname, host),
                pe_list=tuple(v("pe_list") or ()), ckpt_list=tuple(v("ckpt_list") or ()),
                owner_list=tuple(v("owner_list") or ()), user_lists=tuple(v("user_lists") or ()),
                xuser_lists=tuple(v("xuser_lists") or ()), projects=tuple(v("projects") or ()),
                xprojects=tuple(v("xprojects") or ()),
                values=_pairs(v("complex_values")) + limits,
                load_thresholds=_pairs(v("load_thresholds")),
                suspend_thresholds=_pairs(v("suspend_thresholds")), hostgroups=groups_of(host, groups)))
    return tuple(result)


def hosts(conf, loads, host_states):
    result = {}
    for name in exec_hosts(conf):
        obj = conf.objects["exechost"][name]
        load = loads.get(name, {})
        result[name] = Host(name=name, load=tuple(load.items()),
                            complex_values=_pairs(obj.get("complex_values")),
                            state=host_states.get(name, ""), num_proc=int(load.get("num_proc", 1) or 1))
    return result


def userlists_of(conf, user, group):
    """Names of the access lists (usersets) that contain ``user`` (or ``@group``)."""
    found = set()
    for name, obj in conf.objects["userset"].items():
        entries = obj.get("entries") or []
        if user in entries or f"@{group}" in entries:
            found.add(name)
    return frozenset(found)


def task_limit(spec, conf):
    """Most tasks of a job that may run at once (0: no limit): the job's -tc, and for an
    array at most the global configuration's max_aj_instances."""
    tc = int(spec.get("tc") or 0)
    if not spec.get("tasks"):
        return tc
    try:
        most = int((conf.objects["conf"].get("global") or {}).get("max_aj_instances") or 0)
    except (TypeError, ValueError):
        most = 0
    if most > 0 and (tc == 0 or tc > most):
        return most
    return tc


def pending_job(job, conf, running_count):
    spec = job.spec
    pending = job.pending_numbers()
    queues = spec.get("queues") or {}
    res = spec.get("resources") or {}
    pe = spec.get("pe")
    return PendingJob(
        id=job.id, owner=spec["owner"], group=spec.get("group", ""), name=spec["name"],
        submit_time=float(spec["submit_time"]), priority=int(spec.get("priority", 0)),
        slots=pe[1] if pe else 1, tasks=pending,
        holds=job.pending_holds(),
        start_at=float(spec.get("start_at") or 0.0),
        predecessors=tuple(spec.get("predecessors") or ()),
        ad_predecessors=tuple(spec.get("ad_predecessors") or ()),
        tc=task_limit(spec, conf), running_tasks=running_count,
        hard_queues=tuple(queues.get("hard") or ()), soft_queues=tuple(queues.get("soft") or ()),
        hard_resources=_pairs(res.get("hard")), soft_resources=_pairs(res.get("soft")),
        pe=(pe[0], pe[1], pe[2]) if pe else (), project=spec.get("project") or "",
        interactive=bool(spec.get("interactive")), ckpt=spec.get("ckpt") or "",
        ar=int(spec.get("ar") or 0), reserve=bool(spec.get("reserve")),
        deadline=float(spec.get("deadline") or 0.0),
        userlists=userlists_of(conf, spec["owner"], spec.get("group", "")))


def sched_params(conf):
    params = {}
    for key, value in (conf.single.get("sched") or {}).items():
        params[key] = value
    decay = params.get("load_adjustment_decay_time")
    if decay is not None:
        params["load_adjustment_decay_seconds"] = values.parse_time(str(decay))
    adj = params.get("job_load_adjustments") or {}
    if isinstance(adj, dict) and "np_load_avg" in adj:
        params["np_load_adjustment"] = float(adj["np_load_avg"])
    elif not adj:
        params["np_load_adjustment"] = 0.0
    return params


def config_parts(state):
    """Snapshot parts that depend on the configuration only, cached per configuration."""
    cached = state.view_cache.get("config")
    if cached is not None and cached[0] == state.config_generation:
        return cached[1]
    conf = state.config
    groups = hostgroups(conf)
    global_host = conf.objects["exechost"].get("global") or {}
    parts = {"groups": groups, "complexes": complexes(conf), "params": sched_params(conf),
             "pes": dict(conf.objects["pe"]),
             "global_values": _pairs(global_host.get("complex_values"))}
    state.view_cache["config"] = (state.config_generation, parts)
    return parts


def _queues(state, parts):
    """Queue instances, cached until the configuration or a queue state letter changes."""
    key = (state.config_generation, tuple(sorted(state.queue_states.items())),
           tuple(sorted(state.derived_states.items())))
    cached = state.view_cache.get("queues")
    if cached is None or cached[0] != key:
        cached = (key, queue_instances(state.config, parts["groups"],
                                       lambda q, h: state_letters(state, q, h)))
        state.view_cache["queues"] = cached
    return cached[1]


def build(state, now, loads):
    """The Snapshot of ``state`` at time ``now``."""
    conf = state.config
    parts = config_parts(state)
    pending, running, ad_done = [], [], {}
    counts = {}
    for job, task in state.running_tasks():
        counts[job.id] = counts.get(job.id, 0) + 1
        res = (job.spec.get("resources") or {}).get("hard") or {}
        running.append(Running(job.id, task.number, job.spec["owner"],
                               tuple(tuple(g) for g in task.granted), _pairs(res), task.start_time))
    live = state.live_ids()
    for job_id in live:
        job = state.jobs[job_id]
        tasks_running = counts.get(job_id, 0)
        if job.spec.get("tasks"):
            ad_done[job.id] = frozenset(n for n, t in job.tasks.items() if t.state is TaskState.FINISHED)
        if job.pending_numbers() and not job.deleted:
            key = (job.version, state.config_generation)
            cached = job.cache.get("view")
            if cached is None or cached[0] != key:
                cached = (key, pending_job(job, conf, tasks_running))
                job.cache["view"] = cached
            pending.append(cached[1])
    return Snapshot(
        now=now, jobs=tuple(pending), running=tuple(running), queues=_queues(state, parts),
        hosts=hosts(conf, loads, state.host_states), complexes=parts["complexes"],
        params=parts["params"], live=frozenset(live), ad_done=ad_done, pes=parts["pes"],
        global_values=parts["global_values"])


#: derived letters the scheduler works out itself from the thresholds (load and suspend alarms)
_ALARMS = "aA"


def state_letters(state, queue, host):
    """Queue instance state letters: those set by qmod and those calendars and
    subordination give (alarms are computed by the pass, host states come with the host)."""
    name = f"{queue}@{host}"
    derived = "".join(c for c in state.derived_states.get(name, "") if c not in _ALARMS)
    return state.queue_states.get(name, "") + derived
