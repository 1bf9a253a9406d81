"""The one door through which the daemon changes jobs.

Every decision of a pass (starts, suspensions, rejections) and every effect
of a request or of an ended task on a job goes through a function here.
Each makes the change with ``model.transitions`` (whose table ``LEGAL``
says which changes a task's state allows), marks the job for writing and
for the next pass, and has the execution layer (``Dispatcher``) signal
shepherds where a running task is concerned. Nothing else in the daemon
writes a job's state.
"""

import time

from gridtools.daemon import condorjob, condorpolicy, jobmail
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
    job.task(number).run_limit = _run_limit(job.spec)
    if job.spec.get("condor_ad"):      # (condor_qedit may change them while it runs; qalter may not)
        job.task(number).amounts = _amounts(state, job, number)
        job.task(number).limits = _limits(job)
    state.active_jobs.add(job.id)
    _changed(state, job, schedule=False)
    state.starting.append((job, number, now))       # see condorjob.started_events
    jobmail.started(state, job, number, now)


def _run_limit(spec):
    """Seconds of the run limit a task starts with (h_rt, else s_rt; -1 for none): what
    the scheduler counts on for the run however the job's requests change meanwhile
    (the shepherd keeps the limit it was given)."""
    from gridtools.formats import values
    hard = (spec.get("resources") or {}).get("hard") or {}
    text = hard.get("h_rt", hard.get("s_rt"))
    if text is None:
        return -1.0
    try:
        seconds = float(values.parse_time(str(text)))
    except Exception:  # noqa: BLE001 - an unreadable limit: the request's, as before
        return 0.0
    return seconds if seconds < float("inf") else -1.0


def _amounts(state, job, number):
    """[[consumable, amount], ...] a task holds while it runs: those its request names
    as it starts, which the scheduler counts for the run however the job's requests
    change meanwhile (condor_qedit of a running job's RequestXXX is its next run's)."""
    from gridtools.daemon import view
    from gridtools.sched import inputs
    req = view.task_request(job, number, state)
    return [[name, amount] for name, amount in inputs.consumable_amounts(req, view.config_parts(state)["complexes"])]


def _limits(job):
    """[[concurrency limit, weight], ...] a task of an HTCondor job holds while it runs:
    those its ad names as it starts (None when they need the machine it runs on: noted
    the first time they are worked out there, ``daemon.condor``), however condor_qedit
    changes them meanwhile."""
    from gridtools.sched import inputs
    found = inputs.job_limits(job)
    return None if found is None else [[name, weight] for name, weight in found]


def reject(state, job, now, reason="immediate job could not be scheduled"):
    """A job that leaves before it ran: an immediate job (-now y, qrsh) that could not
    start in its first pass, or one refused when taken in (``reason`` says why)."""
    for number in list(job.pending_numbers()):
        tr.delete_pending(job, number, now)
        job.task(number).failed_reason = reason
    _changed(state, job)
    state.note_finished(job.id)
    state.log(f"I|job {job.id} leaves: {reason}")


# ---------------------------------------------------------------- ending

def concluded(state, job, task, result, now):
    """Apply an ended task's result (its accounting record was written before)."""
    number = task.number
    if result.get("never_started"):
        host = task.host
        tr.requeue(job, number, now)
        task.restarted = max(0, task.restarted - 1)
        _start_failed(state, job, task, host, result.get("start_failure"), now)
        _changed(state, job)
        return
    from gridtools.daemon import history
    jobmail.ended(state, job, task, result)             # (while the task knows its run)
    condorjob.note_disk(job, task, result)              # (what the run left in its folder)
    history.run_ended(state, job, task, result, now)     # (the ad the run left, before its end)
    condorjob.note_executing(state, job, task)  # (before its folder goes)
    condorjob.note_transfers(state, job, task, result)     # (before the events of its end)
    condorjob.note_activation(job, task, result, now)
    if result.get("queue_error"):
        from gridtools.daemon import qcontrol
        qcontrol.mark_error(state, f"{task.queue}@{task.host}", job.id, task.host)
    if result.get("requeue") and not task.deleting:
        task.end_time = float(result.get("end_time") or now)
        if result.get("rest"):
            rest(task, now)
        tr.requeue(job, number, now)
        state.log(f"I|job {job.id}.{number} requeued")
        condorjob.evicted(state, job, task, result, now)
    elif result.get("error_state"):
        hold = condorjob.start_hold(job, task, result)      # while the task knows its slot
        shepherd = _shepherd_of(job.id, number) or task.shepherd_pid
        tr.finish(job, number, result, now)
        task.start_time = 0.0
        tr.fail_to_start(job, number, result.get("error_reason") or result.get("failed_reason", ""), now,
                         pid=shepherd)
        task.failed = int(result.get("failed", 0))
        state.log(f"W|job {job.id}.{number} set to error state: {task.error_reason}")
        condorjob.failed_to_start(state, job, number, hold, now)
    elif _condor_exit(state, job, task, result, now):
        pass                                    # held or run again by the job's own policy
    else:
        tr.finish(job, number, result, now)
        _note_failure(state, job, task, result)
        condorjob.ended(state, job, task, result, now)
        if job.is_finished():
            state.note_finished(job.id)
    _changed(state, job)


#: longest rest of a task between two starts whose shepherds failed to start
START_REST_MOST = 8.0


def _start_failed(state, job, task, host, why, now):
    """A task whose shepherd did not start (``why``) waits again, as Grid Engine puts a job
    back whose start its execution daemon did not confirm: it rests before the next try,
    a second after the first failure and twice as long after each further one in a row
    (at most START_REST_MOST), so that a full disk does not keep it going from waiting
    to dispatched and back. The first failure in a row is logged with its reason (and a
    changed reason again); the start that succeeds at last is logged (``daemon.reap``)."""
    key = (job.id, task.number)
    failed = state.start_failures.get(key, 0) + 1
    state.start_failures[key] = failed
    task.rest_until = now + min(START_REST_MOST, 2.0 ** (failed - 1))
    why = why or "its shepherd did not start"
    if failed == 1 or state.start_failure_reasons.get(key) != why:
        state.log(f"W|job {job.id}.{task.number} could not be started on host {host}: {why}; "
                  "it waits to be started again")
    state.start_failure_reasons[key] = why


def _shepherd_of(job_id, number):
    """The pid of the shepherd that ran a task, from its lock record (0: none known)."""
    from gridtools.exec import tasklock
    from gridtools.spool import jobs as jobstore
    record = tasklock.read_lock(jobstore.task_dir(job_id, number))
    return record.pid if record is not None else 0


def _note_failure(state, job, task, result):
    """A task that failed other than by being killed (before its job ran, or its
    shepherd) says why in the messages file, in Grid Engine's words."""
    from gridtools.exec.shepherd import FAILED_KILLED
    failed = int(result.get("failed") or 0)
    if failed in (0, FAILED_KILLED) or result.get("deleted"):
        return
    from gridtools.accounting.report import FAILED, UNKNOWN_FAILED
    state.log(f"W|job {job.id}.{task.number} failed on host {task.host} general "
              f"{FAILED.get(failed, UNKNOWN_FAILED)} because: {result.get('failed_reason') or ''}")


def _condor_exit(state, job, task, result, now):
    """An HTCondor job's exit policy (daemon.condorpolicy) on a task that exited of its
    own accord: True when it held the task, put it back to wait or removed it."""
    decision = condorjob.exit_decision(job, task, result, now, state)
    if decision is None:
        return False
    if decision.action is condorpolicy.Action.REMOVE:      # (a periodic remove at its exit)
        condorjob.exit_removed(state, job, task, result, decision, now)
        if job.is_finished():
            state.note_finished(job.id)
        state.log(f"I|job {job.id}.{task.number} remove by its exit policy")
        return True
    task.end_time = float(result.get("end_time") or now)
    condorjob.ran(job, task)
    if decision.action is not condorpolicy.Action.HOLD:
        rest(task, now)
    tr.requeue(job, task.number, now)
    if decision.action is condorpolicy.Action.HOLD:
        tr.set_hold(job, task.number, "u", True)
        condorjob.task_info(job, task.number)["hold"] = [decision.reason, decision.code, decision.subcode,
                                                          int(now)]
        condorjob.held_events(state, job, [task.number], now)
        condorjob.notify_action(state, job, task.number, "put on hold", decision.reason, decision.code,
                                exit_code=None if result.get("signal") else int(result.get("exit_status") or 0))
    else:
        condorjob.requeued(state, job, task, result, decision.reason, now)
    state.log(f"I|job {job.id}.{task.number} {decision.action.value} by its exit policy")
    return True


#: a run shorter than this that asks to run again (Grid Engine's exit status 99, an
#: HTCondor exit policy that requeues) counts toward the task's rest
QUICK_RUN = 60.0
#: runs in a row of a task that may ask to run again at once
FREE_REQUEUES = 3
#: longest rest of a task between two runs
MOST_REST = 60.0


def rest(task, now):
    """A task that asks to run again after its run (``task``, before it is requeued): after
    FREE_REQUEUES short runs in a row, it may start again only after a rest that doubles
    with each further one, from a second to MOST_REST. A job that exits asking to run
    again at once would otherwise be started again and again as fast as the daemon can,
    with a record for each run, for as long as nobody deletes it."""
    ran = (task.end_time or now) - task.start_time if task.start_time else 0.0
    task.quick_requeues = task.quick_requeues + 1 if ran < QUICK_RUN else 0
    extra = task.quick_requeues - FREE_REQUEUES
    task.rest_until = now + min(MOST_REST, 2.0 ** (extra - 1)) if extra > 0 else 0.0


# ---------------------------------------------------------------- deleting

def delete_task(state, dispatcher, job, number, now, force, by=""):
    """qdel of one task: a waiting one ends at once, a running one is signalled (and with
    ``force`` ended whether or not its shepherd answers). ``by``: user@host of the
    request, for the mail the job asked for (``jobmail.killed``)."""
    st = job.state_of(number)
    known = job.tasks.get(number)
    if st in (TaskState.PENDING, TaskState.ERROR, TaskState.RUNNING) and not (known and known.deleting):
        jobmail.killed(state, job, number, by or job.spec["owner"])
        condorjob.note_removal(job, number, by)        # (its RemoveReason, whoever removes it)
    if st in (TaskState.PENDING, TaskState.ERROR):
        tr.delete_pending(job, number, now)
        _changed(state, job)
        condorjob.removed_events(state, job, [number], now)
    elif st is TaskState.RUNNING:
        task = job.task(number)
        if tr.request_delete(job, number) or force:
            dispatcher.signal_task(job, task, "delete")
        if force:
            dispatcher.force_end(job, task, now)
        _changed(state, job)


def delete_waiting(state, jobs, now, by=""):
    """qdel of whole jobs that wait to run (no arrays, no HTCondor jobs): each ends
    unstarted, as ``delete_task`` ends a waiting task, the whole set in one go, and
    leaves its final ad to the job history."""
    from gridtools.daemon import history
    for job in jobs:
        jobmail.killed(state, job, 1, by or job.spec["owner"])
        condorjob.note_removal(job, 1, by)
        tr.delete_pending(job, 1, now)
        condorjob.task_info(job, 1)["removed"] = True
        state.touch(job)
        state.note_finished(job.id)
        history.record(state, job, 1)
    if jobs:
        state.need_schedule = True


def delete_untouched(state, job, now):
    """qdel of a whole large array: its tasks without a record end without getting one."""
    untouched = list(job.untouched()) if condorjob.is_condor(job) else []
    tr.delete_untouched(job, now)
    condorjob.removed_events(state, job, untouched, now)
    _changed(state, job)
    if job.is_finished():
        state.note_finished(job.id)


# ---------------------------------------------------------------- holds, errors

def hold(state, job, number, letters, on, by=""):
    """Set (``on``) or release hold letters of one pending task, or of the job (None);
    ``by``: the user who asked (qhold, qrls), for the reason the user log gives."""
    held_before = condorjob.held_numbers(job, number)
    before = condorjob.letters_before(job, number)
    changed = tr.set_hold(job, number, letters, on)
    condorjob.grid_hold_changed(job, number, before)
    _changed(state, job)
    condorjob.hold_changed(state, job, number, held_before, by)
    return changed


def hold_jobs(state, jobs, letters, on):
    """qhold or qrls of whole jobs that are not HTCondor's (their user log has no event
    to say), the whole set in one go."""
    for job in jobs:
        before = condorjob.letters_before(job, None)
        tr.set_hold(job, None, letters, on)
        condorjob.grid_hold_changed(job, None, before)
        state.touch(job)
    if jobs:
        state.need_schedule = True


def clear_error(state, job, number):
    """qmod -cj: a task in error state waits again; True when it was in error."""
    if not tr.clear_error(job, number):
        return False
    condorjob.error_cleared(job, number)
    _changed(state, job)
    return True


# ---------------------------------------------------------------- HTCondor's requests and policies

def condor_hold(state, dispatcher, job, number, hold, now, hard=None, mail=False):
    """condor_hold (or PeriodicHold, or the startd's WANT_HOLD) of one task: a waiting
    task is held, a running one is held and stopped (it waits, held, once its shepherd
    has ended it; ``hard``: by SIGKILL at once, None: so when the job wants no
    graceful removal, as HTCondor's shadow holds it). ``hold``: [reason, code, subcode];
    ``mail``: a hold HTCondor mails of, when the job's notification asks
    (``condorjob.notify_action``). False when the task was held already or has ended."""
    st = job.state_of(number)
    if st is TaskState.FINISHED or (st is not TaskState.RUNNING and "u" in job.holds_of(number)):
        return False
    tr.set_hold(job, number, "u", True)
    info = condorjob.task_info(job, number)
    info["hold"] = list(hold[:3]) + [int(now)]
    if st is TaskState.RUNNING:
        info["vacating"] = True
        if hard is None:
            hard = not condorjob.wants_graceful_removal(state, job, number)
        dispatcher.signal_task(job, job.task(number), "kill" if hard else "requeue")
    _changed(state, job)
    condorjob.held_events(state, job, [number], now)
    if mail:
        condorjob.notify_action(state, job, number, "put on hold", hold[0], int(hold[1]))
    return True


def condor_vacate(state, dispatcher, job, number, vacate, now):
    """PeriodicVacate (or SYSTEM_PERIODIC_VACATE) of one task: a running task is stopped
    and waits to run again, evicted (event 004 with ``vacate``: [reason, code, subcode]).
    False when it is not running or is being stopped already."""
    task = job.tasks.get(number)
    if job.state_of(number) is not TaskState.RUNNING or task is None or task.deleting:
        return False
    info = condorjob.task_info(job, number)
    if info.get("vacate") or info.get("vacating"):
        return False
    info["vacate"] = list(vacate[:3])
    # (as HTCondor's shadow evicts it: gracefully unless the job wants no graceful removal)
    dispatcher.signal_task(job, task, "requeue" if condorjob.wants_graceful_removal(state, job, number) else "kill")
    _changed(state, job)
    return True


def condor_release(state, job, number, reason, now, letters="u"):
    """condor_release (or PeriodicRelease) of one held task: its hold ``letters`` go (a
    task in the error state waits again; a running one that a hold is stopping, which
    shows as held, waits to run again once it has stopped); False when it was not held
    by them. Its ad says why (ReleaseReason) and keeps the hold it ended
    (``condorjob.releasing``)."""
    st = job.state_of(number)
    holds = set(job.holds_of(number))
    # a hold the requester may not lift (an operator's, the system's) keeps the task held:
    # nothing is released (HTCondor's release is of the whole hold or none of it)
    if st is not TaskState.ERROR and (st not in (TaskState.PENDING, TaskState.RUNNING)
                                      or not holds & set(letters) or not holds <= set(letters)):
        return False
    condorjob.releasing(job, number, reason)
    if st is TaskState.ERROR:
        tr.clear_error(job, number)
    else:
        tr.set_hold(job, number, letters, False)
    info = condorjob.task_info(job, number)
    info.pop("hold", None)
    job.condor.pop("hold", None)
    _changed(state, job)
    condorjob.released_events(state, job, [number], reason, now)
    return True


def condor_remove_kept(state, job, number, now):
    """condor_rm of a completed task kept in the queue: it shows as removed (X)."""
    info = condorjob.task_info(job, number)
    if info.get("removed") or info.get("gone"):
        return False
    info["removed"] = True
    info["remove_reason"] = job.condor.get("remove_reason") or "via condor_rm"
    _changed(state, job)
    condorjob.write_events(state, job, [(number, condorjob.EventType.JOB_ABORTED,
                                         {"Reason": info["remove_reason"]}, now)])
    return True


def condor_force_out(state, dispatcher, job, number, now):
    """condor_rm -forcex of a task in the removed state (X): a running one ends now, a kept
    one leaves the queue. False when it was not in that state."""
    st = job.state_of(number)
    info = condorjob.task_info(job, number)
    if st is TaskState.RUNNING and job.task(number).deleting:
        info["gone"] = True
        delete_task(state, dispatcher, job, number, now, True)
        return True
    kept = job.condor.get("kept") or []
    if st is TaskState.FINISHED and number in kept and info.get("removed") and not info.get("gone"):
        info["gone"] = True
        kept.remove(number)
        _changed(state, job)
        from gridtools.daemon import history
        history.record(state, job, number)
        return True
    return False


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
    if before != after and task.state is TaskState.RUNNING:
        condorjob.stopped(state, job, task, after, time.time())
        jobmail.stopped(state, job, task, after)
    return changed


def reprioritize(state, execution, job_id, number, nice):
    """Give a running task's processes a new nice value (tickets, reprioritize_interval)."""
    job = state.jobs.get(job_id)
    task = job.tasks.get(number) if job is not None else None
    if task is None or task.state is not TaskState.RUNNING:
        return False
    return execution.renice(job_id, number, nice)


def reschedule_lost(state, dispatcher, job, task, host, now):
    """A running task whose host has been unknown for its reschedule_unknown time: its run
    ends with a rescheduling record and the task waits to run again elsewhere (the
    result goes through ``concluded`` like any other). False when it was not running."""
    if task.state is not TaskState.RUNNING or task.deleting:
        return False
    dispatcher.lose_task(job, task, now)
    dispatcher.task_ended(job, task.number)
    kind, ident = ("job-array task", f"{job.id}.{task.number}") if job.is_array else ("job", str(job.id))
    state.log(f"I|Pushed rescheduling of {kind} {ident} on host {host}")
    return True


def end_rescheduled(state, dispatcher, job, task, now):
    """qmod -f -r of a task being deleted: its run ends now with a rescheduling record, as
    for a lost host, and, being deleted, the task does not wait to run again but leaves
    (Grid Engine's rescheduling ends the run, and its deletion mark trashes the task)."""
    dispatcher.lose_task(job, task, now)
    dispatcher.task_ended(job, task.number)


def vacate(state, dispatcher, job, task, why, hard=False):
    """Evict a running task for HTCondor's policy (the startd's PREEMPT or KILL, or a
    negotiator preemption): its shepherd ends it (``hard``: with SIGKILL at once, the
    startd's Killing activity) and it waits to run again."""
    from gridtools.daemon import suspension
    if not suspension.requeue(state, dispatcher, job, task, hard):
        return False
    state.log(f"I|job {job.id}.{task.number} {why}")
    return True
