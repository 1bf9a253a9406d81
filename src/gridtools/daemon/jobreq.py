"""Delete and hold requests (qdel, qhold, qrls): what they do to each job, and the answer.

A request names target jobs (``{"id", "tasks"}``, tasks None for the whole
job) and, with ``users`` (``qdel -u``, ``qhold -u``), every job of those
users (``*``: of all) that is still in the system, in id order after the
targets. The daemon resolves the users' jobs itself, with the rights of the
request file's owner: a user's request changes only the user's own jobs
unless the user is an operator or manager.

Whole jobs whose change needs no shepherd and no user log (the deletion of
waiting jobs that are no arrays, the holds of any job; HTCondor's jobs
aside) are changed as one set (``Batch``): at least
``journal.JOURNAL_MIN`` of them are made durable by one record of the
journal before the request is answered, instead of a state file each (see
``daemon.journal``). The answer says what was done to each target
(``outcome``); outcomes of consecutive jobs that are alike travel as one,
with a ``count`` (``outcomes_text``).
"""

from gridtools.daemon import apply, auth, condorjob, journal
from gridtools.daemon.state import user_name
from gridtools.model.job import TaskState
from gridtools.model.taskset import RangeBuilder, select
from gridtools.spool import rows

#: more untouched tasks than this are deleted with the job as a whole, without a record each
DELETE_AT_ONCE = 1000
#: the states of a task a delete ends at once
_WAITING = (TaskState.PENDING, TaskState.ERROR)


def targets_of(state, req, before=frozenset()):
    """(target, chosen) for each job a delete or hold request names: its targets, then
    (``chosen``) the live jobs of its ``users`` that no target names whole, by id, with
    those the request changed ``before`` a crash (see ``journal.answered_before``)."""
    named = set()
    for target in req.body.get("targets") or []:
        if not target.get("tasks"):
            named.add(target["id"])
        yield target, False
    users = req.body.get("users")
    if not users:
        return
    everyone, wanted = "*" in users, set(users)
    for job_id in sorted(state.live_ids().union(before) if before else state.live_ids()):
        job = state.jobs.get(job_id)
        if job_id in named:
            continue
        if job_id in before or (job is not None and (everyone or job.spec["owner"] in wanted)):
            yield {"id": job_id, "tasks": None}, True


class Batch:
    """Whole jobs one request changes as one set: applied at the end of the request, or
    before a job in it comes again (so that each target sees what the ones before did)."""

    def __init__(self, state, req, now, op, **fields):
        self.state, self.req, self.now, self.op, self.fields = state, req, now, op, fields
        self.jobs, self.ids = [], set()
        self.by = ""                    # user@host of a deletion (``jobmail.killed``)

    def add(self, job):
        self.jobs.append(job)
        self.ids.add(job.id)

    def apply(self):
        jobs, ids = self.jobs, self.ids
        if not jobs:
            return
        self.jobs, self.ids = [], set()
        state = self.state
        earlier = state.dirty.intersection(ids)
        if self.op == "delete":
            apply.delete_waiting(state, jobs, self.now, by=self.by)
        else:
            apply.hold_jobs(state, jobs, self.fields["letters"], self.fields["on"])
        if journal.usable(state, len(jobs)):
            journal.note(state, self.op, ids, self.req.name, self.now, keep=earlier, uid=self.req.uid,
                         **self.fields)


# ---------------------------------------------------------------- delete

def delete(state, dispatcher, req, now):
    """Delete job tasks; answers what was done to each target (see ``outcome``)."""
    requester = user_name(req.uid)
    force = bool(req.body.get("force"))
    forbidden = force_refusal(state, requester) if force else None
    if forbidden:
        state.log(f"E|{forbidden}")
        return 1, forbidden + "\n", ""
    before = journal.answered_before(state, req.name)
    batch = Batch(state, req, now, "delete")
    from gridtools import cell
    by = batch.by = f"{requester}@{cell.hostname()}"
    done, refused = [], 0
    for target, chosen in targets_of(state, req, before):
        job_id = target["id"]
        job = state.jobs.get(job_id)
        if job_id in batch.ids:
            batch.apply()
        kept = _kept(job, target) if job is not None and job.is_finished() else []
        if job is None or (job.is_finished() and not kept):
            done.append((job_id, DELETED) if job_id in before and not target.get("tasks")
                        else outcome(target, missing=True))
        elif not auth.may_modify_job(state, requester, job):
            refused += 1
            if not chosen:
                state.log(f"W|{requester} may not delete job {job.id}")
            done.append(outcome(target, denied=True))
        elif kept:
            done.append(_delete_kept(state, job, target, kept, now, requester))
        elif _waits_whole(job, target):
            batch.add(job)
            done.append((job_id, DELETED))
        else:
            done.append(delete_job(state, dispatcher, job, target, now, force, by=by))
    batch.apply()
    _log_refused(state, requester, req, refused, "delete")
    return 0, outcomes_text(done), ""


def _kept(job, target):
    """The tasks of a finished HTCondor job that its target names and that stay in the
    queue (leave_in_queue: condor_q shows them completed, qstat -s z lists them)."""
    kept = job.condor.get("kept") if condorjob.is_condor(job) else None
    if not kept:
        return []
    return [n for n in select_tasks(job, target.get("tasks")) if n in kept]


def _delete_kept(state, job, target, numbers, now, requester):
    """qdel of tasks kept in the queue after they completed: each is removed as
    condor_rm removes it (it shows as removed, X, with qdel's RemoveReason, and leaves
    the queue as the cell lets removed tasks leave it)."""
    job.condor["remove_reason"] = condorjob.QDEL_REASON.format(user=requester)
    for number in numbers:
        apply.condor_remove_kept(state, job, number, now)
    return outcome(target, array=job.is_array, deleted=numbers, registered=[])


#: the qmaster_params flag that lets every user force the deletion of the jobs they may delete
FORCED_QDEL = "ENABLE_FORCED_QDEL"
#: the qmaster_params flag that makes a deletion of a task running on a host in the unknown
#: state (its execution daemon gone) a forced one, for whoever may delete it
FORCED_IF_UNKNOWN = "ENABLE_FORCED_QDEL_IF_UNKNOWN"


def force_refusal(state, requester):
    """Grid Engine's answer to a forced deletion ``requester`` may not ask for, or None:
    managers may, others only while qmaster_params hold ENABLE_FORCED_QDEL (true)."""
    if auth.is_manager(state, requester) or _qmaster_flag(state, FORCED_QDEL):
        return None
    return f'"{requester}" - forcing a job deletion requires manager privileges'


def _qmaster_flag(state, name):
    """True when the global configuration's qmaster_params set boolean ``name`` (given
    alone, or as ``name=true`` or ``name=1``; the case of either does not matter)."""
    from gridtools.formats.sge.conf import parse_params
    params = parse_params((state.config.objects["conf"].get("global") or {}).get("qmaster_params"))
    return any(key.upper() == name and str(value).lower() in ("1", "true") for key, value in params.items())


#: what was done to a waiting job that is no array, deleted whole (see ``outcome``)
DELETED = {"missing": False, "denied": False, "array": False, "deleted": [[1, 1, 1]], "registered": []}


def _waits_whole(job, target):
    """True for a whole job that waits, is no array and no HTCondor job (whose removal
    writes its user log): deleted as one of a set."""
    return not target.get("tasks") and not job.is_array and not condorjob.is_condor(job) \
        and job.state_of(1) in _WAITING


def _log_refused(state, requester, req, refused, what):
    if refused and req.body.get("users"):
        state.log(f"W|{requester} may not {what} {refused} of the jobs named (users "
                  f"{','.join(req.body['users'])})")


def delete_job(state, dispatcher, job, target, now, force, by=""):
    """Delete the tasks of one target; its outcome. A whole large array is deleted
    without a record per untouched task. ``by``: user@host of the request (the mail
    of ``qsub -m a`` names them)."""
    tasks = target.get("tasks")
    untouched = job.untouched()
    at_once = not tasks and len(untouched) > DELETE_AT_ONCE
    numbers = sorted(job.tasks) if at_once else select_tasks(job, tasks)
    deleted, registered = [], []
    lost = state.unknown_hosts if state.unknown_hosts and _qmaster_flag(state, FORCED_IF_UNKNOWN) else ()
    for number in numbers:
        st = job.state_of(number)
        if st is not TaskState.FINISHED:
            (registered if st is TaskState.RUNNING else deleted).append(number)
        forced = force or (st is TaskState.RUNNING and job.tasks[number].host in lost)
        if forced and not force:
            state.log(f"I|changed non-forced request to forced request for job {job.id}.{number}"
                      "because host can't be contacted")      # (Grid Engine's words, as they are)
        apply.delete_task(state, dispatcher, job, number, now, forced, by=by)
    job_id, result = outcome(target, array=job.is_array, deleted=deleted, registered=registered)
    if at_once:
        result["deleted"] = _merged_runs(result["deleted"], untouched)
        apply.delete_untouched(state, job, now)
    elif not tasks and len(job.made()) < len(job.numbers()):
        apply.delete_untouched(state, job, now)     # (the procs of a cluster not made yet go too)
    elif job.is_finished():
        state.note_finished(job.id)
    return job_id, result


def select_tasks(job, tasks):
    """Task numbers of ``job`` in the queue named by a task range list (None = all)."""
    numbers = job.made()
    if not tasks:
        return list(numbers)
    return select(numbers, tasks)


def _merged_runs(runs, untouched):
    """Task ranges of ``runs`` ([[first, last, step], ...]) and of ``untouched``."""
    numbers = sorted({n for first, last, step in runs for n in range(first, last + 1, step)})
    builder = RangeBuilder()
    for first, last, step in sorted([list(run) for run in untouched.runs] + [[n, n, 1] for n in numbers]):
        builder.add_run(first, last, step)
    return builder.out


# ---------------------------------------------------------------- hold / release

def hold(state, dispatcher, req, now):
    """Set or release holds; answers, per target, the tasks the change concerned."""
    requester = user_name(req.uid)
    letters = req.body.get("letters", "u")
    on = bool(req.body.get("on", True))
    before = journal.answered_before(state, req.name)
    from gridtools.daemon import serverjsv
    refused = serverjsv.alteration_refusal(state, {"user_hold"})
    if refused:
        state.log(f"W|{'qhold' if on else 'qrls'} of {requester} refused: {refused}")
        return 1, refused + "\n", ""
    batch = Batch(state, req, now, "hold", letters=letters, on=on)
    done, refused = [], 0
    from gridtools.daemon import condorreq
    limit = None if on else condorreq.release_limit(state, requester)       # (SYSTEM_MAX_RELEASES)
    for target, chosen in targets_of(state, req, before):
        job = state.jobs.get(target["id"])
        if target["id"] in batch.ids:
            batch.apply()
        if job is None or job.is_finished():
            done.append(outcome(target, array=bool(job and job.is_array), changed=_ONE)
                        if target["id"] in before else outcome(target, missing=True))
            continue
        if not auth.may_hold(state, requester, job, letters):
            refused += 1
            if not chosen:
                state.log(f"W|{requester} may not change hold {letters} of job {job.id}")
            done.append(outcome(target, denied=True))
            continue
        setting = on or job.id in before            # (as the first time: see answered_before)
        named = select_tasks(job, target["tasks"]) if target.get("tasks") else None
        if job.id not in before and named != []:
            # (a modification, changed or not, as Grid Engine counts: of the job, or of a
            # task it has, finished ones too; a list of tasks it does not have is none)
            job.mods += 1
        if not target.get("tasks") and not job.is_array:
            done.append((job.id, _whole_changed(job, letters, setting)))
        else:
            done.append(outcome(target, array=job.is_array,
                                changed=_hold_concerns(job, target.get("tasks"), letters, setting, on)))
        limited = []
        if not target.get("tasks") and not condorjob.is_condor(job):
            batch.add(job)
        elif named is not None:
            left = [number for number in named if job.state_of(number) is not TaskState.FINISHED]
            for number in left:         # (a running task's hold keeps it from starting again)
                _hold(state, job, number, letters, on, requester, limit, limited)
            if named and not left and job.id not in before:
                state.touch(job)        # (only finished tasks: the count of modifications changed)
        else:
            _hold(state, job, None, letters, on, requester, limit, limited)
        if limited:
            done[-1] = _left_held(done[-1], limited)
    batch.apply()
    _log_refused(state, requester, req, refused, "change the hold of")
    return 0, outcomes_text(done), ""


def _hold(state, job, number, letters, on, requester, limit, limited):
    """One hold change of a task (None: the job); a release of an HTCondor job's is
    held to SYSTEM_MAX_RELEASES ``limit`` (``condorreq.qrls``: its refusals go to ``limited``)."""
    if on or limit is None or not condorjob.is_condor(job):
        apply.hold(state, job, number, letters, on, requester)
        return
    from gridtools.daemon import condorreq
    limited.extend(condorreq.qrls(state, job, number, letters, requester, limit))


def _left_held(entry, limited):
    """The outcome ``entry`` of a release of which the tasks of ``limited`` ([task number,
    condor_release's refusal], ``condorreq.qrls``) were refused: they are not among those
    it changed, and their refusals are its ``refused``, in task order (the command prints
    them among its other answers, on standard error, and exits 1)."""
    job_id, what = entry
    left = {number for number, _line in limited}
    changed = [n for first, last, step in what.get("changed") or () for n in range(first, last + 1, step)
               if n not in left]
    return job_id, dict(what, changed=rows.ranges(changed), refused=sorted(limited))


def _hold_concerns(job, tasks, letters, on, hold_on=None):
    """Task numbers a hold change concerns, as Grid Engine reports them: running tasks,
    and pending ones when setting a hold or when they hold one of the letters.

    A task that finished (or was deleted) while others of the job remain is one Grid
    Engine's master has forgotten but still counts as the job's: when a hold is set on
    it by number (``tasks``; ``hold_on``, the request's own direction, which ``on`` may
    not be when a request is answered again) it is reported as changed, though nothing
    changes and it stays finished; a release of it has no hold to lift and says nothing.
    A hold of the whole job does not reach it."""
    found = []
    finished_too = bool(tasks) and (on if hold_on is None else hold_on)
    for number in select_tasks(job, tasks):
        st = job.state_of(number)
        if st is TaskState.RUNNING or (st in _WAITING and (on or set(job.holds_of(number)) & set(letters))) \
                or (finished_too and st is TaskState.FINISHED):
            found.append(number)
    return found


def _whole_changed(job, letters, on):
    """The outcome of a hold change of a whole job that is no array (as ``_hold_concerns``
    says, one of two shared outcomes)."""
    st = job.state_of(1)
    if st is TaskState.RUNNING or (st in _WAITING and (on or not set(job.holds_of(1)).isdisjoint(letters))):
        return CHANGED_ONE
    return CHANGED_NONE


#: the outcomes of a hold change of a whole job that is no array
CHANGED_ONE = {"missing": False, "denied": False, "array": False, "changed": [[1, 1, 1]]}
CHANGED_NONE = {"missing": False, "denied": False, "array": False, "changed": []}
#: task 1 (the tasks a hold change of a job that ended concerned, when answered again)
_ONE = (1,)


# ---------------------------------------------------------------- the answer

def outcome(target, missing=False, denied=False, array=False, **numbers):
    """What a request did to one target job, as (job id, what): ``missing`` (no such job,
    or it ended), ``denied``, else the task numbers of each effect (as ranges)."""
    result = {"missing": missing, "denied": denied, "array": array}
    for key, found in numbers.items():
        result[key] = rows.ranges(sorted(found)) if len(found) != 1 else [[found[0], found[0], 1]]
    return int(target["id"]), result


def outcomes_text(done):
    """The answer of a request that acts on jobs: what it did to each, as JSON (which the
    commands read faster than the spool's YAML when there are thousands); outcomes of
    consecutive job ids that are alike are one, with ``count`` (see ``runs``)."""
    import json
    return json.dumps({"outcomes": runs(done)}, separators=(",", ":"))


def runs(done):
    """The outcomes (job id, what) of ``done`` as mappings with the ``id``; a stretch of
    consecutive ids with the same outcome is one, of its first id, with ``count``."""
    out, last, first, count = [], None, 0, 0
    for job_id, what in done:
        if last is not None and job_id == first + count and (what is last or what == last):
            count += 1
            continue
        if last is not None:
            out.append(_shown(first, count, last))
        last, first, count = what, job_id, 1
    if last is not None:
        out.append(_shown(first, count, last))
    return out


def _shown(first, count, what):
    found = dict(what, id=first)
    if count > 1:
        found["count"] = count
    return found
