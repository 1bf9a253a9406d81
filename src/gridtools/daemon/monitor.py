"""Scheduler monitoring: what a pass decided, written to two files.

``spool/schedule`` gets one block per monitored pass in the format of Grid
Engine's schedule file (``sched.schedule``: one record per resource a task
holds or will hold, ``job:task:STATE:start:duration:level:object:resource:
amount``, then a line of eight colons). ``spool/schedd_runlog`` gets the
trace of the pass: the starts and the reasons jobs did not start, between
START and STOP lines. A pass is monitored after ``qconf -tsm`` (once) and
every pass while sched_conf's ``params`` has ``MONITOR=1``.
"""

import time

from gridtools import cell
from gridtools.formats.sge import reasons
from gridtools.sched import schedule

SCHEDULE_FILE = "schedule"
RUNLOG_FILE = "schedd_runlog"


def wanted(snap):
    """True when sched_conf's params ask for monitoring of every pass (MONITOR=1/true)."""
    value = str(snap.config.params.get("MONITOR", "0")).strip().lower()
    return value in ("1", "true", "yes", "y")


def runlog_block(snap, decisions, now):
    """The trace of one pass: starts and reasons between START and STOP lines."""
    stamp = time.strftime("%a %b %d %H:%M:%S %Y", time.localtime(now))
    lines = ["-------------START-SCHEDULER-RUN-------------"]
    for start in decisions.starts:
        for queue, host, slots in start.granted:
            lines.append(f"JOB {start.job_id}.{start.task} [{slots}] starts in queue {queue}@{host}")
    seen = set()
    owners = {job.id: job.owner for job in snap.jobs}
    for job_id in sorted(decisions.reasons):
        for reason in decisions.reasons[job_id]:
            line = reasons.runlog_line(job_id, reason, owners.get(job_id, ""))
            if line not in seen:
                seen.add(line)
                lines.append(line)
    lines.append("--------------STOP-SCHEDULER-RUN-------------")
    return "".join(f"{stamp}|{line}\n" for line in lines)


def write(snap, decisions, now):
    """Append this pass to spool/schedule and spool/schedd_runlog."""
    for name, text in ((SCHEDULE_FILE, schedule.block(snap, decisions)),
                       (RUNLOG_FILE, runlog_block(snap, decisions, now))):
        with open(cell.spool(name), "a", encoding="utf-8", errors="backslashreplace") as fh:
            fh.write(text)
