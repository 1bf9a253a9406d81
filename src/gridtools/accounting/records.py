"""Building the accounting record of an ended task (pure).

The record is a dict with the field names of ``formats.accounting.FIELDS``;
the daemon appends its rendered line to the cell's accounting file.
"""

from gridtools.formats import accounting as acct_format
from gridtools.model import perange


def category_of(spec, userlists=()):
    hard = (spec.get("resources") or {}).get("hard") or {}
    soft = (spec.get("resources") or {}).get("soft") or {}
    pe = spec.get("pe")
    req = {
        "U": sorted(userlists), "P": spec.get("project"),
        "q": (spec.get("queues") or {}).get("hard"), "masterq": spec.get("masterq"),
        "l": hard, "soft_l": soft, "ckpt": spec.get("ckpt"), "ar": spec.get("ar"),
        "I": spec.get("now"),         # (-I y: an immediate job, -now y; qrsh by default)
        "pe": (pe[0], perange.text(pe)) if pe else None,
    }
    return acct_format.category(spec["owner"], req)


def record(spec, task, usage, userlists=(), priority=0):
    """The accounting record of task ``task`` (a model Task) of job ``spec``; ``priority``:
    the nice value of the queue it ran in (accounting(5): the queue's, not the job's -p)."""
    usage = usage or {}
    utime = float(usage.get("ru_utime", 0.0))
    stime = float(usage.get("ru_stime", 0.0))
    start = int(task.start_time) if task.start_time else 0
    end = int(task.end_time) if task.end_time else 0
    rec = {
        "qname": task.queue or "UNKNOWN", "hostname": task.host or "UNKNOWN",
        "group": spec.get("group", ""), "owner": spec["owner"], "job_name": spec["name"],
        "job_number": spec["id"], "account": spec.get("account") or "sge",
        "priority": int(priority), "submission_time": int(spec["submit_time"]),
        "start_time": start, "end_time": end, "failed": int(task.failed or 0),
        "exit_status": int(task.exit_status or 0),
        "ru_wallclock": max(0, end - start) if start else 0,
        "ru_utime": utime, "ru_stime": stime, "ru_maxrss": float(usage.get("ru_maxrss", 0)),
        "project": spec.get("project") or "NONE", "department": spec.get("department") or "defaultdepartment",
        "granted_pe": (task.pe or spec["pe"][0]) if spec.get("pe") else "NONE",
        "slots": int(task.slots or 1), "task_number": task.number if spec.get("tasks") else 0,
        "cpu": utime + stime, "mem": float(usage.get("mem", 0.0)),
        "io": float(usage.get("io", 0.0)), "category": category_of(spec, userlists),
        "iow": 0.0, "pe_taskid": "NONE", "maxvmem": float(usage.get("maxvmem", 0)),
        "arid": int(spec.get("ar") or 0), "ar_submission_time": int(spec.get("ar_submission_time") or 0),
    }
    for name in ("ru_ixrss", "ru_ismrss", "ru_idrss", "ru_isrss", "ru_minflt", "ru_majflt",
                 "ru_nswap", "ru_inblock", "ru_oublock", "ru_msgsnd", "ru_msgrcv",
                 "ru_nsignals", "ru_nvcsw", "ru_nivcsw"):
        rec[name] = usage.get(name, 0)
    return rec
