"""Requests of the HTCondor commands: condor_rm, condor_hold and condor_release,
condor_vacate_job, condor_qedit and condor_prio.

Each names target jobs as ``{"id", "tasks"}`` (proc P is task P+1) and is
answered, per target, with the task numbers the request acted on (``done``)
and those it could not act on: ``missing`` (not in the queue), ``bad`` (not
in a state the action applies to: releasing a task that is not held, forcing
out one that is not being removed, vacating one that is not running), ``already`` (held, or marked for
removal, already), or ``denied`` for the whole target. Rights are checked
again here: a user acts on their own jobs, operators on all.
"""

from gridtools.daemon import apply, auth, condorjob, jobreq
from gridtools.daemon.state import user_name
from gridtools.formats import spoolyaml
from gridtools.model.job import TaskState
from gridtools.model.taskset import select
from gridtools.spool import rows

#: attributes condor_qedit may not change (HTCondor's immutable and protected job attributes)
IMMUTABLE = frozenset(a.lower() for a in ("Owner", "ClusterId", "ProcId", "MyType", "TargetType", "User",
                                         "OsUser", "JobUniverse", "QDate", "GlobalJobId"))
PROTECTED = frozenset(a.lower() for a in ("JobStatus", "EnteredCurrentStatus", "NumJobStarts",
                                         "NumShadowStarts", "JobRunCount",
                                         "NumJobCompletions", "JobStartDate", "CompletionDate",
                                         "HoldReason", "HoldReasonCode", "HoldReasonSubCode"))


#: the knobs naming more immutable and protected job attributes, and the queue super users
#: who may change the protected ones (HTCondor's default)
IMMUTABLE_KNOBS = ("IMMUTABLE_JOB_ATTRS", "SYSTEM_IMMUTABLE_JOB_ATTRS")
PROTECTED_KNOBS = ("PROTECTED_JOB_ATTRS", "SYSTEM_PROTECTED_JOB_ATTRS")
SUPER_USERS = "root, condor"


def configured(get, knobs):
    """The names (in lower case) the knobs ``knobs`` of a configuration (``get``: knob ->
    its text or None) list, commas or blanks between them."""
    text = " ".join(get(knob) or "" for knob in knobs)
    return frozenset(name.lower() for name in text.replace(",", " ").split())


def queue_super_user(get, name):
    """True when user ``name`` is one of the configuration's QUEUE_SUPER_USERS."""
    return name.lower() in configured(lambda knob: get(knob) or SUPER_USERS, ("QUEUE_SUPER_USERS",))


def accounting_refusal(get, owner, group, super_user=None):
    """Why a job of ``owner`` may not count for the accounting group name ``group`` (its
    AccountingGroup: ``group.user``, or a name alone; an expression that is no literal
    string is refused to all but a queue super user, as what it evaluates to could change
    with the job's other attributes), or None. Its user part must be
    the owner: else a user could spend another's fair share (their usage and priority),
    as HTCondor leaves to an administrator's transforms to forbid (AssignAccountingGroup).
    A name alone may also be a group of GROUP_NAMES (the group's own share, which its
    quota bounds), and a name whose group part is one (``group_physics.alice``) names
    its user after the dot. A queue super user (QUEUE_SUPER_USERS, ``super_user``: the
    answer when known) may name anybody."""
    if group is None or group == "" or (isinstance(group, str) and group.rpartition(".")[2] == owner):
        return None
    if super_user if super_user is not None else queue_super_user(get, owner):
        return None
    if not isinstance(group, str):
        return ("AccountingGroup must be a literal string: only a queue super user (QUEUE_SUPER_USERS) "
                "may give it as an expression")
    user = group.rpartition(".")[2]
    if group.lower() in configured(get, ("GROUP_NAMES",)):
        return None
    return (f"accounting_group_user {user} is not the job's owner {owner}: only a queue super user "
            "(QUEUE_SUPER_USERS) may charge another user's usage")


def edit_refusal(name, immutable, protected):
    """condor_qedit's line refusing an edit of attribute ``name``, or None: the built-in
    immutable and protected attributes and ``immutable`` (configured) for everyone,
    ``protected`` (configured) for those who are no queue super users."""
    low = name.lower()
    if low in IMMUTABLE or low in immutable:
        return f'Update of immutable attribute "{name}" is not allowed.\n'
    if low in PROTECTED or low in protected:
        return f'Update of protected attribute "{name}" is not allowed.\n'
    return None


def _numbers(job, target):
    """The task numbers a target names (all of the job's in the queue when none are named)."""
    numbers = job.made()
    if not target.get("tasks"):
        return list(numbers)
    return select(numbers, target["tasks"])


def _answer(target, **found):
    out = {"id": int(target["id"]), "missing": False, "denied": False}
    for key, numbers in found.items():
        out[key] = rows.ranges(sorted(numbers)) if isinstance(numbers, (list, set)) else numbers
    return out


def _for_each(state, req, act):
    """Run ``act(job, target)`` for every target the requester may change; the answer."""
    requester = user_name(req.uid)
    done = []
    for target in req.body.get("targets") or []:
        job = state.jobs.get(target["id"])
        allowed = job is not None and auth.may_modify_job(state, requester, job)
        if job is None or (job.is_finished() and not allowed):
            done.append(_answer(target, missing=True))      # (a job that ended is no one's)
        elif not allowed:
            state.log(f"W|{requester} may not change job {job.id}")
            done.append(_answer(target, denied=True))
        else:
            done.append(act(job, target))
    return 0, spoolyaml.dump({"outcomes": done}), ""


# ---------------------------------------------------------------- condor_rm

def remove(state, dispatcher, req, now):
    force = bool(req.body.get("force"))
    requester = user_name(req.uid)
    reason = req.body.get("reason") or ("via condor_rm -forcex" if force else "via condor_rm")
    reason = f"{reason} (by user {requester})"

    def act(job, target):
        if force:
            return _force(state, dispatcher, job, target, now)
        return _remove(state, dispatcher, job, target, now, reason)
    return _for_each(state, req, act)


def _remove(state, dispatcher, job, target, now, reason):
    numbers = _numbers(job, target)
    kept = set(job.condor.get("kept") or ())
    done, already, missing, live = [], [], [], False
    for number in numbers:
        st = job.state_of(number)
        if st is TaskState.RUNNING and job.task(number).deleting:
            already.append(number)
        elif st is not TaskState.FINISHED:
            done.append(number)
            live = True
        elif number in kept and apply.condor_remove_kept(state, job, number, now):
            done.append(number)
        elif number in kept:
            already.append(number)
        else:
            missing.append(number)
    job.condor["remove_reason"] = reason
    if live:
        jobreq.delete_job(state, dispatcher, job, {"id": job.id, "tasks": target.get("tasks")}, now, False)
    return _answer(target, done=done, already=already, gone=missing)


def _force(state, dispatcher, job, target, now):
    """condor_rm -forcex: a task in the removed state (X) is forced out; one that was
    removed already and has left the queue (a waiting job condor_rm took out at once, a
    running one whose processes are gone) counts as forced out too, once: -forcex after
    condor_rm (parsl's cancel, which goes by its exit status) succeeds once the jobs are
    gone, also for jobs without leave_in_queue. A task forced out before, or one that
    ended without being removed, is not found (it has left HTCondor's queue)."""
    done, bad, missing = [], [], []
    for number in _numbers(job, target):
        if ((job.condor.get("tasks") or {}).get(str(number)) or {}).get("forced"):
            missing.append(number)
        elif apply.condor_force_out(state, dispatcher, job, number, now):
            done.append(number)
            _forced(state, job, number)
        elif job.state_of(number) is TaskState.FINISHED and number not in (job.condor.get("kept") or ()):
            if _was_removed(job, number):
                done.append(number)
                _forced(state, job, number)
            else:
                missing.append(number)
        else:
            bad.append(number)
    return _answer(target, done=done, bad=bad, gone=missing)


def _was_removed(job, number):
    """True for an ended task that condor_rm, qdel or a periodic remove took out and that
    no -forcex has forced out yet."""
    info = (job.condor.get("tasks") or {}).get(str(number)) or {}
    return bool(info.get("removed") or info.get("gone")) and not info.get("forced")


def _forced(state, job, number):
    """Note that -forcex has taken task ``number`` out: a later one does not find it."""
    condorjob.task_info(job, number)["forced"] = True
    state.touch(job)


# ---------------------------------------------------------------- condor_hold, condor_release

def _jsv_refusal(state, req, touched, what):
    """Why a server JSV's jsv_allowed_mod refuses a change touching ``touched`` of a
    Grid Engine job among the request's targets ("" when it does not): the list holds
    for such a job whichever dialect's command changes it (qhold and condor_hold alike)."""
    from gridtools.daemon import serverjsv
    for target in req.body.get("targets") or []:
        job = state.jobs.get(target.get("id"))
        if job is not None and not condorjob.is_condor(job):
            refused = serverjsv.alteration_refusal(state, touched)
            if refused:
                state.log(f"W|{what} of {user_name(req.uid)} refused: {refused}")
            return refused
    return ""


def hold(state, dispatcher, req, now):
    on = bool(req.body.get("on", True))
    requester = user_name(req.uid)
    refused = _jsv_refusal(state, req, {"user_hold"}, "condor_hold" if on else "condor_release")
    if refused:
        return 1, "", refused + "\n"
    default = "via condor_hold" if on else "via condor_release"
    reason = f"{req.body.get('reason') or default} (by user {requester})"
    subcode = int(req.body.get("subcode") or 0)
    letters = "uos" if auth.is_manager(state, requester) else \
        "uo" if auth.is_operator(state, requester) else "u"
    limit = None if on else _release_limit(state, requester)

    def act(job, target):
        done, other, missing, limited = [], [], [], []
        for number in _numbers(job, target):
            if job.state_of(number) is TaskState.FINISHED:
                missing.append(number)
            elif on and apply.condor_hold(state, dispatcher, job, number,
                                          [reason, condorjob.HOLD_CODE_USER, subcode], now):
                done.append(number)
            elif not on and limit is not None and _over_releases(job, number, limit):
                limited.append(number)
            elif not on and apply.condor_release(state, job, number, reason, now, letters):
                done.append(number)
            else:
                other.append(number)
        key = "already" if on else "bad"
        return _answer(target, done=done, gone=missing, **{key: other}, **({"limit": limited} if limited else {}))
    return _for_each(state, req, act)


#: condor_release's refusal of a release SYSTEM_MAX_RELEASES forbids (AR_LIMIT_EXCEEDED)
LIMIT_REFUSAL = "Job {jid} cannot be released again, has reached SYSTEM_PERIODIC_RELEASES limit"


def qrls(state, job, number, letters, requester, limit):
    """qrls (Grid Engine's release) of an HTCondor job's task ``number`` (None: the whole
    job) under SYSTEM_MAX_RELEASES ``limit`` (``release_limit``): as condor_release, a
    held task whose NumHolds is above it stays held, the others are released. The
    refusals, [task number, condor_release's words (``LIMIT_REFUSAL``)], one for each
    task left held, in task order."""
    if limit is None:
        apply.hold(state, job, number, letters, False, requester)
        return []
    numbers = [number] if number is not None else list(job.pending_numbers())
    over = [n for n in numbers if set(job.holds_of(n)) & set(letters) and _over_releases(job, n, limit)]
    if not over:
        apply.hold(state, job, number, letters, False, requester)
        return []
    for n in numbers:
        if n not in over:
            apply.hold(state, job, n, letters, False, requester)
    return [[n, LIMIT_REFUSAL.format(jid=f"{job.id}.{n - 1}")] for n in over]


def release_limit(state, requester):
    """SYSTEM_MAX_RELEASES for a release (condor_release, qrls) by ``requester``: None for
    a queue super user (QUEUE_SUPER_USERS) or where it sets no limit (-1 or less, or unset)."""
    return _release_limit(state, requester)


def _release_limit(state, requester):
    """SYSTEM_MAX_RELEASES for a condor_release by ``requester``: None for a queue super
    user (QUEUE_SUPER_USERS) or where it sets no limit (-1 or less, or unset)."""
    get = state.condor.conf.get if state.condor is not None else (lambda _name: None)
    if queue_super_user(get, requester):
        return None
    found = condorjob.system_policy(state).max_releases
    return found if found is not None and found >= 0 else None


def _over_releases(job, number, limit):
    """True when task ``number`` is held (JobStatus 5) and its NumHolds is above ``limit``:
    HTCondor's schedd refuses to release it (AR_LIMIT_EXCEEDED)."""
    from gridtools.daemon import condorpolicy
    from gridtools.jobads import JobStatus
    ad = condorjob.proc_ad(job, number)
    if ad.eval("JobStatus") != JobStatus.HELD or "NumHolds" not in ad:
        return False
    return (condorpolicy.as_integer(ad.eval("NumHolds")) or 0) > limit


# ---------------------------------------------------------------- condor_vacate_job

def vacate_job(state, dispatcher, req, now):
    """condor_vacate_job: each running task named is evicted and waits to run again (event
    004 in its user log), gracefully (its soft kill signal), or with ``fast`` by SIGKILL
    at once. A task that is not running (waiting, held, suspended, being removed) is
    ``bad``, as HTCondor's schedd vacates only running jobs."""
    fast = bool(req.body.get("fast"))
    why = f"vacated by condor_vacate_job{' -fast' if fast else ''} (by user {user_name(req.uid)})"

    def act(job, target):
        done, bad, missing = [], [], []
        for number in _numbers(job, target):
            task = job.tasks.get(number)
            st = job.state_of(number)
            if st is TaskState.FINISHED:
                missing.append(number)
            elif (st is TaskState.RUNNING and task is not None and not task.suspended
                  and not ((job.condor.get("tasks") or {}).get(str(number)) or {}).get("vacating")
                  and apply.vacate(state, dispatcher, job, task, why, hard=fast)):
                done.append(number)
            else:
                bad.append(number)
        return _answer(target, done=done, bad=bad, gone=missing)
    return _for_each(state, req, act)


# ---------------------------------------------------------------- condor_qedit, condor_prio

def _request_refusal(state, req, attrs):
    """The refusal of an edit of the RequestCpus or RequestMemory of a job submitted with
    qsub (one the requester may change, with a task still in the queue) that its Grid
    Engine requests cannot hold (``condorjob.grid_request_refusal``), before any job is
    changed; None when every target takes it."""
    requester = user_name(req.uid)
    for target in req.body.get("targets") or []:
        job = state.jobs.get(target["id"])
        if job is None or job.spec.get("condor_ad") or not auth.may_modify_job(state, requester, job):
            continue
        numbers = [n for n in _numbers(job, target) if job.state_of(n) is not TaskState.FINISHED]
        if not numbers:
            continue
        refused = condorjob.grid_request_refusal(job.spec, attrs)
        if refused is not None:
            return (f'Failed to set attribute "{refused.attr}" for job {job.id}.{numbers[0] - 1}: '
                    f"{refused.reason}")
    return None


def qedit(state, dispatcher, req, now):
    from gridtools.classad import parse
    attrs = req.body.get("attrs") or {}
    get = state.condor.conf.get if state.condor is not None else (lambda _name: None)
    super_user = queue_super_user(get, user_name(req.uid))
    protected = frozenset() if super_user else configured(get, PROTECTED_KNOBS)
    immutable = configured(get, IMMUTABLE_KNOBS)
    for name, text in attrs.items():
        refusal = edit_refusal(name, immutable, protected)
        if refusal is not None:
            return 1, "", refusal
        try:
            value = parse(text, old=True)
        except Exception:  # noqa: BLE001 - any syntax error
            return 1, "", f"Update aborted, illegal value for : {name}\n"
        if name.lower() == "accountinggroup":
            from gridtools.classad.nodes import Literal
            why = accounting_refusal(get, user_name(req.uid), value.value if isinstance(value, Literal) else value,
                                     super_user)
            if why is not None:
                return 1, "", f"Update of attribute \"{name}\" is not allowed: {why}\n"

    touched = {"priority" if name.lower() == "jobprio" else f"attribute {name}" for name in attrs}
    refused = _jsv_refusal(state, req, touched, "condor_qedit")
    if refused:
        return 1, "", refused + "\n"
    refused = _request_refusal(state, req, attrs)
    if refused:
        return 1, "", refused + "\n"

    def act(job, target):
        numbers = [n for n in _numbers(job, target) if job.state_of(n) is not TaskState.FINISHED]
        unmade = list(job.numbers()[len(job.made()):]) if target.get("cluster") else []
        if numbers or unmade:       # (an edit of a whole cluster materialized late: its procs to come too)
            condorjob.edit_ads(state, job, numbers + unmade, attrs)
            condorjob.forget_costly(job)
        return _answer(target, done=numbers)
    return _for_each(state, req, act)
