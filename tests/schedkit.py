"""Scheduler scenarios: a cell's configuration, jobs and load in; the pass's decisions out.

A scenario is a small YAML document (tests/scenarios/*.yaml, or a dict in a
test) that names what a Grid Engine administrator and users would set up:

    hosts: [h1, h2]                 # execution hosts (queue all.q on each)
    slots: 2                        # slots per host (or {h1: 2, h2: 4})
    queue: {pe_list: "make smp"}    # all.q attributes, in qconf -sq syntax
    queues: {big.q: {seq_no: 10}}   # more cluster queues: like all.q, attributes changed
    sched: {maxujobs: 1}            # sched_conf attributes
    complex: ["gpu gpu INT <= YES YES 0 0"]   # extra complex rows
    exechost: {h1: {complex_values: "gpu=2"}}
    objects: {pe/mpi: "pe_name mpi\\nslots 8\\n..."}   # any object in qconf text
    load: {h1: {np_load_avg: 0.5}}  # load values (num_proc 2, np_load_avg 0 otherwise)
    queue_states: {all.q@h1: d}     # state letters
    host_states: {h2: drain}
    now: 1000
    running: [{job: 9, owner: bob, granted: "all.q@h1=1", l: "gpu=1,h_rt=60", pe: smp, start: 990,
               ar: 0, project: p1, submit: 980}]
    jobs: [{id: 1, owner: alice, qsub: "-l h_vmem=1G -pe smp 2", submit: 1, tasks: [1, 2]},
           {id: 2, pe: [mpi, [[1, 1], [2, 2], [4, 4], [8, 8]]]}]    # pe: the spooled form
    jobs: [{id: 4, qsub: "-pe smp 2 -l gpu=1", per_job: [gpu]}]   # gpu held once, not per slot
    jobs: [{id: 3, tasks: [1, 2], qsub: "-l gpu=2", task_qsub: {2: "-l gpu=1"},   # an HTCondor
            unwanted: [h1], task_unwanted: {2: [h2]}}]    # cluster whose procs ask differently,
                                                          # and whose Requirements refuse hosts
    jobs: [{id: 2, ad_predecessors: [77], tasks: [1, 4]}]   # -hold_jid_ad 77
    ad_done: {77: [1, 2]}           # finished tasks of array jobs still in the system
    ad_ranges: {77: [1, 6, 1], 2: [1, 6, 3]}   # array jobs' task ranges (first, last, step)
    objects: {rqs/maxujobs: "{\\n name maxujobs\\n enabled true\\n limit users * to slots=20\\n}"}
    ars: [{id: 1, owner: alice, start: 1000, end: 2000, granted: "all.q@h1=2", l: "gpu=1",
           pe: smp, users: [bob, "!carol"], state: granted}]
    objects: {calendars/night: "calendar_name night\nyear NONE\nweek mon-sun=20-6=off"}
    queue: {calendar: night}        # its closed periods from ``now`` go into the Snapshot

``snapshot(scenario)`` builds the real Snapshot with ``sched.inputs`` from
configuration objects parsed by the real parsers (resource quota sets
included), job descriptions made by qsub's own option table and advance
reservations in the daemon's spooled form. ``run(scenario)`` runs the pass
and returns the starts as ``"job.task queue@host=slots,..."``;
``reasons`` gives Grid Engine's sentences and ``reserves`` the
reservations as ``"job.task@start queue@host=slots,..."``.
"""

import os
import shlex

import yaml

from gridtools.cli.sge import options
from gridtools.formats.sge import reasons as sge_reasons
from gridtools.formats.sge import states as letters
from gridtools.sched import ar as ar_mod
from gridtools.formats.sge import calendar as calendar_format
from gridtools.sched import calendar as calendar_mod
from gridtools.sched import inputs, rqs
from gridtools.sched.cycle import cycle
from gridtools.sched.snapshot import PendingJob, Running, Snapshot
from gridtools.sim import cellconf

HERE = os.path.dirname(os.path.abspath(__file__))


def config(sc):
    """The CellConfig of a scenario (see gridtools.sim.cellconf)."""
    return cellconf.config(sc)


def _spec(job, conf_defaults=None):
    req = options.fresh_request()
    ctx = options.Context(prog="qsub", cwd="/tmp", env={})
    options.parse(shlex.split(job.get("qsub", "")), req, ctx)
    spec = dict(req)
    spec.update(id=job["id"], owner=job.get("owner", "alice"), group=job.get("group", job.get("owner", "alice")),
                submit_time=float(job.get("submit", job["id"])), name=job.get("name", f"j{job['id']}"))
    if job.get("pe"):
        spec["pe"] = job["pe"]              # the spooled form, e.g. a slot list
    if job.get("per_job"):
        spec["per_job_requests"] = job["per_job"]   # requests held once (an HTCondor job's)
    return spec


def _granted(text):
    found = []
    for part in str(text).split(","):
        inst, _, slots = part.partition("=")
        queue, _, host = inst.partition("@")
        found.append((queue, host, int(slots or 1)))
    return tuple(found)


def _pending(job, conf, table):
    spec = _spec(job)
    tasks = tuple(job.get("tasks") or (1,))
    held = frozenset(job.get("held_tasks") or ())
    own = tuple((int(task), inputs.request(_spec({**job, "qsub": qsub}), conf, table))
                for task, qsub in sorted((job.get("task_qsub") or {}).items()))
    return PendingJob(id=job["id"], owner=spec["owner"], group=spec["group"], name=spec["name"],
                      request=inputs.request(spec, conf, table), submit_time=spec["submit_time"],
                      task_requests=own,
                      tasks=tasks, priority=int(spec.get("priority") or 0), held=held,
                      held_all=bool(spec.get("user_hold") or job.get("hold")),
                      start_at=float(spec.get("start_at") or 0.0),
                      predecessors=tuple(job.get("predecessors") or ()),
                      ad_predecessors=tuple(job.get("ad_predecessors") or ()),
                      tc=int(spec.get("tc") or 0), deadline=float(spec.get("deadline") or 0.0),
                      now_only=bool(spec.get("now")), error=bool(job.get("error")))


def _running(run, conf, table):
    qsub = (f"-l {run['l']} " if run.get("l") else "") + (f"-P {run['project']}" if run.get("project") else "")
    spec = _spec({"id": run["job"], **{k: v for k, v in run.items() if k != "pe"}, "qsub": qsub})
    req = inputs.request(spec, conf, table)
    start = float(run.get("start", 0.0))
    return Running(run["job"], run.get("task", 1), spec["owner"], _granted(run["granted"]),
                   pe=run.get("pe", ""), amounts=inputs.consumable_amounts(req, table),
                   start_time=start, end_time=start + req.runtime, project=req.project,
                   suspended=bool(run.get("suspended")), ar=int(run.get("ar") or 0),
                   userlists=req.userlists, submit_time=spec["submit_time"],
                   priority=int(spec.get("priority") or 0),
                   deadline=float(spec.get("deadline") or 0.0), request=req)


def _ar(item, table):
    resources = dict(part.split("=", 1) for part in str(item.get("l") or "").split(",") if "=" in part)
    data = {**item, "granted": _granted(item["granted"]), "resources": resources}
    return ar_mod.advance_reservation(data, table)


def snapshot(sc):
    """The Snapshot of a scenario (a dict or the name of a file under tests/scenarios)."""
    if isinstance(sc, str):
        with open(os.path.join(HERE, "scenarios", sc)) as fh:
            sc = yaml.safe_load(fh)
    conf = config(sc)
    table = inputs.complexes(conf)
    qstates = sc.get("queue_states") or {}
    queues = inputs.queue_instances(conf, inputs.hostgroups(conf), table,
                                    lambda name: letters.from_letters(qstates.get(name, "")))
    loads = {h: {"np_load_avg": 0.0, "num_proc": 2, **((sc.get("load") or {}).get(h) or {})}
             for h in inputs.exec_hosts(conf)}
    jobs = tuple(_pending(j, conf, table) for j in sc.get("jobs") or ())
    running = tuple(_running(r, conf, table) for r in sc.get("running") or ())
    live = frozenset(j.id for j in jobs) | frozenset(r.job_id for r in running) \
        | frozenset(sc.get("live") or ())
    ars = {a.id: a for a in (_ar(item, table) for item in sc.get("ars") or ())}
    unwanted = {j["id"]: frozenset(j["unwanted"]) for j in sc.get("jobs") or () if j.get("unwanted")}
    by_task = {j["id"]: {int(t): ((), frozenset(hosts)) for t, hosts in j["task_unwanted"].items()}
               for j in sc.get("jobs") or () if j.get("task_unwanted")}
    now = float(sc.get("now", 1000.0))
    return Snapshot(now=now, jobs=jobs, running=running, queues=queues,
                    unwanted=unwanted, task_refusals=by_task,
                    hosts=inputs.hosts(conf, loads, sc.get("host_states") or {}, table),
                    complexes=table, config=inputs.sched_config(conf), pes=inputs.pes(conf),
                    global_values=inputs.global_values(conf, table), live=live,
                    global_load=inputs.numeric_load(sc.get("global_load") or {}, table),
                    ad_done={int(k): frozenset(v) for k, v in (sc.get("ad_done") or {}).items()},
                    ad_ranges={int(k): tuple(v) for k, v in (sc.get("ad_ranges") or {}).items()},
                    policy=inputs.policy_view(conf), quotas=rqs.quota_sets(conf, table), ars=ars,
                    closings=calendar_mod.closings(_calendars(conf, queues), now))


def _calendars(conf, queues):
    """"queue@host" -> (year, week) entries of the instances that have a calendar."""
    groups = inputs.hostgroups(conf)
    found = {}
    for qi in queues:
        name = str(inputs.qvalue(conf.objects["queue"][qi.queue], "calendar", qi.host, groups) or "")
        cal = conf.objects["calendar"].get(name) if name not in ("", "NONE", "None") else None
        if cal is not None:
            found[qi.name] = calendar_format.entries(cal)
    return found


def request(sc, qsub="", owner="alice"):
    """The Request of qsub options in a scenario's cell (for qrsub's admission)."""
    conf = config(sc)
    return inputs.request(_spec({"id": 0, "owner": owner, "qsub": qsub}), conf, inputs.complexes(conf))


def starts(decisions):
    """Starts as ``"job.task queue@host=slots[,...]"`` in decision order."""
    return [f"{s.job_id}.{s.task} " + ",".join(f"{q}@{h}={n}" for q, h, n in s.granted)
            for s in decisions.starts]


def reasons(decisions, job_id, owner="alice"):
    return [sge_reasons.render(r, owner) for r in decisions.reasons.get(job_id, ())]


def reserves(decisions):
    """Reservations as ``"job.task@start queue@host=slots[,...]"`` in decision order."""
    return [f"{r.job_id}.{r.task}@{int(r.start) if float(r.start).is_integer() else r.start} " + ",".join(f"{q}@{h}={n}" for q, h, n in r.granted)
            for r in decisions.reserves]


def run(sc):
    snap = snapshot(sc)
    decisions = cycle(snap)
    return decisions, starts(decisions)
