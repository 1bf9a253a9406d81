"""The HTCondor side of jobs in the daemon: user log events, the job's own
policy expressions, removal that leaves a job in the queue, and history.

``daemon.apply`` calls in here whenever a job with HTCondor ads
(``spec["condor_ad"]``, see formats.condor.spec) changes: it was taken in
(event 000), a task started (001), ended (005, or 009 when it was removed),
was evicted and requeued (004: by the host, or terminated and requeued by
its own policy), held (012) or released (013). At a task's exit the job's
``OnExitHold`` and ``OnExitRemove`` (with ``max_retries`` folded in at
submit) decide, with HTCondor's precedence, whether it is held, run again or
leaves; a task whose start failed (its working directory, a stream, its
command, its input files) or whose listed output files were not there is
held with HTCondor's hold code and words for it (``start_hold``,
``output_hold``); ``periodic`` evaluates ``PeriodicHold``,
``PeriodicRelease`` and ``PeriodicRemove`` every ``PERIODIC_EXPR_INTERVAL``
seconds. What the daemon keeps per task beyond the task states lives in
``job.condor`` (``ads._overlay_condor`` shows it), for a job of either
dialect: per task ``hold`` (reason, code, subcode), ``completions``,
``removed``, ``gone`` (forced out with ``condor_rm -forcex``), ``holds`` and
``holds_by`` (the holds it had, in all and by reason: NumHolds, NumHoldsByReason),
``vacate`` (a running task being vacated by its periodic policy), ``vacated``,
``vacates`` and ``vacates_by`` (VacateReason..., NumVacates, NumVacatesByReason), ``vacating``
(a running task being held), ``wall`` and ``slot_time`` (the seconds, and
slot-seconds, of its runs that ended without ending the task), ``last`` (the
slot its last run left: LastRemoteHost); for the job
``edits`` (condor_qedit) and ``kept``: finished tasks that stay in the queue
because their ``LeaveJobInQueue`` is true.
"""

import os
import time

from gridtools import ads, jobads
from gridtools.daemon import history, userlogs
from gridtools.formats.condor.userlog import Event, EventType
from gridtools.model import shared

#: HTCondor's HoldReasonCode values used here (condor_holdcodes)
HOLD_CODE_USER = 1
HOLD_CODE_POLICY = 3
HOLD_CODE_CREATE_PROCESS = 6        # FailedToCreateProcess
HOLD_CODE_OUTPUT = 7                # UnableToOpenOutput
HOLD_CODE_INPUT = 8                 # UnableToOpenInput
HOLD_CODE_TRANSFER_OUTPUT = 12      # TransferOutputError
HOLD_CODE_TRANSFER_INPUT = 13       # TransferInputError
HOLD_CODE_IWD = 14                  # IwdError
HOLD_CODE_SUBMITTED = 15            # SubmittedOnHold
HOLD_CODE_FAILED_CHECKPOINT = 36    # FailedToCheckpoint
HOLD_CODE_OUT_OF_RESOURCES = 34     # JobOutOfResources
HOLD_SUBCODE_MEMORY = 102           # (its subcode for memory)
#: the hold code of each step of a start that can fail (exec.jobproc.STEPS, exec.transfer)
_START_CODES = {"cwd": HOLD_CODE_IWD, "stdin": HOLD_CODE_INPUT, "stdout": HOLD_CODE_OUTPUT,
                "stderr": HOLD_CODE_OUTPUT, "exec": HOLD_CODE_CREATE_PROCESS,
                "transfer_input": HOLD_CODE_TRANSFER_INPUT}
#: how HTCondor's starter names each stream
_STREAMS = {"stdin": "standard input", "stdout": "standard output", "stderr": "standard error"}
#: the address the words of a failed transfer give both ends (gridtools has no ports)
_ADDRESS = "<127.0.0.1:0>"
#: seconds between evaluations of the periodic expressions (PERIODIC_EXPR_INTERVAL)
DEFAULT_PERIODIC_INTERVAL = 60.0
#: JobNotification values that ask for mail at the end (always, complete, error) and when
#: the job starts (start)
_NOTIFY_ALWAYS, _NOTIFY_COMPLETE, _NOTIFY_ERROR, _NOTIFY_START = 1, 2, 3, 4


def is_condor(job):
    return bool(job.spec.get("condor_ad"))


def proc_ad(job, number):
    """The ad of task ``number`` (proc number - 1) as condor_q shows it."""
    return ads.job_ad(job.spec, job.tasks.get(number), number, job.hold, job.deleted, job.condor)


def task_info(job, number):
    """The bookkeeping of one task (created empty)."""
    return job.condor.setdefault("tasks", {}).setdefault(str(number), {})


def _proc(number):
    return number - 1


def check_new(spec):
    """Why the ads of a new job cannot be taken ("" when they can). The texts are parsed
    as the job's ads will be (``jobads.parsed_ad``), once."""
    texts = spec["condor_ad"] if isinstance(spec["condor_ad"], list) else [spec["condor_ad"]]
    try:
        parsed = [jobads.parsed_ad(text) for text in texts if text]
    except Exception:  # noqa: BLE001 - any text that is no ad
        return "the job's ads cannot be read"
    if not parsed or not isinstance(parsed[0].eval("Cmd"), str):
        return "the job's ad has no command (Cmd)"
    if len(texts) > 1 and len(texts) != len(list(spec_numbers(spec))):
        return "the job's ads do not match its procs"
    from gridtools.formats.condor.jobattrs import VANILLA
    from gridtools.formats.condor.spec import universe_of
    if spec.get("universe", VANILLA) != universe_of(parsed[0]):
        return "the job's universe is not its ad's"
    return ""


def _own_requests():
    from gridtools.formats.condor.spec import GPU_REQUEST, MEMORY_REQUEST
    return frozenset((MEMORY_REQUEST, GPU_REQUEST, "hostname"))


#: the requests the daemon derives from an HTCondor job's ads whatever the complexes
#: say of them (request_memory, request_gpus, the local universe's submit host)
OWN_REQUESTS = _own_requests()


#: what a new job's description takes from its ads (``formats.condor.spec.cluster_spec``)
_FROM_ADS = ("name", "command", "args", "script_name", "cwd", "env", "stdout", "stderr", "stdin",
             "resources", "pe", "user_hold", "condor_ad", "job_prio", "batch_name", "universe")


def transform(spec, found, counted=None):
    """A new job's description after the job transforms ``found`` changed its procs'
    ads (``formats.condor.transforms``), with what it takes from them made again as
    condor_submit made it (its requests read from proc 0's ad): (the new description or
    None when no transform applied, "" or why a transform failed)."""
    from gridtools.formats.condor import spec as condor_spec
    from gridtools.formats.condor import transforms
    texts = spec["condor_ad"] if isinstance(spec["condor_ad"], list) else [spec["condor_ad"]]
    ads = [jobads.proc_ad(tuple(texts), index) for index in range(1, len(texts) + 1)]
    try:
        applied = [transforms.apply(found, ad) for ad in ads]
    except (ValueError, TypeError) as exc:
        return None, f"job transforms: ERROR applying a transform: {exc}"
    if not any(applied):
        return None, ""
    factory = (spec["materialize"], spec.get("materialize_items")) if spec.get("materialize") else None
    try:
        made = condor_spec.cluster_spec(ads, dict(spec), counted, factory=factory)
    except (ArithmeticError, ValueError, TypeError) as exc:
        return None, f"the job's transformed ads cannot be read: {exc}"
    changed = dict(spec)
    for key in _FROM_ADS:
        changed[key] = made.get(key)
    return changed, ""


def settle_requests(spec, counted=None):
    """A new job's description with the requests of proc 0's ad: for a job whose
    submitter left to the daemon those the ad gives as expressions (``requests_pending``:
    see ``formats.condor.spec.cluster_spec``; ``counted`` as there)."""
    from gridtools.procrequests import settled
    return settled(spec, counted)


def spec_numbers(spec):
    from gridtools.model.job import task_numbers
    return list(task_numbers(spec))


# ---------------------------------------------------------------- writing events

#: the attributes naming the logs a proc's events go to: its own user log and the nodes
#: log of the DAG it is a node of (HTCondor's WriteUserLog writes to both)
LOG_ATTRS = ("UserLog", "DAGManNodesLog")


#: (job, attribute in lower case) of the attributes whose evaluation in one of the job's
#: procs went over the budget of an evaluation (``attr_value``); a job is known by its id
#: and its submission time (``_job_key``: an id comes back after 9,999,999, a spool
#: made anew starts again at 1)
_COSTLY = set()
#: most entries of _COSTLY (it is emptied when full)
MOST_COSTLY = 10000


def attr_value(job, ad, name):
    """Attribute ``name`` of ``ad``, a proc ad of ``job``, evaluated for the daemon's own
    use once per proc (at its start, its end, its removal, a mail). Once an evaluation
    of it in one of the job's procs went over the budget of an evaluation (classad(5),
    COST), it is ERROR in all of them without being evaluated, until condor_qedit
    changes the job (``forget_costly``): evaluated again for each proc, an expression
    that costly would hold the daemon up for every user."""
    key = (_job_key(job), name.lower())
    if key in _COSTLY:
        from gridtools.classad.values import ERROR
        return ERROR
    from gridtools.classad.budget import over_budget
    before = over_budget()
    found = ad.eval(name)
    if over_budget() != before:
        if len(_COSTLY) >= MOST_COSTLY:
            _COSTLY.clear()
        _COSTLY.add(key)
    return found


def _job_key(job):
    return job.id, job.spec.get("submit_time")


def forget_costly(job):
    """condor_qedit changed ``job``: its attributes are evaluated again."""
    known = _job_key(job)
    for key in [k for k in _COSTLY if k[0] == known]:
        _COSTLY.discard(key)


def _log_paths(ad, job):
    """The user logs of ``ad``, a proc ad of ``job`` (absolute paths, read by
    ``attr_value``: one that costly is none)."""
    found = []
    for attr in LOG_ATTRS:
        path = attr_value(job, ad, attr)
        if isinstance(path, str) and path.startswith("/") and path not in found:
            found.append(path)
    return found


def write_events(state, job, items):
    """Append events to the user logs of their procs: ``items`` is [(number, type, info,
    when)], or [(number, type, info, when, subproc)] for the events of a parallel
    universe job's nodes (the subproc is the node's number)."""
    if not is_condor(job):
        return
    by_path = {}
    for number, kind, info, when, *sub in items:
        for path in _log_paths(proc_ad(job, number), job):
            by_path.setdefault(path, []).append(Event(kind, job.id, _proc(number), sub[0] if sub else 0,
                                                      when, info))
    for path, events in by_path.items():
        userlogs.append(job.spec, path, events, state.log)


def _host(job):
    return job.spec.get("submit_host") or "localhost"


def submitted(state, job, now):
    """A new job was taken in: event 000 for every proc, and its hold on submit (of a
    cluster materialized late, for the procs it makes: ``daemon.factory``)."""
    if not is_condor(job):
        return
    hold = jobads.hold_at_submit(job, now)
    if hold:
        job.condor["hold"] = hold
    from gridtools.daemon import factory
    if factory.taken_in(state, job, now):
        return
    submit_events(state, job, list(job.numbers()), now)
    hold_procs(job, now)
    due = held_on_submit(job, list(job.numbers()))
    if due:
        held_events(state, job, due, now)
    schedule_crons(state, job, now)
    complete_noops(state, job, list(job.numbers()), now)


def hold_procs(job, now, numbers=None):
    """The holds of a new cluster's procs, each as its own ad says, as HTCondor's schedd
    takes each new proc's status from its proc ad. A cluster whose first proc was
    submitted held and a later one not has its hold made a hold of each held proc; one
    whose first proc is not held has its later procs that were submitted held (a
    ``hold = true`` before a later queue statement) held. ``numbers``: the procs that
    are in the queue (None: all); a cluster materialized late (``daemon.factory``) is
    given none as it is taken in, then each proc as it comes in (``hold_new_procs``)."""
    from gridtools.model import transitions as tr
    own = _own_statuses(job)
    if job.hold and not all(held for held, _hold in own.values()):
        # (the first proc's hold, for those that name no JobStatus of their own)
        job.condor[OWN_HOLDS] = [True, job.condor.pop("hold", None)]
        tr.set_hold(job, None, "u", False)
    elif not job.hold and any(held for held, _hold in own.values()):
        job.condor[OWN_HOLDS] = [False, None]
    hold_new_procs(job, job.numbers() if numbers is None else numbers, now)
    if numbers is None:
        job.condor.pop(OWN_HOLDS, None)


#: ``Job.condor``'s key of a cluster whose procs are held each on its own
#: (``hold_procs``) while some are still to come into the queue: [whether those whose
#: ad names no JobStatus of its own are held (as the first is), the first's hold]
OWN_HOLDS = "own_holds"


def hold_new_procs(job, numbers, now):
    """Procs ``numbers`` of a cluster whose procs are held each on its own
    (``hold_procs``) came into the queue: each held proc is held, with the hold its ad
    gives (else the first proc's)."""
    kept = job.condor.get(OWN_HOLDS)
    if not kept:
        return
    from gridtools.model import transitions as tr
    held_first, first = kept
    own = _own_statuses(job)
    for number in numbers:
        mine, hold = own.get(number, (held_first, None))
        if not mine:
            continue
        tr.set_hold(job, number, "u", True)
        hold = hold + [int(now)] if hold is not None else (list(first) if first and number not in own else None)
        if hold is not None:
            task_info(job, number)["hold"] = hold


def entering_held(job):
    """A test of whether a proc of ``job`` comes into the queue held (``hold_procs``)."""
    kept = job.condor.get(OWN_HOLDS)
    if job.hold or not kept:
        return lambda number: bool(job.hold)
    own = _own_statuses(job)
    return lambda number: own.get(number, (kept[0], None))[0]


def held_on_submit(job, numbers):
    """The procs among ``numbers`` that came into the queue held whose hold event (012) is
    due (``hold_procs``): all of a cluster held whole with a hold on submit; else those
    held with a hold of their own, or whose own ad says they are held."""
    if job.hold:
        return list(numbers) if job.condor.get("hold") else []
    own = None
    found = []
    for number in numbers:
        task = job.tasks.get(number)
        if task is None or "u" not in task.hold:
            continue
        if ((job.condor.get("tasks") or {}).get(str(number)) or {}).get("hold"):
            found.append(number)
            continue
        own = _own_statuses(job) if own is None else own
        if own.get(number, (False, None))[0]:
            found.append(number)
    return found


def is_held(job, number):
    """True when task ``number`` of ``job`` is held (by the job's hold or its own)."""
    task = job.tasks.get(number)
    return bool(job.hold or (task is not None and task.hold))


def _own_statuses(job):
    """{task number: (held, its hold)} of the later procs of a cluster whose own ad names
    a JobStatus (those that name none have the first proc's): held when it is 5, as
    HTCondor's schedd takes each new proc's initial status from its proc ad. A held
    one's hold ([reason, code, subcode], None when its ad names no reason) is what its
    ad says: ``hold = true`` before its queue statement gives "submitted on hold at
    user's request", code 15 (``formats.condor.jobattrs.set_hold``). Only a proc's own
    attributes are looked at, parsed (those its stored ad changes from the first's)."""
    stored = job.spec.get("condor_ad")
    if not isinstance(stored, list):
        return {}
    found = {}
    for number in range(2, len(stored) + 1):
        mine = stored[number - 1]
        if not isinstance(mine, str) or "jobstatus" not in mine.lower() \
                or jobads.parsed_ad(mine).lookup("JobStatus") is None:      # (most name none: not parsed)
            continue
        ad = jobads.proc_ad(stored, number)
        if _int(ad.eval("JobStatus")) != int(jobads.JobStatus.HELD):
            found[number] = (False, None)
            continue
        reason = ad.eval("HoldReason")
        hold = [reason, _int(ad.eval("HoldReasonCode")), _int(ad.eval("HoldReasonSubCode"))] \
            if isinstance(reason, str) and reason else None
        found[number] = (True, hold)
    return found


def complete_noops(state, job, numbers, now):
    """The procs among ``numbers`` whose IsNoopJob is true never run: each is completed at
    once, held or not, as HTCondor's schedd completes a noop job (``count_jobs``):
    JobStatus 4 and event 005, no usage, with NoopJobExitCode as its return value (else
    NoopJobExitSignal as the signal that ended it, else return value 0). Neither its
    OnExitHold nor its OnExitRemove is looked at, and its ad gets no ExitCode,
    ExitBySignal or run (NumJobStarts stays 0); it leaves the queue for the history
    unless its LeaveJobInQueue keeps it. The number of procs completed."""
    from gridtools.daemon import condorpolicy
    from gridtools.model import transitions as tr
    from gridtools.model.job import TaskState
    if not is_condor(job):
        return 0
    done = []
    for number in numbers:
        if job.state_of(number) not in (TaskState.PENDING, TaskState.ERROR):
            continue
        ad = proc_ad(job, number)
        if "IsNoopJob" not in ad or not condorpolicy.true(attr_value(job, ad, "IsNoopJob")):
            continue
        info = _usage_info(None, {})
        code, sig = (condorpolicy.as_integer(attr_value(job, ad, attr)) if attr in ad else None
                     for attr in ("NoopJobExitCode", "NoopJobExitSignal"))
        # (the schedd makes a wait status of it: the low bits of each count)
        if code is None and sig is not None:
            info.update(TerminatedNormally=False, TerminatedBySignal=sig & 0x7f)
        else:
            info.update(TerminatedNormally=True, ReturnValue=(code or 0) & 0xff)
        tr.delete_pending(job, number, now)     # (it leaves the waiting state without a run)
        job.task(number).failed_reason = ""
        done.append((number, EventType.JOB_TERMINATED, info, now))
    if not done:
        return 0
    write_events(state, job, done)
    for number, *_rest in done:
        if _stays(job, number):
            job.condor.setdefault("kept", []).append(number)
        else:
            history.record(state, job, number)
    state.touch(job)
    state.need_schedule = True
    if job.is_finished():
        state.note_finished(job.id)
    return len(done)


def cluster_event(state, job, kind, info, now):
    """An event of the whole cluster (proc -1: ClusterSubmit, ClusterRemove), to the logs
    its first proc names."""
    for path in _log_paths(proc_ad(job, job.numbers()[0]), job):
        userlogs.append(job.spec, path, [Event(kind, job.id, -1, 0, now, info)], state.log)


def cluster_submit_info(job):
    """The ClusterSubmit event's host and notes (as its procs' submit events)."""
    return _submit_info(proc_ad(job, job.numbers()[0]), _submit_address(job))


def submit_events(state, job, numbers, now):
    """Event 000 for each of the procs ``numbers``, as they enter the queue."""
    host = _submit_address(job)
    write_events(state, job, [(n, EventType.SUBMIT, _submit_info(proc_ad(job, n), host), now)
                              for n in numbers])


def _submit_address(job):
    """The address the submit events name: the job's submit host."""
    return f"<127.0.0.1:0?alias={_host(job)}>"


def _submit_info(ad, host):
    """The submit event of a proc: its host and the notes its ad asks for
    (``SubmitEventNotes``, ``SubmitEventUserNotes``, as HTCondor's schedd writes them)."""
    info = {"SubmitHost": host}
    for attr, key in (("SubmitEventNotes", "LogNotes"), ("SubmitEventUserNotes", "UserNotes")):
        value = ad.eval(attr)
        if isinstance(value, str) and value:
            info[key] = value
    return info


def started_events(state, slot_of):
    """The tasks started in this pass (``state.starting``), once their slots are taken
    (``slot_of((job id, number))``: the name of the task's first slot, or None): event 001
    of each HTCondor job with the slot's name."""
    starting, state.starting = state.starting, []
    for job, number, when in starting:
        task = job.tasks.get(number)
        if task is not None and task.state.value == "running" and task.start_time == when:
            started(state, job, number, when, slot_of((job.id, number)))


def took_slot(job, number, slot, slots=()):
    """Task ``number`` of HTCondor job ``job`` holds slot ``slot`` (its first): its ads
    name it (RemoteHost) while it runs; a parallel universe job names the slots of all
    its nodes (``slots``, RemoteHosts). The
    bookkeeping holds it in memory and the published status shows it; it is not
    written to the spool for itself (a job's state is written whole, and a large
    cluster's would be written again at every start). True when that is news."""
    if is_condor(job):
        mine = task_info(job, number)
        from gridtools.formats.condor.jobattrs import PARALLEL
        many = list(slots) if job.spec.get("universe") == PARALLEL and len(slots) > 1 else None
        if mine.get("slot") != slot or mine.get("slots") != many:
            mine["slot"] = slot
            if many:
                mine["slots"] = many
            else:
                mine.pop("slots", None)
            job.changed()
            return True
    return False


def stopped(state, job, task, on, now):
    """A running task of an HTCondor job was suspended (``on``) or resumed: event 010 or
    011, and its bookkeeping counts the suspension (TotalSuspensions,
    CumulativeSuspensionTime, LastSuspensionTime while it lasts)."""
    if not is_condor(job):
        return
    mine = task_info(job, task.number)
    if on:
        mine["suspensions"] = int(mine.get("suspensions", 0)) + 1
        mine["suspended_at"] = int(now)
        write_events(state, job, [(task.number, EventType.JOB_SUSPENDED, {"NumberOfPIDs": 1}, now)])
    else:
        since = mine.pop("suspended_at", None)
        if since is not None:
            mine["suspension_time"] = int(mine.get("suspension_time", 0)) + max(0, int(now) - int(since))
        write_events(state, job, [(task.number, EventType.JOB_UNSUSPENDED, {}, now)])
    job.changed()


def left_slot(job, number):
    """Task ``number`` of ``job`` holds no slot any more: its ads forget the slot and
    name it LastRemoteHost from now on, as HTCondor's schedd does when a job leaves
    its slot (``last``; the history drops it from a finished task once its final ad
    is written, so that a large cluster's finished tasks keep no entry of their own)."""
    tasks = job.condor.get("tasks") if job.condor else None
    mine = tasks.get(str(number)) if tasks else None
    if mine:
        mine.pop("slots", None)
    slot = mine.pop("slot", None) if mine else None
    if slot is not None:
        mine["last"] = slot
        job.changed()


#: a task's bookkeeping keys: the slot of a run whose execute event waits for its input
#: files; how many runs ended before theirs, and how many failed to start (their job
#: never executed: see ``jobads._run_counts``)
EXECUTE_DUE, NEVER_EXECUTED, FAILED_STARTS = jobads.EXECUTE_DUE, jobads.NEVER_EXECUTED, jobads.FAILED_STARTS
#: a task's bookkeeping keys: the exit attributes of its last run whose exit kept it in the
#: queue (``exit_decision``); the DeferralTime its run waits for, as evaluated once for it
#: (``adjust_plan``)
LAST_EXIT, DEFERRED_TO = jobads.LAST_EXIT, "deferred_to"


def started(state, job, number, now, slot=None):
    """Task ``number`` began a run: its execute event (001), or, for a job that copies its
    input files in or waits for its deferral time, the note that it is due once they are
    in or the job began (``EXECUTE_DUE``)."""
    task = job.tasks.get(number)
    slot = slot or (f"{task.queue}@{task.host}" if task is not None else "")
    ad = proc_ad(job, number)
    deferral = info_of(job, number).get(DEFERRED_TO) if task is not None else None
    if task is not None and (_moves_files(job, number) or (deferral is not None and deferral > now)):
        task_info(job, number)[EXECUTE_DUE] = slot
        state.touch(job)                # (written with the pass: a daemon started again knows it)
        state.copying_in[(job.id, number)] = job
    else:
        write_events(state, job, _execute_events(job, number, task, slot, now))
    if attr_value(job, ad, "JobNotification") == _NOTIFY_START:
        from gridtools import cell
        from gridtools.daemon import jobmail
        jobmail.condor_started(state, job, number, ad, cell.hostname(), _mail_to(job, ad))


#: the key of a task's bookkeeping that holds the properties of the execute event its
#: run is due (``jobside.execute_props``)
EXECUTE_PROPS = "execute_props"
#: the key of a task's bookkeeping that holds, by node, the properties of the node execute
#: events (014) of a parallel universe job's other nodes
NODE_PROPS = "node_props"
#: the keys of a task's bookkeeping that hold what its ad took from its slot as its last run
#: started (``jobside.provisioned``), and the durations of that run (``note_activation``)
PROVISIONED, ACTIVATION, DISK = jobads.PROVISIONED, jobads.ACTIVATION, jobads.DISK
#: the keys of a task's bookkeeping that hold its run's memory figures as last noted, and
#: when (``note_size``)
SIZE, SIZE_NOTED = jobads.SIZE, jobads.SIZE_NOTED
#: STARTER_INITIAL_UPDATE_INTERVAL and STARTER_UPDATE_INTERVAL's defaults: how many seconds
#: after a run began its starter first reports its usage, and how often it does then
INITIAL_UPDATE, UPDATE_EVERY = 8, 300


def _execute_events(job, number, task, slot, when):
    """The events of a run that begins to execute: 001 naming its host and slot and the
    run's properties (noted as it was dispatched: ``jobside.add_files``), after a
    parallel universe job's 014 for each of its nodes, naming the node's slot and its
    properties (node 0's those of the 001; another node's when it was started by then)."""
    host = task.host if task is not None else ""
    items = []
    props = task_info(job, number).pop(EXECUTE_PROPS, None) if is_condor(job) else None
    from gridtools.formats.condor.jobattrs import PARALLEL
    if task is not None and job.spec.get("universe") == PARALLEL:
        nodes = task_info(job, number).pop(NODE_PROPS, None) or {}
        from gridtools.daemon.parnodes import node_slot_names, node_slots
        slots = node_slots(task.granted)
        names = node_slot_names(info_of(job, number).get("slots") or (), slots)
        for node, (_queue, where) in enumerate(slots):
            info = {"Node": node, "ExecuteHost": f"<127.0.0.1:0?alias={where}>"}
            if names[node]:
                info["SlotName"] = names[node]
            mine = props if node == 0 else nodes.get(str(node))
            if mine:
                info["ExecuteProps"] = mine
            items.append((number, EventType.NODE_EXECUTE, info, when, node))
    info = {"ExecuteHost": f"<127.0.0.1:0?alias={host}>", "SlotName": slot}
    if props:
        info["ExecuteProps"] = props
    return items + [(number, EventType.EXECUTE, info, when)]


def _usage_info(task, result):
    usage = result.get("usage") or {}
    user, system = float(usage.get("ru_utime", 0.0)), float(usage.get("ru_stime", 0.0))
    return {"RunRemoteUserCpu": user, "RunRemoteSysCpu": system,
            "TotalRemoteUserCpu": user, "TotalRemoteSysCpu": system}


def _resources(job, task, result):
    """The usage ad of a run that ended (``formats.condor.usagetable``), from the task's
    ad with the run's figures; {} for a proc that writes no user log (nothing would
    show it)."""
    ad = proc_ad(job, task.number)
    if not _log_paths(ad, job):
        return {}
    from gridtools.formats.condor.usagetable import usage_ad
    end = result.get("end_time")
    ran = float(end) - float(task.start_time) if isinstance(end, (int, float)) and task.start_time else None
    jobads.run_usage(ad, result.get("usage"), ran)
    return usage_ad(ad)


def _exit_info(task, result):
    info = _usage_info(task, result)
    sig = int(result.get("signal") or 0)
    if sig:
        info.update(TerminatedNormally=False, TerminatedBySignal=sig)
    else:
        info.update(TerminatedNormally=True, ReturnValue=int(result.get("exit_status", 0) or 0))
    return info


def node_ended(state, job, number, node, result):
    """Node ``node`` of parallel universe job ``job`` (task ``number``) exited: event 015,
    with the subproc of its number, dated when it exited."""
    when = result.get("end_time") if isinstance(result.get("end_time"), (int, float)) else time.time()
    write_events(state, job, [(number, EventType.NODE_TERMINATED,
                               dict(_exit_info(None, result), Node=int(node)), when, int(node))])


def evicted(state, job, task, result, now):
    """A running task went back to waiting (host flush, qmod -r, a hold)."""
    ran(job, task)
    mine = task_info(job, task.number) if is_condor(job) else {}
    if mine.pop("vacating", None):          # held: event 012 was written already
        job.changed()
        return
    info = _usage_info(task, result)
    info["UsageAd"] = _resources(job, task, result)
    vacate = mine.pop("vacate", None)
    if vacate:                              # its periodic policy vacated it: why, and the counters
        info.update(Reason=vacate[0], ReasonCode=int(vacate[1]), ReasonSubCode=int(vacate[2]))
        mine["vacated"] = list(vacate[:3])
        _count(mine, "vacates", int(vacate[1]))
        job.changed()
    write_events(state, job, [(task.number, EventType.JOB_EVICTED, info, now)])


def requeued(state, job, task, result, reason, now):
    """A task that exited was put back to run again by its own policy (OnExitRemove false,
    max_retries): event 004 in its terminated-and-requeued form, with the exit and why;
    a task of a cron schedule waits for its next time."""
    info = dict(_exit_info(task, result), TerminatedAndRequeued=True, UsageAd=_resources(job, task, result))
    if reason:
        info["Reason"] = reason
    write_events(state, job, [(task.number, EventType.JOB_EVICTED, info, now)])
    schedule_crons(state, job, now, [task.number], force=True)


# ---------------------------------------------------------------- cron schedules

#: HoldReasonCode of a job whose cron schedule does not read (HTCondor's InvalidCronSettings)
HOLD_INVALID_CRON = 25


def _cron(job):
    """The job's cron schedule (formats.condor.crontab.Schedule), None without one, or the
    message that says why it does not read; kept until the job changes."""
    if not is_condor(job):
        return None
    if "cron" not in job.cache:
        found = None
        ad = proc_ad(job, job.numbers()[0])
        if any(attr.startswith("Cron") for attr in ad):
            from gridtools.formats.condor import crontab
            try:
                found = crontab.of_ad(ad)
            except ValueError as exc:
                found = str(exc)
        job.cache["cron"] = found
    return job.cache["cron"]


def schedule_crons(state, job, now, numbers=None, force=False):
    """Give each waiting task of a job with a cron schedule the next time the schedule
    names as its DeferralTime, when it has none yet or its last one's window closed
    (``now`` past DeferralTime + DeferralWindow), as HTCondor's schedule does, or
    (``force``) after a run; a schedule that does not read holds the task ("Invalid
    cron schedule parameters: ...", HoldReasonCode 25). True when a task changed."""
    schedule = _cron(job)
    if schedule is None:
        return False
    from gridtools.model.job import TaskState
    changed = False
    for number in job.made() if numbers is None else numbers:
        if job.state_of(number) is not TaskState.PENDING or job.holds_of(number):
            continue
        mine = task_info(job, number)
        if isinstance(schedule, str):
            from gridtools.daemon import apply
            reason = f"Invalid cron schedule parameters: {schedule}"
            changed = apply.condor_hold(state, None, job, number, [reason, HOLD_INVALID_CRON, 0], now,
                                        mail=True) or changed
            continue
        last = mine.get("deferral")
        if last is not None and now <= last + _deferral_window(job) and not force:
            continue
        mine["deferral"] = schedule.next_time(now)
        changed = True
    if changed:
        state.touch(job)
    return changed


def _deferral_window(job):
    """The job's DeferralWindow (seconds; 0 without one), read once until the job changes:
    a literal (what condor_submit's ``deferral_window`` writes) as it is, an expression
    evaluated once with its first proc's ad (its procs share one window), so that a
    costly expression does not cost it again for every proc and every evaluation."""
    found = job.cache.get("deferral_window")
    if found is None:
        found = job.cache["deferral_window"] = _int(proc_ad(job, job.numbers()[0]).eval("DeferralWindow"))
    return found


def deferral_of(job, number, ad=None):
    """When an HTCondor task's job is to begin executing (its DeferralTime, the next time
    of its cron schedule for one: ``ad``, its proc_ad, shows both), or None."""
    ad = proc_ad(job, number) if ad is None else ad
    if "DeferralTime" not in ad:
        return None
    when = attr_value(job, ad, "DeferralTime")
    return int(when) if type(when) in (int, float) else None


def ran(job, task):
    """Count a run that ended without ending its task (it waits, or is held, to run again)
    into the task's ``wall`` and ``slot_time`` (RemoteWallClockTime, CumulativeSlotTime)."""
    if not task.start_time or task.end_time <= task.start_time:
        return
    seconds = task.end_time - task.start_time
    mine = task_info(job, task.number)
    mine["wall"] = float(mine.get("wall", 0.0)) + seconds
    mine["slot_time"] = float(mine.get("slot_time", 0.0)) + seconds * max(1, int(task.slots or 1))
    job.changed()


def _drop_spool(job, number):
    """A removed task's sandbox spooled at an eviction (ON_EXIT_OR_EVICT) goes with it,
    as HTCondor's schedd removes a job's spool."""
    from gridtools.spool import jobs as jobstore
    when = proc_ad(job, number).eval("WhenToTransferOutput")
    if isinstance(when, str) and when.upper() == "ON_EXIT_OR_EVICT":
        jobstore.drop_spooled_sandbox(jobstore.task_dir(job.id, number))


#: the RemoveReason of a task removed by qdel (``note_removal``)
QDEL_REASON = "via qdel (by user {user})"


def note_removal(job, number, by=""):
    """A removal of task ``number`` was asked for: its RemoveReason (and its 009 event's)
    is noted for it alone, unless it has one already (a periodic remove's, another
    job's removal): qdel's words and user (``by``: user@host of a qdel, which the
    cluster keeps as the reason of its latest removal, for its tasks without a record
    that go with it), else the reason condor_rm gave the cluster."""
    if by:
        job.condor["remove_reason"] = QDEL_REASON.format(user=by.partition("@")[0])
    _hold_removed(job, number)
    reason = job.condor.get("remove_reason")
    if reason:
        mine = task_info(job, number)
        if not mine.get("remove_reason"):
            mine["remove_reason"] = reason
            job.changed()


def _hold_removed(job, number):
    """A held task (on hold, or in the error state of a failed start) is being removed: its
    hold moves to LastHoldReason, LastHoldReasonCode and LastHoldReasonSubCode, as
    HTCondor's schedd moves them when it removes a job (fixReasonAttrs of a removal)."""
    from gridtools.model.job import TaskState
    if not is_condor(job):
        return
    st = job.state_of(number)
    if st is TaskState.ERROR or (st is TaskState.PENDING and job.holds_of(number)):
        hold = hold_of(job, number)
        task_info(job, number)[LAST_HOLD] = [hold[0], int(hold[1]), int(hold[2])]
        job.changed()


def removed_events(state, job, numbers, now):
    """Tasks that were removed (condor_rm, qdel, a periodic remove): event 009 each, with
    the reason noted for each (``note_removal``), which stays its RemoveReason."""
    default = job.condor.get("remove_reason") or ("via condor_rm" if is_condor(job) else "via qdel")
    for number in numbers:
        mine = task_info(job, number)
        if not mine.get("remove_reason"):
            mine["remove_reason"] = default
    if is_condor(job) and numbers:
        items = []
        for number in numbers:
            mine = (job.condor.get("tasks") or {}).get(str(number)) or {}
            items.append((number, EventType.JOB_ABORTED, {"Reason": mine.get("remove_reason") or default}, now))
        write_events(state, job, items)
    leaving = []
    for number in numbers:
        if is_condor(job):
            _drop_spool(job, number)
        task_info(job, number)["removed"] = True
        gone = ((job.condor.get("tasks") or {}).get(str(number)) or {}).get("gone")
        if is_condor(job) and not gone and _stays(job, number):
            job.condor.setdefault("kept", []).append(number)
        else:
            leaving.append(number)
    for number in leaving:
        history.record(state, job, number)
    if is_condor(job):
        from gridtools.daemon import otherremove
        otherremove.note(state, job, numbers)


def held_events(state, job, numbers, now):
    """Tasks that were held: event 012 with their reason. The ReleaseReason of a
    release before becomes its LastReleaseReason, as HTCondor's schedd moves it
    (fixReasonAttrs of a hold)."""
    items = []
    for number in numbers:
        hold = hold_of(job, number)
        items.append((number, EventType.JOB_HELD, {"HoldReason": hold[0], "HoldReasonCode": int(hold[1]),
                                                  "HoldReasonSubCode": int(hold[2])}, now))
        count_hold(job, number, int(hold[1]))
        mine = (job.condor.get("tasks") or {}).get(str(number))
        if mine and RELEASE_REASON in mine:
            mine[LAST_RELEASE_REASON] = mine.pop(RELEASE_REASON)
            job.changed()
    write_events(state, job, items)


def hold_of(job, number):
    """[reason, code, subcode] of the hold of task ``number`` (held now): the one the
    daemon noted for it or its cluster, else what its ad says."""
    hold = ((job.condor.get("tasks") or {}).get(str(number)) or {}).get("hold") or job.condor.get("hold")
    if not hold:
        ad = proc_ad(job, number)
        hold = [_text(ad.eval("HoldReason")) or "via condor_hold", _int(ad.eval("HoldReasonCode")) or
                HOLD_CODE_USER, _int(ad.eval("HoldReasonSubCode"))]
    return hold


#: a task's bookkeeping of its last release (``releasing``): its ReleaseReason, the hold it
#: ended (LastHoldReason, LastHoldReasonCode, LastHoldReasonSubCode), and the
#: ReleaseReason a hold after it moved to LastReleaseReason (``held_events``)
RELEASE_REASON, LAST_HOLD, LAST_RELEASE_REASON = "release_reason", "last_hold", "last_release_reason"


def releasing(job, number, reason):
    """Task ``number``, held, is about to be released (condor_release, qrls, a periodic
    release) with ``reason``: as HTCondor's schedd does (releaseJobRaw, fixReasonAttrs of
    a release), its ad says ReleaseReason (when there is a reason), and its hold moves
    to LastHoldReason, LastHoldReasonCode and LastHoldReasonSubCode. Called while the
    task is still held."""
    hold = hold_of(job, number)
    mine = task_info(job, number)
    mine[LAST_HOLD] = [hold[0], int(hold[1]), int(hold[2])]
    if reason:
        mine[RELEASE_REASON] = reason
    job.changed()


def count_hold(job, number, code):
    """Count a hold of task ``number`` with HoldReasonCode ``code`` into its ``holds`` and
    ``holds_by`` (NumHolds, NumHoldsByReason: by the code's name in HTCondor's
    CONDOR_HOLD_CODE, Unspecified for a code it does not name), as HTCondor's schedd
    counts every hold but those made to spool input files."""
    if code == jobads.HOLD_CODE_SPOOLING:
        return
    _count(task_info(job, number), "holds", code)
    job.changed()


def _count(mine, key, code):
    """One more of a task's ``key`` (holds, vacates) in all and, in ``key``_by, by the
    name of its reason ``code``."""
    mine[key] = int(mine.get(key, 0)) + 1
    by = mine.setdefault(key + "_by", {})
    name = jobads.hold_code_name(code)
    by[name] = int(by.get(name, 0)) + 1


def start_hold(job, task, result):
    """[reason, code, subcode] of the hold of a task whose start failed (result's
    ``start_failure``: the step, path and errno), in HTCondor's words; a failure the
    result does not name (a prolog's) is FailedToCreateProcess with its Grid Engine
    reason. Called while the task still knows its slot."""
    failure = result.get("start_failure")
    if not isinstance(failure, dict) or failure.get("step") not in _START_CODES:
        why = _text(result.get("error_reason")) or _text(result.get("failed_reason")) or "the job failed to start"
        return [why, HOLD_CODE_CREATE_PROCESS, 0]
    step, path, err = failure["step"], _text(failure.get("path")), _int(failure.get("errno"))
    slot = _slot_name(job, task)
    text = _strerror(err)
    if step == "cwd":
        reason = f"Cannot access initial working directory {path}: {text}"
    elif step in _STREAMS:
        reason = f"Error from {slot}: Failed to open '{path}' as {_STREAMS[step]}: {text} (errno {err})"
    elif step == "exec":
        ad = proc_ad(job, task.number)
        args = _text(ad.eval("Arguments")) or _text(ad.eval("Args"))
        reason = f"Error from {slot}: Failed to execute '{path}'" + (f" with arguments {args}" if args else "") + \
            f": (errno={err}: '{text}')"
    else:
        reason = (f"Transfer input files failure at access point {_host(job)} while sending files to "
                  f"execution point {slot}. Details: {result.get('error_reason') or result.get('failed_reason')}")
    return [reason, _START_CODES[step], err]


def _slot_name(job, task):
    """The slot a task holds (node 0's, of a parallel universe job), as HTCondor's words
    name it (``slot1@host``); its queue instance when it holds none of its own."""
    mine = info_of(job, task.number)
    return mine.get("slot") or f"{task.queue}@{task.host}"


def output_hold(job, task, result):
    """[reason, code, subcode] of the hold of a task whose exit left out a file its
    ``transfer_output_files`` names (result's ``output_failure``), or None."""
    failure = result.get("output_failure")
    if not isinstance(failure, dict):
        return None
    err = _int(failure.get("errno"))
    slot = _slot_name(job, task)
    if failure.get("mkdir"):            # (a remap's folder that could not be made)
        return [f"Transfer output files failure at access point {_host(job)} while receiving files from "
                f"execution point {slot}. Details: Error from {slot}: STARTER at 127.0.0.1 failed to send "
                f"file(s) to {_ADDRESS}; SHADOW at 127.0.0.1 failed to create directory "
                f"{_text(failure.get('path'))}: {_strerror(err)} (errno {err})", HOLD_CODE_TRANSFER_OUTPUT, err]
    if failure.get("write"):            # (where transfer_output_remaps or output_destination sent it)
        return [f"Transfer output files failure at access point {_host(job)} while receiving files from "
                f"execution point {slot}. Details: Error from {slot}: STARTER at 127.0.0.1 failed to send "
                f"file(s) to {_ADDRESS}; SHADOW at 127.0.0.1 failed to write to file "
                f"{_text(failure.get('path'))}: (errno {err}) {_strerror(err)}", HOLD_CODE_TRANSFER_OUTPUT, err]
    details = (f"Error from {slot}: STARTER at 127.0.0.1 failed to send file(s) to {_ADDRESS}: "
               f"error reading from {_text(failure.get('path'))}: (errno {err}) {_strerror(err)}; "
               f"SHADOW failed to receive file(s) from {_ADDRESS}")
    return [f"Transfer output files failure at execution point {slot} while sending files to access "
            f"point {_host(job)}. Details: {details}", HOLD_CODE_TRANSFER_OUTPUT, err]


def checkpoint_hold(result):
    """[reason, code, subcode] of the hold of a task that did not exit as it promised when
    sent the checkpoint signal it asked for (result's ``checkpoint_failure``), in the
    words of HTCondor's starter, or None. (What was promised is the job's
    CheckpointExit* attributes, as the starter words it.)"""
    failure = result.get("checkpoint_failure")
    if not isinstance(failure, dict):
        return None
    (promised_signal, promised), (actual_signal, actual) = failure["promised"], failure["actual"]
    reason = ("Job did not exit as promised when sent its checkpoint signal.  Promised exit was "
              f"{'on signal' if promised_signal else 'with exit code'} {_int(promised)}, actual exit status was "
              f"{'on signal' if actual_signal else 'with exit code'} {_int(actual)}.")
    return [reason, HOLD_CODE_FAILED_CHECKPOINT, _int(failure.get("status"))]


def memory_hold(result):
    """[reason, code, subcode] of the hold of a task its shepherd killed for going over its
    memory limit (result's ``memory_exceeded``: the plan's ``memory_limit`` and the MiB
    it used), in the words of HTCondor's starter, which names the slot's memory as the
    usage measured last when STARTER_ALWAYS_HOLD_ON_OOM is true; or None."""
    over = result.get("memory_exceeded")
    if not isinstance(over, dict):
        return None
    slot = _int(over.get("slot_mb"))
    used = slot if over.get("at_limit", True) else _int(over.get("used_mb"))
    reason = (f"Job has gone over cgroup memory limit of {slot} megabytes. Last measured usage: {used} "
              "megabytes.  Consider resubmitting with a higher request_memory.")
    return [reason, HOLD_CODE_OUT_OF_RESOURCES, HOLD_SUBCODE_MEMORY]


def failed_to_start(state, job, number, hold, now):
    """A task whose start failed waits in the error state: its hold (``start_hold``) is
    kept for condor_q, for a job of either dialect, and event 012 tells its log."""
    mine = task_info(job, number)
    mine["hold"] = list(hold[:3]) + [int(now)]
    mine[FAILED_STARTS] = int(mine.get(FAILED_STARTS) or 0) + 1     # (a run begun: see jobads._run_counts)
    job.changed()
    held_events(state, job, [number], now)
    notify_action(state, job, number, "put on hold", hold[0], int(hold[1]))


def error_cleared(job, number):
    """qmod -cj of a task in the error state: the hold of its failed start goes."""
    mine = (job.condor.get("tasks") or {}).get(str(number))
    if mine and mine.pop("hold", None) is not None:
        job.changed()


def released_events(state, job, numbers, reason, now):
    write_events(state, job, [(n, EventType.JOB_RELEASED, {"Reason": reason}, now) for n in numbers])


def _text(value):
    return value if isinstance(value, str) else ""


_int = jobads.ad_int


def _strerror(err):
    try:
        return os.strerror(err) if err else "unknown error"
    except (ValueError, OverflowError):
        return "unknown error"


# ---------------------------------------------------------------- exits

def exit_decision(job, task, result, now, state=None):
    """What the job's exit policy says of a task that exited of its own accord
    (``condorpolicy.Decision``), or None: it leaves the queue. Counts the completion.
    A task killed for its memory (``memory_hold``), or whose output files were not all
    there (``output_hold``), is held first. The periodic expressions, the job's and
    the system's (``state``'s condor_config), come before the exit expressions
    (``condorpolicy.at_exit``). A task the policy keeps in the queue (held, to run
    again) keeps its exit's ExitCode or ExitSignal in its ad (``LAST_EXIT``), as
    HTCondor's shadow sends them to the schedd before it holds or requeues the job."""
    if not is_condor(job) or task.deleting or result.get("deleted"):
        return None
    from gridtools.daemon import condorpolicy
    hold = memory_hold(result) or checkpoint_hold(result) or output_hold(job, task, result)
    if hold is not None:
        return condorpolicy.Decision(condorpolicy.Action.HOLD, *hold)
    mine = task_info(job, task.number)
    mine["completions"] = int(mine.get("completions", 0)) + 1
    ad = condorpolicy.with_exit(proc_ad(job, task.number), result, mine["completions"], now)
    system = system_policy(state) if state is not None else condorpolicy.NO_SYSTEM_POLICY
    decision = condorpolicy.at_exit(ad, lambda name: attr_value(job, ad, name), now, system)
    if decision is not None:
        mine[LAST_EXIT] = condorpolicy.exit_attrs(result)
        job.changed()
    return decision


def exit_removed(state, job, task, result, decision, now):
    """A task that exited was removed by a periodic expression looked at on its exit
    (PeriodicRemove, SYSTEM_PERIODIC_REMOVE): it ends as removed, with event 009 and its
    RemoveReason, instead of 005, as HTCondor's shadow removes such a job; mailed as
    the shadow mails a removal."""
    from gridtools.model import transitions as tr
    mine = task_info(job, task.number)
    mine["remove_reason"] = decision.reason
    job.changed()
    notify_action(state, job, task.number, "removed", decision.reason)
    tr.finish(job, task.number, result, now)
    removed_events(state, job, [task.number], now)


def ended(state, job, task, result, now):
    """A task left the running state for good: event 005 (009 when it was removed),
    the history, mail that was asked for, and whether it stays in the queue."""
    if task.deleting or result.get("deleted"):
        removed_events(state, job, [task.number], now)
        return
    if not is_condor(job):
        history.record(state, job, task.number)
        return
    # dated when the job ended (a job that ended while no daemon ran is reaped later)
    when = result.get("end_time") if isinstance(result.get("end_time"), (int, float)) else now
    info = dict(_exit_info(task, result), UsageAd=_resources(job, task, result))
    write_events(state, job, [(task.number, EventType.JOB_TERMINATED, info, min(when, now) if when > 0 else now)])
    _notify(state, job, task, result)
    if _stays(job, task.number):
        job.condor.setdefault("kept", []).append(task.number)
    else:
        history.record(state, job, task.number)


def _stays(job, number):
    """True when a completed task stays in the queue (its LeaveJobInQueue is true)."""
    from gridtools.daemon import condorpolicy
    ad = proc_ad(job, number)
    return "LeaveJobInQueue" in ad and condorpolicy.true(attr_value(job, ad, "LeaveJobInQueue"))


def _notify(state, job, task, result):
    """notification: the mail HTCondor's schedd sends at a proc's end (``daemon.jobmail``)."""
    ad = proc_ad(job, task.number)
    wanted = attr_value(job, ad, "JobNotification")
    failed = bool(result.get("signal")) or int(result.get("exit_status", 0) or 0) != 0
    if wanted not in (_NOTIFY_ALWAYS, _NOTIFY_COMPLETE) and not (wanted == _NOTIFY_ERROR and failed):
        return
    from gridtools import cell
    from gridtools.daemon import jobmail
    jobmail.condor_ended(state, job, task, result, ad, cell.hostname(), _mail_to(job, ad), time.time())


#: HoldReasonCodes of holds HTCondor's Error notification does not mail: the owner's
#: (condor_hold), the job's policy's, and a job's submitted on hold
_QUIET_HOLDS = (HOLD_CODE_USER, HOLD_CODE_POLICY, HOLD_CODE_SUBMITTED)


def notify_action(state, job, number, action, reason, code=None, exit_code=None):
    """The mail HTCondor's shadow sends when it puts a running proc on hold (``action``
    "put on hold", with its HoldReasonCode ``code``) or removes it ("removed"), when the
    job's notification asks for it (HTCondor's rule: Always; Error for a hold whose
    code is not the owner's, the policy's or the submission's, or whose last exit code,
    ``exit_code`` or its ExitCode, is not its JobSuccessExitCode)."""
    if not is_condor(job):
        return
    ad = proc_ad(job, number)
    wanted = attr_value(job, ad, "JobNotification")
    if wanted != _NOTIFY_ALWAYS:
        if wanted != _NOTIFY_ERROR:
            return
        if code is None or code in _QUIET_HOLDS:
            status = exit_code if exit_code is not None else _int(attr_value(job, ad, "ExitCode"))
            if status == _int(attr_value(job, ad, "JobSuccessExitCode")):
                return
    from gridtools import cell
    from gridtools.daemon import jobmail
    jobmail.condor_action(state, job, number, ad, cell.hostname(), _mail_to(job, ad), action, reason)


def _mail_to(job, ad):
    """Whom HTCondor would mail about the job: NotifyUser, else its owner at its host."""
    return _text(attr_value(job, ad, "NotifyUser")) or f"{job.spec['owner']}@{_host(job)}"


# ---------------------------------------------------------------- holds by Grid Engine requests

def held_numbers(job, number):
    """Pending task numbers that count as held now (of one task, or of the job)."""
    if not is_condor(job):
        return set()
    numbers = [number] if number is not None else list(job.pending_numbers())
    return {n for n in numbers if job.holds_of(n)}


def letters_before(job, number):
    """The hold letters of a Grid Engine job (not HTCondor's) before a change of them
    (of task ``number``, None: of the job), as ``grid_hold_changed`` wants them: (the
    job's, the task's own); None for an HTCondor job (``hold_changed`` counts its holds)."""
    if is_condor(job):
        return None
    task = job.tasks.get(number) if number is not None else None
    return job.hold, (task.hold if task is not None else "")


def grid_hold_changed(job, number, before):
    """Count the holds a change of a Grid Engine job's hold letters made (qhold, qalter
    -h; ``before``: ``letters_before``), as HTCondor's schedd counts every hold of a
    proc in its NumHolds and NumHoldsByReason (UserRequest, the HoldReasonCode its ad
    shows). A task is held when it waits and the first letter applies to it. A hold of
    the whole job is counted once for the job (``jobads.GRID_HOLDS``: an array's tasks
    need no record each), and a task it did not hold (running, ended, in error or held
    already) notes that it does not count (``jobads.GRID_UNCOUNTED``); a hold of one
    task counts in its own bookkeeping. A job submitted on hold (qsub -h) was held once
    (``jobads.grid_hold_counts``)."""
    if before is None:
        return
    from gridtools.model.job import TaskState
    _drop_ended_holds(job)
    job_letters, own_letters = before
    if number is None:
        if job_letters or not job.hold:
            return
        job.condor[jobads.GRID_HOLDS] = int(job.condor.get(jobads.GRID_HOLDS, 0)) + 1
        for n, task in job.tasks.items():
            if task.state is not TaskState.PENDING or task.hold:
                mine = task_info(job, n)
                mine[jobads.GRID_UNCOUNTED] = int(mine.get(jobads.GRID_UNCOUNTED, 0)) + 1
        job.changed()
        return
    if job_letters or own_letters or job.state_of(number) is not TaskState.PENDING or not job.holds_of(number):
        return
    count_hold(job, number, HOLD_CODE_USER)


def _drop_ended_holds(job):
    """The holds noted for a Grid Engine job's tasks (condor_hold's, a policy's) that the
    hold letter they set (u) no longer makes (qrls ended them): condor_q shows a
    later hold (qhold) by its own words, never by an ended one's (a task in the
    error state keeps the hold of its failed start)."""
    from gridtools.model.job import TaskState
    tasks = job.condor.get("tasks") or {}
    for key, mine in tasks.items():
        if mine.get("hold") and "u" not in job.holds_of(int(key)) \
                and job.state_of(int(key)) is not TaskState.ERROR:
            del mine["hold"]
            job.changed()
    if job.condor.get("hold") and "u" not in job.hold:
        job.condor.pop("hold", None)
        job.changed()


#: the reason of a release by qrls (``hold_changed``), as condor_release's names its tool
QRLS_REASON = "via qrls (by user {user})"


def hold_changed(state, job, number, before, by=""):
    """After qhold/qrls (or any hold change) of ``number`` (None: the job): events
    012/013 for the tasks whose held state changed (``by``: who asked, whose qrls
    the release event and ReleaseReason name)."""
    if not is_condor(job):
        return
    after = held_numbers(job, number)
    now = time.time()
    for n in after - before:
        mine = task_info(job, n)
        if not mine.get("hold"):
            letters = job.holds_of(n)
            why = next((text for letter, text in ads._HOLD_REASONS if letter in letters), "held")
            mine["hold"] = [why, HOLD_CODE_USER, 0, int(now)]
    if after - before:
        held_events(state, job, sorted(after - before), now)
    if before - after:
        reason = QRLS_REASON.format(user=by) if by else "via qrls"
        for n in before - after:
            releasing(job, n, reason)
            (job.condor.get("tasks") or {}).get(str(n), {}).pop("hold", None)
        if not after:
            job.condor.pop("hold", None)
        released_events(state, job, sorted(before - after), reason, now)


# ---------------------------------------------------------------- running

#: seconds a slot whose configuration sets no MachineMaxVacateTime gives a job between its
#: soft kill signal and SIGKILL (HTCondor's default, $(MaxVacateTime): 10 minutes)
MACHINE_MAX_VACATE_TIME = "$(MaxVacateTime)"
#: whether a removed or held job gets its soft kill signal (true) or SIGKILL at once, unless
#: its WantGracefulRemoval says otherwise (GRACEFULLY_REMOVE_JOBS' default)
GRACEFULLY_REMOVE_JOBS = True


def vacate_time(ad, conf=None):
    """Seconds between the soft kill signal of a job being stopped (condor_rm, condor_hold,
    a vacate) and SIGKILL, as HTCondor's startd gives them (``Resource::evalMaxVacateTime``):
    the slot's MachineMaxVacateTime (``conf``: the configuration of the job's host; an
    expression, evaluated with the job's ad, ``$(MaxVacateTime)``, 10 minutes, when
    unset), or the job's own JobMaxVacateTime (else its older KillSigTimeout) when it
    asks for no more. A value that is no number is 0: SIGKILL at once."""
    from gridtools.classad import parse
    from gridtools.daemon import condorpolicy
    from gridtools.formats import condor_config, condor_params
    try:
        text = conf.get("MachineMaxVacateTime") if conf is not None else None
        if text is None:
            text = conf.expand(MACHINE_MAX_VACATE_TIME) if conf is not None else \
                condor_config.expand(MACHINE_MAX_VACATE_TIME, condor_params.default)
        machine = condorpolicy.as_integer(parse(text).eval(ad)) or 0
    except Exception:  # noqa: BLE001 - a knob that is no expression: no time at all, as the startd's
        machine = 0
    for attr in ("JobMaxVacateTime", "KillSigTimeout"):
        if attr in ad:
            own = condorpolicy.as_integer(ad.eval(attr)) or 0
            return float(max(0, min(own, machine)))
    return float(max(0, machine))


def graceful_removal(conf, ad=None):
    """Whether a job (``ad``) removed or held gets its soft kill signal first: its
    WantGracefulRemoval when that reads as a boolean, else GRACEFULLY_REMOVE_JOBS of
    ``conf`` (true by default), as HTCondor's shadow decides (``jobWantsGracefulRemoval``).
    False: SIGKILL at once. A scheduler universe job has no shadow: its schedd always
    sends it the action's signal (true)."""
    from gridtools.daemon import condorpolicy
    from gridtools.formats.condor.jobattrs import SCHEDULER
    if ad is not None and ad.eval("JobUniverse") == SCHEDULER:
        return True
    if ad is not None and "WantGracefulRemoval" in ad:
        value = ad.eval("WantGracefulRemoval")
        if isinstance(value, (bool, int, float)):
            return condorpolicy.true(value)
    if conf is None:
        return GRACEFULLY_REMOVE_JOBS
    from gridtools.formats.condor_config import boolean_or
    return boolean_or(conf, "GRACEFULLY_REMOVE_JOBS", GRACEFULLY_REMOVE_JOBS)


def wants_graceful_removal(state, job, number):
    """``graceful_removal`` of task ``number`` of ``job`` with the cell's condor_config
    (a Grid Engine job's: always)."""
    return not is_condor(job) or graceful_removal(configs(state)[0], proc_ad(job, number))


def configs(state, host=None):
    """(the cell's condor_config, the one host ``host`` reads); None for one not read."""
    conf = getattr(getattr(state, "condor", None), "conf", None)
    if conf is None or conf.main is None:
        return None, None
    return conf, conf.host(host) if host is not None else None


def _output_places(plan, ad, iwd):
    """Where the output files of a job that transfers files go (``exec.transfer``):
    transfer_output_remaps, output_destination, and output_directory, where its output
    and error files, when relative, are written too (their folder made, if need be,
    before they are opened), as HTCondor's shadow puts every file the job sends back,
    its streams too, under it."""
    for attr, key in (("TransferOutputRemaps", "remaps"), ("OutputDestination", "destination")):
        if _text(ad.eval(attr)):
            plan["scratch"][key] = ad.eval(attr)
    folder = _text(ad.eval("OutputDirectory"))
    if not folder:
        return
    folder = os.path.join(iwd, folder)
    plan["scratch"]["outdir"] = folder
    plan["stream_dirs"] = [folder]
    for attr, key in (("Out", "stdout"), ("Err", "stderr")):
        written = _text(ad.eval(attr))
        if written and not written.startswith("/"):
            plan[key] = os.path.join(folder, written)


def _scratch_choices(scratch, facts):
    """What more a job's submit description chose of its file transfer (``exec.transfer``):
    ON_EXIT_OR_EVICT (``on_evict``: its sandbox is spooled when it is evicted), its
    executable copied into its scratch folder and run there (``executable``, unless
    transfer_executable is false), preserve_relative_paths (``preserve``, and
    ``places``: the folder each input file keeps)."""
    if facts["on_evict"]:
        scratch["on_evict"] = True
    if facts["transfer_executable"] and facts["command"].startswith("/"):
        scratch["executable"] = facts["command"]
    if facts["preserve_paths"]:
        scratch["preserve"] = True
        scratch["places"] = facts["input_places"]


#: the names of a job's output and error files in its scratch folder (HTCondor's
#: StdoutRemapName and StderrRemapName)
STREAM_NAMES = {"stdout": "_condor_stdout", "stderr": "_condor_stderr"}


def _kept_streams(plan, ad):
    """A job that transfers files writes its output and error files, unless it streams
    them (stream_output, stream_error) or does not transfer them (transfer_output =
    false ...), in its scratch folder, and they come back with its output files, as
    HTCondor's starter keeps them in the sandbox: ``scratch["streams"]``, {"stdout" or
    "stderr": [its name there, where it goes]} (the error file one with the output file
    when both name one file)."""
    streams = {}
    for key, attr in (("stdout", "Out"), ("stderr", "Err")):
        where = plan[key]
        if where == "/dev/null" or ad.eval("Stream" + attr) is True or ad.eval("Transfer" + attr) is False:
            continue
        same = key == "stderr" and (streams.get("stdout") or [None, None])[1] == where
        streams[key] = [STREAM_NAMES["stdout" if same else key], where]
    if streams:
        plan["scratch"]["streams"] = streams


def remap_mkdir(condor):
    """ALLOW_TRANSFER_REMAP_TO_MKDIR of the cell's condor_config (false where it is unset
    or cannot be read)."""
    from gridtools.formats.condor_config import boolean_or
    return boolean_or(condor.conf, "ALLOW_TRANSFER_REMAP_TO_MKDIR", False) if condor is not None else False


def adjust_plan(plan, job, number, thread_names=None, mkdir=False, pool=None, measure=None, conf=None,
                host_conf=None):
    """The execution plan of an HTCondor proc: its own command, arguments, working
    directory, environment and streams from its ad, with what HTCondor's starter adds
    (``daemon.jobside``; ``thread_names``: its thread-count variables); a scratch
    folder with copies of its input files when it transfers files; its output and
error files emptied at the start (``plan["truncate"]``: HTCondor 24's starter
empties them whatever AppendFiles says), but for a job that checkpoints
(checkpoint_exit_code, WantCheckpointSignal), whose runs add to them as the
starter opens them for it; its RemoveKillSig, when it has one, else its KillSig
    when it is stopped (removed, held, vacated: the starter's graceful shutdown), but a
    scheduler universe job (DAGMan), which the schedd signals itself, gets its
    RemoveKillSig only when it is removed, and when it is held its HoldKillSig, else its
    KillSig (``plan["stop_method"]``, for any stop that is no removal). ``mkdir``: the folders
    of relative remap paths are made when missing (``remap_mkdir``). ``pool``: the
    pool's transfer plugins (``exec.poolplugins``' table). ``measure``: when the scratch
    folder is measured while the job runs ((first, then every) seconds:
    ``update_intervals``), as the starter measures it for its updates. ``conf``: the
    cell's condor_config, ``host_conf``: the configuration of the host the job runs on
    (None: the defaults), for how it is stopped: the seconds from its soft kill signal
    to SIGKILL (``vacate_time``), and SIGKILL at once when it is removed and does not
    want a graceful removal (``graceful_removal``)."""
    from gridtools.daemon import jobside
    from gridtools.formats.condor.jobattrs import SCHEDULER
    from gridtools.formats.condor.spec import kill_signal, run_facts, signal_of
    ad = proc_ad(job, number)
    facts = run_facts(ad)
    plan["exec"], plan["argv"] = facts["command"], [facts["command"]] + list(facts["args"])
    plan["cwd"] = facts["iwd"]
    env = dict(plan["env"])
    env.update(facts["env"])
    env.update({"PWD": facts["iwd"], "SGE_CWD_PATH": facts["iwd"], "_CONDOR_JOB_IWD": facts["iwd"],
                "_CONDOR_SCRATCH_DIR": env.get("TMPDIR", facts["iwd"]),
                "CONDOR_ID": f"{job.id}.{_proc(number)}"})
    jobside.environment(env, facts["env"], jobside.job_cpus(job, plan.get("granted")),
                        jobside.THREAD_VARS if thread_names is None else thread_names)
    plan["env"] = env
    plan["stdin"], plan["stdout"], plan["stderr"] = facts["stdin"], facts["stdout"], facts["stderr"]
    plan["join"] = False
    plan["stream_names"] = {}           # an ad's Out and Err name files, never folders
    # each start empties the output and error files, but those append_files names
    plan["truncate"] = ["stdout", "stderr"]
    plan["terminate_method"] = signal_of(facts["kill_sig"])     # a signal's name, never a command
    if facts["remove_kill_sig"]:
        plan["remove_method"] = signal_of(facts["remove_kill_sig"])     # RemoveKillSig, when it has one
    if facts["universe"] == SCHEDULER:
        # (no starter: the schedd signals it itself, by the action; held: its HoldKillSig,
        # else its KillSig; never its RemoveKillSig, which tells DAGMan it was removed)
        hold_sig = kill_signal(ad, "HoldKillSig", None)
        plan["stop_method"] = signal_of(hold_sig) if hold_sig else None
    plan["kill_after"] = vacate_time(ad, host_conf)
    if not graceful_removal(conf, ad):
        plan["graceful"] = False        # (condor_rm: SIGKILL at once)
    plan["strict_exec"] = True          # a command that cannot be executed holds the job
    deferral = deferral_of(job, number, ad)
    mine = info_of(job, number)
    if deferral is not None:
        plan["not_before"] = deferral   # (the shepherd waits until then, as the starter does)
        # (evaluated once, as the starter does: an expression of time() gives another time later)
        task_info(job, number)[DEFERRED_TO] = deferral
        job.changed()
    elif mine.get(DEFERRED_TO) is not None:
        task_info(job, number).pop(DEFERRED_TO, None)
        job.changed()
    if facts["scratch"]:
        plan["scratch"] = {"iwd": facts["iwd"], "input": facts["transfer_input"],
                           "output": facts["transfer_output"], "on_success": facts["on_success"]}
        _scratch_choices(plan["scratch"], facts)
        _output_places(plan, ad, facts["iwd"])
        _kept_streams(plan, ad)
        if mkdir and plan["scratch"].get("remaps"):
            plan["scratch"]["mkdir"] = True
        plugins = ad.eval("TransferPlugins")        # (transfer_plugins: the job's own, run as it)
        if isinstance(plugins, str) and plugins.strip():
            from gridtools.exec.movers import plugin_table
            plan["scratch"]["plugins"] = plugin_table(plugins, facts["iwd"])
        if pool:
            plan["scratch"]["pool"] = {method: list(entry) for method, entry in pool.items()}
        if measure:
            plan["scratch"]["measure"] = list(measure)
    if facts["self_checkpoint"]:
        plan["self_checkpoint"] = facts["self_checkpoint"]
    if facts["checkpoint_signal"]:
        plan["checkpoint_signal"] = facts["checkpoint_signal"]
    if facts["self_checkpoint"] or facts["checkpoint_signal"]:
        plan["truncate"] = []           # (a job that checkpoints adds to them, run after run)
    return plan


# ---------------------------------------------------------------- condor_qedit

def _set_in(text, name, value_text):
    """An ad text with attribute ``name`` set to ``value_text`` (replacing it)."""
    from gridtools.classad import parse_ad
    ad = parse_ad(text) if text else None
    lines = []
    if ad is not None:
        lines = [f"{n} = {ad.lookup(n).unparse(True)}\n" for n in ad if n.lower() != name.lower()]
    return "".join(lines) + f"{name} = {value_text}\n"


def edited_texts(spec, numbers, name, value_text):
    """``condor_ad`` of a job with ``name`` set in the ads of tasks ``numbers``."""
    from gridtools.classad import parse_ad
    stored = spec["condor_ad"]
    count = len(spec_numbers(spec))
    texts = list(stored) if isinstance(stored, list) else [stored] + [""] * (count - 1)
    if len(numbers) == count:
        texts = [_set_in(texts[0], name, value_text)] + \
            [_without(t, name) for t in texts[1:]]
        return texts if any(texts[1:]) else texts[0]
    base = parse_ad(texts[0])
    if 1 in numbers:        # the other procs keep what they had: proc 0's old value, or nothing
        old = base.lookup(name).unparse(True) if name in base else "undefined"
        texts[1:] = [t if _defines(t, name) else _set_in(t, name, old) for t in texts[1:]]
    for number in numbers:
        texts[number - 1] = _set_in(texts[number - 1], name, value_text)
    return texts


def _defines(text, name):
    from gridtools.classad import parse_ad
    return bool(text) and name in parse_ad(text)


def _without(text, name):
    from gridtools.classad import parse_ad
    if not _defines(text, name):
        return text
    ad = parse_ad(text)
    return "".join(f"{n} = {ad.lookup(n).unparse(True)}\n" for n in ad if n.lower() != name.lower())


def edit_ads(state, job, numbers, attrs):
    """condor_qedit: set attributes in the ads of tasks ``numbers`` (spec["condor_ad"] is
    rewritten), then bring what the scheduler reads of the description (slots, requests,
    JobPrio) in line with proc 0. A job submitted with qsub keeps the edits beside its
    description (``job.condor["edits"]``, for the whole job); its JobPrio counts, and
    its RequestCpus and RequestMemory are changes of its Grid Engine requests (its PE's
    slots, its memory request: ``grid_requests``), which its ad is made from. While a
    task of it runs they only lie over its ad, as HTCondor's condor_qedit of a running
    job changes its ad and not the claim it runs in: the running task keeps the PE and
    slots it was granted, which qstat -j and its accounting record name; the next edit
    of the job while none of its tasks runs brings them into its description. A value
    its description cannot hold is refused (``grid_request_refusal``: ``RequestRefused``)."""
    from gridtools.spool import jobs as jobstore
    spec = dict(job.spec)
    if spec.get("condor_ad"):
        from gridtools.daemon.devices import countable_complexes
        counted = countable_complexes(state.config)
        before = _derived(spec, counted)
        place = {n: i for i, n in enumerate(job.numbers(), 1)}
        positions = [place[n] for n in numbers]
        for name, text in attrs.items():
            spec["condor_ad"] = edited_texts(spec, positions, name, text)
        _refresh(spec, before, _derived(spec, counted), counted)
    else:                   # a qsub job: its ad is made from its description, the edits lie over it
        edits = job.condor.setdefault("edits", {})
        if not job.running():
            # (requests edited while a task ran lay over its ad: they go into the description now)
            named = {n.lower() for n in attrs}
            earlier = {n: t for n, t in edits.items() if n.lower() in _GRID_REQUEST_ATTRS and n.lower() not in named}
            attrs = grid_requests(spec, dict(earlier, **attrs))
            for name in [n for n in edits if n.lower() in _GRID_REQUEST_ATTRS and n not in attrs]:
                del edits[name]             # (its description says it now)
        edits.update(attrs)
        if not edits:
            del job.condor["edits"]
        prio = ads.job_ad(spec, None, 1, condor=job.condor).eval("JobPrio")
        spec["job_prio"] = int(prio) if type(prio) in (int, float) else 0
    jobstore.write_spec(spec)
    job.spec = shared.description(spec)
    state.touch(job)
    state.need_schedule = True
    state.log(f"I|job {job.id}: attributes {', '.join(sorted(attrs))} set")


#: the request attributes of a qsub job's ad that condor_qedit changes in its description
_GRID_REQUEST_ATTRS = ("requestcpus", "requestmemory")


class RequestRefused(ValueError):
    """A condor_qedit of a qsub job's RequestCpus or RequestMemory that its Grid Engine
    requests cannot hold: ``attr`` (as given) and ``reason`` (Grid Engine's words)."""

    def __init__(self, attr, reason):
        super().__init__(reason)
        self.attr, self.reason = attr, reason


def grid_request_refusal(spec, attrs):
    """The ``RequestRefused`` condor_qedit of ``attrs`` would meet on a qsub job whose
    description is ``spec`` (left unchanged), else None: a RequestMemory whose memory
    request per slot is beyond what qsub and qalter take, a RequestCpus beyond the
    slots a PE request may name."""
    try:
        grid_requests(dict(spec), attrs)
    except RequestRefused as refused:
        return refused
    return None


def grid_requests(spec, attrs):
    """condor_qedit of a job submitted with qsub (``spec``, changed here): a RequestCpus
    of N is its PE's slots (N of its PE, ``smp`` for a job without one; a job of one CPU
    in ``smp`` leaves it), a RequestMemory of M MiB its memory request (the first of
    ``jobads.MEMORY_REQUESTS`` it names, else mem_free) of M/slots per slot, as the ad
    of such a job counts RequestMemory; a change of its slots alone keeps its
    RequestMemory. The attributes of ``attrs`` left to lie over its ad: those, and a
    request whose value is no number (an expression), as they were. Raises
    ``RequestRefused`` (``spec`` then unchanged) for slots beyond what a PE request may
    name, or a memory request per slot that is no memory value qsub takes (out of range)."""
    import math
    from gridtools.errors import InputError
    from gridtools.formats import values
    from gridtools.formats.condor.spec import MEMORY_REQUEST, SMP_PE
    from gridtools.formats.jobcheck import MAX_JOB_ID
    wanted, given = {}, {}
    for name, text in attrs.items():
        if name.lower() not in _GRID_REQUEST_ATTRS:
            continue
        try:
            value = ads.job_ad(spec, None, 1, condor={"edits": {name: text}}).eval(name)
        except Exception:  # noqa: BLE001 - a text that is no ClassAd expression stays an edit
            continue
        if type(value) in (int, float) and value - value == 0 and value >= 0:
            wanted[name.lower()] = int(math.ceil(value))
            given[name.lower()] = name
    if not wanted:
        return attrs
    if wanted.get("requestcpus", 0) > MAX_JOB_ID:
        raise RequestRefused(given["requestcpus"], f'{wanted["requestcpus"]} slots are out of range '
                                                   f"(at most {MAX_JOB_ID})")
    old_slots, old_memory, _hosts = jobads._sge_requests(spec)
    had_pe, before_pe = "pe" in spec, spec.get("pe")
    if "requestcpus" in wanted:
        cpus = max(1, wanted["requestcpus"])
        pe = spec.get("pe")
        if pe:
            spec["pe"] = None if cpus == 1 and pe[0] == SMP_PE else [pe[0], cpus, cpus]
        elif cpus > 1:
            spec["pe"] = [SMP_PE, cpus, cpus]
    memory = wanted.get("requestmemory", old_memory)
    slots = jobads._sge_requests(spec)[0]
    if "requestmemory" in wanted or (memory and slots != old_slots):
        resources = dict(spec.get("resources") or {"hard": {}, "soft": {}})
        hard = dict(resources.get("hard") or {})
        name = next((n for n in jobads.MEMORY_REQUESTS if n in hard), MEMORY_REQUEST)
        if memory > 0:
            text = f"{-(-memory // slots)}M"
            try:
                values.parse_memory(text)
            except InputError as exc:
                if had_pe:
                    spec["pe"] = before_pe
                else:
                    spec.pop("pe", None)
                raise RequestRefused(given.get("requestmemory") or given["requestcpus"],
                                     f"{values.not_a_value(name, 'MEMORY')}: {exc}") from None
            hard[name] = text
        else:
            hard.pop(name, None)
        resources["hard"] = hard
        spec["resources"] = resources
    return {name: text for name, text in attrs.items() if name.lower() not in wanted}


#: what a job description takes from the ad of its first proc (see ``_refresh``)
_DERIVED = ("pe", "job_prio", "batch_name", "universe", "command", "args", "cwd", "env", "stdout",
            "stderr", "stdin")


def _derived(spec, counted=None):
    """The description's fields as proc 0's ad makes them (``counted``: see
    ``formats.condor.spec.cluster_spec``)."""
    from gridtools.formats.condor import spec as condor_spec
    first = ads.job_ad(spec, None, 1)
    owner_fields = {k: spec[k] for k in ("owner", "uid", "gid", "sge_o", "submit_host", "submit_time")
                    if k in spec}
    owner_fields.setdefault("submit_host", "")
    return condor_spec.cluster_spec([first], owner_fields, counted)


def _refresh(spec, before, after, counted=None):
    """Bring into the description what an edit of the ads changed in what proc 0's ad
    makes of it (``before`` and ``after``: ``_derived`` of each), and nothing else: a
    field or hard request the edit leaves as it was keeps what ``qalter`` made of it.
    The requests held once are worked out again when the PE or a request changed."""
    from gridtools.formats.condor import spec as condor_spec
    changed = False
    for key in _DERIVED:
        if before.get(key) != after.get(key):
            spec[key] = after.get(key)
            changed = changed or key == "pe"
    old, new = before["resources"]["hard"], after["resources"]["hard"]
    hard = dict(spec["resources"]["hard"])
    for name in set(old) | set(new):
        if old.get(name) != new.get(name):
            changed = True
            if name in new:
                hard[name] = new[name]
            else:
                hard.pop(name, None)
    if hard != spec["resources"]["hard"]:
        spec["resources"] = dict(spec["resources"], hard=hard)
    if changed:
        spec.pop("per_job_requests", None)
        held_once = condor_spec.per_job_requests(spec.get("pe"), hard, counted)
        if held_once:
            spec["per_job_requests"] = held_once
    spec["user_hold"] = bool(spec.get("user_hold"))


# ---------------------------------------------------------------- periodic expressions

_CONFIG = {"stamp": None, "interval": DEFAULT_PERIODIC_INTERVAL, "looked": 0.0, "root": None}
#: least seconds between two looks whether condor_config changed
CONFIG_LOOK = 0.25


def periodic_interval():
    """PERIODIC_EXPR_INTERVAL of the cell's condor_config (read again when it changed,
    looked at most every CONFIG_LOOK seconds)."""
    import os
    import time
    from gridtools import cell
    from gridtools.daemon import condorpolicy
    from gridtools.formats import condor_config
    now = time.monotonic()
    if 0 <= now - _CONFIG["looked"] < CONFIG_LOOK and _CONFIG["root"] == cell.root():
        return _CONFIG["interval"]
    _CONFIG["looked"], _CONFIG["root"] = now, cell.root()
    path = condor_config.locate(cell.etc("condor_config"))
    try:
        st = os.stat(path)
        stamp = (st.st_ino, st.st_mtime_ns, st.st_size)     # an edit within one clock tick changes the size
    except OSError:
        stamp = None
    if stamp != _CONFIG["stamp"]:
        _CONFIG["stamp"] = stamp
        try:
            _CONFIG["interval"] = condorpolicy.interval(condor_config.load(path).get)
        except Exception:  # noqa: BLE001 - an unreadable configuration: the default
            _CONFIG["interval"] = DEFAULT_PERIODIC_INTERVAL
    return _CONFIG["interval"]


def _has_periodic(job):
    """True when the job's ad has periodic expressions (HTCondor jobs only: a Grid Engine
    job has none, and its cache gets no entry for it)."""
    if not is_condor(job):
        return False
    found = job.cache.get("periodic")
    if found is None:
        from gridtools.daemon import condorpolicy
        found = job.cache["periodic"] = condorpolicy.has_periodic(proc_ad(job, job.numbers()[0]))
    return found


def system_policy(state):
    """condor_config's SYSTEM_PERIODIC_HOLD, _RELEASE and _REMOVE (``condorpolicy.SystemPolicy``),
    once per reading of the configuration (a condor_reconfig reads it at once)."""
    from gridtools.daemon import condorpolicy
    keeper = getattr(state, "condor", None)
    conf = getattr(keeper, "conf", None)
    if conf is None or conf.main is None:
        return condorpolicy.NO_SYSTEM_POLICY
    return conf.derived("system_policy", lambda: condorpolicy.system_policy(conf.get, state.log))


def periodic(state, dispatcher, now, resume=False):
    """Evaluate the periodic expressions of every live task of the jobs that have them
    and carry out what they decide; returns the number of tasks changed. A job whose
    expressions went over the evaluation budget (classad(5), COST: ERROR, which never
    fires) is left alone until it changes, rather than evaluated again and again.

    One user's expressions take at most PERIODIC_OWNER_SECONDS of an evaluation of them
    all (the evaluation every PERIODIC_EXPR_INTERVAL and its resumptions), and one
    evaluation at most PERIODIC_PASS_SECONDS, counted after each task (a cluster may
    have thousands): the tasks left wait in ``state.periodic_waiting`` (job id -> the
    index of the first of its tasks left), which the next evaluation looks at first,
    from where it stopped. With ``resume`` only those are looked at, those of users
    whose share is not spent: the daemon comes back for them a moment later
    (``RESUME_AFTER``) rather than after a whole PERIODIC_EXPR_INTERVAL. So no user's
    costly expressions hold the daemon up for everybody, nor keep another user's from
    being evaluated: theirs are evaluated less often instead."""
    changed = 0
    system = system_policy(state)
    waiting = {}                        # (what is left for the next evaluation)
    before = getattr(state, "periodic_waiting", None) or {}
    if resume:                          # (owner -> seconds since the last whole evaluation began)
        spent = getattr(state, "periodic_spent", None) or {}
        jobs = [state.jobs[jid] for jid in before if jid in state.jobs]
    else:
        spent = state.periodic_spent = {}
        jobs = list(state.jobs.values())
        if before:                      # (those an evaluation left out are looked at first)
            jobs.sort(key=lambda j: j.id not in before)
    began = time.monotonic()
    for job in jobs:
        owner = job.spec.get("owner")
        first = before.get(job.id, 0)
        started = time.monotonic()
        if spent.get(owner, 0.0) > PERIODIC_OWNER_SECONDS or started - began > PERIODIC_PASS_SECONDS:
            if not job.is_finished() and (system or _has_periodic(job)):
                waiting[job.id] = first
            continue
        share = PERIODIC_OWNER_SECONDS - spent.get(owner, 0.0)
        done, left = _periodic_job(state, dispatcher, job, now, system, first,
                                   _deadline(min(started + share, began + PERIODIC_PASS_SECONDS)))
        changed += done
        if left is not None:
            waiting[job.id] = left
        spent[owner] = spent.get(owner, 0.0) + time.monotonic() - started
    if waiting and not before:
        state.log(f"W|periodic expressions of {len(waiting)} jobs wait for the next evaluation: "
                  "their owners' expressions cost more than an evaluation gives one user")
    state.periodic_waiting = waiting
    # (a resumption is worth it for the tasks of users whose share is not spent)
    state.periodic_resumable = any(spent.get(state.jobs[jid].spec.get("owner"), 0.0) <= PERIODIC_OWNER_SECONDS
                                   for jid in waiting)
    return changed


#: the seconds one user's periodic expressions may take in one evaluation of them all
#: (each expression has its own budget too: classad(5), COST); that user's other tasks wait
#: for the next one (and go first then)
PERIODIC_OWNER_SECONDS = 0.5
#: the seconds one evaluation may take in all (the daemon takes in requests in between)
PERIODIC_PASS_SECONDS = 1.0
#: seconds after an evaluation that left tasks waiting that the daemon comes back for them
RESUME_AFTER = 0.5


def _deadline(when):
    """A ``stop`` for ``_periodic_job``: True once the monotonic clock is past ``when``."""
    return lambda: time.monotonic() > when


def _periodic_job(state, dispatcher, job, now, system, first=0, stop=None):
    """The periodic evaluation of one job's live tasks, from its ``first`` task made on
    (and, from the first, its cron window): (the number of tasks changed, the index of
    the task to go on from when ``stop()`` said to stop after one, else None)."""
    from gridtools.classad.budget import over_budget
    from gridtools.daemon import condorpolicy
    from gridtools.model.job import TaskState
    changed = 0
    if not first and not job.is_finished() and _cron(job) is not None and schedule_crons(state, job, now):
        changed += 1                    # (a window that closed unmatched: the next time)
    if job.is_finished() or not (system or _has_periodic(job)) \
            or job.cache.get("periodic_too_costly") == job.version:
        return changed, None
    numbers = list(job.made())
    for index in range(first, len(numbers)):
        number = numbers[index]
        if job.state_of(number) is TaskState.FINISHED:
            continue
        over = over_budget()
        ad = proc_ad(job, number)
        if "AllowedExecuteDuration" in ad and job.state_of(number) is TaskState.RUNNING:
            began = note_executing(state, job, job.tasks.get(number))
            if began is not None:
                ad["JobCurrentStartExecutingDate"] = began
        decision = condorpolicy.periodic(ad, now, system)
        costly = over_budget() != over
        if decision is not None and _carry_out(state, dispatcher, job, number, decision, now):
            changed += 1
        if costly:
            job.cache["periodic_too_costly"] = job.version
            state.log(f"W|job {job.id}: its periodic expressions cost more than an evaluation may; "
                      "they are not evaluated again until the job changes")
            break
        if stop is not None and index + 1 < len(numbers) and stop():
            return changed, index + 1
    return changed, None


def note_executing(state, job, task):
    """Record in a task's bookkeeping when its job began to execute in the run it is in
    (``executing``: JobCurrentStartExecutingDate, as HTCondor's shadow sets it when the
    starter says the job began; it stays after the run, as HTCondor's does, until the
    next run's job begins); returns it, or None while it has not begun. The task's
    folder is looked at only until it is known for the run; a record made is published
    (every user's ad shows it from then on)."""
    if task is None or not task.start_time or not is_condor(job):
        return None
    tasks = job.condor.get("tasks") or {}
    known = (tasks.get(str(task.number)) or {}).get("executing")
    if known is not None and known >= int(task.start_time):
        return known
    from gridtools.spool.jobs import executing_since
    began = executing_since(job.id, task.number)
    if began is None or began < int(task.start_time):       # (not yet, or an earlier run's)
        return None
    task_info(job, task.number)["executing"] = began
    state.touch(job)
    return began


#: result key -> task bookkeeping key of the times a run's files were copied (``exec.shepherd``)
TRANSFERS = {"transfer_input": "input_copied", "transfer_output": "output_copied"}


def note_transfers(state, job, task, result):
    """Record in a task's bookkeeping when the run that ended (``result``) copied its
    input files in and its output files back ([began, ended] each), as HTCondor's
    shadow sets JobCurrentStart/FinishTransferInput/OutputDate when a run ends: those of
    a run that copied none (it moves no files, or was stopped first) stay the earlier
    run's. The stages it reached are noted as the running task's are (``note_copying``)."""
    if task is None or not is_condor(job):
        return
    mine = info_of(job, task.number)
    began_deferred(state, job, task)            # (a short job that began after its deferral time)
    if (result.get("start_failure") or {}).get("step") == "transfer_input" and EXECUTE_DUE in mine:
        del mine[EXECUTE_DUE]           # its input files could not be copied in: its start failed
        job.changed()
    stages = {}
    for key, kept in TRANSFERS.items():
        times = result.get(key)
        if isinstance(times, list) and len(times) == 2:
            task_info(job, task.number)[kept] = [int(t) for t in times]
            job.changed()
            side = "in" if key == "transfer_input" else "out"
            stages[f"{side}_started"], stages[f"{side}_finished"] = int(times[0]), int(times[1])
    _note_stages(state, job, task, stages)
    if EXECUTE_DUE in mine:                     # stopped before its input files were in
        _never_executed(job, task.number)
    state.copying_in.pop((job.id, task.number), None)


def note_size(state, job, task, used, now):
    """Take a running task's memory figures into its ad as HTCondor's starter reports them
    to the shadow: STARTER_INITIAL_UPDATE_INTERVAL seconds after its run began, then
    every STARTER_UPDATE_INTERVAL seconds (``used``: what its shepherd noted so far;
    ``jobads.run_figures``: ImageSize, MemoryUsage, ResidentSetSize, CpusUsage), and
    log an image size event (006) when the memory figures differ from those its ad
    held, as the shadow does. The size of its scratch folder, which its shepherd
    measures on the same schedule, is taken as soon as it is noted (``_note_disk``).
    Called when the daemon samples the running tasks (every schedule_interval): a
    report due comes at the first sample after it."""
    if task is None or not task.start_time or not is_condor(job) or not used:
        return
    if _note_disk(job, task.number, used):      # (measured by the shepherd when the starter would)
        state.touch(job)
    mine, start = info_of(job, task.number), float(task.start_time)
    initial, every = update_intervals(state)
    noted = mine.get(SIZE_NOTED)
    if now - (start + initial if noted is None or noted < start else noted + every) < 0:
        return
    figures = jobads.run_figures(used, now - start)
    if not figures.get("ImageSize"):
        return
    mine = task_info(job, task.number)
    mine[SIZE_NOTED] = int(now)
    before = mine.get(SIZE) or {}
    mine[SIZE] = figures
    job.changed()
    state.touch(job)
    if all(before.get(name) == figures.get(name) for name in ("ImageSize", "MemoryUsage", "ResidentSetSize")):
        return                      # (its CpusUsage alone changed: no event, as the shadow logs none)
    info = {"Size": figures["ImageSize"]}
    info.update((name, figures[name]) for name in ("MemoryUsage", "ResidentSetSize") if name in figures)
    write_events(state, job, [(task.number, EventType.IMAGE_SIZE, info, now)])


def update_intervals(state):
    """(STARTER_INITIAL_UPDATE_INTERVAL, STARTER_UPDATE_INTERVAL) of the cell's
    condor_config, in seconds (their defaults where unset or unreadable), read once for
    each reading of the configuration."""
    if state.condor is None:
        return INITIAL_UPDATE, UPDATE_EVERY
    conf = state.condor.conf
    return conf.derived("starter updates", lambda: _update_intervals(conf))


def _update_intervals(conf):
    from gridtools.errors import ConfigError
    from gridtools.formats.condor_config import integer
    found = []
    for name, default in (("STARTER_INITIAL_UPDATE_INTERVAL", INITIAL_UPDATE),
                          ("STARTER_UPDATE_INTERVAL", UPDATE_EVERY)):
        try:
            found.append(integer(conf, name, default, minimum=0))
        except ConfigError:
            found.append(default)
    return tuple(found)


def note_disk(job, task, result):
    """Take into a task's ad what its run that ended (``result``) left in its scratch
    folder, as HTCondor's starter reports it to the shadow: ``DiskUsage`` (KiB, rounded
    up) and ``ScratchDirFileCount`` (its entries), each only when it is more than the ad
    holds (the shadow keeps the most), so that a job that runs again asks for that
    much disk (RequestDisk's default is DiskUsage). Only a run with a scratch folder
    (``should_transfer_files``) measures one."""
    usage = result.get("usage") or {}
    if task is not None and is_condor(job):
        _note_disk(job, task.number, usage)


def _note_disk(job, number, usage):
    """Take ``usage``'s ``disk`` and ``files`` (a shepherd's measures of a scratch folder)
    into task ``number``'s ad as DiskUsage and ScratchDirFileCount, each only when it is
    more than the ad holds. True when one changed."""
    disk = usage.get("disk")
    if isinstance(disk, bool) or not isinstance(disk, (int, float)) or disk <= 0:
        return False
    ad = proc_ad(job, number)
    noted = {}
    for name, value in (("DiskUsage", disk), ("ScratchDirFileCount", usage.get("files"))):
        held = ad.eval(name)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0 and \
                (type(held) is not int or int(value) > held):
            noted[name] = int(value)
    if not noted:
        return False
    mine = task_info(job, number)
    mine[DISK] = dict(mine.get(DISK) or {}, **noted)
    job.changed()
    return True


def note_activation(job, task, result, now):
    """Record in a task's bookkeeping how long the run that ended (``result``) held its
    slot and executed, as HTCondor's shadow sets ActivationDuration (from the run's
    start to its end), ActivationExecutionDuration (from when its job began to
    execute to when it exited: when its output files began to be copied back, else
    the run's end), ActivationSetupDuration (the run's start to the job's) and
    ActivationTeardownDuration (the job's exit to the run's end), in whole seconds;
    nothing for a run whose job never began to execute (those of the earlier run
    stay). The checkpoints the run made (checkpoint_exit_code) are added up too."""
    if task is None or not task.start_time or not is_condor(job):
        return
    if result.get("checkpoints"):          # (the run's checkpoints: CheckpointNumber ...)
        mine = task_info(job, task.number)
        mine["checkpoints"] = int(mine.get("checkpoints") or 0) + int(result["checkpoints"])
        mine["last_checkpoint"] = int(result.get("last_checkpoint") or 0)
        job.changed()
    began, start = info_of(job, task.number).get("executing"), int(task.start_time)
    if began is None or int(began) < start:
        return
    end = result.get("end_time")
    end = int(end) if isinstance(end, (int, float)) and end > 0 else int(now)
    out = result.get("transfer_output")
    exited = int(out[0]) if isinstance(out, list) and len(out) == 2 else end
    task_info(job, task.number)[ACTIVATION] = {
        "ActivationDuration": max(0, end - start), "ActivationExecutionDuration": max(0, exited - int(began)),
        "ActivationSetupDuration": max(0, int(began) - start), "ActivationTeardownDuration": max(0, end - exited)}
    job.changed()


def _never_executed(job, number):
    """The run of task ``number`` whose execute event waited for its input files was
    stopped before they were in: its job never executed (no 001; NumJobStarts leaves it
    out)."""
    mine = task_info(job, number)
    del mine[EXECUTE_DUE]
    mine[NEVER_EXECUTED] = int(mine.get(NEVER_EXECUTED) or 0) + 1
    mine.pop(EXECUTE_PROPS, None)
    mine.pop(NODE_PROPS, None)
    job.changed()


def note_copying(state, job, task):
    """Record in a running task's bookkeeping the stages its run's file copying reached
    so far, as its shepherd notes them in the task's folder: when it began and ended to
    copy the input files in, and the output files back (``transfer_in`` and
    ``transfer_out``: [began, ended]; HTCondor's shadow sets TransferInStarted,
    TransferInFinished, TransferOutStarted and TransferOutFinished as the transfers
    begin and end, and they stay until a later run's replace them), and how many runs
    began to copy each (NumInputTransferStarts, NumOutputTransferStarts). Only a job
    that moves files is looked at, and its folder only until its run's copying back
    ended; a record made is published (every user's ad shows it from then on)."""
    if task is None or not task.start_time or not is_condor(job) or not _moves_files(job, task.number):
        return
    mine = info_of(job, task.number)
    if EXECUTE_DUE in mine:
        state.copying_in[(job.id, task.number)] = job      # (looked at every pass: see follow_copying_in)
    if mine.get("out_end_run") == task.start_time:
        return                                  # (all of this run's are known)
    from gridtools.spool.jobs import read_transfers
    stages = read_transfers(job.id, task.number)
    if stages and _note_stages(state, job, task, stages):
        state.touch(job)


def follow_copying_in(state):
    """Look at the copying of the running tasks whose execute event waits for their input
    files (``state.copying_in``) at every pass, not only when running tasks are sampled:
    their shepherds wake the daemon once the files are in, and the event follows at once."""
    from gridtools.model.job import TaskState
    for key, job in list(state.copying_in.items()):
        task = job.tasks.get(key[1])
        if task is None or task.state is not TaskState.RUNNING or EXECUTE_DUE not in info_of(job, key[1]):
            del state.copying_in[key]
            continue
        began_deferred(state, job, task)
        note_copying(state, job, task)
        if EXECUTE_DUE not in info_of(job, key[1]):
            state.copying_in.pop(key, None)


def began_deferred(state, job, task):
    """The execute event (001) of a run that waited for its deferral time (one that moves
    no files; ``EXECUTE_DUE``), once its shepherd began the job (``job_pid``), dated then,
    as HTCondor's shadow logs it when the starter says the job began."""
    mine = info_of(job, task.number)
    if EXECUTE_DUE not in mine or not task.start_time or _moves_files(job, task.number):
        return
    from gridtools.spool.jobs import executing_since
    began = executing_since(job.id, task.number)
    if began is None or began < int(task.start_time):
        return
    # (the file's time may lag the clock the shepherd waited by; it began at its time at the earliest)
    began = max(began, int(mine.get(DEFERRED_TO) or 0))
    mine = task_info(job, task.number)
    write_events(state, job, _execute_events(job, task.number, task, mine.pop(EXECUTE_DUE), began))
    state.touch(job)


def _moves_files(job, number):
    """True when the job's proc ``number`` copies its files in and back (it runs in a
    scratch folder: ShouldTransferFiles YES), kept in the job's cache."""
    known = job.cache.setdefault("moves_files", {})
    if number not in known:
        from gridtools.formats.condor.spec import run_facts
        known[number] = bool(run_facts(proc_ad(job, number))["scratch"])
    return known[number]


#: the file transfer events (040) of each stage: (side, began or ended) -> their Type
TRANSFER_EVENTS = {("in", 0): 2, ("in", 1): 3, ("out", 0): 5, ("out", 1): 6}


def _note_stages(state, job, task, stages):
    """Record the stages (``jobstore.TRANSFER_STAGES``: seconds) the task's current run
    reached in its bookkeeping (see ``note_copying``), and write a file transfer event
    (040) to the job's user log for each stage newly seen, dated when it happened;
    True when that changed the bookkeeping. A stage before the run began is an earlier
    run's, and left out."""
    begun = int(task.start_time or 0)
    changed, news = False, []
    for side in ("in", "out"):
        began, ended = stages.get(f"{side}_started"), stages.get(f"{side}_finished")
        if began is None or began < begun:
            continue
        info = task_info(job, task.number)
        kept = list(info.get(f"transfer_{side}") or (None, None))
        found = [began, kept[1] if ended is None else ended]    # (an earlier run's end until its own)
        if info.get(f"{side}_run") != task.start_time:     # this run began to copy them
            info[f"{side}_run"] = task.start_time
            info[f"{side}_starts"] = int(info.get(f"{side}_starts") or 0) + 1
            news.append((side, 0, began))
            changed = True
        if ended is not None and info.get(f"{side}_end_run") != task.start_time:
            info[f"{side}_end_run"] = task.start_time      # (its end may equal an earlier run's)
            news.append((side, 1, ended))
            changed = True
        if found != kept:
            info[f"transfer_{side}"] = found
            changed = True
    if changed:
        job.changed()
    if news:
        host, mine, items = f"<127.0.0.1:0?alias={task.host}>", info_of(job, task.number), []
        for side, which, when in news:
            items.append((task.number, EventType.FILE_TRANSFER, {"Type": TRANSFER_EVENTS[(side, which)]}
                          | ({"Host": host} if (side, which) == ("in", 0) else {}), when))
            if (side, which) == ("in", 1) and EXECUTE_DUE in mine:
                # the input files are in: the run begins to execute, as HTCondor's shadow
                # logs it then (after the events of their copying)
                items += _execute_events(job, task.number, task, mine.pop(EXECUTE_DUE), when)
        write_events(state, job, items)
    return changed


def info_of(job, number):
    """The bookkeeping of one task, {} when it has none (nothing is created)."""
    return ((job.condor or {}).get("tasks") or {}).get(str(number)) or {}


def _carry_out(state, dispatcher, job, number, decision, now):
    from gridtools.daemon import apply
    from gridtools.daemon.condorpolicy import Action
    from gridtools.model.job import TaskState
    running = job.state_of(number) is TaskState.RUNNING     # (its shadow's: mailed)
    if decision.action is Action.HOLD:
        return apply.condor_hold(state, dispatcher, job, number,
                                 [decision.reason, decision.code, decision.subcode], now, mail=running)
    if decision.action is Action.VACATE:
        return apply.condor_vacate(state, dispatcher, job, number,
                                   [decision.reason, decision.code, decision.subcode], now)
    if decision.action is Action.RELEASE:
        # the job's own policy releases what its owner may: never an operator's or a
        # manager's hold (qhold -h o / -h s), which only they lift
        if set(job.holds_of(number)) & set("os"):
            return False
        return apply.condor_release(state, job, number, decision.reason, now, "u")
    task_info(job, number)["remove_reason"] = decision.reason
    if running:
        notify_action(state, job, number, "removed", decision.reason)
    apply.delete_task(state, dispatcher, job, number, now, False)
    if job.is_finished():
        state.note_finished(job.id)
    return True
