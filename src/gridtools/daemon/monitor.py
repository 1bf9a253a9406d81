"""Scheduler monitoring (qconf -tsm): what one pass decided, written to two files.

``spool/schedule`` gets one block per monitored pass, in the format of
Grid Engine's schedule file: one record per resource a job holds,
``job:task:state:start:duration:level:object:resource:amount`` (state
STARTING for tasks this pass starts, RUNNING for the others; level Q for a
queue instance, L for a resource quota set), then a line of eight colons.
A job without a run time limit lasts until the end of 32-bit time, as in
Grid Engine. ``spool/schedd_runlog`` gets the trace of the pass: the
starts and the reasons jobs did not start, between START and STOP lines.
"""

import time

from gridtools import cell
from gridtools.formats import values

SCHEDULE_FILE = "schedule"
RUNLOG_FILE = "schedd_runlog"
#: the end of 32-bit time, where a job without a limit "ends"
END_OF_TIME = 4294967295
SEPARATOR = "::::::::"


def _duration(start, resources, params):
    """Seconds a task is planned to take: its h_rt or the default duration."""
    text = dict(resources).get("h_rt") or str(params.get("default_duration", "INFINITY"))
    try:
        seconds = values.parse_time(str(text))
    except Exception:  # noqa: BLE001 - an unreadable limit counts as no limit
        seconds = values.INFINITY
    if seconds == values.INFINITY:
        return END_OF_TIME - int(start)
    return int(seconds)


def _quota_sets():
    """Enabled resource quota sets with the access lists and host groups they may name."""
    from gridtools.daemon import confstore
    from gridtools.formats.sge.hostgroup import resolve_hostgroups
    sets = [s for _, s in sorted(confstore.load_all("rqs").items()) if s.get("enabled")]
    if not sets:
        return [], {}, {}
    usersets = confstore.load_all("userset")
    try:
        groups = resolve_hostgroups(confstore.load_all("hostgroup"))
    except Exception:  # noqa: BLE001 - a broken group only loses the L records
        groups = {}
    return sets, usersets, groups


def _records(job_id, task, state, start, duration, owner, granted, quotas):
    from gridtools.formats.sge import rqs
    sets, usersets, groups = quotas
    head = f"{job_id}:{task}:{state}:{int(start)}:{duration}"
    lines = []
    for queue, host, slots in granted:
        lines.append(f"{head}:Q:{queue}@{host}:slots:{float(slots):f}")
        for rqs_set in sets:
            found = rqs.matching_rule(rqs_set, owner, queue=queue, host=host, usersets=usersets,
                                      hostgroups=groups)
            if found is not None and "slots" in found[1]["to"]:
                key = "/".join(rqs.usage_key(found[1], owner, queue=queue, host=host))
                lines.append(f"{head}:L:{rqs_set['name']}:{key}/:{float(slots):f}")
    return lines


def schedule_block(snap, decisions, now, quotas=([], {}, {})):
    """The records of one pass followed by the separator line."""
    lines = []
    params = snap.params or {}
    owners = {job.id: job for job in snap.jobs}
    for run in snap.running:
        lines += _records(run.job_id, run.task, "RUNNING", run.start_time,
                          _duration(run.start_time, run.resources, params), run.owner, run.granted, quotas)
    for start in decisions.starts:
        job = owners.get(start.job_id)
        resources = job.hard_resources if job is not None else ()
        owner = job.owner if job is not None else ""
        lines += _records(start.job_id, start.task, "STARTING", now, _duration(now, resources, params),
                          owner, [tuple(g) for g in start.granted], quotas)
    return "".join(line + "\n" for line in lines) + SEPARATOR + "\n"


def _reason_line(job_id, line):
    if line.startswith(("cannot", "(")):
        return f"Job {job_id} {line}"
    if line.startswith("job "):
        return f"Job {job_id} {line[4:]}"
    return line


def runlog_block(snap, decisions, now):
    """The trace of one pass: starts and reasons between START and STOP lines."""
    stamp = time.strftime("%a %b %d %H:%M:%S %Y", time.localtime(now))
    lines = ["-------------START-SCHEDULER-RUN-------------"]
    for start in decisions.starts:
        for queue, host, slots in start.granted:
            lines.append(f"JOB {start.job_id}.{start.task} [{slots}] starts in queue {queue}@{host}")
    seen = set()
    for job_id in sorted(decisions.reasons):
        for reason in decisions.reasons[job_id]:
            line = _reason_line(job_id, reason)
            if line not in seen:
                seen.add(line)
                lines.append(line)
    lines += list(decisions.global_reasons)
    lines.append("--------------STOP-SCHEDULER-RUN-------------")
    return "".join(f"{stamp}|{line}\n" for line in lines)


def write(snap, decisions, now):
    """Append this pass to spool/schedule and spool/schedd_runlog."""
    quotas = _quota_sets()
    for name, text in ((SCHEDULE_FILE, schedule_block(snap, decisions, now, quotas)),
                       (RUNLOG_FILE, runlog_block(snap, decisions, now))):
        with open(cell.spool(name), "a", encoding="utf-8", errors="backslashreplace") as fh:
            fh.write(text)
