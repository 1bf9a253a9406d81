"""``-w e|w|v|p``: would this job ever find a queue?

The job is put through the real scheduler pass against the cell's
configuration with every queue empty and no load (``-w e``, ``-w w``,
``-w v``), or against the current occupation and load (``-w p``). ``v`` and ``p``
only report; ``e`` refuses an unschedulable job; ``w`` warns and submits.
"""

import dataclasses
import sys
import time

from gridtools.sched.cycle import cycle


def _probe_spec(req):
    from gridtools.cli.sge import submit
    return submit.finish_spec(req, 0, "verify", "/", [])


def check(req, use_load=False, running=(), job_id=0):
    """(True, []) when the job could run, else (False, reason lines); ``job_id``: the
    number the lines give the job."""
    spec = _probe_spec(req)
    spec["id"] = job_id
    ok, reasons, _ = check_spec(spec, use_load, running)
    return ok, job_lines(job_id, reasons)


def job_lines(job_id, reasons):
    """The reason lines as ``-w v`` prints them: a line about the job begins with it
    (``Job 7 cannot run in queue ...``, ``Job 7 (-l arch=...) cannot run ...``,
    ``Job 7 has no permission for advance_reservation "3"``)."""
    return [f"Job {job_id} {line}" if line.startswith(("cannot", "(-l", "has no permission")) else line
            for line in reasons]


def _would_be_id():
    """The number the job would get, used up as Grid Engine's qmaster uses it up: its
    claim is kept (the daemon sweeps it later), so that the next job gets another."""
    from gridtools.spool import ids
    return ids.allocate("job")[0]


def check_spec(spec, use_load=False, running=()):
    """(could run, reason lines, slots granted) for a whole job description.

    ``running`` (from ``occupation``) occupies the queues as they are now;
    without it every queue is empty.
    """
    from gridtools.formats.sge import reasons as sge_reasons
    from gridtools.sched import inputs
    from gridtools.sched.snapshot import PendingJob
    from gridtools.spool import config

    conf = config.load()
    table = inputs.complexes(conf)
    req = inputs.request(spec, conf, table)
    job = PendingJob(id=spec["id"], owner=spec["owner"], group=spec.get("group", ""), request=req,
                     submit_time=float(spec.get("submit_time") or 0.0), tasks=(1,),
                     priority=int(spec.get("priority") or 0))
    snap = cell_snapshot(conf, (job,), running, use_load, quotas=use_load)   # (-w p: the cell as it is)
    if spec.get("ar"):
        snap = _inside_reservation(snap, int(spec["ar"]), table)
    decisions = cycle(snap)
    if decisions.starts:
        return True, [], sum(slots for _q, _h, slots in decisions.starts[0].granted)
    reasons = decisions.reasons.get(spec["id"], ())
    if running:
        reasons = _full_as_short(reasons, req)
    lines = [sge_reasons.render(r, spec["owner"]) for r in reasons]
    return False, lines, 0


def _inside_reservation(snap, ar_id, table):
    """``snap`` with the job's advance reservation in it, at a time inside its window: as
    Grid Engine verifies a job of a reservation against what the reservation holds,
    whenever it starts. (A reservation that is not stored is left out: the submission
    is refused for it before.)"""
    from gridtools.sched import ar as sched_ar
    from gridtools.spool import ars
    data = ars.read(ar_id)
    try:
        held = sched_ar.advance_reservation(data, table) if data is not None else None
    except (KeyError, TypeError, ValueError):
        held = None
    if held is None:
        return snap
    return dataclasses.replace(snap, ars={ar_id: held}, now=max(snap.now, held.start))


def _full_as_short(reasons, req):
    """The reasons of a check against the queues as they are now, as Grid Engine's
    verification words them: a full queue instance is one that offers only
    ``qc:slots=0`` (the scheduler's "dropped because it is full" and "All queues
    dropped" are what its passes say)."""
    from gridtools.formats.sge.reasons import as_reason
    from gridtools.sched.reasons import Reason, Why
    asked = ",".join(ask.text for ask in req.hard if getattr(ask, "text", "")) or "NONE"
    found = []
    for item in reasons:
        reason = as_reason(item)
        if reason.why is Why.QI_FULL:
            found.append(Reason(Why.RESOURCE_SHORT, (asked, "queue", reason.args[0], "slots", 0.0)))
        elif reason.why is not Why.ALL_DROPPED:
            found.append(item)
    return found


def cell_snapshot(conf, jobs=(), running=(), use_load=False, quotas=False):
    """A Snapshot of the cell's configuration with ``jobs`` pending and the tasks of
    ``running`` (from ``occupation``) running; without ``use_load`` no load threshold
    applies and only static load values are known; ``quotas`` adds the quota sets."""
    from gridtools.sched import inputs, rqs
    from gridtools.sched.snapshot import Snapshot
    table = inputs.complexes(conf)
    queues = inputs.queue_instances(conf, inputs.hostgroups(conf), table)
    if not use_load:
        queues = tuple(dataclasses.replace(q, load_thresholds=()) for q in queues)
    return Snapshot(now=time.time(), jobs=tuple(jobs), running=_running(running, conf, table),
                    queues=queues, hosts=inputs.hosts(conf, _loads(conf, use_load), {}, table),
                    complexes=table, config=inputs.sched_config(conf), pes=inputs.pes(conf),
                    global_values=inputs.global_values(conf, table),
                    quotas=rqs.quota_sets(conf, table) if quotas else ())


def _running(items, conf, table):
    """Running records of the tasks ``occupation`` found."""
    from gridtools.sched import inputs
    from gridtools.sched.snapshot import Running
    found = []
    for item in items:
        req = inputs.request({"owner": item["owner"], "group": item.get("group") or "",
                              "resources": {"hard": item["hard"]}, "ar": item.get("ar") or 0,
                              "project": item.get("project"), "per_job_requests": item.get("per_job")},
                             conf, table)
        found.append(Running(item["id"], item["task"], item["owner"], item["granted"],
                             pe=item.get("pe") or "", amounts=inputs.consumable_amounts(req, table),
                             start_time=item["time"], project=req.project, ar=req.ar,
                             userlists=req.userlists))     # (what rules naming @lists or ARs match)
    return tuple(found)


def occupation(snap, exclude=None):
    """The tasks running now, from a published status snapshot."""
    from gridtools.cli.status import held_once, task_hard
    found = []
    for row in snap.get("rows", ()):
        if not row.get("granted") or row["id"] == exclude:
            continue
        info = snap["jobs"].get(row["id"], {})
        hard = dict(task_hard(snap, row))
        found.append({"id": row["id"], "task": row.get("task") or 1, "owner": info.get("owner", ""),
                      "granted": tuple(tuple(g) for g in row["granted"]),
                      "hard": hard, "per_job": [name for name in hard if held_once(snap, row, name)],
                      "pe": row.get("pe") or "",
                      "project": info.get("project") or "", "group": info.get("group") or "",
                      "ar": info.get("ar") or 0, "time": float(row.get("time") or 0.0)})
    return tuple(found)


def _loads(conf, use_load):
    """Load values of the hosts: static ones only (arch, num_proc, totals) unless use_load."""
    from gridtools.exec import load
    from gridtools.sched import inputs
    sample = load.sample()
    if not use_load:
        sample = {k: v for k, v in sample.items() if not k.startswith(("load", "np_load", "cpu"))}
    return {host: sample for host in inputs.exec_hosts(conf)}


def report(req, client, prog):
    """Act on the verification mode; returns an exit code to stop with, or None to submit."""
    mode = req["verify"]
    running = ()
    if mode == "p":
        from gridtools.cli.sge import qstatus
        running = occupation(qstatus.load())
    job_id = _would_be_id() if mode in ("v", "p") else 0
    ok, reasons = check(req, use_load=(mode == "p"), running=running, job_id=job_id)
    if mode in ("v", "p"):
        if ok:
            print("verification: found suitable queue(s)")
            return 0
        lines = reasons + ["verification: no suitable queues"]
        sys.stderr.write("Unable to run job: " + "\n".join(lines) + "\nExiting.\n")
        return 1
    if ok:
        return None
    if mode == "e":
        sys.stderr.write("Unable to run job: error: no suitable queues\nExiting.\n")
        return 1
    if mode == "w":
        sys.stderr.write("warning: no suitable queues\n")
    return None
