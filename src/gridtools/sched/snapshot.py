"""What the scheduler sees and what it answers: immutable records only.

The daemon builds a ``Snapshot`` from its state and configuration; the
scheduler returns ``Decisions``. Nothing here reads files or clocks.
"""

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Complex:
    """One complex attribute definition (complex(5))."""
    name: str
    shortcut: str
    type: str            # INT DOUBLE MEMORY TIME STRING CSTRING RESTRING HOST BOOL
    relop: str           # == < <= > >= != EXCL
    requestable: str     # YES NO FORCED
    consumable: str      # YES NO JOB
    default: str
    urgency: float


@dataclass(frozen=True, slots=True)
class QueueInstance:
    """A cluster queue on one host (``queue@host``) with its capacity and state."""
    queue: str
    host: str
    slots: int
    seq_no: int = 0
    qtype: frozenset = frozenset({"BATCH", "INTERACTIVE"})
    states: str = ""                 # letters as qstat -f shows: a d s S C u E o c D
    pe_list: tuple = ()
    ckpt_list: tuple = ()
    owner_list: tuple = ()
    user_lists: tuple = ()           # access lists that may use the queue (empty: all)
    xuser_lists: tuple = ()          # access lists that may not
    projects: tuple = ()
    xprojects: tuple = ()
    values: tuple = ()               # (name, value text) from complex_values and limits
    load_thresholds: tuple = ()      # (name, value text)
    suspend_thresholds: tuple = ()   # (name, value text): no new jobs while crossed
    hostgroups: frozenset = frozenset()   # host groups the host belongs to

    @property
    def name(self):
        return f"{self.queue}@{self.host}"


@dataclass(frozen=True, slots=True)
class Host:
    """An execution host with its load values and fixed capacities."""
    name: str
    load: tuple = ()                 # (name, float or str) as reported
    complex_values: tuple = ()       # (name, value text) from the host configuration
    state: str = ""                  # drain/flush/suspend state (empty: normal)
    num_proc: int = 1

    def load_value(self, name, default=None):
        for key, value in self.load:
            if key == name:
                return value
        return default


@dataclass(frozen=True, slots=True)
class PendingJob:
    """A job with at least one pending task, as the scheduler needs it."""
    id: int
    owner: str
    group: str
    name: str
    submit_time: float
    priority: int                    # POSIX priority -1023..1024
    slots: int
    tasks: tuple                     # pending task numbers, ascending (a tuple or model TaskRanges)
    holds: dict = field(default_factory=dict)    # task -> hold letters ('' if none), or TaskHolds
    start_at: float = 0.0
    predecessors: tuple = ()         # job ids that must end first (-hold_jid)
    ad_predecessors: tuple = ()      # job ids for array-task dependencies (-hold_jid_ad)
    tc: int = 0                      # max concurrently running tasks (0: no limit)
    running_tasks: int = 0           # tasks of this job running now
    hard_queues: tuple = ()
    soft_queues: tuple = ()
    hard_resources: tuple = ()       # (name, value text)
    soft_resources: tuple = ()
    pe: tuple = ()                   # (name, min, max) or ()
    project: str = ""
    interactive: bool = False
    error: bool = False
    ckpt: str = ""
    ar: int = 0
    reserve: bool = False
    deadline: float = 0.0
    userlists: frozenset = frozenset()   # access lists the owner belongs to


@dataclass(frozen=True, slots=True)
class Running:
    """A running (or suspended) task and the slots it holds."""
    job_id: int
    task: int
    owner: str
    granted: tuple                   # ((queue, host, slots), ...)
    resources: tuple = ()            # hard requests (name, value) for consumables
    start_time: float = 0.0


@dataclass(frozen=True, slots=True)
class Snapshot:
    now: float
    jobs: tuple                      # PendingJob, any order
    running: tuple                   # Running
    queues: tuple                    # QueueInstance
    hosts: dict                      # name -> Host
    complexes: dict                  # name -> Complex (also indexed by shortcut)
    params: dict                     # scheduler configuration (sched_conf fields)
    ended: frozenset = frozenset()   # job ids that ended (for dependencies)
    live: frozenset = frozenset()    # job ids still in the system (pending/running)
    ad_done: dict = field(default_factory=dict)   # job id -> frozenset of ended task numbers
    pes: dict = field(default_factory=dict)       # PE name -> sge_pe fields (dict)
    global_values: tuple = ()                     # (name, value) of the global host


@dataclass(slots=True)
class Start:
    """Decision: run task ``task`` of job ``job_id`` on these queue instances."""
    job_id: int
    task: int
    granted: list                    # [[queue, host, slots], ...]; first is the master


@dataclass(slots=True)
class Decisions:
    starts: list = field(default_factory=list)
    reasons: dict = field(default_factory=dict)     # job id -> list of reason lines
    priorities: dict = field(default_factory=dict)  # job id -> normalized priority
    urgencies: dict = field(default_factory=dict)   # job id -> (urg, rrcontr, wtcontr, dlcontr)
    global_reasons: list = field(default_factory=list)
    load_alarms: bool = False      # a job waits for a queue instance in load or suspend alarm
