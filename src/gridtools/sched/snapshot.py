"""What the scheduler sees and what it answers: typed, dialect-neutral, immutable records.

The daemon (or ``qalter -w``, or the simulator) builds a ``Snapshot`` with
``sched.inputs``; ``sched.cycle.cycle(snapshot)`` returns ``Decisions``.
Everything here holds numbers (seconds, bytes, slots) and names, never
option strings or dialect letters; nothing reads files or clocks.
"""

import enum
from dataclasses import dataclass, field

from gridtools.model.resources import INFINITY


class QState(enum.Flag):
    """States of a queue instance, resolved for the snapshot's ``now``."""
    NONE = 0
    DISABLED = enum.auto()        # by an administrator
    SUSPENDED = enum.auto()       # by an administrator
    ERROR = enum.auto()           # a job failed in it
    CAL_DISABLED = enum.auto()    # its calendar disables it now
    CAL_SUSPENDED = enum.auto()   # its calendar suspends it now
    SUBORDINATED = enum.auto()    # a superior queue instance is full enough
    UNKNOWN = enum.auto()         # its host is not heard from
    AMBIGUOUS = enum.auto()       # host groups give an attribute different values
    ORPHANED = enum.auto()        # left the configuration while jobs still run in it
    LOAD_ALARM = enum.auto()      # a load threshold is crossed
    SUSPEND_ALARM = enum.auto()   # a suspend threshold is crossed

    def blocking(self):
        """The first state that keeps the instance from receiving jobs, or None."""
        for member in _BLOCKING_ORDER:
            if member in self:
                return member
        return None


_BLOCKING_ORDER = (QState.DISABLED, QState.CAL_DISABLED, QState.SUSPENDED, QState.SUBORDINATED,
                   QState.CAL_SUSPENDED, QState.UNKNOWN, QState.ERROR, QState.AMBIGUOUS,
                   QState.ORPHANED, QState.LOAD_ALARM, QState.SUSPEND_ALARM)

#: states that stop the tasks running in an instance
SUSPENDING = QState.SUSPENDED | QState.SUBORDINATED | QState.CAL_SUSPENDED


class HostState(enum.Enum):
    """What an administrator (or a lost execution daemon) did to a host."""
    NORMAL = ""
    DRAIN = "drain"          # no new jobs; running ones finish
    FLUSH = "flush"          # no new jobs; running ones are requeued
    SUSPEND = "suspend"      # no new jobs; running ones are stopped
    DOWN = "down"            # its execution daemon is gone

    @property
    def closed(self):
        return self is not HostState.NORMAL


class Allocation(enum.Enum):
    """A parallel environment's allocation_rule."""
    PE_SLOTS = "$pe_slots"        # all slots on one host
    FILL_UP = "$fill_up"          # fill the best hosts first
    ROUND_ROBIN = "$round_robin"  # one slot per host in turn
    FIXED = "fixed"               # a fixed number of slots per host


class SortMethod(enum.Enum):
    LOAD = "load"
    SEQNO = "seqno"


@dataclass(frozen=True, slots=True)
class PE:
    name: str
    slots: int
    allocation: Allocation = Allocation.PE_SLOTS
    per_host: int = 0                    # slots per host for Allocation.FIXED
    user_lists: tuple = ()
    xuser_lists: tuple = ()
    xuser_unknown: bool = False          # an xuser list that does not exist: denies everyone
    urgency_slots: object = "min"        # "min", "max", "avg" or a number
    control_slaves: bool = False
    job_is_first_task: bool = True


@dataclass(frozen=True, slots=True)
class QueueInstance:
    """A cluster queue on one host, with its capacity and state."""
    queue: str
    host: str
    slots: int
    seq_no: int = 0
    batch: bool = True
    interactive: bool = True
    states: QState = QState.NONE
    pe_list: tuple = ()
    ckpt_list: tuple = ()
    user_lists: tuple = ()               # access lists that may use it (empty: everyone)
    xuser_lists: tuple = ()              # access lists that may not
    xuser_unknown: bool = False          # one of them does not exist (set aside): denies everyone
    host_access: tuple = ()              # its host's (user_lists, xuser_lists, xuser_unknown,
                                         # projects, xprojects), when it names any
    projects: tuple = ()
    xprojects: tuple = ()
    values: tuple = ()                   # (complex name, parsed value, text): complex_values, limits
    load_thresholds: tuple = ()          # (complex name, parsed threshold, text)
    suspend_thresholds: tuple = ()
    hostgroups: frozenset = frozenset()
    name: str = ""                       # "queue@host", filled in by __post_init__

    def __post_init__(self):
        object.__setattr__(self, "name", f"{self.queue}@{self.host}")


@dataclass(frozen=True, slots=True)
class Host:
    """An execution host: load values (parsed), fixed capacities and state."""
    name: str
    load: dict = field(default_factory=dict)     # load value name -> number or text
    values: tuple = ()                           # (complex name, parsed value, text): complex_values
    state: HostState = HostState.NORMAL
    num_proc: int = 1
    #: condor_config's MAX_STARTERS as the host reads it: most jobs running on it at once,
    #: whatever its slots (a parallel job counts once on each of its hosts); 0: no limit
    max_starters: int = 0


@dataclass(frozen=True, slots=True)
class PeRequest:
    """``-pe NAME RANGES``: a PE name (maybe a wildcard) and slot ranges, e.g. 1,2,4-8."""
    pattern: str
    ranges: tuple                        # ((low, high or None for open), ...), ascending

    @property
    def low(self):
        return self.ranges[0][0]

    def counts(self, top):
        """Slot counts the job accepts, at most ``top``, largest first."""
        found = set()
        for low, high in self.ranges:
            hi = top if high is None else min(high, top)
            found.update(range(low, hi + 1))
        return sorted(found, reverse=True)


@dataclass(frozen=True, slots=True)
class Ask:
    """One resource request: complex name, parsed amount or pattern, and the text asked."""
    name: str
    value: object
    text: str


@dataclass(frozen=True, slots=True)
class Request:
    """What a job asks of the cluster. Jobs with equal requests form one category."""
    hard: tuple = ()                     # Ask
    soft: tuple = ()                     # Ask
    hard_queues: tuple = ()              # queue specs: q, q@host, q@@group, wildcards
    soft_queues: tuple = ()
    master_queues: tuple = ()
    pe: PeRequest | None = None
    ckpt: str = ""
    immediate: bool = False              # qrsh, -now y: only INTERACTIVE queues (queue_conf(5) qtype)
    project: str = ""
    userlists: frozenset = frozenset()   # access lists the owner belongs to
    ar: int = 0
    reserve: bool = False
    runtime: float = INFINITY            # seconds (h_rt, else s_rt; INFINITY without)
    implicit: tuple = ()                 # Ask: defaults of consumables the job did not ask for
    per_job: tuple = ()                  # names of the hard requests the job holds as a whole
    key: int = field(default=0, compare=False, repr=False)   # the hash, computed once

    def __post_init__(self):
        object.__setattr__(self, "key", hash((self.hard, self.soft, self.hard_queues, self.soft_queues,
                                              self.master_queues, self.pe, self.ckpt, self.immediate,
                                              self.project, self.userlists, self.ar, self.reserve,
                                              self.runtime, self.implicit, self.per_job)))

    def __hash__(self):
        return self.key

    @property
    def min_slots(self):
        return self.pe.low if self.pe else 1

    @property
    def consumed(self):
        """Hard requests and implicit defaults: what the job holds while it runs."""
        return self.hard + self.implicit if self.implicit else self.hard


@dataclass(frozen=True, slots=True)
class PendingJob:
    """A job with at least one pending task, as the scheduler needs it."""
    id: int
    owner: str
    request: Request
    submit_time: float
    tasks: tuple                         # pending task numbers, ascending (a tuple or model TaskRanges)
    group: str = ""
    department: str = "defaultdepartment"
    name: str = ""
    priority: int = 0                    # POSIX priority -1023..1024
    held: frozenset = frozenset()        # pending task numbers held
    held_all: bool = False               # every pending task is held
    error: bool = False                  # a task is in the error state
    start_at: float = 0.0                # -a: not before
    predecessors: tuple = ()             # job ids that must end first
    ad_predecessors: tuple = ()          # array dependencies: task n waits for task n of these
    tc: int = 0                          # most tasks running at once (0: no limit)
    running_tasks: int = 0
    deadline: float = 0.0                # -dl (0: none)
    deadline_user: bool = False          # the owner is in deadlineusers
    jshare: int = 0                      # -js
    oticket: int = 0                     # job override tickets
    now_only: bool = False               # -now y: start in this pass or never
    job_prio: int = 0                    # HTCondor's JobPrio: orders one owner's jobs among themselves
    universe: str = ""                   # "scheduler" or "local": runs on its submit host without a slot
    shadow: bool = False                 # an HTCondor job that runs on execute hosts (MAX_JOBS_RUNNING)
    limits: tuple = ()                   # HTCondor's concurrency limits it uses: ((name, amount), ...)
    #: its ConcurrencyLimits need the machine it would run on (concurrency_limits_expr with
    #: TARGET.X): ``Snapshot.host_limits`` holds them by host, ``limits`` is empty
    machine_limits: bool = False
    submit_host: str = ""
    #: ((task, Request), ...): the tasks that ask for other resources than ``request`` (an
    #: HTCondor cluster whose procs differ), ascending; the others ask for ``request``
    task_requests: tuple = ()
    # ((task, time), ...): pending tasks that may not start before that time (they asked
    # to be requeued after a moment's run, again and again: ``daemon.apply.rest``)
    resting: tuple = ()
    task: int = 0                        # a view of the job for this one task (``Pass.task_job``)
    #: seconds its NextJobStartDelay holds back the next start of its owner's HTCondor jobs
    #: after one of its tasks starts (the largest of its procs'); 0: none
    start_delay: float = 0.0

    def held_task(self, number):
        return self.held_all or number in self.held

    def request_of(self, task):
        """The Request of task ``task`` (``task_requests``, else the job's)."""
        for number, req in self.task_requests:
            if number == task:
                return req
        return self.request


@dataclass(frozen=True, slots=True)
class Running:
    """A running (or suspended) task and what it holds."""
    job_id: int
    task: int
    owner: str
    granted: tuple                       # ((queue, host, slots), ...); the first is the master
    pe: str = ""                         # granted parallel environment
    amounts: tuple = ()                  # (complex name, amount per slot) of consumables held
    start_time: float = 0.0
    end_time: float = INFINITY           # expected end (start + runtime)
    project: str = ""
    department: str = "defaultdepartment"
    suspended: bool = False
    ar: int = 0                          # the advance reservation it runs in (0: none)
    userlists: frozenset = frozenset()   # access lists its owner belongs to
    universe: str = ""                   # "scheduler" or "local" when it runs without a slot
    shadow: bool = False                 # an HTCondor job on an execute host (MAX_JOBS_RUNNING)
    limits: tuple = ()                   # the concurrency limits it uses: ((name, amount), ...)
    # what its job's urgency and POSIX priority come from, as a pending job's
    submit_time: float = 0.0
    priority: int = 0                    # POSIX priority (-p)
    deadline: float = 0.0                # latest start time (-dl), 0 for none
    request: object = None               # the job's Request (None: its slots alone)

    @property
    def slots(self):
        return sum(g[2] for g in self.granted)


@dataclass(frozen=True, slots=True)
class SchedConfig:
    """The scheduler configuration (sched_conf(5)) as numbers and enums; defaults once.

    The weights of the job order are the ticket policies' (``PolicyView.config``)."""
    sort_method: SortMethod = SortMethod.LOAD
    load_formula: str = "np_load_avg"
    maxujobs: int = 0
    max_aj_instances: int = 2000
    job_load_adjustments: tuple = (("np_load_avg", 0.5, "0.50"),)   # (name, per slot, as written)
    load_adjustment_decay: float = 450.0
    max_pending_tasks_per_job: int = 50
    max_reservation: int = 0             # jobs that may get a reservation per pass
    default_duration: float = INFINITY   # run time assumed for jobs without h_rt/s_rt
    schedule_interval: float = 15.0      # what a task running past its end is given more
    params: dict = field(default_factory=dict)   # sched_conf "params" (MONITOR=1, ...)
    #: when a slot-less job of a universe may start (condor_config's START_LOCAL_UNIVERSE
    #: and START_SCHEDULER_UNIVERSE): (universe, ClassAd expression)
    slotless_start: tuple = (("local", "TotalLocalJobsRunning < 200"),
                             ("scheduler", "TotalSchedulerJobsRunning < 500"))
    #: condor_config's MAX_JOBS_RUNNING: most HTCondor jobs running on execute hosts at once
    #: (HTCondor's shadows); None: no limit
    max_jobs_running: object = None
    #: HTCondor's concurrency limits: ((name in lower case, capacity), ...) of the names the
    #: jobs use that have one (``<NAME>_LIMIT``, a set's or the default); the others are free
    concurrency: tuple = ()
    #: sched_conf params OWNER_MATCH_STEPS: most ClassAd evaluation steps one owner's matching
    #: may take in a pass (``sched.evalbudget``): about a second of costly evaluation (steps
    #: of attributes and functions, or regular-expression matching at a step a microsecond),
    #: while an ordinary Requirements takes a step or a few; 0: no limit
    owner_steps: int = 1_000_000
    #: owner -> time: none of the owner's HTCondor jobs but those of the scheduler universe
    #: starts before it, as a start of one of them with NextJobStartDelay holds back the
    #: next (HTCondor's schedd throttle; the jobs of other owners and Grid Engine's do not
    #: wait); an owner whose time has come stays until the first pass after it
    start_hold: dict = field(default_factory=dict)
    #: owner -> (job id, task) whose start set the owner's ``start_hold``: once the time
    #: has come, that task is looked at after the pass's other jobs, so that the owner's
    #: other jobs waiting for the hold go first (a task requeued at once would else take
    #: every start)
    start_holders: dict = field(default_factory=dict)
    #: condor_config's MAX_NEXT_JOB_START_DELAY: the most seconds a NextJobStartDelay
    #: holds back the next start; 0: no cap
    max_start_delay: float = 600.0


@dataclass(frozen=True, slots=True)
class PolicyView:
    """What the ticket policies need besides the jobs (``sched.policy``)."""
    config: object = None                # sched.policy.config.PolicyConfig (None: its defaults)
    members: object = None               # sched.policy.inputs.Members (None: nobody)
    tree: object = None                  # the share tree's root ShareNode (None: no tree)


@dataclass(frozen=True, slots=True)
class Snapshot:
    now: float
    jobs: tuple                          # PendingJob, any order
    running: tuple                       # Running
    queues: tuple                        # QueueInstance
    hosts: dict                          # name -> Host
    complexes: dict                      # name and shortcut -> Complex
    config: SchedConfig = SchedConfig()
    pes: dict = field(default_factory=dict)          # name -> PE
    global_values: tuple = ()                        # (complex name, parsed value, text)
    global_load: dict = field(default_factory=dict)  # name -> load value of ``global`` (load sensors)
    live: frozenset = frozenset()                    # ids of jobs still pending or running
    ad_done: dict = field(default_factory=dict)      # job id -> frozenset of ended task numbers
    ad_ranges: dict = field(default_factory=dict)    # array job id -> (first, last, step) of its tasks
    policy: PolicyView = PolicyView()               # users, projects, share tree, usage
    quotas: tuple = ()                               # QuotaSet, in configuration order
    ars: dict = field(default_factory=dict)          # id -> AdvanceReservation
    #: job id -> hosts whose START refuses it, and hosts its own Requirements refuse (those
    #: of its first pending task)
    refused: dict = field(default_factory=dict)
    unwanted: dict = field(default_factory=dict)
    #: job id -> {task: (refused, unwanted)} for the tasks whose own ad (an HTCondor
    #: cluster whose procs differ) gives other hosts than ``refused`` and ``unwanted``
    task_refusals: dict = field(default_factory=dict)
    #: "queue@host" -> ((from, till), ...): the coming periods in which the instance's
    #: calendar disables or suspends it (``sched.calendar.closings``); empty without calendars
    closings: dict = field(default_factory=dict)
    #: job id -> {host: ((name, amount), ...)}: the concurrency limits a job whose limits
    #: need the machine (``PendingJob.machine_limits``) would use on each host
    host_limits: dict = field(default_factory=dict)
    #: job id -> the pending tasks whose matching was put off in this pass (None: all of
    #: them): their owner's matching took the evaluation steps a pass gives one owner
    #: (``sched.evalbudget``); they wait with the reason ``Why.OWNER_STEPS``
    put_off: dict = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class QuotaFilter:
    """One filter of a quota rule: names (wildcards, ``@groups``), ``!`` names, ``{}``."""
    include: tuple = ()                  # empty: any
    exclude: tuple = ()
    expand: bool = False                 # the limit applies to each matching name separately


@dataclass(frozen=True, slots=True)
class QuotaLimit:
    """``name=value`` after ``to``: a static value, or a dynamic one computed per host."""
    name: str                            # complex name
    value: object = None                 # parsed static value (None when dynamic)
    text: str = ""                       # as configured
    terms: tuple = ()                    # dynamic: ((weight, attribute or None), ...) summed


@dataclass(frozen=True, slots=True)
class QuotaRule:
    label: str                           # "set/rule name" or "set/number", as qquota shows it
    filters: tuple                       # QuotaFilter or None for users, projects, pes, queues, hosts
    limits: tuple                        # QuotaLimit


@dataclass(frozen=True, slots=True)
class QuotaSet:
    """A resource quota set (sge_resource_quota(5)): the first matching rule applies."""
    name: str
    rules: tuple                         # QuotaRule, in order
    enabled: bool = True


class ARState(enum.Enum):
    """What happened to an advance reservation besides its window (which ``now`` decides)."""
    GRANTED = "granted"                  # waiting for its start, or in its window
    ERROR = "error"                      # a reserved queue instance became unusable
    DELETED = "deleted"                  # qrdel'ed: it holds nothing any more


@dataclass(frozen=True, slots=True)
class AdvanceReservation:
    """An advance reservation: queue instances, slots and resources held for a window."""
    id: int
    owner: str
    start: float
    end: float
    granted: tuple                       # ((queue, host, slots), ...); the first is the master
    name: str = ""
    pe: str = ""                         # granted parallel environment
    amounts: tuple = ()                  # (complex name, amount per slot) of consumables held
    users: tuple = ()                    # -u: users and @access lists that may use it (empty: all)
    xusers: tuple = ()                   # -u !name: those that may not
    state: ARState = ARState.GRANTED
    hard_error: bool = False             # -he y: jobs wait while it is in error

    def active(self, now):
        """True while the reservation holds its resources."""
        return self.state is not ARState.DELETED and self.start <= now < self.end

    @property
    def slots(self):
        return sum(g[2] for g in self.granted)


# ---------------------------------------------------------------- decisions

@dataclass(frozen=True, slots=True)
class Start:
    """Run task ``task`` of job ``job_id`` on these queue instances (the first is the master)."""
    job_id: int
    task: int
    granted: tuple                       # ((queue, host, slots), ...)
    pe: str = ""


@dataclass(frozen=True, slots=True)
class Suspend:
    """Stop (``on``) or continue a running task for a queue-level reason."""
    job_id: int
    task: int
    on: bool


@dataclass(frozen=True, slots=True)
class Reprioritize:
    job_id: int
    task: int
    nice: int


@dataclass(frozen=True, slots=True)
class Reserve:
    """Resources held back for a job that will start at ``start`` and run until ``end``."""
    job_id: int
    task: int
    start: float
    granted: tuple                       # ((queue, host, slots), ...); the first is the master
    end: float = INFINITY
    pe: str = ""


@dataclass(frozen=True, slots=True)
class Kill:
    """End a running task: its advance reservation is over (or gone)."""
    job_id: int
    task: int
    ar: int


@dataclass(frozen=True, slots=True)
class Reject:
    """A job that must leave the queue (an immediate job that could not start)."""
    job_id: int


@dataclass(frozen=True, slots=True)
class Preempt:
    """Evict task ``task`` of job ``job_id`` from slot ``slot``: job ``by`` is matched to it
    (HTCondor's negotiator, by user priority or by the slot's Rank)."""
    job_id: int
    task: int
    slot: str
    by: int
    kind: str = "priority"               # "priority" or "rank"
    by_task: int = 1                     # the task of job ``by`` the slot is claimed for


@dataclass(slots=True)
class JobOrder:
    """Where a pending job stands in the order, with the numbers that put it there."""
    prio: float = 0.0
    npprior: float = 0.5
    urgency: tuple = (0.0, 0.0, 0.0, 0.0)       # total, resource, waiting time, deadline
    nurg: float = 0.5
    tickets: tuple = (0.0, 0.0, 0.0, 0.0)       # total, override, functional, share tree
    ntckts: float = 0.5
    share: float = 0.0                          # its part of all tickets (qstat -ext "share")


@dataclass(slots=True)
class Decisions:
    starts: list = field(default_factory=list)
    suspends: list = field(default_factory=list)
    reprioritize: list = field(default_factory=list)
    reserves: list = field(default_factory=list)
    rejects: list = field(default_factory=list)
    kills: list = field(default_factory=list)
    reasons: dict = field(default_factory=dict)      # job id -> tuple of Reason
    order: dict = field(default_factory=dict)        # job id -> JobOrder
    share_tree: tuple = ()                           # sched.policy.sharereport.NodeReport rows
    load_alarms: bool = False                        # a job waits for a load or suspend alarm
    preempts: list = field(default_factory=list)     # Preempt (the negotiator's order)
    slots: dict = field(default_factory=dict)        # (job id, task) -> slot a match chose
    submitters: dict = field(default_factory=dict)   # name -> sched.negotiator.SubmitterReport
    groups: dict = field(default_factory=dict)       # accounting group -> sched.groups.report()
    examined: tuple = None           # a quick pass: the jobs it looked at (None: every job)
    memo: object = None              # a full pass: what quick passes may reuse (sched.cycle.Memo)
    #: the negotiator's order: the procs ("cluster.proc") whose matching this pass put off,
    #: in order (``sched.evalbudget``): the next pass takes them first
    put_off: tuple = ()
