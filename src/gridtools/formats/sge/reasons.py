"""The scheduler's reasons in Grid Engine's words ("scheduling info" of ``qstat -j``).

``render(reason, owner)`` gives the sentence; ``number(reason)`` the message
number Grid Engine files it under, and ``generic(reason)`` the text it uses
to summarize the reason over many jobs. Reasons arrive as
``sched.reasons.Reason`` or as their plain published form ``[code, args...]``.
"""

from gridtools.formats.sge.statewords import HOST_WORDS, WORDS
from gridtools.sched.reasons import Reason, Scope, Why


def _full(a, _o):
    return f'queue instance "{a[0]}" dropped because it is full'


def _alarm(kind):
    def text(a, _o):
        head = ("dropped because it is overloaded" if kind == "load" else "is in suspend alarm")
        if len(a) == 2:                 # (a value the threshold names is missing)
            return f'queue instance "{a[0]}" {head}: {a[1]}'
        return f'queue instance "{a[0]}" {head}: {a[1]}={a[2]:.6f} ({_diagnosis(a)}) {a[7]} {a[8]}'
    return text


def _diagnosis(a):
    """The load adjustment in a load alarm: "= reported + per-slot * recent slots [with
    nproc=n]" (minus for values that fall, compared with <= or ==)."""
    _qi, _name, _value, reported, written, lc, nproc, relop = a[:8]
    if not written:
        return "no load adjustment"
    sign = "+" if relop in (">=", ">") else "-"
    per = f"{written} * {lc:.6f}" + (f" with nproc={nproc}" if nproc else "")
    return f"= {reported:.6f} {sign} {per}"


def _clock(when):
    """A time as Grid Engine's scheduling info shows one (local time)."""
    import time
    return time.strftime("%m/%d/%Y %H:%M:%S", time.localtime(when))


def _short(a, _o):
    left = a[4]
    amount = f"{left:.6f}" if isinstance(left, float) else str(left)
    where = {"global": "globally", "host": f'at host "{a[2]}"', "queue": f'in queue "{a[2]}"'}[a[1]]
    due = " due to a reservation" if len(a) > 5 and a[5] else ""
    return f"(-l {a[0]}) cannot run {where} because it offers only {a[1][0]}c:{a[3]}={amount}{due}"


def _forced(a, _o):
    if a[1] == "global":
        return f"does not request globally 'forced' resource \"{a[0]}\""
    kind = "queue instance" if a[1] == "queue" else "host"
    return f"does not request 'forced' resource \"{a[0]}\" of {kind} {a[2]}"


def _not_type(a, _o):
    if a[1] == "interactive":
        return f'cannot run in queue "{a[0]}" because it is not of type interactive'
    if a[1] == "parallel":          # a checkpointing job without PE in a parallel, not batch queue
        return f'cannot run in queue instance "{a[0]}" because the job is not parallel'
    return f'cannot run in queue instance "{a[0]}" because it is not of type {a[1]}'


def _wrong_project(project, kind, where):
    """A queue's or host's project list refuses the job's project (or the job has none)."""
    who = f"(project {project})" if project else "(no project)"
    return f'{who} does not have the correct project to run in {kind} "{where}"'


def _excluded_project(project, kind, where):
    """A queue's or host's excluded project list names the job's project."""
    return f'(project {project}) is not allowed to run in {kind} "{where}" based on the excluded project list'


#: message numbers and generic texts of the kinds of NOT_TYPE other than batch
_TYPE_GENERIC = {"interactive": (11, "Jobs can not run because queue instance is not interactive"),
                 "parallel": (13, "Jobs can not run in queue instance because the job is not parallel")}


_TEXT = {
    Why.ERROR_STATE: lambda a, o: "Job is in error state",
    Why.HOLD: lambda a, o: "Job is in hold state",      # (MSG_SCHEDD_INFO_JOBHOLD_)
    Why.START_TIME: lambda a, o: "execution time not reached",
    Why.DEPENDENCY: lambda a, o: "job dropped because of job dependencies",
    Why.TASK_LIMIT: lambda a, o: "not all array task may be started due to 'max_aj_instances'",
    Why.MAXUJOBS: lambda a, o: "job dropped because of user limitations",
    Why.MAX_AJ_INSTANCES: lambda a, o: "not all array task may be started due to 'max_aj_instances'",
    Why.MAX_JOBS_RUNNING: lambda a, o: f"job dropped because the schedd runs MAX_JOBS_RUNNING ({a[0]}) jobs",
    Why.CONCURRENCY: lambda a, o: f"job dropped because concurrency limit {a[0]} ({a[1]:g}) is reached",
    Why.START_DELAY: lambda a, o: (f"job dropped because a job started with next_job_start_delay holds "
                                   f"back the next start until {_clock(a[0])}"),
    Why.OWNER_STEPS: lambda a, o: (f'job dropped because matching the jobs of "{a[0]}" took the '
                                   f"{a[1]} ClassAd evaluation steps a pass gives one owner "
                                   "(OWNER_MATCH_STEPS): it is matched in a later pass"),
    Why.QI_FULL: _full,
    Why.ALL_DROPPED: lambda a, o: "All queues dropped because of overload or full",
    Why.QI_STATE: lambda a, o: f'queue instance "{a[0]}" dropped because it is {WORDS.get(a[1], a[1].lower())}',
    Why.HOST_CLOSED: lambda a, o: (f'queue instance "{a[0]}" dropped because host "{a[1]}" is '
                                   f'{HOST_WORDS.get(a[2], a[2].lower())}'),
    Why.MAX_STARTERS: lambda a, o: (f'queue instance "{a[0]}" dropped because host "{a[1]}" is busy: '
                                    f"it runs MAX_STARTERS ({a[2]}) jobs"),
    Why.QI_OVERLOADED: _alarm("load"),
    Why.QI_SUSPEND_ALARM: _alarm("suspend"),
    Why.NOT_TYPE: _not_type,
    Why.NOT_HARD_QUEUE: lambda a, o: (f'cannot run in queue "{a[0]}" because it is not contained in '
                                      "its hard queue list (-q)"),
    Why.NOT_IN_PE_LIST: lambda a, o: f'cannot run in queue "{a[0]}" because PE "{a[1]}" is not in pe list',
    Why.NOT_IN_CKPT_LIST: lambda a, o: (f'cannot run in queue instance "{a[0]}" because ckpt object '
                                        f'"{a[1]}" is not in ckpt list of queue'),
    Why.USER_LIST: lambda a, o: f'has no permission for queue "{a[0]}"',
    Why.XUSER_LIST: lambda a, o: f'has no permission for queue "{a[0]}"',
    Why.PROJECT_LIST: lambda a, o: _wrong_project(a[1] if len(a) > 1 else "", "queue", a[0]),
    Why.XPROJECT_LIST: lambda a, o: _excluded_project(a[1] if len(a) > 1 else "", "queue", a[0]),
    Why.NO_PERMISSION: lambda a, o: f'has no permission for {a[0]} "{a[1]}"',
    Why.HOST_PROJECT: lambda a, o: _wrong_project(a[0], "host", a[1]),
    Why.HOST_XPROJECT: lambda a, o: _excluded_project(a[0], "host", a[1]),
    Why.RESOURCE_SHORT: _short,
    Why.RESOURCE_ABSENT: lambda a, o: (f'(-l {a[0]}) cannot run in queue "{a[1]}" because job requests '
                                       f"unknown resource ({a[2]})"),
    Why.RESOURCE_VALUE: lambda a, o: (f'(-l {a[0]}) cannot run in queue "{a[1]}" because it '
                                      f"offers only {a[2]}:{a[3]}={a[4]}"),
    Why.FORCED: _forced,
    Why.QUOTA: lambda a, o: f'cannot run because it exceeds limit "{a[0]}" in rule "{a[1]}"',
    Why.PE_TOO_FEW: lambda a, o: f'cannot run in PE "{a[0]}" because it only offers {a[1]} slots',
    Why.PE_ABSENT: lambda a, o: f'cannot run because parallel environment "{a[0]}" does not exist',
    Why.PE_DENIED: lambda a, o: f'cannot run because no access to PE "{a[0]}"',
    Why.AR_ABSENT: lambda a, o: f"cannot run because advance reservation {a[0]} does not exist",
    Why.AR_DENIED: lambda a, o: f'has no permission for advance_reservation "{a[0]}"',
    Why.AR_ERROR: lambda a, o: f"cannot run because requested advance reservation {a[0]} is in error state",
    Why.NOT_IN_AR: lambda a, o: (f'cannot run in queue instance "{a[0]}" because it was not reserved by '
                                 f"advance reservation {a[1]}"),
    Why.START_REFUSED: lambda a, o: (f'cannot run in queue instance "{a[0]}" because the START expression '
                                     f'of host "{a[1]}" is false for it'),
    Why.UNWANTED: lambda a, o: (f'cannot run in queue instance "{a[0]}" because the job\'s Requirements '
                                f'are false for host "{a[1]}"'),
    Why.NEGOTIATOR: lambda a, o: f"not matched by the negotiator: {a[0]}",
    Why.SLOTLESS_LIMIT: lambda a, o: f"cannot run because {a[0]} ({a[1]}) is false",
    Why.MORE: lambda a, o: f"... and {a[1]} more lines like the above",
}

#: message numbers and generic texts of job reasons (Grid Engine's msg numbering)
_JOB_GENERIC = {
    Why.HOLD: (33, "Jobs dropped because of hold state"),
    Why.DEPENDENCY: (35, "Job dropped because of job dependencies"),
    Why.ERROR_STATE: (32, "Jobs dropped because of error state"),
    Why.START_TIME: (31, "Jobs can not run because execution time not reached"),
    Why.MAXUJOBS: (34, "Job dropped because of user limitations"),
    Why.MAX_AJ_INSTANCES: (45, "Not all array tasks may be started due to 'max_aj_instances'"),
    Why.TASK_LIMIT: (45, "Not all array tasks may be started due to 'max_aj_instances'"),
    Why.PE_ABSENT: (43, "Jobs can not run because no parallel environment matches"),
    Why.PE_TOO_FEW: (24, "Jobs can not run because the parallel environment offers too few slots"),
    Why.USER_LIST: (1, "Jobs can not run because of missing permission for queue instances"),
    Why.XUSER_LIST: (1, "Jobs can not run because of missing permission for queue instances"),
    Why.XPROJECT_LIST: (4, "Jobs can not run because their project is excluded from queue instances"),
    Why.HOST_XPROJECT: (4, "Jobs can not run because their project is excluded from queue instances"),
    Why.NO_PERMISSION: (1, "Jobs can not run because of missing permission for queue instances"),
    Why.HOST_PROJECT: (2, "Jobs can not run because their project is not allowed in queue instances"),
    Why.PROJECT_LIST: (2, "Jobs can not run because their project is not allowed in queue instances"),
    Why.NOT_HARD_QUEUE: (6, "Jobs can not run because queue instances are not in their hard queue list"),
    Why.NOT_IN_PE_LIST: (8, "Jobs can not run because queue instances are not in the queue list of their PE"),
    Why.NOT_IN_CKPT_LIST: (10, "Jobs can not run because queue instances are not in the ckpt list"),
    Why.NOT_TYPE: (12, "Jobs can not run because queue instances are not of the requested type"),
    Why.QUOTA: (50, "Jobs dropped because exceeds limit in rule"),
    Why.PE_DENIED: (25, "Jobs can not run because they have no access to PE"),
    Why.NOT_IN_AR: (51, "Jobs can not run because queue instance was not reserved by advance reservation"),
    Why.AR_ERROR: (53, "Jobs can not run because requested advance reservation is in error state"),
    Why.AR_DENIED: (1, "Jobs can not run because of missing permission for queue instances"),
}
_FORCED_GENERIC = {"queue": (14, "Jobs can not run because they do not request 'forced' resource"),
                   "host": (21, "Jobs can not run because they do not request 'forced' resource"),
                   "global": (22, "Jobs can not run globally because they do not request 'forced' resource")}
_QUEUE_NUMBERS = {Why.ALL_DROPPED: 28, Why.QI_FULL: 37, Why.QI_OVERLOADED: 27,
                  Why.QI_SUSPEND_ALARM: 26, Why.HOST_CLOSED: 40}
_STATE_NUMBERS = {"SUSPENDED": 38, "SUBORDINATED": 38, "CAL_SUSPENDED": 38, "DISABLED": 39,
                  "CAL_DISABLED": 39}
OTHER = (17, "Jobs can not run because of other reasons")


def as_reason(item):
    return item if isinstance(item, Reason) else Reason.from_plain(item)


def render(item, owner=""):
    """The sentence of a reason (``owner``: the job's owner, for access list reasons)."""
    reason = as_reason(item)
    return _TEXT[reason.why](reason.args, owner)


def is_queue_level(item):
    reason = as_reason(item)
    if reason.why is Why.MORE:
        return Why(reason.args[0]).scope is Scope.QUEUE
    return reason.why.scope is Scope.QUEUE


def queue_number(item):
    """Grid Engine's message number of a queue-level reason."""
    reason = as_reason(item)
    if reason.why is Why.QI_STATE:
        return _STATE_NUMBERS.get(reason.args[1], 40)
    return _QUEUE_NUMBERS.get(reason.why, 40)


def job_generic(item):
    """(message number, generic text) of a job reason."""
    reason = as_reason(item)
    if reason.why is Why.RESOURCE_SHORT:
        level = reason.args[1]
        if level == "global":
            return 20, "Jobs can not run because of global resource restrictions"
        if level == "host":
            return 0, "Jobs can not run because of host restrictions"
        return 17, "Jobs can not run because queue instances do not offer the requested resources"
    if reason.why is Why.FORCED:
        return _FORCED_GENERIC[reason.args[1]]
    if reason.why in (Why.RESOURCE_ABSENT, Why.RESOURCE_VALUE):
        return 17, "Jobs can not run because queue instances do not offer the requested resources"
    if reason.why is Why.NOT_TYPE and reason.args[1:2] and reason.args[1] in _TYPE_GENERIC:
        return _TYPE_GENERIC[reason.args[1]]
    if reason.why is Why.MORE:
        return job_generic(Reason(Why(reason.args[0]), ())) if Why(reason.args[0]).scope is Scope.JOB \
            else OTHER
    return _JOB_GENERIC.get(reason.why, OTHER)


def runlog_line(job_id, item, owner=""):
    """A reason as the scheduler's run log (schedd_runlog) words it for one job."""
    line = render(item, owner)
    if line.startswith(("cannot", "(", "does not", "has no")):
        return f"Job {job_id} {line}"
    if line.startswith("job "):
        return f"Job {job_id} {line[4:]}"
    return line
