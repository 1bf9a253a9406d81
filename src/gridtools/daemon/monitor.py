"""Scheduler monitoring: what a pass decided, written to two files.

``spool/schedule`` gets one block per monitored pass in the format of Grid
Engine's schedule file (``sched.schedule``: one record per resource a task
holds or will hold, ``job:task:STATE:start:duration:level:object:resource:
amount``, then a line of eight colons). ``spool/schedd_runlog`` gets the
trace of the pass, each line behind a ctime(3) time stamp: how recently
started tasks raise their hosts' load correction, the queue instances
dropped because they are full, the starts and the reasons jobs did not
start, between START and STOP lines. A pass is monitored after ``qconf
-tsm`` (once) and every pass while sched_conf's ``params`` has
``MONITOR=1``; as in Grid Engine, the run log is written only for the pass
``qconf -tsm`` asked for (``State.monitor_next``), MONITOR=1 keeps the schedule file
alone.

``params`` ``PROFILE=1`` has each pass's time logged to the messages file as Grid
Engine's scheduler logs it (``profile_line``): a ``P`` line "PROF: scheduled in
wall (u user + s system = cpu): ..." with what the pass handled.
"""

import time

from gridtools import cell
from gridtools.formats.sge import reasons
from gridtools.sched import queues as qsel
from gridtools.sched import schedule

SCHEDULE_FILE = "schedule"
RUNLOG_FILE = "schedd_runlog"
#: queue instances named on one "queues dropped because they are full" line
FULL_PER_LINE = 10


def wanted(snap):
    """True when sched_conf's params ask for monitoring of every pass (MONITOR=1/true)."""
    value = str(snap.config.params.get("MONITOR", "0")).strip().lower()
    return value in ("1", "true", "yes", "y")


def profiled(snap):
    """True when sched_conf's params ask for the pass times (PROFILE=1/true)."""
    value = snap.config.params.get("PROFILE")
    return value is not None and str(value).strip().lower() in ("1", "true", "yes", "y")


def profile_line(snap, decisions, wall, user, system):
    """The messages line of a profiled pass, in the words of Grid Engine's
    sge_sched_thread ("PROF: scheduled in ..."), with the counts gridtools' pass has:
    sequential and parallel starts, orders (starts, suspensions and kills), hosts,
    queue instances (all and those taking jobs), jobs pending, running, suspended,
    held, in error, and all."""
    parallel = sum(1 for s in decisions.starts if s.pe)
    orders = len(decisions.starts) + len(decisions.suspends) + len(decisions.kills)
    held = sum(1 for j in snap.jobs if j.held_all)
    error = sum(1 for j in snap.jobs if j.error)
    suspended = sum(1 for r in snap.running if r.suspended)
    running = len({r.job_id for r in snap.running})
    open_queues = sum(1 for qi in snap.queues if qsel.closed(qi, snap.hosts.get(qi.host)) is None)
    waiting = len(snap.jobs) - held - error
    return (f"P|PROF: scheduled in {wall:.3f} (u {user:.3f} + s {system:.3f} = {user + system:.3f}): "
            f"{len(decisions.starts) - parallel} sequential, {parallel} parallel, {orders} orders, "
            f"{len(snap.hosts)} H, {open_queues} Q, {len(snap.queues)} QA, {waiting} J(qw), "
            f"{running - suspended} J(r), {suspended} J(s), {held} J(h), {error} J(e), "
            f"{len(snap.jobs) + running} J(all)")


def load_correction_lines(snap, now):
    """What each task started within load_adjustment_decay_time adds to its hosts' load
    correction (a hundredth per slot, fading with age), and the host's sum so far."""
    decay = snap.config.load_adjustment_decay
    if decay <= 0:
        return []
    sums, lines = {}, []
    for run in sorted(snap.running, key=lambda r: (r.job_id, r.task)):
        age = int(now) - int(run.start_time)
        if age > decay:
            continue
        for queue, host, slots in run.granted:
            added = (1.0 - age / decay) * slots * 100
            sums[host] = int(added + sums.get(host, 0))
            lines.append(f"JOB {run.job_id}.{run.task} [{slots}] in queue {queue}@{host} "
                         f"increased absolute lc of host {host} by {int(added)} to {sums[host]}")
    return lines


def full_instances(snap):
    """Queue instances that take jobs but have no free slot at the start of the pass."""
    used = {}
    for run in snap.running:
        for queue, host, slots in run.granted:
            used[f"{queue}@{host}"] = used.get(f"{queue}@{host}", 0) + slots
    return [qi.name for qi in snap.queues
            if used.get(qi.name, 0) >= qi.slots and qsel.closed(qi, snap.hosts.get(qi.host)) is None]


def _full_lines(names):
    lines = [f'queue instance "{name}" dropped because it is full' for name in names]
    for at in range(0, len(names), FULL_PER_LINE):
        lines.append("queues dropped because they are full: " + " ".join(names[at:at + FULL_PER_LINE]))
    return lines


def runlog_block(snap, decisions, now):
    """The trace of one pass: load corrections, full queue instances, starts and reasons
    between START and STOP lines."""
    stamp = time.ctime(now)
    lines = ["-------------START-SCHEDULER-RUN-------------"]
    lines += load_correction_lines(snap, now)
    lines += _full_lines(full_instances(snap))
    for start in decisions.starts:
        for queue, host, slots in start.granted:
            lines.append(f"JOB {start.job_id}.{start.task} [{slots}] starts in queue {queue}@{host}")
    seen = set(lines)
    owners = {job.id: job.owner for job in snap.jobs}
    for job_id in sorted(decisions.reasons):
        for reason in decisions.reasons[job_id]:
            line = reasons.runlog_line(job_id, reason, owners.get(job_id, ""))
            if line not in seen:
                seen.add(line)
                lines.append(line)
    lines.append("--------------STOP-SCHEDULER-RUN-------------")
    return "".join(f"{stamp}|{line}\n" for line in lines)


def write(snap, decisions, now, runlog=False):
    """Append this pass to spool/schedule, and to spool/schedd_runlog with ``runlog``
    (the pass ``qconf -tsm`` asked for)."""
    files = [(SCHEDULE_FILE, schedule.block(snap, decisions))]
    if runlog:
        files.append((RUNLOG_FILE, runlog_block(snap, decisions, now)))
    for name, text in files:
        with open(cell.spool(name), "a", encoding="utf-8", errors="backslashreplace") as fh:
            fh.write(text)
