"""Jobs and their tasks as the daemon holds them.

A job is its *description* (``spec``: the submitted request, a plain dict as
spooled, see gridtools_spool(5)) plus the *state* of its tasks. A plain job
has the single task 1; an array job has the tasks of ``spec["tasks"]``
(first, last, step). Tasks that never left the pending state have no record:
``Job.task(t)`` makes one on demand, so a 100,000-task array costs nothing
until it runs.
"""

import enum
from dataclasses import dataclass, field


class TaskState(enum.Enum):
    PENDING = "pending"        # waiting (qw), possibly held (hqw)
    RUNNING = "running"        # dispatched, its shepherd runs it (r, t, s, S, T)
    FINISHED = "finished"      # ended; kept for qstat -s z until purged
    ERROR = "error"            # pending in error state (Eqw): needs qmod -cj


class Hold:
    """Hold letters as Grid Engine names them."""
    USER = "u"
    OPERATOR = "o"
    SYSTEM = "s"
    ALL = "uos"


@dataclass(slots=True)
class Task:
    """One task of a job, with what the daemon knows of it."""
    number: int
    state: TaskState = TaskState.PENDING
    hold: str = ""                   # u/o/s letters of this task's own holds
    host: str | None = None          # master host while running
    queue: str | None = None         # cluster queue of the master task
    granted: list = field(default_factory=list)   # [[queue, host, slots], ...]
    pe: str = ""                     # the parallel environment granted (a -pe job)
    slots: int = 1
    start_time: float = 0.0
    end_time: float = 0.0
    suspended: str = ""              # s (by qmod -sj), S (queue suspended), T (threshold)
    deleting: bool = False           # qdel was asked while running (dr)
    shepherd_pid: int = 0
    exit_status: int | None = None
    failed: int = 0
    failed_reason: str = ""
    error_reason: str = ""
    restarted: int = 0
    usage: dict = field(default_factory=dict)

    def to_dict(self):
        data = {"state": self.state.value}
        for name in ("hold", "host", "queue", "granted", "pe", "slots", "start_time", "end_time",
                     "suspended", "deleting", "shepherd_pid", "exit_status", "failed",
                     "failed_reason", "error_reason", "restarted", "usage"):
            value = getattr(self, name)
            if value != _TASK_DEFAULTS[name]:
                data[name] = value
        return data

    @classmethod
    def from_dict(cls, number, data):
        task = cls(number)
        for name, value in data.items():
            if name == "state":
                task.state = TaskState(value)
            elif name in _TASK_DEFAULTS:
                setattr(task, name, value)
        return task


_TASK_DEFAULTS = {name: getattr(Task(0), name) for name in (
    "hold", "host", "queue", "granted", "pe", "slots", "start_time", "end_time", "suspended",
    "deleting", "shepherd_pid", "exit_status", "failed", "failed_reason", "error_reason",
    "restarted", "usage")}


def task_numbers(spec):
    """All task numbers of a job description, in order."""
    rng = spec.get("tasks")
    if not rng:
        return range(1, 2)
    first, last, step = rng
    return range(first, last + 1, step)


@dataclass(slots=True)
class Job:
    """A job: its description and the state of its tasks."""
    spec: dict
    tasks: dict = field(default_factory=dict)     # number -> Task (only tasks with a record)
    hold: str = ""                                # job-level holds on all pending tasks
    deleted: bool = False                         # qdel seen; remaining tasks go away
    version: int = 0                              # bumped by every change (keys caches)
    cache: dict = field(default_factory=dict, repr=False, compare=False)

    def changed(self):
        """Record that the job changed: derived values are recomputed on next use."""
        self.version += 1
        self.cache.clear()

    @property
    def id(self):
        return self.spec["id"]

    @property
    def is_array(self):
        return bool(self.spec.get("tasks"))

    def numbers(self):
        return task_numbers(self.spec)

    def task(self, number):
        """The record of task ``number``, created as pending when missing."""
        task = self.tasks.get(number)
        if task is None:
            task = Task(number, slots=self.slots())
            self.tasks[number] = task
            self.cache.clear()
        return task

    def slots(self):
        pe = self.spec.get("pe")
        if not pe:
            return 1
        from gridtools.model import perange
        return perange.low(pe)

    def state_of(self, number):
        task = self.tasks.get(number)
        return task.state if task else TaskState.PENDING

    def pending_numbers(self):
        """Task numbers still pending (held or not), in order."""
        found = self.cache.get("pending")
        if found is None:
            tasks = self.tasks
            found = [n for n in self.numbers()
                     if n not in tasks or tasks[n].state is TaskState.PENDING]
            self.cache["pending"] = found
        return found

    def holds_of(self, number):
        """All hold letters that apply to a pending task (job-level and its own)."""
        task = self.tasks.get(number)
        own = task.hold if task else ""
        return "".join(sorted(set(self.hold + own)))

    def running(self):
        return [t for t in self.tasks.values() if t.state is TaskState.RUNNING]

    def is_finished(self):
        """True when no task is pending, running or in error."""
        done = self.cache.get("finished")
        if done is None:
            tasks = self.tasks
            done = len(tasks) >= len(self.numbers()) and all(
                n in tasks and tasks[n].state is TaskState.FINISHED for n in self.numbers())
            self.cache["finished"] = done
        return done

    def state_dict(self):
        return {"hold": self.hold, "deleted": self.deleted,
                "tasks": {str(n): t.to_dict() for n, t in sorted(self.tasks.items())}}

    @classmethod
    def from_parts(cls, spec, state):
        job = cls(spec)
        if state is None:                       # nothing happened to the job yet
            job.hold = "u" if spec.get("user_hold") else ""
            return job
        job.hold = state.get("hold", "") or ""
        job.deleted = bool(state.get("deleted", False))
        for key, data in (state.get("tasks") or {}).items():
            job.tasks[int(key)] = Task.from_dict(int(key), data)
        return job
