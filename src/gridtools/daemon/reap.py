"""Reaping: collecting the results of ended tasks and purging old finished jobs.

A task's end is known from ``result.yaml`` in its task folder (written by its
shepherd, which may have been started by an earlier daemon). A task whose
shepherd is gone without a result either never started (the daemon died
between writing the state and forking) and is requeued, or was lost and is
ended as failed. An accounting record is written exactly once per task run:
the task's state is written in the same pass as its record is appended (once
the record is on disk), and a daemon that restarts in between finds the
record at the end of the accounting file (``recent_records``) and does not
write it again.
"""

import os
import time

from gridtools.accounting import records
from gridtools.daemon import apply
from gridtools.daemon import crash, faults, history, journal, parnodes, petask, view
from gridtools.daemon.execd import reap_exited
from gridtools.errors import SpoolError
from gridtools.exec import jobproc, tasklock
from gridtools.spool import acct
from gridtools.spool import jobs as jobstore
from gridtools.spool.files import Lock, is_locked

FAILED_LOST = 18
STARTUP_GRACE = 30.0       # seconds a forked shepherd may take to lock its folder


def _alive(state, dispatcher, job, task, now):
    """True while a task's shepherd runs or is still being started."""
    key = (job.id, task.number)
    tdir = jobstore.task_dir(job.id, task.number)
    if is_locked(os.path.join(tdir, jobstore.SHEPHERD_LOCK)):
        state.launching.pop(key, None)
        dispatcher.watch_shepherd(job, task)
        if key in state.start_failures and tasklock.read_lock(tdir) is not None:
            _started(state, job, task)
        return True
    if os.path.exists(os.path.join(tdir, jobstore.OBITUARY_FILE)):
        return False                  # its parent saw it end: no need to wait
    ordered = state.launching.get(key)
    return ordered is not None and now - ordered < STARTUP_GRACE


def _started(state, job, task):
    """A task whose shepherds failed to start before has one that started (its lock
    record is written, or its result): said once."""
    key = (job.id, task.number)
    failed = state.start_failures.pop(key, 0)
    state.start_failure_reasons.pop(key, None)
    if failed:
        state.log(f"I|job {job.id}.{task.number} started on host {task.host} after "
                  f"{failed} failed start{'s' if failed > 1 else ''}")


def collect(state, dispatcher, now):
    """Handle every running task that ended; returns the number handled.

    The accounting records of all ended tasks are appended first; only when
    they are written do the tasks change state, so a full disk delays an
    ending but never loses its record or its exit status.
    """
    reap_exited()             # the exec server, should it have ended
    ended = []
    for job, task in state.running_tasks():
        result = jobstore.read_result(job.id, task.number)
        if result is None:
            if _alive(state, dispatcher, job, task, now):
                continue
            # a shepherd writes its result before it lets go of its lock: look again
            result = jobstore.read_result(job.id, task.number) or _lost(state, dispatcher, job, task, now)
            if result is None:
                continue
        if not result.get("never_started") and (job.id, task.number) in state.start_failures:
            _started(state, job, task)
        parnodes.first_node_ended(state, job, task, result)
        if parnodes.waits(state, job, task, result):
            continue                  # node 0 of a WAIT_FOR_ALL parallel job: the others run on
        _application_exit(state, job, task, result)
        _rescheduled(job, result)
        ended.append((job, task, result))
    if not ended:
        return 0
    counted = [(item, _record(state, *item, now)) for item in ended]
    try:           # on disk before any state that shows these ends is written (State.flush)
        acct.append([rec for _item, rec in counted if rec], later=True)
    except SpoolError as exc:
        faults.note(state, (faults.WRITE, "accounting"), faults.WRITE,
                    f"cannot write accounting records, {len(ended)} ended tasks wait: {exc}")
        return 0
    faults.clear(state, (faults.WRITE, "accounting"), "accounting records written again")
    for (job, task, result), rec in counted:
        if rec and result.get("usage"):        # usage counts once per run, as its record does
            state.usage.task_ended(job.spec, task.number, result, now)
        else:
            state.usage.task_gone(job.id, task.number)
    crash.point("reap")
    state.ends_unsynced.update(job.id for job, _task, _result in ended)
    for job, task, result in ended:
        state.launching.pop((job.id, task.number), None)
        dispatcher.unwatch_shepherd(job, task)
        dispatcher.dying.discard((job.id, task.number))
        parnodes.concluding(job, task, result, now)     # (after node 0's record was made)
        apply.concluded(state, job, task, result, now)
    crash.point("reap")
    return len(ended)


#: a batch job's own exit status that asks to be run again, and the one that asks for
#: the error state (Grid Engine's shepherd), with the failure codes they are accounted with
RESCHEDULE_EXIT, APPERROR_EXIT = 99, 100
FAILED_AGAIN, FAILED_APPERROR = 25, 30
#: the failure of a run its shepherd ended by a signal ("assumedly after job")
FAILED_KILLED = 100


def _application_exit(state, job, task, result):
    """Grid Engine's rule for a batch job that exited of its own accord with status 99
    (it is rescheduled: it waits and runs again) or 100 (it is set to the error state,
    where its dependants wait too), unless the configuration's qmaster_params say
    FORBID_RESCHEDULE or FORBID_APPERROR. Not for HTCondor jobs, which have an exit
    policy of their own, nor for interactive ones. Changes ``result``."""
    status = result.get("exit_status")
    if status not in (RESCHEDULE_EXIT, APPERROR_EXIT) or task.deleting or job.spec.get("interactive") \
            or job.spec.get("condor_ad") or any(result.get(k) for k in (
                "failed", "signal", "deleted", "requeue", "error_state", "never_started")):
        return
    from gridtools.formats.sge.conf import parse_params
    params = parse_params((state.config.objects["conf"].get("global") or {}).get("qmaster_params"))
    forbidden = {k.upper() for k, v in params.items() if str(v).lower() in ("1", "true")}
    if status == RESCHEDULE_EXIT and "FORBID_RESCHEDULE" not in forbidden:
        result.update(failed=FAILED_AGAIN, failed_reason="rescheduling", requeue=True, rest=True)
    elif status == APPERROR_EXIT and "FORBID_APPERROR" not in forbidden:
        result.update(failed=FAILED_APPERROR, failed_reason="rescheduling on application error",
                      error_state=True, ran=True, error_reason=f"exit_status of job start = {status}")


def _rescheduled(job, result):
    """A Grid Engine job's run that was ended to run again (qmod -r, a host flush, a
    migration) is accounted as Grid Engine's master accounts a rescheduling, whatever
    the signal that ended it (its shepherd's failed 100): failed 25, exit status 0.
    Not an HTCondor job's (an eviction), nor a run that failed or was deleted for its
    own reasons. Changes ``result``."""
    if not result.get("requeue") or job.spec.get("condor_ad") or result.get("deleted") \
            or result.get("failed", 0) not in (0, FAILED_KILLED) \
            or any(result.get(k) for k in ("queue_error", "error_state")):
        return
    result.update(failed=FAILED_AGAIN, failed_reason="manual/auto rescheduling", exit_status=0, signal=0)


def _lost(state, dispatcher, job, task, now):
    """The result of a task whose shepherd is gone without one, or None when it turned
    out to be starting after all. A shepherd that never started is abandoned (its
    launch is withdrawn under its lock, so a late one does nothing) and the task is
    requeued; one that was lost has its job's processes killed first."""
    tdir = jobstore.task_dir(job.id, task.number)
    if os.path.exists(os.path.join(tdir, jobstore.RESULT_FILE)):
        state.log(f"E|job {job.id}.{task.number}: its result file cannot be read, "
                  "the task is ended as lost")
    record = tasklock.read_lock(tdir)
    if record is None:
        lock = Lock(os.path.join(tdir, jobstore.SHEPHERD_LOCK), mode=0o644, blocking=False)
        try:
            if not lock.acquire():
                return None
        except SpoolError as exc:
            return {"requeue": True, "never_started": True, "start_failure": str(exc)}
        try:
            if tasklock.read_lock(tdir) is not None:
                return None               # it started just now
            tasklock.withdraw(tdir, tasklock.launch_token(task.start_time))
        finally:
            lock.release()
        return {"requeue": True, "never_started": True, "start_failure": start_failure(tdir)}
    if record.here() and jobproc.kill_group(record.group, record.group_ticks) and \
            jobproc.group_members(record.group):
        dispatcher.dying.add((job.id, task.number))
        return None                       # its slot stays taken until they are gone
    return {"exit_status": 1, "failed": FAILED_LOST, "failed_reason": "shepherd lost",
            "end_time": now, "usage": {}}


def start_failure(tdir):
    """Why the shepherd of the task folder ``tdir`` did not start, as far as the daemon
    can tell: the folder takes no data (a full disk or quota, a read-only file system:
    a shepherd's first write there is the record of its lock), else that it ended or
    was not there before it started the job."""
    probe = os.path.join(tdir, ".start-probe")
    try:
        fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        try:
            os.write(fd, bytes(jobstore.LOCK_RECORD))
        finally:
            os.close(fd)
            os.unlink(probe)
    except OSError as exc:
        return f"cannot write {faults.describe(exc, tdir)}"
    return "its shepherd ended before it started the job"


def recent_records(job_ids, tail_bytes=4 << 20):
    """(job, task, start time) of the records of jobs ``job_ids`` at the end of the
    accounting file (a daemon restarting finds what its predecessor wrote). The records
    of tasks inside a parallel job (qrsh -inherit: a pe_taskid) are not their job's: one
    started in the job's first second must not pass for the job's own."""
    from gridtools.formats import accounting as acct_format
    number, task_no, start, pe_task = (acct_format.FIELDS.index(name) for name in
                                       ("job_number", "task_number", "start_time", "pe_taskid"))
    wanted = {str(j) for j in job_ids}
    seen = set()
    for line in acct.tail_lines(tail_bytes):
        head = line.split(":", number + 1)
        if len(head) <= number or head[number] not in wanted:
            continue
        fields = line.split(":")
        if len(fields) != len(acct_format.FIELDS) or fields[pe_task] != "NONE":
            continue                      # a torn line, or a task inside the job
        try:
            seen.add((int(fields[number]), int(fields[task_no]) or 1, int(fields[start])))
        except ValueError:
            continue
    return seen


def _accounted(state, job, task):
    key = (job.id, task.number, int(task.start_time) if task.start_time else 0)
    return key in state.accounted


def _record(state, job, task, result, now):
    """The accounting record of a task's run (None: it never started, or its record
    is in the file already). Changes nothing."""
    if result.get("never_started") or _accounted(state, job, task):
        return None
    ended = task.replaced(end_time=float(result.get("end_time") or now),
                          exit_status=int(result.get("exit_status", 0) or 0),
                          failed=int(result.get("failed", 0) or 0))
    lists = view.userlists_of(state.config, job.spec["owner"], job.spec.get("group", ""))
    rec = records.record(job.spec, ended, petask.merged_usage(state, job, task, result.get("usage")), lists,
                         view.queue_priority(state.config, task.queue, task.host))
    if result.get("error_state") and not result.get("ran"):
        rec["start_time"] = rec["end_time"] = rec["ru_wallclock"] = 0
    elif result.get("forced"):
        rec["ru_wallclock"] = 0
    return rec


def _ended_at(job):
    return max([t.end_time for t in job.tasks.values()] + [job.deleted_at])


def purge(state, keep, max_age=None, now=None):
    """Remove finished jobs beyond the newest ``keep`` (conf ``finished_jobs``) and,
    with ``max_age``, those that ended longer ago; returns how many went. They leave
    the daemon's state at once; the folders of those whose state files show how they
    ended (or whose deletion the journal records) leave the job store after the pass
    answered its requests (``remove_purged``): a daemon that ends before finds them
    finished (or deleted, in the journal) and purges them again. The others' folders
    go at once: their end is on disk by that alone."""
    now = now if now is not None else time.time()

    def expired(at):
        return max_age is not None and now - _ended_at(state.jobs[order[at]]) >= max_age
    if len(state.finished_order) <= keep and not max_age:
        return 0
    order = [jid for jid in state.finished_order if jid in state.jobs and state.jobs[jid].is_finished()]
    gone = max(0, len(order) - keep)
    while gone < len(order) and expired(gone):
        gone += 1
    if gone and not state.settle_records():
        return 0
    covered, noted = state.journal.covered, history.pending_jobs(state)
    held = [jid for jid in order[:gone] if jid in noted]     # (their ads are still to be written)
    going = [jid for jid in order[:gone] if jid not in noted]
    unwritten = [jid for jid in going if jid in state.dirty and jid not in covered]
    for jid in going:
        state.forget(jid)
    if going:
        unwritten = set(unwritten).difference(jobstore.remove(*unwritten)) if unwritten else ()
        state.purged.extend(jid for jid in going if jid not in unwritten)
        state.need_publish = True
    state.finished_order = held + order[gone:]
    state.finished_noted = set(state.finished_order)
    return len(going)


def remove_purged(state):
    """Move the folders of the jobs purged into the trash; True when some were moved
    (those that could not be are tried again after the next pass)."""
    ids, state.purged = state.purged, []
    if not ids:
        return False
    state.purged = jobstore.remove(*ids)
    journal.gone(state, set(ids).difference(state.purged))
    return len(state.purged) < len(ids)


def next_expiry(state, max_age):
    """When the oldest kept finished job expires (None without an age limit)."""
    if max_age is None:
        return None
    for jid in state.finished_order:
        job = state.jobs.get(jid)
        if job is not None and job.is_finished():
            return _ended_at(job) + max_age
    return None


#: seconds after which a shepherd that was told to end its deleted task is told again
#: while the task still runs (Grid Engine's qmaster resends a signal after 60 s); the
#: shepherd takes a delete it had already as the same one (``exec.shepherd``)
DELETE_RESEND = 60.0


def pending_deletes(state, dispatcher, now=None):
    """Send termination to deleting tasks whose shepherd had not started listening yet
    (``apply.delete_task`` told those that were); one that was told is told again only
    ``DELETE_RESEND`` seconds later. True while some task waits for its shepherd to
    listen, or for the processes of a lost one to be gone."""
    now = time.time() if now is None else now
    waiting = bool(dispatcher.dying)
    sent = dispatcher.deletes_sent
    deleting = set()
    for job, task in state.running_tasks():
        if not task.deleting:
            continue
        key = (job.id, task.number)
        deleting.add(key)
        told = sent.get(key)
        if told is not None and now - told < DELETE_RESEND:
            continue
        if not dispatcher.signal_task(job, task, "delete") and told is None:
            waiting = True
    for key in set(sent).difference(deleting):
        del sent[key]
    return waiting


def now():
    return time.time()
