"""The one door through which every task state change passes.

Each function checks that the change is allowed from the task's current
state, applies it to the ``Job`` in memory and returns True when something
changed (False when the request was a no-op, such as releasing a hold that
was not set). The caller persists the job afterwards.

    pending --dispatch--> running --finish--> finished
    pending --delete--> finished (deleted, never ran)
    untouched pending tasks --delete_untouched--> finished (whole job, no records)
    running --request_delete--> running+deleting --finish--> finished
    running --requeue--> pending            (rerun, host flush, qmod -r)
    running --fail_to_start--> error (Eqw) --clear_error--> pending
"""

from gridtools.model.job import Hold, TaskState

P, R, F, E = TaskState.PENDING, TaskState.RUNNING, TaskState.FINISHED, TaskState.ERROR

#: every legal change of a task's state: (state before, event) -> state after
LEGAL = {
    (P, "dispatch"): R,
    (R, "finish"): F,
    (R, "requeue"): P,
    (R, "fail_to_start"): E,
    (F, "fail_to_start"): E,            # a task whose start failed after it was accounted
    (E, "clear_error"): P,
    (P, "delete"): F,
    (E, "delete"): F,
    (R, "request_delete"): R,
    (R, "suspend"): R,
    (R, "unsuspend"): R,
    (P, "hold"): P,
}


class TransitionError(Exception):
    """A change that the task's state does not allow."""


def legal(state, event):
    """The state after ``event`` from ``state``, or None when the table does not allow it."""
    return LEGAL.get((state, event))


def dispatch(job, number, granted, now, shepherd_pid=0, pe=""):
    task = job.task(number)
    after = legal(task.state, "dispatch")
    if after is None:
        raise TransitionError(f"task {job.id}.{number} is {task.state.value}, not pending")
    task.state = after
    task.granted = [list(g) for g in granted]
    task.queue, task.host = granted[0][0], granted[0][1]
    task.slots = sum(g[2] for g in granted)
    task.pe = pe
    task.start_time = now
    task.end_time = 0.0
    task.suspended = ""
    task.deleting = False
    task.shepherd_pid = shepherd_pid
    task.exit_status = None
    task.failed = 0
    task.signal = 0
    job.changed()
    return True


def finish(job, number, result, now):
    """A running task ended with the shepherd's ``result``."""
    task = job.task(number)
    after = legal(task.state, "finish")
    if after is None:
        return False
    task.state = after
    task.end_time = float(result.get("end_time") or now)
    task.exit_status = int(result.get("exit_status", 0))
    task.signal = int(result.get("signal") or 0)
    task.failed = int(result.get("failed", 0))
    task.failed_reason = str(result.get("failed_reason", ""))
    task.usage = dict(result.get("usage") or {})
    task.shepherd_pid = 0
    job.changed()
    return True


def fail_to_start(job, number, reason, now, pid=0):
    """A task could not be started (working directory, output file, shell): error state.
    ``pid``: the shepherd that found it (qstat -j shows it with the reason, as Grid
    Engine's ``[uid:pid]``); the time is ``now``, kept as the task's end time."""
    task = job.task(number)
    after = legal(task.state, "fail_to_start")
    if after is None:
        raise TransitionError(f"task {job.id}.{number} is {task.state.value}: it did not start")
    task.state = after
    task.error_reason = reason
    task.error_pid = int(pid or 0)
    task.end_time = now
    task.host = task.queue = None
    task.granted = ()
    task.shepherd_pid = 0
    job.changed()
    return True


def clear_error(job, number):
    task = job.tasks.get(number)
    after = legal(task.state, "clear_error") if task is not None else None
    if after is None:
        return False
    task.state = after
    task.error_reason = ""
    job.changed()
    return True


def requeue(job, number, now):
    """A running task goes back to pending (rerun, host flush, qmod -r)."""
    task = job.task(number)
    after = legal(task.state, "requeue")
    if after is None:
        return False
    task.state = after
    task.restarted += 1
    task.host = task.queue = None
    task.granted = ()
    task.pe = ""
    task.suspended = ""
    task.deleting = False
    task.shepherd_pid = 0
    job.changed()
    return True


def delete_pending(job, number, now):
    """A pending (or error) task is removed before it ran."""
    task = job.task(number)
    after = legal(task.state, "delete")
    if after is None:
        return False
    task.state = after
    task.end_time = now
    task.failed = task.failed or 0
    task.failed_reason = "deleted before it ran"
    task.exit_status = None
    job.changed()
    return True


def delete_untouched(job, now):
    """qdel of a whole job: every task that has no record ends unstarted, without
    getting one (a million-task array is deleted at the cost of one)."""
    if job.deleted:
        return False
    job.deleted = True
    job.deleted_at = now
    job.changed()
    return True


def request_delete(job, number):
    """qdel of a running task: it is marked and its shepherd ends it."""
    task = job.task(number)
    if legal(task.state, "request_delete") is None or task.deleting:
        return False
    task.deleting = True
    job.changed()
    return True


def set_hold(job, number, letters, on):
    """Add (``on``) or remove hold letters of one task that has not finished (a running
    one's keep it from starting again once it is requeued); number None = whole job."""
    letters = "".join(c for c in letters if c in Hold.ALL)
    if number is None:
        before = job.hold
        job.hold = _letters(job.hold, letters, on)
        if not on:
            for task in job.tasks.values():
                task.hold = _letters(task.hold, letters, False)
        job.changed()
        return before != job.hold or not on
    task = job.task(number)
    before = task.hold
    task.hold = _letters(task.hold, letters, on)
    job.changed()
    if not on and job.hold:
        # releasing one task of a job-level hold: move the other letters down to the tasks
        return _release_job_level(job, number, letters) or before != task.hold
    return before != task.hold


def _release_job_level(job, number, letters):
    common = job.hold
    job.hold = ""
    for n in job.unfinished_numbers():
        t = job.task(n)
        t.hold = _letters(_letters(t.hold, common, True), letters, False) if n == number else _letters(t.hold, common, True)
    job.changed()
    return True


def _letters(current, letters, on):
    if on:
        return "".join(sorted(set(current) | set(letters)))
    return "".join(c for c in current if c not in letters)


def suspend(job, number, why):
    """Mark a running task suspended (why: s by user/operator, S queue, T threshold)."""
    task = job.task(number)
    if legal(task.state, "suspend") is None or why in task.suspended:
        return False
    task.suspended += why
    job.changed()
    return True


def unsuspend(job, number, why):
    task = job.task(number)
    if legal(task.state, "unsuspend") is None or why not in task.suspended:
        return False
    task.suspended = task.suspended.replace(why, "")
    job.changed()
    return True
