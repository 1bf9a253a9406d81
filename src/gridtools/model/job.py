"""Jobs and their tasks as the daemon holds them.

A job is its *description* (``spec``: the submitted request, a plain dict as
spooled, see gridtools_spool(5)) plus the *state* of its tasks. A plain job
has the single task 1; an array job has the tasks of ``spec["tasks"]``
(first, last, step). Tasks that never left the pending state have no record:
``Job.task(t)`` makes one on demand, so a 100,000-task array costs nothing
until it runs. Pending tasks are handed out as ranges (``TaskRanges``), their
holds as ``TaskHolds``; a whole job deleted while pending makes no record
either (its untouched tasks count as ended when it was deleted).
"""

from types import MappingProxyType

from gridtools.model import shared
from gridtools.model.taskset import TaskHolds, TaskRanges
from gridtools.records import ClosedSet


class TaskState(ClosedSet):
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


#: the usage of a task that has not ended: one empty mapping for all (a task's usage is
#: replaced when it ends, never changed in place)
_NO_USAGE = MappingProxyType({})


#: a task record's fields and their defaults, in order (see Task)
_TASK_FIELDS = (
    ("state", TaskState.PENDING),
    ("hold", ""),                    # u/o/s letters of this task's own holds
    ("host", None),                  # master host while running
    ("queue", None),                 # cluster queue of the master task
    ("granted", ()),                 # [[queue, host, slots], ...] (replaced, never changed)
    ("pe", ""),                      # the parallel environment granted (a -pe job)
    ("slots", 1),
    ("start_time", 0.0),
    ("end_time", 0.0),
    ("suspended", ""),               # s (by qmod -sj), S (queue suspended), T (threshold)
    ("deleting", False),             # qdel was asked while running (dr)
    ("shepherd_pid", 0),
    ("exit_status", None),
    ("failed", 0),
    ("failed_reason", ""),
    ("error_reason", ""),
    ("restarted", 0),
    ("usage", _NO_USAGE),
    ("signal", 0),                   # the signal that ended the job's process (0: it exited)
    ("error_pid", 0),                # pid of the shepherd that put the task in error state
    ("rest_until", 0.0),             # a task that ran again and again for moments rests till then
    ("quick_requeues", 0),           # its runs in a row that asked for a requeue after a moment
    ("run_limit", 0.0),              # seconds of h_rt (or s_rt) its run started with; -1: none
    ("amounts", None),               # [[consumable, amount], ...] its run holds (None: not noted)
    ("limits", None),                # [[concurrency limit, weight], ...] its run holds (None: not noted)
)


class Task:
    """One task of a job, with what the daemon knows of it: its ``number`` and the
    fields of ``_TASK_FIELDS`` (by position after the number, or by name). A plain
    class with slots: commands that read a job (condor_q -l, qstat right after a
    submission) would pay for importing ``dataclasses`` more than for their work, and a
    ``records`` record has no slots (the daemon holds a record per started task)."""

    __slots__ = ("number",) + tuple(name for name, _default in _TASK_FIELDS)
    __hash__ = None

    def __init__(self, number, *values, **named):
        self.number = number
        if len(values) > len(_TASK_FIELDS):
            raise TypeError(f"Task() takes at most {len(_TASK_FIELDS) + 1} arguments")
        for (name, default), value in zip(_TASK_FIELDS, values):
            setattr(self, name, value)
        for name, default in _TASK_FIELDS[len(values):]:
            setattr(self, name, named.pop(name, default))
        if named:
            raise TypeError(f"Task() got unexpected arguments {sorted(named)}")

    def replaced(self, **changes):
        """A copy of this record with ``changes`` (field names and values)."""
        copy = Task(self.number, *(getattr(self, name) for name, _default in _TASK_FIELDS))
        for name, value in changes.items():
            setattr(copy, name, value)
        return copy

    def _values(self):
        return (self.number,) + tuple(getattr(self, name) for name, _default in _TASK_FIELDS)

    def __eq__(self, other):
        if other.__class__ is not Task:
            return NotImplemented
        return self._values() == other._values()

    def __repr__(self):
        inner = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__slots__)
        return f"Task({inner})"

    def to_dict(self):
        data = {"state": self.state.value}
        for name in ("hold", "host", "queue", "granted", "pe", "slots", "start_time", "end_time",
                     "suspended", "deleting", "shepherd_pid", "exit_status", "failed",
                     "failed_reason", "error_reason", "restarted", "usage", "signal", "error_pid",
                     "rest_until", "quick_requeues", "run_limit", "amounts", "limits"):
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


_TASK_DEFAULTS = {name: default for name, default in _TASK_FIELDS if name != "state"}


def _first(pair):
    return pair[0]


def task_numbers(spec):
    """All task numbers of a job description, in order."""
    rng = spec.get("tasks")
    if not rng:
        return range(1, 2)
    first, last, step = rng
    return range(first, last + 1, step)


class Derived:
    """What the daemon derives from one job description alone, made when first needed:
    ``request`` (the scheduler's Request, for the configuration of ``generation``),
    ``task_requests`` (the Requests of the tasks that ask otherwise, for the same;
    ``task_table`` the same by task),
    ``refusal_keys`` (``daemon.slotads``: which procs' ads may refuse other hosts),
    ``facts`` (what the status shows of the job) and ``condor_facts`` (what condor_q
    shows of it, from its description: ``spool.rows.condor_info``; ``private_facts``
    what it shows the job's owner only; ``public_ad`` the text of its ad every user
    sees, ``spool.rows.public_ad``; ``factory`` the limits of a cluster materialized
    late, ``daemon.factory.limits``; ``limits`` its concurrency limits, a list holding
    what ``sched.inputs`` makes of them; ``start_delay`` its NextJobStartDelay in
    seconds, ``sched.inputs.job_start_delay``, and ``names_delay`` whether its ads name
    one, ``sched.inputs.job_names_start_delay``). Slots: ten thousand jobs hold one."""

    __slots__ = ("spec", "generation", "request", "task_requests", "facts", "condor_facts",
                 "private_facts", "public_ad", "refusal_keys", "task_table", "factory", "limits",
                 "start_delay", "names_delay")

    def __init__(self, spec):
        self.spec, self.generation, self.request, self.facts = spec, None, None, None
        self.task_requests = self.refusal_keys = self.task_table = self.factory = None
        self.condor_facts = self.private_facts = self.public_ad = self.limits = None
        self.start_delay = self.names_delay = None


class Job:
    """A job: its description (``spec``) and the state of its tasks. A plain class for
    the reason Task is one."""

    __slots__ = ("spec", "tasks", "hold", "deleted", "deleted_at", "version", "condor", "cache", "id",
                 "filed", "derived", "mods")
    __hash__ = None

    def __init__(self, spec, tasks=None, hold="", deleted=False, deleted_at=0.0, version=0, condor=None,
                 cache=None):
        self.spec = shared.description(spec)
        self.tasks = {} if tasks is None else tasks     # number -> Task (only tasks with a record)
        self.hold = hold                                # job-level holds on all pending tasks
        self.deleted = deleted                          # qdel of the whole job: untouched tasks ended
        self.deleted_at = deleted_at                    # when that qdel came
        self.version = version                          # bumped by every change (keys caches)
        self.condor = {} if condor is None else condor  # HTCondor bookkeeping (see ads._overlay_condor)
        self.cache = {} if cache is None else cache     # derived values (not compared nor shown)
        self.id = self.spec["id"]                       # kept at hand
        #: an array job's finished tasks whose records are in its ended-tasks file (a set,
        #: or None while there is none): the state file leaves them out
        self.filed = None
        self.derived = None                             # see spec_cache
        #: hold changes (qhold, qrls) since submission: with the description's own count of
        #: alterations they make the version qstat -j shows, as Grid Engine counts them
        self.mods = 0

    def _values(self):
        return (self.spec, self.tasks, self.hold, self.deleted, self.deleted_at, self.version, self.condor,
                self.id, self.mods)

    def __eq__(self, other):
        if other.__class__ is not Job:
            return NotImplemented
        return self._values() == other._values()

    def __repr__(self):
        return (f"Job(spec={self.spec!r}, tasks={self.tasks!r}, hold={self.hold!r}, deleted={self.deleted!r}, "
                f"deleted_at={self.deleted_at!r}, version={self.version!r}, condor={self.condor!r}, id={self.id!r})")

    def changed(self):
        """Record that the job changed: derived values are recomputed on next use (but
        those of its description, ``spec_cache``, while the description stays)."""
        self.version += 1
        self.cache.clear()

    def spec_cache(self):
        """The values derived from the description alone (``Derived``): kept while the
        description is this one, so that a change of many jobs' states (a hold of all of
        a user's jobs, a start) makes them again for none; an alteration sets a new
        description, and new ones are made from it."""
        kept = self.derived
        if kept is None or kept.spec is not self.spec:
            kept = self.derived = Derived(self.spec)
        return kept

    @property
    def is_array(self):
        return bool(self.spec.get("tasks"))

    def numbers(self):
        return task_numbers(self.spec)

    def made(self):
        """The task numbers in the queue: all of them, but of an HTCondor cluster that
        is materialized late (``daemon.factory``) only its first ``materialized``."""
        rng = task_numbers(self.spec)
        made = self.condor.get("materialized") if self.condor else None
        return rng if made is None else rng[:made]

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
        if task is None:
            return TaskState.FINISHED if self.deleted else TaskState.PENDING
        return task.state

    def untouched(self):
        """Task numbers in the queue (``made``) without a record, as TaskRanges (pending,
        unless the job was deleted)."""
        found = self.cache.get("untouched")
        if found is None:
            rng = self.made()
            found = TaskRanges.of_range(rng.start, rng.stop - 1, rng.step, self.tasks)
            self.cache["untouched"] = found
        return found

    def pending_numbers(self):
        """Task numbers still pending (held or not), in order, as TaskRanges."""
        found = self.cache.get("pending")
        if found is None:
            rng = self.made()
            other = [n for n, t in self.tasks.items() if t.state is not TaskState.PENDING]
            if self.deleted:
                kept = sorted(n for n, t in self.tasks.items() if t.state is TaskState.PENDING)
                found = TaskRanges((n, n, 1) for n in kept)
            else:
                found = TaskRanges.of_range(rng.start, rng.stop - 1, rng.step, other)
            self.cache["pending"] = found
        return found

    def unfinished_numbers(self):
        """Task numbers not finished (pending, running or in error), in order: those a
        hold may be set on."""
        live = [n for n, t in self.tasks.items() if t.state is not TaskState.FINISHED]
        return sorted(set(self.pending_numbers()).union(live))

    def pending_holds(self):
        """TaskHolds of the pending tasks."""
        own = {n: t.hold for n, t in self.tasks.items() if t.hold and t.state is TaskState.PENDING}
        return TaskHolds(self.hold, own)

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
            if self.deleted:
                done = all(t.state is TaskState.FINISHED for t in tasks.values())
            else:
                done = len(tasks) >= len(self.numbers()) and all(
                    n in tasks and tasks[n].state is TaskState.FINISHED for n in self.numbers())
            self.cache["finished"] = done
        return done

    def state_parts(self):
        """(the state file's mapping, the records of finished tasks to append to the
        ended-tasks file). An array job's finished tasks go to that file once each, so that the state file it rewrites at every change holds only
        what may still change and does not grow with the tasks that ran; call
        ``filed_ended`` when both were written. A plain job keeps its one task in the
        state file."""
        tasks, ended = {}, {}
        split = self.is_array
        filed = self.filed or ()
        finished = TaskState.FINISHED
        left = [(n, t) for n, t in self.tasks.items() if n not in filed or t.state is not finished]
        for n, t in sorted(left, key=_first):
            if split and t.state is finished:
                ended[str(n)] = t.to_dict()
            else:
                tasks[str(n)] = t.to_dict()
        data = {"hold": self.hold, "deleted": self.deleted, "tasks": tasks}
        if self.deleted_at:
            data["deleted_at"] = self.deleted_at
        if self.condor:
            data["condor"] = self.condor
        if self.mods:
            data["mods"] = self.mods
        return data, ended

    def filed_ended(self, data, ended):
        """The state ``data`` and the records ``ended`` (of state_parts) were written: a
        filed task that is in the state file again (it was put back) is no longer filed."""
        filed = self.filed if self.filed is not None else set()
        if filed:
            for n in data["tasks"]:
                filed.discard(int(n))
        filed.update(int(n) for n in ended)
        self.filed = filed or None

    @classmethod
    def from_parts(cls, spec, state):
        job = cls(spec)
        if state is None:                       # nothing happened to the job yet
            job.hold = "u" if spec.get("user_hold") else ""
            return job
        job.hold = state.get("hold", "") or ""
        job.deleted = bool(state.get("deleted", False))
        job.deleted_at = float(state.get("deleted_at") or 0.0)
        job.condor = dict(state.get("condor") or {}) if isinstance(state.get("condor"), dict) else {}
        mods = state.get("mods")
        job.mods = mods if type(mods) is int and mods > 0 else 0
        for key, data in (state.get("tasks") or {}).items():
            job.tasks[int(key)] = Task.from_dict(int(key), data)
        filed = {int(n) for n in state.get("ended") or ()}
        job.filed = {n for n in filed if job.tasks[n].state is TaskState.FINISHED} or None
        return job
