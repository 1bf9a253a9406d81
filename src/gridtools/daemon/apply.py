"""The one door through which the daemon changes jobs.

Every decision of a pass (starts, suspensions, rejections) and every effect
of a request or of an ended task on a job goes through a function here.
Each makes the change with ``model.transitions`` (whose table ``LEGAL``
says which changes a task's state allows), marks the job for writing and
for the next pass, and has the execution layer (``Dispatcher``) signal
shepherds where a running task is concerned. Nothing else in the daemon
writes a job's state.
"""

from gridtools.model import transitions as tr
from gridtools.model.job import TaskState


def _changed(state, job, schedule=True):
    state.touch(job)
    if schedule:
        state.need_schedule = True


# ---------------------------------------------------------------- starting

def dispatched(state, job, number, granted, pe, now):
    """A decided start: the task runs on ``granted`` (its shepherd is started after the
    state is written)."""
    tr.dispatch(job, number, granted, now, pe=pe)
    state.active_jobs.add(job.id)
    _changed(state, job, schedule=False)


def reject(state, job, now, reason="immediate job could not be scheduled"):
    """An immediate job (-now y, qrsh) that could not start in its first pass leaves."""
    for number in list(job.pending_numbers()):
        tr.delete_pending(job, number, now)
        job.task(number).failed_reason = reason
    _changed(state, job)
    state.finished_order.append(job.id)
    state.log(f"I|immediate job {job.id} could not be scheduled")


# ---------------------------------------------------------------- ending

def concluded(state, job, task, result, now):
    """Apply an ended task's result (its accounting record was written before)."""
    number = task.number
    if result.get("never_started"):
        tr.requeue(job, number, now)
        task.restarted = max(0, task.restarted - 1)
        _changed(state, job)
        return
    if result.get("queue_error"):
        from gridtools.daemon import qcontrol
        qcontrol.mark_error(state, f"{task.queue}@{task.host}", job.id, task.host)
    if result.get("requeue") and not task.deleting:
        task.end_time = float(result.get("end_time") or now)
        tr.requeue(job, number, now)
        state.log(f"I|job {job.id}.{number} requeued")
    elif result.get("error_state"):
        tr.finish(job, number, result, now)
        task.start_time = 0.0
        tr.fail_to_start(job, number, result.get("error_reason") or result.get("failed_reason", ""), now)
        task.failed = int(result.get("failed", 0))
        state.log(f"W|job {job.id}.{number} set to error state: {task.error_reason}")
    else:
        tr.finish(job, number, result, now)
        if job.is_finished():
            state.finished_order.append(job.id)
    _changed(state, job)


# ---------------------------------------------------------------- deleting

def delete_task(state, dispatcher, job, number, now, force):
    """qdel of one task: a waiting one ends at once, a running one is signalled (and with
    ``force`` ended whether or not its shepherd answers)."""
    st = job.state_of(number)
    if st in (TaskState.PENDING, TaskState.ERROR):
        tr.delete_pending(job, number, now)
        _changed(state, job)
    elif st is TaskState.RUNNING:
        task = job.task(number)
        if tr.request_delete(job, number) or force:
            dispatcher.signal_task(job, task, "delete")
        if force:
            dispatcher.force_end(job, task, now)
        _changed(state, job)


def delete_untouched(state, job, now):
    """qdel of a whole large array: its tasks without a record end without getting one."""
    tr.delete_untouched(job, now)
    _changed(state, job)
    if job.is_finished() and job.id not in state.finished_order:
        state.finished_order.append(job.id)


# ---------------------------------------------------------------- holds, errors

def hold(state, job, number, letters, on):
    """Set (``on``) or release hold letters of one pending task, or of the job (None)."""
    changed = tr.set_hold(job, number, letters, on)
    _changed(state, job)
    return changed


def clear_error(state, job, number):
    """qmod -cj: a task in error state waits again; True when it was in error."""
    if not tr.clear_error(job, number):
        return False
    _changed(state, job)
    return True


# ---------------------------------------------------------------- suspension

def suspend(state, dispatcher, job, task, why, on, force=False):
    """Add (``on``) or remove suspension reason ``why`` (s user, S queue, T threshold);
    the shepherd gets the signal when the task's stopped state changes. ``force``
    sends it even when nothing changed (``qmod -f``). True when the reason changed."""
    from gridtools.daemon import suspension
    before = bool(task.suspended)
    changed = tr.suspend(job, task.number, why) if on else tr.unsuspend(job, task.number, why)
    if changed:
        _changed(state, job, schedule=False)
    after = bool(task.suspended)
    if before != after or (force and task.state is TaskState.RUNNING):
        suspension.send(state, dispatcher, job, task, "suspend" if after else "resume")
    return changed


def vacate(state, dispatcher, job, task, why):
    """Evict a running task for HTCondor's policy (the startd's PREEMPT or KILL, or a
    negotiator preemption): its shepherd ends it and it waits to run again."""
    from gridtools.daemon import suspension
    if not suspension.requeue(state, dispatcher, job, task):
        return False
    state.log(f"I|job {job.id}.{task.number} {why}")
    return True
