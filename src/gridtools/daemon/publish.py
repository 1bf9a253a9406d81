"""The status snapshot queries read (qstat, qhost, condor_q, condor_status).

Rows are grouped as qstat shows them: each running task on its own row,
pending tasks of one job grouped by their state, finished tasks of a job
grouped for ``qstat -s z``. Everything is plain data (marshal-able).
"""

import time

from gridtools.daemon import view
from gridtools.model.job import TaskState
from gridtools.spool import status as spool_status


def ranges(numbers):
    """Task numbers as compact ranges [[first, last, step], ...]."""
    out = []
    for n in numbers:
        if out:
            first, last, step = out[-1]
            if first == last and n > last:
                out[-1] = [first, n, n - first]
                continue
            if n - last == step:
                out[-1][1] = n
                continue
        out.append([n, n, 1])
    return out


def running_state(task):
    if task.deleting:
        return "dr"
    if "s" in task.suspended:
        return "s"
    if "S" in task.suspended:
        return "S"
    if "T" in task.suspended:
        return "T"
    return "Rr" if task.restarted else "r"


def pending_state(job, number, task, live):
    """qstat state letters of a task that has not run (or waits to run again)."""
    if task is not None and task.state is TaskState.ERROR:
        return "Eqw"
    held = bool(job.holds_of(number)) or any(p in live for p in job.spec.get("predecessors") or ())
    restarted = task is not None and task.restarted
    if held:
        return "hRq" if restarted else "hqw"
    return "Rq" if restarted else "qw"


def job_rows(job, prio, live):
    """The qstat rows of one job."""
    rows = []
    spec = job.spec
    groups = {}
    for number in job.numbers():
        task = job.tasks.get(number)
        if task is not None and task.state is TaskState.RUNNING:
            rows.append({"id": job.id, "task": number if job.is_array else None,
                         "state": running_state(task), "time": task.start_time,
                         "queue": f"{task.queue}@{task.host}", "slots": task.slots,
                         "granted": task.granted, "prio": prio})
            continue
        if task is not None and task.state is TaskState.FINISHED:
            key = ("z", "")
        else:
            key = (pending_state(job, number, task, live), job.holds_of(number))
        groups.setdefault(key, []).append(number)
    slots = spec["pe"][1] if spec.get("pe") else 1
    for (key, hold), numbers in groups.items():
        rows.append({"id": job.id, "tasks": ranges(numbers) if job.is_array else None,
                     "state": key, "hold": hold, "time": float(spec["submit_time"]), "queue": "",
                     "slots": slots, "prio": 0.0 if key.startswith("h") else prio})
    return rows


def job_info(job, decisions_urg):
    spec = job.spec
    res = spec.get("resources") or {}
    return {
        "name": spec["name"], "owner": spec["owner"], "group": spec.get("group", ""),
        "project": spec.get("project") or "", "department": spec.get("department") or "defaultdepartment",
        "submit_time": float(spec["submit_time"]), "priority": int(spec.get("priority", 0)),
        "hard": dict(res.get("hard") or {}), "soft": dict(res.get("soft") or {}),
        "hard_queues": list((spec.get("queues") or {}).get("hard") or []),
        "soft_queues": list((spec.get("queues") or {}).get("soft") or []),
        "pe": list(spec["pe"]) if spec.get("pe") else None,
        "hold_jid": list(spec.get("hold_jid") or []), "predecessors": list(spec.get("predecessors") or []),
        "urgency": list(decisions_urg or (0.0, 0.0, 0.0, 0.0)), "deadline": spec.get("deadline"),
        "array": bool(spec.get("tasks")), "tasks": spec.get("tasks"),
        "account": spec.get("account") or "sge", "ar": spec.get("ar"),
    }


def queue_rows(state, snap_queues, loads):
    used = {}
    for job in state.jobs.values():
        for task in job.running():
            for queue, host, slots in task.granted:
                key = f"{queue}@{host}"
                used[key] = used.get(key, 0) + slots
    rows = []
    for qi in snap_queues:
        load = loads.get(qi.host, {})
        rows.append({"name": qi.name, "queue": qi.queue, "host": qi.host,
                     "qtype": sorted(qi.qtype), "slots": qi.slots, "used": used.get(qi.name, 0),
                     "resv": 0, "load_avg": load.get("np_load_avg"), "arch": load.get("arch", "-"),
                     "states": qi.states, "pe_list": list(qi.pe_list)})
    return rows


def publish(state, snap_queues, loads, urgencies, now=None):
    now = now or time.time()
    live = state.live_ids()
    rows, info = [], {}
    for job in state.jobs.values():
        prio = state.priorities.get(job.id, 0.0)
        rows.extend(job_rows(job, prio, live))
        info[job.id] = job_info(job, urgencies.get(job.id))
    snapshot = {
        "time": now, "started": state.started, "rows": rows, "jobs": info,
        "queues": queue_rows(state, snap_queues, loads),
        "hosts": {name: dict(load) for name, load in loads.items()},
        "exechosts": view.exec_hosts(state.config),
        "reasons": {jid: list(lines) for jid, lines in state.reasons.items()},
    }
    spool_status.publish(snapshot)
    state.need_publish = False
