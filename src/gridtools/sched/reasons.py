"""Why a job did not start: structured reasons, rendered by each dialect.

A ``Reason`` is a code (``Why``) plus the values the sentence needs (names,
amounts). The pass never looks at the text: each dialect renders reasons in
its own words (``formats.sge.reasons`` for Grid Engine's "scheduling info",
``condor_q -analyze`` for HTCondor). ``Why.scope`` tells whether a reason is
about the job itself or about a queue instance as a whole (Grid Engine lists
the latter once for all jobs).

Jobs of one category share their reasons, and a job that cannot run on a
large cluster does not get one reason per queue instance: ``capped`` keeps the
first few of each kind and adds a ``MORE`` reason that counts the rest.
"""

from gridtools.records import ClosedSet

#: reasons of one kind kept per job before the rest are counted in a MORE reason
CAP_PER_KIND = 10


class Scope(ClosedSet):
    JOB = "job"          # about the job (its holds, requests, limits)
    QUEUE = "queue"      # about a queue instance, the same for every job


class Why(ClosedSet):
    """Every reason the pass gives; the value is a stable code (spooled and published)."""
    # the job itself
    ERROR_STATE = "error"                 # ()
    HOLD = "hold"                         # ()
    START_TIME = "start_time"             # (start time,)
    DEPENDENCY = "dependency"             # ()
    TASK_LIMIT = "task_limit"             # (tc,)
    MAXUJOBS = "maxujobs"                 # (owner, limit)
    MAX_AJ_INSTANCES = "max_aj_instances"  # (limit,)
    MAX_JOBS_RUNNING = "max_jobs_running"  # (limit,): the schedd runs that many HTCondor jobs
    CONCURRENCY = "concurrency"           # (limit name, its capacity): in use up to it
    # (until,): a job started with NextJobStartDelay holds back the schedd's next start
    # of any job until then (capped by MAX_NEXT_JOB_START_DELAY)
    START_DELAY = "start_delay"
    # (owner, steps): the owner's matching took the evaluation steps a pass gives one owner
    # (``sched.evalbudget``); the job is matched in a later pass
    OWNER_STEPS = "owner_steps"
    # a queue instance as a whole
    QI_FULL = "qi_full"                   # (queue instance,)
    ALL_DROPPED = "all_dropped"           # ()
    QI_STATE = "qi_state"                 # (queue instance, state word)
    HOST_CLOSED = "host_closed"           # (queue instance, host, state word)
    # (queue instance, host, limit): the host runs MAX_STARTERS jobs already (its startd
    # is Busy)
    MAX_STARTERS = "max_starters"
    # (queue instance, name, adjusted value, reported value, adjustment per slot as written
    #  or "" for none, recent slots (fading), processors dividing it or 0, relop, threshold)
    QI_OVERLOADED = "qi_overloaded"
    QI_SUSPEND_ALARM = "qi_suspend_alarm"
    # the job against one queue instance
    NOT_TYPE = "not_type"                 # (queue instance, "batch"/"interactive"/"parallel")
    NOT_HARD_QUEUE = "not_hard_queue"     # (queue instance,)
    NOT_IN_PE_LIST = "not_in_pe_list"     # (queue instance, pe pattern)
    NOT_IN_CKPT_LIST = "not_in_ckpt_list"  # (queue instance, ckpt)
    USER_LIST = "user_list"               # (queue instance, owner)
    XUSER_LIST = "xuser_list"             # (queue instance, owner)
    PROJECT_LIST = "project_list"         # (queue instance, project or ""): not in its projects
    XPROJECT_LIST = "xproject_list"       # (queue instance, project): in its xprojects
    NO_PERMISSION = "no_permission"       # ("host", host): its access lists keep the owner out
    HOST_PROJECT = "host_project"         # (project or "", host): not in the host's projects
    HOST_XPROJECT = "host_xproject"       # (project, host): in the host's xprojects
    RESOURCE_SHORT = "resource_short"     # (request text, level word, where, complex, left[, reserved])
    RESOURCE_ABSENT = "resource_absent"   # (request text, queue instance, complex)
    RESOURCE_VALUE = "resource_value"     # (request text, queue instance, level, complex, offer)
    FORCED = "forced"                     # (complex, level word, where)
    QUOTA = "quota"                       # (limit key, rule label)
    PE_TOO_FEW = "pe_too_few"             # (pe, slots offered)
    PE_ABSENT = "pe_absent"               # (pe pattern,)
    PE_DENIED = "pe_denied"               # (pe,)
    AR_ABSENT = "ar_absent"               # (ar id,)
    AR_DENIED = "ar_denied"               # (ar id,)
    AR_ERROR = "ar_error"                 # (ar id,)
    NOT_IN_AR = "not_in_ar"               # (queue instance, ar id)
    START_REFUSED = "start_refused"       # (queue instance, host): the host's START is false for it
    UNWANTED = "unwanted"                 # (queue instance, host): the job's Requirements are false for it
    NEGOTIATOR = "negotiator"             # (why,): the negotiator did not match it (its words)
    SLOTLESS_LIMIT = "slotless_limit"     # (knob, expression): too many slot-less jobs run
    MORE = "more"                         # (code of the kind, how many more)

    @property
    def scope(self):
        return Scope.QUEUE if self in _QUEUE_LEVEL else Scope.JOB


_QUEUE_LEVEL = frozenset({Why.QI_FULL, Why.ALL_DROPPED, Why.QI_STATE, Why.HOST_CLOSED, Why.MAX_STARTERS,
                          Why.QI_OVERLOADED, Why.QI_SUSPEND_ALARM})


class Reason:
    """One reason: its kind (``why``) and the arguments its words need. Immutable,
    equal and hashed by both (a plain class: qstat -j, which renders reasons, would pay
    for importing ``dataclasses`` more than for its work)."""

    __slots__ = ("why", "args")

    def __init__(self, why, args=()):
        object.__setattr__(self, "why", why)
        object.__setattr__(self, "args", args)

    def __setattr__(self, name, value):
        raise AttributeError(f"cannot change field {name!r} of a Reason")

    __delattr__ = __setattr__

    def __eq__(self, other):
        if other.__class__ is not Reason:
            return NotImplemented
        return self.why is other.why and self.args == other.args

    def __hash__(self):
        return hash((self.why, self.args))

    def __repr__(self):
        return f"Reason(why={self.why!r}, args={self.args!r})"

    def plain(self):
        """The reason as plain data (for the published status): [code, args...]."""
        return [self.why.value, *self.args]

    @classmethod
    def from_plain(cls, data):
        return cls(Why(data[0]), tuple(data[1:]))


def capped(reasons, cap=CAP_PER_KIND):
    """Reasons without repeats, at most ``cap`` of each kind, plus a MORE count per kind."""
    seen, kept, extra, counts = set(), [], {}, {}
    for reason in reasons:
        code = reason.why.value
        key = (code, reason.args)
        if key in seen:
            continue
        seen.add(key)
        n = counts.get(code, 0)
        counts[code] = n + 1
        if n < cap:
            kept.append(reason)
        else:
            extra[code] = extra.get(code, 0) + 1
    kept.extend(Reason(Why.MORE, (code, count)) for code, count in extra.items())
    return tuple(kept)
