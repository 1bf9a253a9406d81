"""Stopping and continuing running tasks, whatever the reason.

A running task is stopped while it has at least one suspension reason (the
letters of ``Task.suspended``): ``s`` set by ``qmod -sj``, ``S`` while a
queue instance it runs in is suspended (``qmod -s``, a calendar,
subordination, a suspended host, slot-wise subordination), ``T`` set by a
suspend threshold. Its shepherd gets the suspend signal when the first
reason comes and the resume signal when the last one goes: a job suspended
explicitly stays stopped when its queue is resumed, and the other way round.

The tasks started inside a parallel job (``qrsh -inherit``, the nodes of an
HTCondor parallel universe job) follow its suspension on every host
(``daemon.petask.follow_suspension``).

A signal that finds no shepherd (the task is still being started) is kept
in ``state.unsignalled`` and sent again on later passes until the shepherd
answers or the task ended.
"""

from gridtools.model.job import TaskState

#: what ``state.unsignalled`` may ask for besides following the task's suspension
REQUEUE = "requeue"
KILL = "kill"           # requeue it, the job killed at once (HTCondor's Killing activity)
SYNC = "sync"
_ENDING = (REQUEUE, KILL)


def change(state, dispatcher, job, task, why, on, force=False):
    """Add (``on``) or remove suspension reason ``why`` (see ``apply.suspend``)."""
    from gridtools.daemon import apply
    return apply.suspend(state, dispatcher, job, task, why, on, force)


def send(state, dispatcher, job, task, what):
    """Signal a task's shepherd; remember the wish when there is no shepherd to tell yet."""
    key = (job.id, task.number)
    if dispatcher.signal_task(job, task, what):
        if state.unsignalled.get(key) not in _ENDING or what in _ENDING:
            state.unsignalled.pop(key, None)
        return True
    if state.unsignalled.get(key) not in _ENDING or what == KILL:
        state.unsignalled[key] = what if what in _ENDING else SYNC
    return False


def resend(state, dispatcher):
    """Send again what shepherds missed; returns True while some are still waiting."""
    for key, what in list(state.unsignalled.items()):
        job = state.jobs.get(key[0])
        task = job.tasks.get(key[1]) if job is not None else None
        if task is None or task.state is not TaskState.RUNNING:
            state.unsignalled.pop(key, None)
            continue
        if what == SYNC:
            what = "suspend" if task.suspended else "resume"
        if dispatcher.signal_task(job, task, what):
            state.unsignalled.pop(key, None)
    from gridtools.daemon import petask
    inside = petask.follow_suspension(state)
    return bool(state.unsignalled) or inside


def requeue(state, dispatcher, job, task, hard=False):
    """Have a running task ended and put back into the pending state (qmod -r, host flush):
    by its shepherd's ending signals, or, ``hard``, by SIGKILL at once."""
    if task.state is not TaskState.RUNNING or task.deleting:
        return False
    send(state, dispatcher, job, task, KILL if hard else REQUEUE)
    return True
