"""Reaping: collecting the results of ended tasks and purging old finished jobs.

A task's end is known from ``result.yaml`` in its task folder (written by its
shepherd, which may have been started by an earlier daemon). A task whose
shepherd is gone without a result either never started (the daemon died
between writing the state and forking) and is requeued, or was lost and is
ended as failed. An accounting record is written exactly once per task run:
a marker file in the task folder records that it was.
"""

import os
import time

from gridtools.accounting import records
from gridtools.daemon import view
from gridtools.model import transitions as tr
from gridtools.model.job import TaskState
from gridtools.spool import acct
from gridtools.spool import jobs as jobstore
from gridtools.spool.files import is_locked

FAILED_LOST = 18
STARTUP_GRACE = 30.0       # seconds a forked shepherd may take to lock its folder


def reap_children(state):
    """waitpid() every exited shepherd child of this daemon."""
    while state.shepherds:
        try:
            pid, _status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            state.shepherds.clear()
            return
        if pid == 0:
            return
        state.shepherds.pop(pid, None)


def _alive(state, job, task, now):
    tdir = jobstore.task_dir(job.id, task.number)
    if is_locked(os.path.join(tdir, jobstore.SHEPHERD_LOCK)):
        return True
    if task.shepherd_pid in state.shepherds:
        return True
    return False


def collect(state, dispatcher, now):
    """Handle every running task that ended; returns the number handled."""
    reap_children(state)
    ended = []
    for job in list(state.jobs.values()):
        for task in job.running():
            result = jobstore.read_result(job.id, task.number)
            if result is None:
                if _alive(state, job, task, now):
                    continue
                result = _lost(job, task, now)
            ended.append((job, task, result))
    accounting = []
    for job, task, result in ended:
        rec = _conclude(state, job, task, result, now)
        if rec is not None:
            accounting.append((job, task, rec))
    if accounting:
        acct.append([rec for _, _, rec in accounting])
    for job, task, _ in accounting:
        _mark_accounted(job, task)
    state.flush()
    for job, task, _ in ended:
        if job.state_of(task.number) is not TaskState.RUNNING:
            jobstore.remove_task_dir(job.id, task.number)
    return len(ended)


def _lost(job, task, now):
    tdir = jobstore.task_dir(job.id, task.number)
    if not os.path.exists(os.path.join(tdir, "shepherd.pid")):
        return {"requeue": True, "never_started": True}
    return {"exit_status": 1, "failed": FAILED_LOST, "failed_reason": "shepherd lost",
            "end_time": now, "usage": {}}


def _accounted(job, task):
    return os.path.exists(os.path.join(jobstore.task_dir(job.id, task.number), "accounted"))


def _mark_accounted(job, task):
    try:
        with open(os.path.join(jobstore.task_dir(job.id, task.number), "accounted"), "w"):
            pass
    except OSError:
        pass


def _conclude(state, job, task, result, now):
    """Apply a task's result; returns the accounting record to write, or None."""
    number = task.number
    if result.get("never_started"):
        tr.requeue(job, number, now)
        task.restarted = max(0, task.restarted - 1)
        state.touch(job)
        state.need_schedule = True
        return None
    want_record = not _accounted(job, task)
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
    rec = records.record(job.spec, task, result.get("usage"), lists)
    if result.get("error_state"):
        rec["start_time"] = rec["end_time"] = rec["ru_wallclock"] = 0
    task.exit_status, task.failed = saved if task.state is TaskState.RUNNING else (task.exit_status, task.failed)
    return rec


def purge(state, keep):
    """Remove finished jobs beyond the newest ``keep`` (conf ``finished_jobs``)."""
    order = [jid for jid in state.finished_order if jid in state.jobs and state.jobs[jid].is_finished()]
    state.finished_order = order
    while len(state.finished_order) > keep:
        jid = state.finished_order.pop(0)
        state.forget(jid)
        jobstore.remove(jid)
        state.need_publish = True


def pending_deletes(state, dispatcher):
    """Re-send termination to deleting tasks whose shepherd had not started listening yet."""
    waiting = False
    for job in state.jobs.values():
        for task in job.running():
            if task.deleting:
                waiting = True
                dispatcher.signal_task(job, task, "delete")
    return waiting


def now():
    return time.time()
