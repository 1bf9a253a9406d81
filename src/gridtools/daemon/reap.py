"""Reaping: collecting the results of ended tasks and purging old finished jobs.

A task's end is known from ``result.yaml`` in its task folder (written by its
shepherd, which may have been started by an earlier daemon). A task whose
shepherd is gone without a result either never started (the daemon died
between writing the state and forking) and is requeued, or was lost and is
ended as failed. An accounting record is written exactly once per task run:
the task's state is written right after its record is appended, and a
daemon that restarts in between finds the record at the end of the
accounting file (``recent_records``) and does not write it again.
"""

import os
import time

from gridtools.accounting import records
from gridtools.daemon import petask, view
from gridtools.daemon.execd import reap_exited
from gridtools.model import transitions as tr
from gridtools.model.job import TaskState
from gridtools.spool import acct
from gridtools.spool import jobs as jobstore
from gridtools.spool.files import is_locked

FAILED_LOST = 18
STARTUP_GRACE = 30.0       # seconds a forked shepherd may take to lock its folder


def _alive(state, job, task, now):
    """True while a task's shepherd runs or is still being started."""
    key = (job.id, task.number)
    tdir = jobstore.task_dir(job.id, task.number)
    if is_locked(os.path.join(tdir, jobstore.SHEPHERD_LOCK)):
        state.launching.pop(key, None)
        return True
    ordered = state.launching.get(key)
    return ordered is not None and now - ordered < STARTUP_GRACE


def collect(state, dispatcher, now):
    """Handle every running task that ended; returns the number handled."""
    reap_exited()             # the exec server, should it have ended
    ended = []
    for job, task in state.running_tasks():
        if True:
            result = jobstore.read_result(job.id, task.number)
            if result is None:
                if _alive(state, job, task, now):
                    continue
                result = _lost(job, task, now)
            ended.append((job, task, result))
            state.launching.pop((job.id, task.number), None)
    records = []
    for job, task, result in ended:
        rec = _conclude(state, job, task, result, now)
        if rec is not None:
            records.append(rec)
    if records:
        acct.append(records)
    state.flush()
    return len(ended)


def _lost(job, task, now):
    tdir = jobstore.task_dir(job.id, task.number)
    try:
        started = os.path.getsize(os.path.join(tdir, jobstore.SHEPHERD_LOCK)) > 0
    except OSError:
        started = False
    if not started:
        return {"requeue": True, "never_started": True}
    return {"exit_status": 1, "failed": FAILED_LOST, "failed_reason": "shepherd lost",
            "end_time": now, "usage": {}}


def recent_records(tail_bytes=4 << 20):
    """(job, task, start time) of the records at the end of the accounting file."""
    from gridtools.formats import accounting as acct_format
    seen = set()
    try:
        with open(acct.path(), "rb") as fh:
            fh.seek(0, os.SEEK_END)
            fh.seek(max(0, fh.tell() - tail_bytes))
            lines = fh.read().decode("utf-8", "replace").splitlines()[1:]
    except OSError:
        return seen
    for line in lines:
        if line and not line.startswith("#"):
            try:
                rec = acct_format.parse(line)
            except Exception:  # noqa: BLE001 - a torn line is skipped
                continue
            seen.add((rec["job_number"], rec["task_number"] or 1, rec["start_time"]))
    return seen


def _accounted(state, job, task):
    key = (job.id, task.number, int(task.start_time) if task.start_time else 0)
    return key in state.accounted


def _conclude(state, job, task, result, now):
    """Apply a task's result; returns the accounting record to write, or None."""
    number = task.number
    if result.get("never_started"):
        tr.requeue(job, number, now)
        task.restarted = max(0, task.restarted - 1)
        state.touch(job)
        state.need_schedule = True
        return None
    want_record = not _accounted(state, job, task)
    if want_record and result.get("usage"):
        state.usage.task_ended(job.spec, number, result, now)
    if result.get("queue_error"):
        from gridtools.daemon import qcontrol
        qcontrol.mark_error(state, f"{task.queue}@{task.host}", job.id, task.host)
    if result.get("requeue") and not task.deleting:
        record = _record(state, job, task, result, now) if want_record else None
        tr.requeue(job, number, now)
        state.log(f"I|job {job.id}.{number} requeued")
    elif result.get("error_state"):
        tr.finish(job, number, result, now)
        record = _record(state, job, task, result, now) if want_record else None
        task.start_time = 0.0
        tr.fail_to_start(job, number, result.get("error_reason") or result.get("failed_reason", ""), now)
        task.failed = int(result.get("failed", 0))
        state.log(f"W|job {job.id}.{number} set to error state: {task.error_reason}")
    else:
        tr.finish(job, number, result, now)
        record = _record(state, job, task, result, now) if want_record else None
        if job.is_finished():
            state.finished_order.append(job.id)
    state.touch(job)
    state.need_schedule = True
    return record


def _record(state, job, task, result, now):
    if task.end_time == 0.0:
        task.end_time = float(result.get("end_time") or now)
    lists = view.userlists_of(state.config, job.spec["owner"], job.spec.get("group", ""))
    saved = (task.exit_status, task.failed)
    task.exit_status = int(result.get("exit_status", 0) or 0)
    task.failed = int(result.get("failed", 0) or 0)
    rec = records.record(job.spec, task, petask.merged_usage(state, job, task, result.get("usage")), lists)
    if result.get("error_state"):
        rec["start_time"] = rec["end_time"] = rec["ru_wallclock"] = 0
    task.exit_status, task.failed = saved if task.state is TaskState.RUNNING else (task.exit_status, task.failed)
    return rec


def _ended_at(job):
    return max((t.end_time for t in job.tasks.values()), default=0.0)


def purge(state, keep, max_age=None, now=None):
    """Remove finished jobs beyond the newest ``keep`` (conf ``finished_jobs``) and,
    with ``max_age``, those that ended longer ago; returns how many went."""
    now = now if now is not None else time.time()

    def expired(order):
        return max_age is not None and order and now - _ended_at(state.jobs[order[0]]) >= max_age
    if len(state.finished_order) <= keep and not max_age:
        return 0
    order = [jid for jid in state.finished_order if jid in state.jobs and state.jobs[jid].is_finished()]
    removed = 0
    while len(order) > keep or expired(order):
        jid = order.pop(0)
        state.forget(jid)
        jobstore.remove(jid)
        state.need_publish = True
        removed += 1
    state.finished_order = order
    return removed


def next_expiry(state, max_age):
    """When the oldest kept finished job expires (None without an age limit)."""
    if max_age is None:
        return None
    for jid in state.finished_order:
        job = state.jobs.get(jid)
        if job is not None and job.is_finished():
            return _ended_at(job) + max_age
    return None


def pending_deletes(state, dispatcher):
    """Re-send termination to deleting tasks whose shepherd had not started listening yet."""
    waiting = False
    for job, task in state.running_tasks():
        if task.deleting:
            waiting = True
            dispatcher.signal_task(job, task, "delete")
    return waiting


def now():
    return time.time()
