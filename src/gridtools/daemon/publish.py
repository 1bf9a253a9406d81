"""The status snapshot queries read (qstat, qhost, condor_q, condor_status).

Rows are grouped as qstat shows them: each running task on its own row,
pending tasks of one job grouped by their state, finished tasks of a job
grouped for ``qstat -s z``. Besides jobs, queue instances and host loads, the
snapshot carries the few configuration facts the queries show or select by:
queue attributes (``attrs`` of each queue row), the complex table, host and
global complex values, host groups and access lists; and the daemon's faults
(``faults``: objects set aside, writes that wait). Everything is plain data
(marshal-able). Beside it go what each user alone sees of their jobs
(``spool/private``) and the ads of the jobs submitted as ads, as every user
sees them (``spool/public``, written before the status and only where they
changed: see ``spool.status``).
"""

import time

from gridtools.cli.condor import qlisting
from gridtools.daemon import arreq, faults, view
from gridtools.formats.sge import states as state_letters
from gridtools.model import shared
from gridtools.sched.snapshot import QState
from gridtools.spool import listing, status as spool_status
from gridtools.spool.rows import ad_done_of, condor_info, job_info, job_rows, private_facts, public_ad

#: the job listing's builder and renderer, kept from one snapshot to the next (the
#: builder's facts objects and the renderer's lines of runs that did not change), and
#: the maker of its ready-made condor_q tables (the last listing's kept)
LISTING = (listing.Builder(), listing.Renderer(), qlisting.Published())


def order_numbers(order):
    """A JobOrder as plain data for the status snapshot (qstat -pri, -urg, -ext)."""
    if order is None:
        return None
    return {"prio": order.prio, "npprior": order.npprior, "nurg": order.nurg, "ntckts": order.ntckts,
            "urg": list(order.urgency), "tickets": list(order.tickets) + [order.share]}


def recover_orders(state):
    """The order numbers of the jobs still in the spool as the last published snapshot
    showed them: a restarted daemon shows them (a running or held job's are those it was
    last given, which a pass gives it no new ones of) until its passes give new ones,
    as Grid Engine's qmaster keeps them across its restart."""
    from gridtools.sched.snapshot import JobOrder
    found = spool_status.read_sections("head", "jobs")
    jobs = (found or {}).get("jobs")
    if type(jobs) is not dict:
        return
    for job_id, entry in jobs.items():
        if job_id not in state.jobs:
            continue
        try:
            n = spool_status.job_facts(entry).get("order")
            if n:
                state.orders[job_id] = JobOrder(
                    prio=float(n["prio"]), npprior=float(n["npprior"]), urgency=tuple(map(float, n["urg"])),
                    nurg=float(n["nurg"]), tickets=tuple(map(float, n["tickets"][:4])),
                    ntckts=float(n["ntckts"]), share=float(n["tickets"][4]))
                if state.jobs[job_id].spec.get("ad_predecessors"):
                    AD_HELD.now[job_id] = state.orders[job_id]
        except (AttributeError, KeyError, IndexError, TypeError, ValueError):
            continue                    # (a snapshot of another version: no numbers)


def share_tree_rows(nodes, ledger=None):
    """Share tree report rows as plain data (sge_share_mon); a user's row carries when
    the user's usage was last brought up to date (``usage_time``, 0 on other rows)."""
    stamps = _user_stamps(ledger) if ledger is not None and nodes else {}
    rows = []
    for n in nodes:
        rows.append({"path": n.path, "user": n.user, "project": n.project, "shares": n.shares,
                     "job_count": n.job_count, "level": n.level, "total": n.total,
                     "long_target": n.long_target, "short_target": n.short_target,
                     "actual": n.actual, "usage": n.usage, "tickets": n.tickets,
                     "usage_time": int(stamps.get(n.user, 0)) if n.user else 0,
                     "cpu": n.decayed.cpu, "mem": n.decayed.mem, "io": n.decayed.io,
                     "ltcpu": n.long_term.cpu, "ltmem": n.long_term.mem, "ltio": n.long_term.io})
    return rows


def _user_stamps(ledger):
    """user -> when one of the user's usage accounts was last decayed (the latest)."""
    stamps = {}
    for key, account in ledger.accounts.items():
        if key.holder.value != "project":
            stamps[key.name] = max(stamps.get(key.name, 0.0), account.stamp)
    return stamps


#: queue_conf attributes copied into each queue row's ``attrs`` (qstat -F, -explain, -U, -l)
QUEUE_ATTRS = ("seq_no", "tmpdir", "rerun", "calendar", "min_cpu_interval", "load_thresholds",
               "suspend_thresholds", "nsuspend", "suspend_interval", "complex_values", "user_lists", "xuser_lists", "owner_list",
               "projects", "xprojects") + view.LIMIT_NAMES


def _plain(value):
    """A configuration value as plain data: text, numbers, lists and dicts of text."""
    if value is None:
        return "NONE"
    if isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, dict):
        return {str(k): str(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [str(v) for v in value]
    return str(value)


def _plain_reasons(reasons):
    """job id -> reasons as plain data; jobs of one category share one list (the pass
    gave them the same tuple), which marshal also writes once."""
    shared, found = {}, {}
    for job_id, items in reasons.items():
        plain = shared.get(id(items))
        if plain is None:
            plain = shared[id(items)] = [r.plain() for r in items]
        found[job_id] = plain
    return found


def queue_attrs(conf, queue, host, groups):
    obj = conf.objects["queue"].get(queue) or {}
    return {attr: _plain(view.qvalue(obj, attr, host, groups)) for attr in QUEUE_ATTRS}


def config_facts(conf):
    """Complexes, host and global complex values, host groups and access lists."""
    complexes = {}
    for row in (conf.single.get("complex") or {}).values():
        complexes[row["name"]] = [row["shortcut"], row["type"], row["relop"], str(row["requestable"]),
                                  str(row["consumable"]), str(row["default"]), float(row["urgency"])]
    host_values = {name: _plain(obj.get("complex_values") or {})
                   for name, obj in conf.objects["exechost"].items()}
    groups = {name: sorted(members) for name, members in view.hostgroups(conf).items()}
    access = {name: _plain(obj.get("entries") or []) for name, obj in conf.objects["userset"].items()}
    return {"complexes": complexes, "host_values": host_values, "hostgroups": groups,
            "access_lists": access}


def queue_rows(state, snap_queues, loads):
    used = {}
    for _job, task in state.running_tasks():
        if True:
            for queue, host, slots in task.granted:
                key = f"{queue}@{host}"
                used[key] = used.get(key, 0) + slots
    rows = []
    groups = view.hostgroups(state.config)
    # (the slots advance reservations hold now: Grid Engine's qstat -f "resv" and -g c
    # "RES" count those alone; a -R y job's reservation is the scheduler's own plan, which
    # its qmaster never books)
    reserved = arreq.held_slots(state, time.time())
    for qi in snap_queues:
        load = loads.get(qi.host, {})
        rows.append({"name": qi.name, "queue": qi.queue, "host": qi.host,
                     "qtype": _qtype(qi), "slots": qi.slots, "used": used.get(qi.name, 0),
                     "resv": reserved.get(qi.name, 0), "load_avg": load.get("np_load_avg"),
                     "arch": load.get("arch", "-"),
                     "states": state_letters.to_letters(qi.states), "pe_list": list(qi.pe_list),
                     "ckpt_list": list(qi.ckpt_list),
                     "attrs": queue_attrs(state.config, qi.queue, qi.host, groups),
                     "messages": _messages(state, qi)})
    rows.extend(_orphans(state, {qi.name for qi in snap_queues}, used, reserved, loads))
    return rows


def _qtype(qi):
    return [word for word, on in (("BATCH", qi.batch), ("INTERACTIVE", qi.interactive)) if on]


def _messages(state, qi):
    """The -explain lines of a queue instance, by state letter (E, c)."""
    found = {k: list(v) for k, v in state.queue_messages.get(qi.name, {}).items()}
    if QState.AMBIGUOUS in qi.states:
        from gridtools.daemon import qcontrol
        inst = qcontrol.instance_map(state).get(qi.name)
        if inst is not None and inst.ambiguous:
            found["c"] = [f'queue instance "{qi.name}": {inst.ambiguous}']
    return found


def _orphans(state, configured, used, reserved, loads):
    """Rows of queue instances that left the configuration while jobs still run in them
    or advance reservations still hold slots there (o). Such an instance keeps its
    queue's attributes (qtype, slots, PE and checkpointing lists), as Grid Engine's
    orphaned queue instance keeps its own; it shows the slots reservations hold now."""
    rows = []
    groups = None
    for name, letters in sorted(state.derived_states.items()):
        if "o" not in letters or name in configured:
            continue
        queue, _, host = name.partition("@")
        load = loads.get(host, {})
        obj = state.config.objects["queue"].get(queue) or {}
        if groups is None:
            groups = view.hostgroups(state.config)

        def v(attr):
            return view.qvalue(obj, attr, host, groups) or ()
        qtype = set(v("qtype"))
        rows.append({"name": name, "queue": queue, "host": host,
                     "qtype": [t for t in ("BATCH", "INTERACTIVE") if t in qtype],
                     "slots": max(_slots(v("slots")), used.get(name, 0) + reserved.get(name, 0)),
                     "used": used.get(name, 0), "resv": reserved.get(name, 0),
                     "load_avg": load.get("np_load_avg"), "arch": load.get("arch", "-"), "states": "o",
                     "pe_list": [str(p) for p in v("pe_list")], "ckpt_list": [str(c) for c in v("ckpt_list")],
                     "attrs": {}, "messages": {}})
    return rows


def _slots(value):
    try:
        return max(0, int(value))
    except (TypeError, ValueError):
        return 0


def host_rows(state, loads):
    """Load values of each host, with the host's state (Idle, Running, Draining, ...)."""
    rows = {name: dict(load) for name, load in loads.items()}
    for name, shown in state.host_display.items():
        if name in rows:
            rows[name]["state"] = shown
    return rows


class OrderFacts:
    """The order facts of jobs as published (urgency, normalized numbers), one object for
    each distinct order: many jobs stand alike, and marshal writes a shared object once.
    Those of the last snapshot are kept for the next; those no job has any more go."""

    def __init__(self):
        self.last, self.now = {}, {}

    def begin(self):
        """A new snapshot: what the one before did not use is let go."""
        self.last, self.now = self.now, {}

    def of(self, order):
        numbers = (order.prio, order.npprior, order.nurg, order.ntckts, order.urgency, order.tickets,
                   order.share) if order is not None else None
        found = self.now.get(numbers)
        if found is None:
            found = self.last.get(numbers)
            if found is None:
                urgency = list(order.urgency) if order is not None else [0.0, 0.0, 0.0, 0.0]
                found = {"urgency": urgency, "order": order_numbers(order)}
            self.now[numbers] = found
        return found


#: the daemon's order facts, from one snapshot to the next
ORDER_FACTS = OrderFacts()


class AdHeld:
    """The order numbers shown for jobs with -hold_jid_ad predecessors. A job all of whose
    waiting tasks wait for an array predecessor (and none runs) is held, as Grid Engine
    holds such tasks: its scheduler computes no priority for it, and qstat shows the
    numbers it had when it last was not held so (none: 0.00000) rather than those of
    the pass."""

    def __init__(self):
        self.last, self.now = {}, {}

    def begin(self):
        self.last, self.now = self.now, {}

    def order(self, job_id, order, rows):
        """The order to show for a job with array predecessors whose rows are ``rows``."""
        if any(row.get("ad") for row in rows) and \
                all(row.get("ad") or row["state"] == "z" for row in rows):
            order = self.last.get(job_id)
        self.now[job_id] = order
        return order


#: the orders of jobs with array predecessors, from one snapshot to the next
AD_HELD = AdHeld()


def _job_parts(job, order, live, jobs, state):
    """(rows, facts) of a job. Its rows and the facts of its version are cached on the job
    until it or its dependencies change. Its facts are published in three parts (see
    ``spool.status.job_facts``): those of its version but its submission time, one
    mapping for the jobs whose facts are equal (jobs submitted alike); its submission
    time; the facts that come from its order (urgency, normalized numbers), one mapping
    for each distinct order. Equal values of many jobs are one object: held once,
    written once by marshal. The rows of an HTCondor cluster show the slots and hard
    requests of each proc's own (``view.task_asks``, which the configuration decides
    too: they are made again when it changes)."""
    waits = any(p in live for p in job.spec.get("predecessors") or ())
    ad_done = ad_done_of(job, live, jobs.get) if job.spec.get("ad_predecessors") else None
    if ad_done:
        waits = (waits, tuple((p, jobs[p].version) for p in ad_done))
    cached = job.cache.get("publish")
    if cached is None or cached[0] != job.version or cached[1] != waits or \
            (cached[4] is not None and cached[4] != state.config_generation):
        asks = view.task_asks(job, state) if job.spec.get("condor_ad") else None
        cached = (job.version, waits, tuple(job_rows(job, 0.0, live, ad_done, asks)), _facts(job),
                  state.config_generation if asks is not None else None)
        job.cache["publish"] = cached
    if ad_done:
        order = AD_HELD.order(job.id, order, cached[2])
    facts = ORDER_FACTS.of(order)
    prio = order.prio if order is not None else 0.0
    for row in cached[2]:
        row["prio"] = prio
    return cached[2], (cached[3], float(job.spec["submit_time"]), facts)


def _facts(job):
    """The shared facts of a job's version but its submission time (see _job_parts): of
    its description alone, kept with it; HTCondor bookkeeping (holds, removals, the
    slots of running procs ...) makes their ``condor`` part again."""
    held = job.spec_cache()
    found = held.facts
    if found is None:
        info = job_info(job, None)
        info["submit_time"] = None
        if job.condor:
            info["condor"] = dict(held.condor_facts)     # the description's part alone
        found = held.facts = shared.alike(info)
    if job.condor:
        found = dict(found)
        found["condor"] = condor_info(job)
    return found


def task_hard(state):
    """job id -> {task: hard requests} of the running procs of HTCondor clusters that ask
    for other resources than their proc 0 (the job's facts hold proc 0's): what qstat
    -F, qhost -F and -w v count such a proc to hold."""
    found = {}
    for job, task in state.running_tasks():
        if not job.spec.get("condor_ad"):
            continue
        req = view.task_request(job, task.number, state)
        held = _held_since_start(state, task, req)
        if req is not view.task_request(job, 0, state) or held:
            found.setdefault(job.id, {})[task.number] = dict(a.text.split("=", 1) for a in req.hard) | held
            if req.per_job:                 # (the requests it holds once: see held_once)
                found[job.id].setdefault("per_job", {})[task.number] = list(req.per_job)
    return found


def _held_since_start(state, task, req):
    """{consumable: amount text} a running task holds since its start where its request
    has changed since (condor_qedit): what it holds is what it began with (0 for what it
    did not ask for then); {} when nothing changed."""
    if task.amounts is None:
        return {}
    from gridtools.sched import inputs
    now = dict(inputs.consumable_amounts(req, view.config_parts(state)["complexes"]))
    began = {str(name): amount for name, amount in task.amounts}
    if now == began:
        return {}
    return {name: str(began.get(name, 0)) for name in set(now) | set(began)}


def publish(state, snap_queues, loads, now=None):
    now = now or time.time()
    live = state.live_ids()
    rows, info, private, public = [], {}, {}, {}
    ORDER_FACTS.begin()
    AD_HELD.begin()
    bucket = spool_status.BUCKET
    for job in state.jobs.values():
        job_rows_, info[job.id] = _job_parts(job, state.orders.get(job.id), live, state.jobs, state)
        rows.extend(job_rows_)
        mine = private_facts(job)
        if mine is not None:
            _owner_facts(private, job.spec)[job.id] = mine
        ad = public_ad(job)
        if ad is not None:
            public.setdefault(job.id // bucket, {})[job.id] = ad
    snapshot = {
        "time": now, "started": state.started, "rows": rows, "jobs": info,
        "queues": queue_rows(state, snap_queues, loads),
        "hosts": host_rows(state, loads),
        "global_load": dict(state.global_load),
        "exechosts": view.exec_hosts(state.config),
        "reasons": _plain_reasons(state.reasons),
        "share_tree": share_tree_rows(state.share_tree, state.usage.ledger),
        "share_halflife": list(state.usage.halftime or ()),     # seconds of cpu, mem, io
        # sched_conf's halftime in seconds: what sge_share_mon -u decays with
        "share_halftime": float(view.config_parts(state)["policy_config"].halftime) * 3600.0,
        "faults": faults.published(state),
        "task_hard": task_hard(state),
    }
    snapshot.update(config_facts(state.config))
    if state.condor is not None:
        snapshot.update(state.condor.published(state, None, loads, now))
    # before the status: a job it shows has its ad and its owner's private facts (a client
    # that waited for a new job reads them at once; a job that leaves loses them a moment
    # before the status drops it)
    spool_status.publish_public(public)
    spool_status.publish_private(private)
    spool_status.publish(snapshot, *LISTING)
    state.need_publish = False


def _owner_facts(private, spec):
    """The mapping of private facts (job id -> facts) of the owner of the job ``spec``."""
    uid = spec.get("uid")
    if uid is None:             # (no owner to give them to: they are not published)
        return {}
    entry = private.get(int(uid))
    if entry is None:
        entry = private[int(uid)] = (int(spec.get("gid") or 0), {})
    return entry[1]
