"""The job rows and job facts of the published status: the read model queries share.

The daemon publishes them after each pass (``daemon.publish``); a query
without a published status builds the same from the job store
(``cli/sge/qstatus``). Rows are grouped as qstat shows them: each running
task on its own row, waiting tasks of one job grouped by their state,
finished tasks of a job grouped for ``qstat -s z``; a row's ``state`` is
the letters qstat shows.
"""

from gridtools.model import perange
from gridtools.model.job import TaskState
from gridtools.model.taskset import RangeBuilder


def ranges(numbers):
    """Task numbers as compact ranges [[first, last, step], ...]."""
    builder = RangeBuilder()
    for n in numbers:
        builder.add(n)
    return builder.out


def running_state(task, held=""):
    if task.deleting:
        return "dr"
    if held:
        return "hr"
    if "s" in task.suspended:
        return "s"
    if "S" in task.suspended:
        return "S"
    if "T" in task.suspended:
        return "T"
    if "P" in task.suspended:           # the machine's policy (HTCondor's SUSPEND)
        return "S"
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
    """The qstat rows of one job: a row per running task, one per group of waiting or
    finished tasks with the same state (tasks without a record form one group at once)."""
    rows = []
    groups = {}
    for number, task in sorted(job.tasks.items()):
        if task.state is TaskState.RUNNING:
            rows.append({"id": job.id, "task": number if job.is_array else None,
                         "state": running_state(task, job.holds_of(number)), "time": task.start_time,
                         "queue": f"{task.queue}@{task.host}", "slots": task.slots,
                         "granted": task.granted, "pe": task.pe, "prio": prio})
            continue
        if task.state is TaskState.FINISHED:
            key = ("z", "")
        else:
            key = (pending_state(job, number, task, live), job.holds_of(number))
        groups.setdefault(key, []).append((number, number, 1))
    rest = job.untouched()
    if rest:
        key = ("z", "") if job.deleted else (pending_state(job, rest.first(), None, live), job.hold)
        groups.setdefault(key, []).extend(rest.runs)
    slots = perange.low(job.spec["pe"]) if job.spec.get("pe") else 1
    for (key, hold), runs in sorted(groups.items(), key=lambda item: min(item[1])[0]):
        rows.append({"id": job.id, "tasks": _compact(runs) if job.is_array else None,
                     "state": key, "hold": hold, "time": float(job.spec["submit_time"]), "queue": "",
                     "slots": slots, "prio": 0.0 if key.startswith("h") else prio})
    return rows


def _compact(runs):
    builder = RangeBuilder()
    for first, last, step in sorted(runs):
        builder.add_run(first, last, step)
    return builder.out


#: the attributes of a proc condor_q shows in its own row (in lower case)
_PROC_FACTS = ("args", "arguments", "jobprio")


def _names_proc_fact(text):
    lowered = text.lower() if text else ""
    return any(name in lowered for name in _PROC_FACTS)


def _proc_facts(texts, info):
    """Task number (as text) -> {"args": [...], "prio": N} of the later procs of a
    cluster whose arguments or JobPrio differ from proc 0's (``info``)."""
    from gridtools.formats.condor.spec import arguments
    from gridtools.jobads import proc_ad
    found = {}
    for number, text in enumerate(texts[1:], 2):
        if not _names_proc_fact(text):
            continue
        ad = proc_ad(tuple(texts), number)
        prio = ad.eval("JobPrio")
        mine = {"args": [str(a) for a in arguments(ad)],
                "prio": prio if type(prio) is int else info["prio"]}
        if mine["args"] != info["args"] or mine["prio"] != info["prio"]:
            found[str(number)] = mine
    return found


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
        "start_at": spec.get("start_at"), "hold_jid_ad": list(spec.get("hold_jid_ad") or []),
        "ad_predecessors": list(spec.get("ad_predecessors") or []), "ckpt": spec.get("ckpt"),
        "binding": spec.get("binding"), "masterq": list(spec.get("masterq") or []),
        "tc": spec.get("tc"), "override_tickets": int(spec.get("override_tickets") or 0),
        "jobshare": int(spec.get("jobshare") or 0), "condor": condor_info(job),
    }


def condor_info(job):
    """What condor_q shows of a job besides its rows: its command and arguments, batch
    name, JobPrio and universe (proc 0's; ``procs`` the arguments and JobPrio of the
    procs whose own differ), and the HTCondor bookkeeping of its tasks (hold reasons,
    removals, the seconds of their earlier runs, finished tasks kept in the queue; see
    daemon.condorjob)."""
    spec = job.spec
    info = {"cmd": spec.get("command") or spec.get("script_name") or "",
            "args": [str(a) for a in spec.get("args") or ()],
            "batch": spec.get("batch_name") if spec.get("condor_ad") else spec.get("name"),
            "prio": int(spec.get("job_prio") or 0), "universe": int(spec.get("universe") or 5),
            "ads": bool(spec.get("condor_ad"))}
    texts = spec.get("condor_ad")
    if isinstance(texts, list) and any(_names_proc_fact(text) for text in texts[1:]):
        info["procs"] = _proc_facts(texts, info)
    book = job.condor
    if book:
        info["kept"] = list(book.get("kept") or ())
        info["hold"] = book.get("hold")
        info["tasks"] = {str(k): {f: v for f, v in t.items() if f in ("hold", "removed", "gone", "wall", "slot")}
                         for k, t in (book.get("tasks") or {}).items()}
    return info


