"""Reading the cell's status for queries: the daemon's snapshot, or the spool.

``load()`` returns the published snapshot (see daemon.publish) merged with
submit requests the daemon has not taken in yet, so a job shows up in qstat
the moment qsub returned. Without a snapshot (no daemon has run yet) the
rows are built from the spool's job files.
"""

import os
import pwd

from gridtools import cell
from gridtools.model import perange
from gridtools.spool import status as spool_status

ACTIVE = ("r", "hr", "Rr", "t", "s", "S", "T", "dr", "dt")


def load():
    snap = spool_status.read()
    if snap is None:
        snap = _from_spool()
    _merge_requests(snap)
    return snap


def _from_spool():
    from gridtools.daemon.publish import job_info, job_rows
    from gridtools.model.job import Job
    from gridtools.spool import jobs as jobstore
    rows, info = [], {}
    jobs = []
    for job_id in jobstore.list_ids():
        spec = jobstore.read_spec(job_id)
        if spec is not None:
            jobs.append(Job.from_parts(spec, jobstore.read_state(job_id)))
    live = {j.id for j in jobs if not j.is_finished()}
    for job in jobs:
        rows.extend(job_rows(job, 0.0, live))
        info[job.id] = job_info(job, None)
    return {"time": 0.0, "rows": rows, "jobs": info, "queues": [], "hosts": {}, "reasons": {},
            "exechosts": []}


def _merge_requests(snap):
    folder = cell.spool("requests")
    try:
        names = [n for n in os.listdir(folder) if n.endswith(".submit")]
    except FileNotFoundError:
        return
    if not names:
        return
    from gridtools.daemon.publish import ranges
    from gridtools.formats import spoolyaml
    known = snap["jobs"]
    for name in sorted(names):
        try:
            with open(os.path.join(folder, name), encoding="utf-8") as fh:
                spec = spoolyaml.load(fh.read()).get("job") or {}
            uid = os.stat(os.path.join(folder, name)).st_uid
        except (OSError, ValueError, spoolyaml.SpoolFormatError):
            continue
        if spec.get("id") in known:
            continue
        try:
            spec["owner"] = pwd.getpwuid(uid).pw_name
        except KeyError:
            spec["owner"] = str(uid)
        _add_unprocessed(snap, spec, ranges)


def _add_unprocessed(snap, spec, ranges):
    rng = spec.get("tasks")
    tasks = ranges(list(range(rng[0], rng[1] + 1, rng[2]))) if rng else None
    state = "hqw" if spec.get("user_hold") or spec.get("hold_jid") else "qw"
    slots = perange.low(spec["pe"]) if spec.get("pe") else 1
    snap["rows"].append({"id": spec["id"], "tasks": tasks, "state": state, "prio": 0.0,
                         "time": float(spec["submit_time"]), "queue": "", "slots": slots})
    res = spec.get("resources") or {}
    snap["jobs"][spec["id"]] = {
        "name": spec.get("name") or "", "owner": spec["owner"], "group": "", "project": spec.get("project") or "",
        "department": "defaultdepartment", "submit_time": float(spec["submit_time"]),
        "priority": int(spec.get("priority", 0)), "hard": dict(res.get("hard") or {}),
        "soft": dict(res.get("soft") or {}), "hard_queues": [], "soft_queues": [],
        "pe": spec.get("pe"), "hold_jid": spec.get("hold_jid") or [], "predecessors": [],
        "urgency": [0.0, 0.0, 0.0, 0.0], "deadline": None, "array": bool(rng), "tasks": rng,
        "account": spec.get("account") or "sge", "ar": spec.get("ar")}


def task_label(row):
    """The ja-task-ID column text of a row."""
    if row.get("task") is not None:
        return str(row["task"])
    tasks = row.get("tasks")
    if not tasks:
        return ""
    parts = []
    for first, last, step in tasks:
        parts.append(str(first) if first == last else f"{first}-{last}:{step}")
    return ",".join(parts)
