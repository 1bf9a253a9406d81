"""The ClassAd views of jobs, shared by both dialects (``ads`` adds the machines).

``job_ad(spec, task)`` is the ad of one task of a job as the spool
keeps it (``spec`` is the job description, ``task`` its ``model.job.Task``
record or None while it never left the pending state). Job N's task T is
HTCondor's job ``N.(T-1)``: ClusterId is the job id, ProcId the task number
minus one. A job submitted with condor_submit carries the long form of its
original ad under ``spec["condor_ad"]`` (one text for every proc, or a list
with one text per proc); that ad is the base and the state attributes are
laid over it. A Grid Engine job's ad is built from its requests: ``-l
h_vmem`` (or s_vmem, mem_free, virtual_free) times its slots becomes
RequestMemory, the slots of ``-pe`` RequestCpus, and ``-l hostname`` or a
``-q queue@host`` its host; Requirements says the same in ClassAd terms, so
``condor_q -better-analyze`` can explain it. A ``-P`` project is the job's
accounting group (AccountingGroup = ``project.owner``); the other way round, an
HTCondor job whose accounting group names a project of the cell when it is
submitted has that project (``daemon.intake``). Its JobPrio is the job's
``job_prio`` (0 until condor_prio or condor_qedit sets it), HTCondor's order of an
owner's jobs; Grid Engine's priority (``qsub -p``, ``priority``) is another knob,
never shown as JobPrio.

JobStatus from the task's neutral state: 1 idle, 2 running, 3 removed, 4
completed, 5 held (any hold, and Grid Engine's error state), 6 transferring
output (never set here), 7 suspended. Every ad has ``User`` (Owner@UID_DOMAIN,
the domain the daemon noted when it took the job in, else its submit host) and
``GlobalJobId`` (``submit host#cluster.proc#QDate``), ``CurrentHosts`` (1
while the proc runs; a running parallel universe job: its number of nodes, whose
slots ``RemoteHosts`` names), and, from the runs a proc had, ``RemoteWallClockTime``
(the seconds of all its runs), ``CumulativeSlotTime`` (the same in
slot-seconds), ``CommittedTime`` and ``CommittedSlotTime`` (of the run that
completed it). ``LastMatchTime`` is when the proc was last matched to a slot: when its
last run began (a proc of the scheduler or local universe runs unmatched).
``CompletionDate`` is set as a proc completes: a proc removed before it completed has
0 (its ``EnteredCurrentStatus`` says when it was removed). ``LastJobStatus`` is the
status before the last change (``last_status``), absent while there was none.

Standard library only, and neither ``dataclasses``, ``enum`` nor ``re`` (loaded when
a host pattern needs one): condor_q reads a job's ad through this module.
"""

from gridtools.classad import ClassAd, parse, parse_ad
from gridtools.classad.nodes import Literal
from gridtools.classad.parser import ClassAdSyntaxError
from gridtools.classad.values import UNDEFINED
from gridtools.records import ClosedSet

#: the universe of a Grid Engine job in HTCondor's numbering (vanilla)
VANILLA = 5
#: the universes whose jobs run beside the schedd, never matched to a slot (scheduler,
#: local: formats.condor.jobattrs)
SLOTLESS_UNIVERSES = (7, 12)
#: HTCondor's parallel universe (formats.condor.jobattrs.PARALLEL)
PARALLEL_UNIVERSE = 11
#: what only a job's owner (and root) sees of its ad: its command's path, arguments,
#: environment and files (condor_q and condor_history leave them out of another user's
#: ads; the daemon writes them to no file other users read)
PRIVATE_ATTRS = ("Cmd", "Arguments", "Args", "Environment", "Env", "Iwd", "Out", "Err", "In", "UserLog",
                 "DAGManNodesLog", "TransferInput", "TransferOutput", "TransferOutputRemaps", "OutputDestination",
                 "TransferCheckpoint", "NotifyUser")
#: what ``job_ad`` sets in every ad, from the job's description and its task's state
SET_ATTRS = ("ClusterId", "ProcId", "Owner", "User", "GlobalJobId", "QDate", "JobStatus", "CurrentHosts",
             "EnteredCurrentStatus")
#: what the state of a job's tasks lays over its ad when it has something to say (a start,
#: an end, a hold, runs, suspensions ...). None is private: another user's view lays them
#: over the published text of the ad (``spool.rows.public_ad``) from the published state,
#: as the owner's lays them over the stored one
STATE_ATTRS = ("JobStartDate", "JobCurrentStartDate", "LastMatchTime", "NumJobStarts", "RemoteHost", "RemoteHosts",
               "LastRemoteHost", "CompletionDate", "ExitBySignal", "ExitSignal", "ExitCode", "HoldReason",
               "HoldReasonCode", "HoldReasonSubCode", "NumHolds", "NumHoldsByReason", "NumJobCompletions",
               "NumVacates", "NumVacatesByReason", "VacateReason", "VacateReasonCode", "VacateReasonSubCode",
               "RemoveReason", "ReleaseReason", "LastReleaseReason", "LastHoldReason", "LastHoldReasonCode",
               "LastHoldReasonSubCode", "TotalSuspensions", "CumulativeSuspensionTime", "LastSuspensionTime",
               "CommittedTime", "CommittedSlotTime", "RemoteWallClockTime", "CumulativeSlotTime",
               "JobCurrentStartExecutingDate", "JobCurrentStartTransferInputDate",
               "JobCurrentFinishTransferInputDate", "JobCurrentStartTransferOutputDate",
               "JobCurrentFinishTransferOutputDate", "TransferInStarted", "TransferInFinished",
               "TransferOutStarted", "TransferOutFinished", "NumInputTransferStarts", "NumOutputTransferStarts",
               "NumShadowStarts", "JobRunCount")
#: Grid Engine memory requests that become RequestMemory, in order of preference
MEMORY_REQUESTS = ("h_vmem", "s_vmem", "mem_free", "virtual_free", "h_data", "s_data")
#: Grid Engine requests that name the execution host
HOST_REQUESTS = ("hostname", "h")
#: HoldReasonCode of a job held by a user or an operator (HTCondor's UserRequest)
HOLD_CODE_USER = 1
#: HoldReasonCode of a job that failed to start (Grid Engine's error state) when the
#: daemon noted no better one (HTCondor's FailedToCreateProcess); see HOLD_CODE_IWD
HOLD_CODE_ERROR = 6
#: HoldReasonCode of a job whose working directory could not be entered (IwdError), for
#: Grid Engine's failure code 28
HOLD_CODE_IWD, FAILED_CHDIR = 14, 28
_HOLD_REASONS = (("u", "held by the job's owner"), ("o", "held by an operator"),
                 ("s", "held by the system"))


class JobStatus(int, ClosedSet):
    """HTCondor's JobStatus numbers."""
    IDLE = 1
    RUNNING = 2
    REMOVED = 3
    COMPLETED = 4
    HELD = 5
    TRANSFERRING_OUTPUT = 6
    SUSPENDED = 7


def job_status(task=None, job_hold="", deleted=False):
    """The JobStatus of a task record (None: pending, never dispatched)."""
    state = task.state.value if task is not None else "pending"
    if state == "finished":
        return JobStatus.REMOVED if deleted and task.exit_status is None else JobStatus.COMPLETED
    if deleted:
        return JobStatus.REMOVED
    if state == "running":
        return JobStatus.SUSPENDED if task.suspended else JobStatus.RUNNING
    if state == "error" or job_hold or (task is not None and task.hold):
        return JobStatus.HELD
    return JobStatus.IDLE


# ---------------------------------------------------------------- jobs

def job_ad(spec, task=None, number=1, job_hold="", deleted=False, condor=None):
    """The ClassAd of task ``number`` of a job (``task``: its record, or None);
    ``condor``: the job's HTCondor bookkeeping (``model.job.Job.condor``)."""
    ad = _base_ad(spec, number)
    _overlay_state(ad, spec, task, job_hold, deleted)
    mine = _NO_RUNS
    if condor:
        _overlay_condor(ad, condor, number)
        mine = (condor.get("tasks") or _NO_RUNS).get(str(number)) or _NO_RUNS
    grid_hold_counts(ad, spec, condor, mine)
    _run_times(ad, task, mine)
    _checkpoints(ad, task, mine)
    _run_counts(ad, task, mine)
    if mine.get("slot") and task is not None and task.state.value == "running":
        ad["RemoteHost"] = mine["slot"]         # the slot it holds (condor_status's name)
        if mine.get("slots"):                   # a parallel universe job: every node's slot
            ad["RemoteHosts"] = ",".join(mine["slots"])
    status = ad.eval("JobStatus")
    if status == JobStatus.REMOVED and not completed_before_removal(task):
        ad["CompletionDate"] = 0                # (set only as a proc completes)
    if not (condor and "LastJobStatus" in (condor.get("edits") or _NO_RUNS)):
        last = last_status(status, spec, task, job_hold, condor, mine, ad)
        if last:
            ad["LastJobStatus"] = last
    return ad


def completed_before_removal(task):
    """Whether a removed task had completed before it was removed (an HTCondor proc kept
    in the queue after its exit, then removed with condor_rm): it keeps its
    CompletionDate, as HTCondor's schedd sets that only when a proc completes (a proc
    removed while it waited or ran has 0)."""
    return task is not None and task.state.value == "finished" and task.exit_status is not None \
        and not task.deleting


#: seconds a hold may follow the end of the run it stopped (the exit policy's hold is
#: placed as the daemon takes in the run's end)
HOLD_SLACK = 5


def last_status(status, spec, task, job_hold, condor, mine, ad):
    """LastJobStatus of a proc whose JobStatus is ``status``: the status it had before
    its last change, as HTCondor's schedd records it with every change, or 0 when it
    never changed (idle since it was queued, or held since it was submitted on hold).
    A completed proc ran (2); a removed one was completed (4: kept in the queue),
    running (2, 7 suspended), held (5: a hold or the error state) or idle (1); a
    running one was idle (1), or suspended (7) when its only run was; a suspended one
    running (2); a held one running (2: the hold stopped its run, or its start failed)
    or idle (1); an idle one held (5: it was released) or running (2: its run was
    evicted)."""
    state = task.state.value if task is not None else "pending"
    if status == JobStatus.COMPLETED:
        return int(JobStatus.RUNNING)
    if status == JobStatus.REMOVED:
        if completed_before_removal(task):
            return int(JobStatus.COMPLETED)
        if state == "running" or (task is not None and task.deleting):
            return int(JobStatus.SUSPENDED if task.suspended else JobStatus.RUNNING)
        held = job_hold or (task is not None and (task.hold or (state == "finished" and task.error_reason)))
        return int(JobStatus.HELD if held else JobStatus.IDLE)
    if status == JobStatus.SUSPENDED:
        return int(JobStatus.RUNNING)
    if status == JobStatus.RUNNING:
        return int(JobStatus.SUSPENDED if mine.get("suspensions") and not task.restarted else JobStatus.IDLE)
    if status == JobStatus.HELD:
        if state == "error":
            return int(JobStatus.RUNNING)
        hold = mine.get("hold") or (condor or _NO_RUNS).get("hold")
        since = int(hold[3]) if hold and len(hold) > 3 else 0
        if since and task is not None and task.start_time and task.end_time \
                and int(task.start_time) <= since <= task.end_time + HOLD_SLACK:
            return int(JobStatus.RUNNING)
        released = mine.get("last_hold") or mine.get("release_reason")
        if not released and not (task is not None and (task.start_time or task.restarted)):
            if ad.eval("HoldReasonCode") == HOLD_CODE_SUBMITTED_ON_HOLD:
                return 0
            if not spec.get("condor_ad") and spec.get("user_hold") and ad_int(ad.eval("NumHolds")) <= 1:
                return 0
        return int(JobStatus.IDLE)
    if status == JobStatus.IDLE:
        if mine.get("last_hold") or mine.get("release_reason") or ad_int(ad.eval("NumHolds")):
            return int(JobStatus.HELD)
        if task is not None and (task.restarted or task.start_time):
            return int(JobStatus.RUNNING)
    return 0


#: a Grid Engine job's bookkeeping: the holds of its hold letters that held the whole job
#: (``daemon.condorjob.grid_hold_changed``); a task's: how many of them did not hold it
GRID_HOLDS, GRID_UNCOUNTED = "grid_holds", "grid_uncounted"


def grid_hold_counts(ad, spec, condor, mine):
    """NumHolds and NumHoldsByReason of a task of a Grid Engine job (not HTCondor's)
    with the holds of the whole job that held it: those counted for the job (``condor``:
    its bookkeeping; less those the task's, ``mine``, says did not hold it) and a
    submission on hold (qsub -h), each a UserRequest as its HoldReasonCode says."""
    if spec.get("condor_ad"):
        return
    whole = int((condor or {}).get(GRID_HOLDS, 0)) + (1 if spec.get("user_hold") else 0) \
        - int(mine.get(GRID_UNCOUNTED, 0))
    if whole <= 0:
        return
    by = {name: int(n) for name, n in (mine.get("holds_by") or {}).items()}
    name = hold_code_name(HOLD_CODE_USER)
    by[name] = by.get(name, 0) + whole
    ad["NumHolds"] = int(mine.get("holds", 0)) + whole
    ad["NumHoldsByReason"] = by


def hold_at_submit(job, when):
    """The hold bookkeeping (``Job.condor["hold"]``: reason, code, subcode, since) of an
    HTCondor cluster submitted on hold, from its first proc's ad (None when it is not
    held or its ad gives no reason). The daemon records it as it takes the job in;
    condor_q shows a job not taken in yet by the same words."""
    if not job.hold:
        return None
    number = job.numbers()[0]
    first = job_ad(job.spec, job.tasks.get(number), number, job.hold, job.deleted, job.condor)
    reason = first.eval("HoldReason")
    if not isinstance(reason, str):
        return None
    return [reason, ad_int(first.eval("HoldReasonCode")), ad_int(first.eval("HoldReasonSubCode")), int(when)]


def job_ads(job, numbers=None):
    """The ads of a ``model.job.Job``'s tasks (all of them, or ``numbers``)."""
    numbers = job.numbers() if numbers is None else numbers
    return [job_ad(job.spec, job.tasks.get(n), n, job.hold, job.deleted, job.condor) for n in numbers]


#: the universe whose jobs run without a shadow (formats.condor.jobattrs.SCHEDULER)
SCHEDULER_UNIVERSE = 7
#: a task's bookkeeping keys (``daemon.condorjob``): its runs whose start failed, those
#: that ended before their job began to execute, and the slot of a run whose job waits
#: for its input files to execute
FAILED_STARTS, NEVER_EXECUTED, EXECUTE_DUE = "failed_starts", "never_executed", "execute_due"
#: task bookkeeping key (``daemon.condorjob.exit_decision``): ExitBySignal and ExitCode or
#: ExitSignal of its last exit that kept it in the queue (held or to run again by its policy)
LAST_EXIT = "last_exit"
#: keys of a task's bookkeeping: what its ad took from the slot of its last run, and that
#: run's durations (``daemon.jobside.provisioned``, ``daemon.condorjob.note_activation``)
PROVISIONED, ACTIVATION = "provisioned", "activation"
#: key of a task's bookkeeping: its run's memory figures as last noted (``memory_figures``,
#: ``daemon.condorjob.note_size``), and when
SIZE, SIZE_NOTED = "size", "size_noted"
#: key of a task's bookkeeping: the most its runs left in their scratch folders
#: (DiskUsage, ScratchDirFileCount: ``daemon.condorjob.note_disk``)
DISK = "disk"


def _run_counts(ad, task, mine):
    """The counts of a task's runs, once it has begun one: NumShadowStarts and
    JobRunCount count them all, as HTCondor's schedd counts the shadows it starts (a
    scheduler universe job has none: its JobRunCount alone counts them); NumJobStarts
    those whose job began to execute: not one whose start failed, nor one that copies
    its input files in and ended before they were in (or is copying them still)."""
    if task is None:
        return
    # restarted counts the runs that went back to the queue; a waiting task is not in one,
    # nor a finished one that was removed while waiting (no exit status: its runs, if
    # any, went back to the queue before), nor one whose start failed (no start time)
    state = task.state.value
    begun = task.restarted + int(bool(task.start_time) and (
        state == "running" or (state == "finished" and task.exit_status is not None)))
    failed = int(mine.get(FAILED_STARTS) or 0)
    if not task.start_time and not begun + failed:
        return
    if begun + failed:
        ad["JobRunCount"] = begun + failed
        if ad.eval("JobUniverse") != SCHEDULER_UNIVERSE:
            ad["NumShadowStarts"] = begun + failed
    unexecuted = int(mine.get(NEVER_EXECUTED) or 0) + int(EXECUTE_DUE in mine and state == "running")
    ad["NumJobStarts"] = max(0, begun - unexecuted)


def _base_ad(spec, number):
    text = spec.get("condor_ad")
    if isinstance(text, list):
        ad = proc_ad(tuple(text), min(number, len(text))) if text else _sge_ad(spec)
    else:
        ad = parsed_ad(text).copy() if text else _sge_ad(spec)
    ad["ClusterId"] = int(spec["id"])
    ad["ProcId"] = number - 1
    tasks = spec.get("tasks")                   # the cluster's own attributes, as its procs show them:
    ad["TotalSubmitProcs"] = len(range(tasks[0], tasks[1] + 1, tasks[2])) if tasks else 1
    if spec.get("materialize") and "JobMaterializeLimit" not in ad:    # (max_materialize: daemon.factory,
        ad["JobMaterializeLimit"] = int(spec["materialize"])                 # unless condor_qedit set it)
    if "owner" in spec:                 # who submitted it, whatever the ad's text claims
        ad["Owner"] = spec["owner"]
        ad["User"] = f"{spec['owner']}@{spec.get('uid_domain') or spec.get('submit_host') or 'localhost'}"
        ad["GlobalJobId"] = global_job_id(spec, number)
    return ad


def global_job_id(spec, number):
    """GlobalJobId of task ``number`` of a job (its description names its owner)."""
    host = spec.get("submit_host") or "localhost"
    return f"{host}#{spec['id']}.{number - 1}#{int(spec.get('submit_time') or 0)}"


def proc_ad(texts, index):
    """The ad of entry ``index`` (1-based) of a list of ad texts: the first is whole,
    each later one is laid over it (it may hold only what differs from the first). A
    later entry's ``Name = undefined`` takes ``Name`` out: the first proc has an
    attribute (set by condor_qedit) that this one has not."""
    ad = parsed_ad(texts[0]).copy()
    if index > 1 and texts[index - 1]:
        for name, expr in parsed_ad(texts[index - 1]).items():
            if expr.__class__ is Literal and expr.value is UNDEFINED:
                if name in ad:
                    del ad[name]
            else:
                ad[name] = expr
    return ad


#: parsed stored ads by their text (cleared when it holds PARSED_KEPT)
_PARSED = {}
PARSED_KEPT = 256


def parsed_ad(text):
    """The ClassAd of a stored ad's text, parsed once (the same object for the same text:
    callers copy it before changing it)."""
    found = _PARSED.get(text)
    if found is None:
        found = parse_ad(text)
        if len(_PARSED) >= PARSED_KEPT:
            _PARSED.clear()
        _PARSED[text] = found
    return found


def _sge_ad(spec):
    """The ad of a job submitted with qsub (or any job without an original ad)."""
    owner = spec["owner"]
    ad = ClassAd({"MyType": "Job", "TargetType": "Machine", "Owner": owner,
                  "QDate": int(spec.get("submit_time") or 0), "JobUniverse": VANILLA,
                  "Cmd": _sge_cmd(spec),
                  "Arguments": _join_args(spec.get("args") or []),
                  "Iwd": _iwd(spec), "JobPrio": int(spec.get("job_prio") or 0),
                  "NiceUser": False, "JobBatchName": spec.get("name") or ""})
    _streams(ad, spec)
    slots, memory, hosts = _sge_requests(spec)
    ad["RequestCpus"] = slots
    ad["RequestMemory"] = memory
    ad["RequestDisk"] = 0
    ad["MinHosts"] = ad["MaxHosts"] = 1
    ad["Requirements"] = parse(_sge_requirements(slots, memory, hosts))
    ad["Rank"] = 0.0
    project = spec.get("project")
    if project:
        ad["AcctGroup"] = project
        ad["AcctGroupUser"] = owner
        ad["AccountingGroup"] = f"{project}.{owner}"
    return ad


def _sge_cmd(spec):
    """Cmd of a job submitted with qsub: the absolute path of its script, resolved against
    the folder it was submitted from (where qsub read it); of a ``-b y`` command, the
    command itself, one with a slash resolved against the job's working directory (a
    bare name is left as it is: looking it up in the job's PATH here, with the reader's
    rights, would tell whether files exist in folders the owner chose)."""
    import os.path
    if spec.get("binary") or spec.get("script_name") is None:
        command = str(spec.get("command") or spec.get("script_name") or "")
        if not command or command.startswith("/") or "/" not in command:
            return command
        return os.path.normpath(os.path.join(_iwd(spec), command))
    script = str(spec["script_name"])
    if not script or script.startswith("/") or script == "STDIN":
        return script
    workdir = (spec.get("sge_o") or {}).get("WORKDIR") or _iwd(spec)
    return os.path.normpath(os.path.join(workdir, script))


def _join_args(args):
    from gridtools.formats.condor.args import join_v2
    return join_v2([str(a) for a in args])


def _iwd(spec):
    home = (spec.get("sge_o") or {}).get("HOME") or "/"
    return spec.get("cwd") or home


def _streams(ad, spec):
    """Out, Err and In: the job's paths, or Grid Engine's defaults ``name.o<id>``."""
    def first(key):
        for entry in spec.get(key) or []:
            path = entry[1] if isinstance(entry, (list, tuple)) else entry
            if path:
                return str(path)
        return None
    name, jid = spec.get("name") or "job", spec["id"]
    ad["Out"] = first("stdout") or f"{name}.o{jid}"
    ad["Err"] = ad.eval("Out") if spec.get("join") else (first("stderr") or f"{name}.e{jid}")
    ad["In"] = first("stdin") or "/dev/null"


def _sge_requests(spec):
    """(slots, memory in MB, host patterns) of a Grid Engine job's requests."""
    pe = spec.get("pe")
    slots = _pe_low(pe) if pe else 1
    hard = ((spec.get("resources") or {}).get("hard")) or {}
    memory = 0
    for name in MEMORY_REQUESTS:
        if name in hard:
            memory = _megabytes(hard[name]) * slots
            break
    hosts = [str(hard[n]) for n in HOST_REQUESTS if n in hard]
    queues = list(((spec.get("queues") or {}).get("hard")) or [])
    if queues and all("@" in q and not q.split("@", 1)[1].startswith("@") for q in queues):
        hosts.append("|".join(q.split("@", 1)[1] for q in queues))
    return slots, memory, hosts


def _pe_low(pe):
    rest = pe[1:]
    if len(rest) == 1 and isinstance(rest[0], (list, tuple)):
        return max(1, int(min(lo for lo, _hi in rest[0])))
    return max(1, int(rest[0]))


def _megabytes(text):
    from gridtools.errors import GridError
    from gridtools.formats.values import parse_memory
    try:
        value = parse_memory(str(text))
    except GridError:
        return 0
    if value == float("inf"):
        return 0
    return -(-int(value) // (1024 * 1024))


def _sge_requirements(slots, memory, hosts):
    terms = []
    if memory:
        terms.append("(TARGET.Memory >= RequestMemory)")
    if slots > 1:
        terms.append("(TARGET.Cpus >= RequestCpus)")
    for pattern in hosts:
        terms.append(_host_clause(pattern))
    return " && ".join(terms) if terms else "true"


def _host_clause(pattern):
    """A ClassAd condition that the machine's name matches a host list like ``h1|n*``."""
    alternatives = [p for p in pattern.split("|") if p]
    if all(not any(c in p for c in "*?[") for p in alternatives):
        tests = [f'(TARGET.Machine == "{p}")' for p in alternatives]
        return tests[0] if len(tests) == 1 else "(" + " || ".join(tests) + ")"
    regex = "|".join(_glob_regex(p) for p in alternatives)
    return f'regexp("^({regex})$", TARGET.Machine)'


def _glob_regex(pattern):
    import re
    out = []
    for ch in pattern:
        out.append(".*" if ch == "*" else "." if ch == "?" else re.escape(ch))
    return "".join(out)


def _overlay_state(ad, spec, task, job_hold, deleted):
    status = job_status(task, job_hold, deleted)
    qdate = int(spec.get("submit_time") or 0)
    ad["QDate"] = qdate                 # when its request was queued (daemon.intake), whatever the submitted ad said
    ad["JobStatus"] = int(status)
    running = task is not None and task.state.value == "running"
    # a parallel universe job runs on as many hosts as it has nodes (one per granted slot)
    ad["CurrentHosts"] = (sum(int(g[2]) for g in task.granted) or 1) \
        if running and spec.get("universe") == PARALLEL_UNIVERSE and task.granted else int(running)
    entered = qdate
    if task is not None and task.start_time:
        _started(ad, task)
        entered = int(task.start_time)
    if status in (JobStatus.COMPLETED, JobStatus.REMOVED) and task is not None and task.end_time:
        _ended(ad, task)
        entered = int(task.end_time)
    if status is JobStatus.HELD:
        _held(ad, task, job_hold)
    ad["EnteredCurrentStatus"] = entered


def _started(ad, task):
    if not isinstance(ad.eval("JobStartDate"), int):     # the first start, kept from the original ad
        ad["JobStartDate"] = int(task.start_time)
    ad["JobCurrentStartDate"] = int(task.start_time)
    if ad.eval("JobUniverse") not in SLOTLESS_UNIVERSES:     # (those run without a match)
        ad["LastMatchTime"] = int(task.start_time)
    if task.state.value == "running" and task.granted:
        queue, host = task.granted[0][0], task.granted[0][1]
        ad["RemoteHost"] = f"{queue}@{host}"
    if task.state.value == "running":
        pid = _job_pid(ad.eval("ClusterId"), task)
        if pid:
            ad["JobPid"] = pid


def _checkpoints(ad, task, mine):
    """CheckpointNumber, JobLastCheckpointTime and CommittedTime of a proc that
    checkpointed itself (checkpoint_exit_code): the checkpoints of its ended runs
    (``mine``) and, while it runs, those its shepherd noted in the task's folder, as
    HTCondor's shadow keeps them from its starter's reports (CommittedTime: the
    seconds up to its last checkpoint, until a completion commits the whole run)."""
    count, last, committed = int(mine.get("checkpoints") or 0), int(mine.get("last_checkpoint") or 0), 0
    checkpoints = ad.lookup("SuccessCheckpointExitCode") is not None or ad.lookup("WantCheckpointSignal") is not None
    if checkpoints and task is not None and task.state.value == "running":    # (a file only such a job has)
        from gridtools import cell
        try:
            with open(cell.spool("jobs", str(ad.eval("ClusterId")), str(task.number), "checkpoints")) as fh:
                now_count, now_last, committed = (int(x) for x in fh.read(100).split()[:3])
            count, last = count + now_count, now_last
        except (OSError, ValueError):
            pass
    if not count:
        return
    ad["CheckpointNumber"] = count
    ad["JobLastCheckpointTime"] = last
    if committed and not ad.eval("CommittedTime"):
        ad["CommittedTime"] = committed


def _job_pid(cluster, task):
    """JobPid of a running proc: the pid of the job's process, which its shepherd notes
    in the task's folder once it starts it (HTCondor's starter reports the same); the
    shepherd's own pid until then (0: none known, or a folder the caller cannot read)."""
    from gridtools import cell          # (the folder of ``spool.jobs.task_dir``, without loading that module)
    try:
        with open(cell.spool("jobs", str(cluster), str(task.number), "job_pid")) as fh:
            return int(fh.read().strip() or 0)
    except (OSError, ValueError):
        return int(task.shepherd_pid or 0)


def _ended(ad, task):
    """CompletionDate, and the exit of a task that ended: ExitBySignal and ExitSignal when a
    signal killed its job (its record's ``signal``), else ExitCode, whatever the status
    (an ``exit 130`` is ExitCode 130, as HTCondor reads the wait status)."""
    ad["CompletionDate"] = int(task.end_time)
    code = task.exit_status
    if code is None:
        return
    sig = int(getattr(task, "signal", 0) or 0)
    if sig:
        ad["ExitBySignal"] = True
        ad["ExitSignal"] = sig
        if "ExitCode" in ad:
            del ad["ExitCode"]
    else:
        ad["ExitBySignal"] = False
        ad["ExitCode"] = code


#: HoldReasonCode of a job submitted on hold (SubmittedOnHold)
HOLD_CODE_SUBMITTED_ON_HOLD = 15
#: HoldReasonCode of a job held by one of its own policy expressions (JobPolicy)
HOLD_CODE_POLICY = 3
#: HoldReasonCode of a hold made while input files are spooled (SpoolingInput): uncounted
HOLD_CODE_SPOOLING = 16
#: the names of HTCondor's hold reason codes (CONDOR_HOLD_CODE), NumHoldsByReason's attributes
HOLD_CODE_NAMES = {
    0: "Unspecified", 1: "UserRequest", 2: "GlobusGramError", 3: "JobPolicy", 4: "CorruptedCredential",
    5: "JobPolicyUndefined", 6: "FailedToCreateProcess", 7: "UnableToOpenOutput", 8: "UnableToOpenInput",
    9: "UnableToOpenOutputStream", 10: "UnableToOpenInputStream", 11: "InvalidTransferAck",
    12: "TransferOutputError", 13: "TransferInputError", 14: "IwdError", 15: "SubmittedOnHold",
    16: "SpoolingInput", 17: "JobShadowMismatch", 18: "InvalidTransferGoAhead", 19: "HookPrepareJobFailure",
    20: "MissedDeferredExecutionTime", 21: "StartdHeldJob", 22: "UnableToInitUserLog",
    23: "FailedToAccessUserAccount", 24: "NoCompatibleShadow", 25: "InvalidCronSettings", 26: "SystemPolicy",
    27: "SystemPolicyUndefined", 28: "GlexecChownSandboxToUser", 29: "PrivsepChownSandboxToUser",
    30: "GlexecChownSandboxToCondor", 31: "PrivsepChownSandboxToCondor", 32: "MaxTransferInputSizeExceeded",
    33: "MaxTransferOutputSizeExceeded", 34: "JobOutOfResources", 35: "InvalidDockerImage",
    36: "FailedToCheckpoint", 43: "PreScriptFailed", 44: "PostScriptFailed", 45: "SingularityTestFailed",
    46: "JobDurationExceeded", 47: "JobExecuteExceeded", 48: "HookShadowPrepareJobFailure",
    49: "CannotSwitchPrimaryGroup", 1000: "JobPolicyVacate", 1001: "SystemPolicyVacate",
}


def hold_code_name(code):
    """The name of a HoldReasonCode (or VacateReasonCode); Unspecified for one HTCondor has no name for."""
    return HOLD_CODE_NAMES.get(int(code), "Unspecified")


#: task bookkeeping key (``daemon.condorjob.note_transfers``) -> the attributes of when a
#: run's file copying began and ended
_COPIED = {"input_copied": ("JobCurrentStartTransferInputDate", "JobCurrentFinishTransferInputDate"),
           "output_copied": ("JobCurrentStartTransferOutputDate", "JobCurrentFinishTransferOutputDate")}


#: task bookkeeping key (``daemon.condorjob.note_copying``) -> the attributes of when its
#: runs' copying of their files last began and ended, and the key of how many runs began it
_STAGES = {"transfer_in": ("TransferInStarted", "TransferInFinished", "in_starts"),
           "transfer_out": ("TransferOutStarted", "TransferOutFinished", "out_starts")}
_STARTS = {"in_starts": "NumInputTransferStarts", "out_starts": "NumOutputTransferStarts"}


def _overlay_condor(ad, condor, number):
    """What the daemon keeps of an HTCondor job beyond its tasks' states: the reason of
    a hold, completions, attributes set by condor_qedit, removal."""
    for name, text in (condor.get("edits") or {}).items():
        try:
            ad[name] = parse(text)
        except ClassAdSyntaxError:
            continue
    mine = (condor.get("tasks") or {}).get(str(number)) or {}
    if mine.get(LAST_EXIT) and "ExitCode" not in ad and "ExitSignal" not in ad:   # (not its final exit's)
        for name, value in mine[LAST_EXIT].items():
            ad[name] = value
    if mine.get("last"):
        ad["LastRemoteHost"] = mine["last"]     # the slot its last run left
    if mine.get("executing"):                   # when its job began to execute (daemon.condorjob)
        ad["JobCurrentStartExecutingDate"] = int(mine["executing"])
    for key, (began, ended) in _COPIED.items():  # when its last run copied its files
        if mine.get(key):
            ad[began], ad[ended] = int(mine[key][0]), int(mine[key][1])
    for key, (began, ended, count) in _STAGES.items():   # the stages its copying reached
        times = mine.get(key) or (None, None)
        if times[0] is not None:
            ad[began] = int(times[0])
        if times[1] is not None:
            ad[ended] = int(times[1])
        if mine.get(count):
            ad[_STARTS[count]] = int(mine[count])
    if mine.get("completions"):
        ad["NumJobCompletions"] = int(mine["completions"])
    for name, value in (mine.get(PROVISIONED) or {}).items():   # what it took from its last slot
        ad[name] = value
    for name, value in (mine.get(ACTIVATION) or {}).items():    # how long its last run took
        ad[name] = int(value)
    for name, value in (mine.get(SIZE) or {}).items():          # its run's memory, as last noted
        ad[name] = value if isinstance(value, float) else int(value)
    for name, value in (mine.get(DISK) or {}).items():          # its scratch folder's size
        ad[name] = int(value)
    deferral_overlay(ad, mine)
    if mine.get("holds"):
        ad["NumHolds"] = int(mine["holds"])
        ad["NumHoldsByReason"] = {name: int(n) for name, n in (mine.get("holds_by") or {}).items()}
    if mine.get("vacates"):
        ad["NumVacates"] = int(mine["vacates"])
        ad["NumVacatesByReason"] = {name: int(n) for name, n in (mine.get("vacates_by") or {}).items()}
    if mine.get("vacated"):
        ad["VacateReason"], ad["VacateReasonCode"], ad["VacateReasonSubCode"] = \
            mine["vacated"][0], int(mine["vacated"][1]), int(mine["vacated"][2])
    _release_reasons(ad, mine)
    hold = mine.get("hold") or condor.get("hold")
    if hold and ad.eval("JobStatus") == JobStatus.HELD:
        ad["HoldReason"], ad["HoldReasonCode"], ad["HoldReasonSubCode"] = hold[0], int(hold[1]), int(hold[2])
        if len(hold) > 3:
            ad["EnteredCurrentStatus"] = int(hold[3])
    elif ad.eval("JobStatus") in (JobStatus.IDLE, JobStatus.RUNNING):
        # (a proc that is not held carries no hold, as HTCondor's schedd deletes these at a
        # release: not the one proc 0 was submitted with, whose ad the others lie over)
        for attr in ("HoldReason", "HoldReasonCode", "HoldReasonSubCode"):
            if attr in ad:
                del ad[attr]
    if mine.get("removed") and ad.eval("JobStatus") in (JobStatus.COMPLETED, JobStatus.IDLE):
        ad["JobStatus"] = int(JobStatus.REMOVED)
    # each proc's own reason (daemon.condorjob.note_removal); the cluster's for a proc
    # removed before they were noted per proc
    reason = mine.get("remove_reason") or condor.get("remove_reason")
    if reason and ad.eval("JobStatus") == JobStatus.REMOVED:
        ad["RemoveReason"] = reason


def _release_reasons(ad, mine):
    """What a task's releases left in its ad (``mine``: its bookkeeping; see
    ``daemon.condorjob.releasing``), as HTCondor's schedd leaves it: ReleaseReason,
    LastReleaseReason (once a hold followed), and the hold the last release ended as
    LastHoldReason, LastHoldReasonCode and LastHoldReasonSubCode; a released task
    not held again has no HoldReason, HoldReasonCode or HoldReasonSubCode (not even
    those it was submitted with)."""
    for key, attr in (("release_reason", "ReleaseReason"), ("last_release_reason", "LastReleaseReason")):
        if mine.get(key):
            ad[attr] = mine[key]
    last = mine.get("last_hold")
    if not last:
        return
    ad["LastHoldReason"], ad["LastHoldReasonCode"], ad["LastHoldReasonSubCode"] = \
        last[0], int(last[1]), int(last[2])
    if ad.eval("JobStatus") != JobStatus.HELD:
        for attr in ("HoldReason", "HoldReasonCode", "HoldReasonSubCode"):
            if attr in ad:
                del ad[attr]


def deferral_overlay(ad, mine):
    """The DeferralTime the daemon gave a task (its cron schedule's next time,
    ``daemon.condorjob.schedule_crons``; ``mine``: the task's bookkeeping), in its ad."""
    if mine and mine.get("deferral") is not None:
        ad["DeferralTime"] = int(mine["deferral"])


#: the bookkeeping of a task that has none
_NO_RUNS = {}


def _run_times(ad, task, mine):
    """RemoteWallClockTime and CumulativeSlotTime: the runs that ended without ending the
    task (``mine``: its HTCondor bookkeeping) and the run that ended it; CommittedTime and
    CommittedSlotTime: the run that completed it. A running proc shows its earlier runs.
    TotalSuspensions, CumulativeSuspensionTime (the suspensions that ended) and
    LastSuspensionTime (while one lasts) from the bookkeeping."""
    if mine.get("suspensions"):
        ad["TotalSuspensions"] = int(mine["suspensions"])
        ad["CumulativeSuspensionTime"] = int(mine.get("suspension_time", 0))
        ad["LastSuspensionTime"] = int(mine.get("suspended_at", 0))
    wall = float(mine.get("wall") or 0.0)
    slot_time = float(mine.get("slot_time") or wall)
    last = None
    if task is not None and task.state.value == "finished" and task.exit_status is not None \
            and task.start_time:
        last = max(task.end_time - task.start_time, 0.0)
        weight = max(1, int(task.slots or 1))
        wall += last
        slot_time += last * weight
        if ad.eval("JobStatus") == JobStatus.COMPLETED:
            ad["CommittedTime"] = int(last)
            ad["CommittedSlotTime"] = float(int(last) * weight)
    if wall or last is not None:
        ad["RemoteWallClockTime"] = wall
        ad["CumulativeSlotTime"] = slot_time


def _held(ad, task, job_hold):
    if task is not None and task.state.value == "error":
        ad["HoldReason"] = task.error_reason or "the job failed to start"
        ad["HoldReasonCode"] = HOLD_CODE_IWD if task.failed == FAILED_CHDIR else HOLD_CODE_ERROR
        ad["HoldReasonSubCode"] = 0
        return
    if "HoldReason" in ad:               # the original ad says why (submitted on hold)
        return
    letters = job_hold + (task.hold if task is not None else "")
    reason = next((text for letter, text in _HOLD_REASONS if letter in letters), "held")
    ad["HoldReason"] = reason
    ad["HoldReasonCode"] = HOLD_CODE_USER
    ad["HoldReasonSubCode"] = 0


def memory_figures(usage):
    """The memory figures of a run as HTCondor's starter reports them, from ``usage`` (its
    shepherd's: the peaks of its processes' virtual and resident memory in bytes,
    ``maxvmem`` and ``maxrss``, and once it ended ``ru_maxrss`` in KiB; or None):
    ImageSize (KiB of virtual memory), ResidentSetSize (KiB) and MemoryUsage (the
    resident KiB in MiB, rounded up; the virtual memory's when no resident figure is
    known). Name -> value, those known only."""
    found = {}
    if not usage:
        return found
    vmem = _whole(usage.get("maxvmem"))
    rss = max(_whole(usage.get("maxrss")) // 1024, _whole(usage.get("ru_maxrss")))
    if vmem:
        found["ImageSize"] = vmem // 1024
    if rss:
        found["ResidentSetSize"] = rss
        found["MemoryUsage"] = (rss + 1023) // 1024
    elif vmem:
        found["MemoryUsage"] = -(-vmem // (1024 * 1024))
    return found


def ad_int(value):
    """A whole number of an ad's value (0 for anything else, infinity and NaN too)."""
    return int(value) if type(value) in (int, float) and value - value == 0 else 0


def _whole(value):
    """A usage figure as a whole number (0 for one missing or not a finite number)."""
    try:
        return max(int(value or 0), 0)
    except (TypeError, ValueError, OverflowError):
        return 0


def run_figures(usage, seconds=None):
    """``memory_figures`` of a run's ``usage``, and its CpusUsage when the run lasted
    ``seconds``: the CPU time its processes used (``ru_utime`` and ``ru_stime`` once it
    ended, else its shepherd's ``cpu``) over that time, the cores it kept busy on
    average, as HTCondor's CpusUsage counts them."""
    found = memory_figures(usage)
    if usage and seconds and seconds > 0:
        if "ru_utime" in usage or "ru_stime" in usage:
            cpu = float(usage.get("ru_utime") or 0.0) + float(usage.get("ru_stime") or 0.0)
        else:
            cpu = float(usage.get("cpu") or 0.0)
        found["CpusUsage"] = cpu / float(seconds)
    return found


def run_usage(ad, usage, seconds=None):
    """Put a run's figures (``run_figures`` of ``usage`` and ``seconds``) into job ad ``ad``."""
    for name, value in run_figures(usage, seconds).items():
        ad[name] = value
