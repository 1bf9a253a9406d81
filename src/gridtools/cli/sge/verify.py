"""``-w e|w|v|p`` and ``-verify``: would this job ever find a queue?

The job is put through the real scheduler pass against the cell's
configuration with every queue empty and no load (``-w e``, ``-w w``,
``-w v``), or against the current occupation and load (``-w p``). ``v`` and ``p``
only report; ``e`` refuses an unschedulable job; ``w`` warns and submits.
"""

import dataclasses
import sys
import time

from gridtools.sched.cycle import cycle
from gridtools.sched.snapshot import Snapshot


def _probe_spec(req):
    from gridtools.cli.sge import submit
    return submit.finish_spec(req, 0, "verify", "/", [])


def check(req, use_load=False, running=()):
    """(True, []) when the job could run, else (False, reason lines)."""
    ok, reasons, _ = check_spec(_probe_spec(req), use_load, running)
    return ok, reasons


def check_spec(spec, use_load=False, running=()):
    """(could run, reason lines, slots granted) for a whole job description.

    ``running`` (``Running`` records) occupies the queues as they are now;
    without it every queue is empty.
    """
    from gridtools.daemon import view
    from gridtools.model.job import Job
    from gridtools.daemon.state import State
    from gridtools.spool import config

    state = State()
    state.config = config.load()
    job = Job(spec)
    pending = view.pending_job(job, state.config, 0)
    pending = dataclasses.replace(pending, holds={}, start_at=0.0, predecessors=(), ad_predecessors=())
    groups = view.hostgroups(state.config)
    queues = view.queue_instances(state.config, groups, lambda q, h: "")
    if not use_load:
        queues = tuple(dataclasses.replace(q, load_thresholds=()) for q in queues)
    snap = Snapshot(now=time.time(), jobs=(pending,), running=tuple(running), queues=queues,
                    hosts=view.hosts(state.config, _loads(state.config, use_load), {}), complexes=view.complexes(state.config),
                    params=view.sched_params(state.config), pes=dict(state.config.objects["pe"]),
                    global_values=())
    decisions = cycle(snap)
    if decisions.starts:
        return True, [], sum(slots for _q, _h, slots in decisions.starts[0].granted)
    return False, decisions.reasons.get(spec["id"], []), 0


def occupation(snap, exclude=None):
    """``Running`` records of the tasks running now, from a published status snapshot."""
    from gridtools.sched.snapshot import Running
    found = []
    for row in snap.get("rows", ()):
        if not row.get("granted") or row["id"] == exclude:
            continue
        info = snap["jobs"].get(row["id"], {})
        found.append(Running(row["id"], row.get("task") or 1, info.get("owner", ""),
                             tuple(tuple(g) for g in row["granted"]),
                             tuple((str(k), str(v)) for k, v in (info.get("hard") or {}).items()),
                             float(row.get("time") or 0.0)))
    return tuple(found)


def _loads(conf, use_load):
    """Load values of the hosts: static ones only (arch, num_proc, totals) unless use_load."""
    from gridtools.daemon import view
    from gridtools.exec import load
    sample = load.sample()
    if not use_load:
        sample = {k: v for k, v in sample.items() if not k.startswith(("load", "np_load", "cpu"))}
    return {host: sample for host in view.exec_hosts(conf)}


def report(req, client, prog):
    """Act on the verification mode; returns an exit code to stop with, or None to submit."""
    mode = "v" if client.get("verify_only") and req["verify"] == "n" else req["verify"]
    running = ()
    if mode == "p":
        from gridtools.cli.sge import qstatus
        running = occupation(qstatus.load())
    ok, reasons = check(req, use_load=(mode == "p"), running=running)
    if mode in ("v", "p"):
        if ok:
            print("verification: found suitable queue(s)")
            return 0
        for line in reasons:
            if "PE" in line or "parallel" in line:
                sys.stderr.write(f"Unable to run job: {line}\n")
        sys.stderr.write("verification: no suitable queues\nExiting.\n")
        return 1
    if ok:
        return None
    if mode == "e":
        sys.stderr.write("Unable to run job: error: no suitable queues\nExiting.\n")
        return 1
    if mode == "w":
        sys.stderr.write("warning: no suitable queues\n")
    return None
