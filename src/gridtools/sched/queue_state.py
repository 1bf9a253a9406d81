"""Queue instance and host states that change by themselves, and what they do to tasks.

Pure: ``derive(view, now)`` takes the queue instances with the attributes
that matter here, the running tasks, the administrators' states, the hosts'
load and what earlier passes remembered, and returns the states to show
and the tasks to stop or continue. Besides the states administrators set
(disabled, suspended, error), a queue instance gets:

- ``CAL_DISABLED``/``CAL_SUSPENDED`` while its calendar says so;
- ``SUBORDINATED`` while a superior queue instance on the same host holds as
  many slots as its ``subordinate_list`` threshold (default: all its slots);
  with slot-wise subordination (``slots=N(q1:1:sr,...)``) single tasks of
  the subordinates are stopped instead, so that at most N slots run;
- ``SUSPEND_ALARM`` while the host's load crosses a ``suspend_thresholds``
  value: every ``suspend_interval`` another ``nsuspend`` of its running
  tasks are stopped (the newest first; a task already stopped for another
  reason is never picked), and the tasks whose master queue it is are
  continued the same way (oldest first) once the load falls. ``nsuspend``
  0 or ``suspend_interval`` 0 turn this off: no alarm, nothing stopped or
  continued. Once an instance has no ``suspend_thresholds`` any more, every
  task whose master queue it is loses its threshold suspension at once;
- ``AMBIGUOUS`` when host groups give an attribute different values on the
  host, ``ORPHANED`` when it left the configuration while tasks still run
  or advance reservations still hold slots in it;
- ``UNKNOWN`` while its host's execution daemon is not heard from. Once a
  host has been unknown for its ``reschedule_unknown`` time (sge_conf(5);
  0 never), the tasks whose master queue is on it and that may run again
  (rerunnable, or checkpointing with ``when`` holding ``r``) are picked to
  be rescheduled; the others stay until the host comes back.

A running task is queue-suspended while any instance it runs in is
administratively suspended, subordinated or calendar-suspended, its host is
suspended, or slot-wise subordination picked it.
"""

from dataclasses import dataclass, field

from gridtools.model.resources import Consumable, crosses
from gridtools.sched.calendar import CalState, state_at
from gridtools.sched.snapshot import SUSPENDING, HostState, QState

#: calendar states -> the state the queue instance gets
CALENDAR_STATES = {CalState.OFF: QState.CAL_DISABLED, CalState.SUSPENDED: QState.CAL_SUSPENDED}


@dataclass(frozen=True, slots=True)
class Instance:
    """The attributes of one queue instance that change its state by themselves."""
    name: str
    queue: str
    host: str
    slots: int
    calendar: tuple = ()                 # (year entries, week entries), () without a calendar
    subordinates: tuple = ()             # ((queue, threshold or None), ...)
    slotwise: tuple = ()                 # (limit, ((queue, seq_no, "sr"|"lr"), ...)) or ()
    suspend_thresholds: tuple = ()       # (name, parsed value, text)
    load_thresholds: tuple = ()
    nsuspend: int = 1
    interval: float = 300.0
    ambiguous: str = ""                  # why the configuration is ambiguous here ('' if not)
    values: tuple = ()                   # (complex name, parsed value, text): its complex_values


@dataclass(frozen=True, slots=True)
class Task:
    """A running task as this module needs it."""
    job_id: int
    task: int
    granted: tuple                       # ((queue, host, slots), ...)
    start_time: float
    queue_suspended: bool = False        # stopped for a queue-level reason now
    threshold_suspended: bool = False    # stopped by a suspend threshold now
    reschedulable: bool = False          # may run again elsewhere when its host is lost
    job_suspended: bool = False          # stopped by qmod -sj now

    @property
    def key(self):
        return (self.job_id, self.task)

    @property
    def slots(self):
        return sum(g[2] for g in self.granted)


@dataclass(frozen=True, slots=True)
class View:
    instances: tuple                     # Instance
    tasks: tuple = ()                    # Task
    admin: dict = field(default_factory=dict)        # "q@h" -> QState set by administrators
    hosts: dict = field(default_factory=dict)        # host -> HostState set by administrators
    loads: dict = field(default_factory=dict)        # host -> {load value: number}
    complexes: dict = field(default_factory=dict)
    threshold_at: dict = field(default_factory=dict)  # "q@h" -> time of its last threshold step
    calendars: dict = field(default_factory=dict)    # "q@h" -> (QState, valid until) remembered
    unknown: dict = field(default_factory=dict)      # host -> since when it is not heard from
    reschedule_after: dict = field(default_factory=dict)  # host -> reschedule_unknown seconds (0 never)
    global_load: dict = field(default_factory=dict)  # load values of ``global`` (load sensors)
    reserved: frozenset = frozenset()    # "q@h" advance reservations not yet over hold slots in


@dataclass(slots=True)
class Outcome:
    derived: dict = field(default_factory=dict)      # "q@h" -> QState the instance gets
    suspend: list = field(default_factory=list)      # (job id, task, "queue"|"threshold", on)
    threshold_at: dict = field(default_factory=dict)
    calendars: dict = field(default_factory=dict)
    alarms: frozenset = frozenset()                  # instances whose load crosses a load threshold
    reschedule: list = field(default_factory=list)   # (job id, task) to run again elsewhere
    next_wake: float | None = None
    watch_load: bool = False                         # a load sample may change something


def _add(derived, name, state):
    derived[name] = derived.get(name, QState.NONE) | state


def _calendars(view, now, out, wakes):
    for inst in view.instances:
        if not inst.calendar:
            continue
        known = view.calendars.get(inst.name)
        if known is None or (known[1] is not None and now >= known[1]):
            current, until = state_at(inst.calendar[0], inst.calendar[1], now)
            known = (CALENDAR_STATES.get(current, QState.NONE), until)
        out.calendars[inst.name] = known
        if known[0]:
            _add(out.derived, inst.name, known[0])
        if known[1] is not None:
            wakes.append(known[1])


def _used(view):
    used, here = {}, {}
    for task in view.tasks:
        for queue, host, slots in task.granted:
            name = f"{queue}@{host}"
            used[name] = used.get(name, 0) + slots
            here.setdefault(name, []).append(task)
    return used, here


def _subordinates(view, used, here, derived):
    """SUBORDINATED instances; returns the keys of tasks slot-wise subordination stops."""
    picked = set()
    for inst in view.instances:
        if inst.slotwise:
            picked |= _slotwise(inst, used, here)
            continue
        for sub, threshold in inst.subordinates:
            limit = threshold or inst.slots
            if limit and used.get(inst.name, 0) >= limit:
                _add(derived, f"{sub}@{inst.host}", QState.SUBORDINATED)
    return picked


def _slotwise(inst, used, here):
    """Tasks of the subordinates to stop so that at most N slots run on the host."""
    limit, order = inst.slotwise
    total = used.get(inst.name, 0)
    candidates = []
    for sub, seq, action in order:
        for task in here.get(f"{sub}@{inst.host}", []):
            total += task.slots
            age = task.start_time if action == "sr" else -task.start_time
            candidates.append((-seq, -age, task))
    candidates.sort(key=lambda c: (c[0], c[1]))
    picked = set()
    for _seq, _age, task in candidates:
        if total <= limit:
            break
        picked.add(task.key)
        total -= task.slots
    return picked


def threshold_value(cx, load, global_load, values):
    """The value a load or suspend threshold on complex ``cx`` is compared with, as Grid
    Engine's load alarm takes it: the host's load value, else the ``global`` one, else
    (not for a consumable) the queue instance's complex_values one (``values``: (name,
    parsed value, text) triples); None without any."""
    value = (load or {}).get(cx.name)
    if value is None:
        value = (global_load or {}).get(cx.name)
    if value is None and cx.consumable is Consumable.NO:
        value = next((given for name, given, _text in values if name == cx.name), None)
    return value


def exceeded(thresholds, load, complexes, global_load=None, values=()):
    """[(name, value, threshold text)] of the thresholds a host's load crosses, each
    value as ``threshold_value`` finds it. A threshold on a value there is none of (a
    host whose execution daemon is not heard from reports none but its static values)
    is in alarm, with value None, as Grid Engine's load alarm ("no value for complex
    attribute"), unless it is a consumable's."""
    found = []
    for name, threshold, text in thresholds:
        cx = complexes.get(name)
        if cx is None:
            continue
        value = threshold_value(cx, load, global_load, values)
        if value is None:
            if cx.consumable is Consumable.NO:
                found.append((cx.name, None, text))
        elif isinstance(value, (int, float)) and crosses(cx, value, threshold):
            found.append((cx.name, value, text))
    return found


def _thresholds_on(inst):
    """Does the instance suspend on threshold (queue_conf(5): thresholds set, and neither
    ``nsuspend`` nor ``suspend_interval`` 0)?"""
    return bool(inst.suspend_thresholds) and inst.nsuspend > 0 and inst.interval > 0


def _master(task):
    return f"{task.granted[0][0]}@{task.granted[0][1]}" if task.granted else ""


def _thresholds(view, here, picked, now, out, wakes):
    for inst in view.instances:
        tasks = here.get(inst.name, [])
        if not inst.suspend_thresholds:
            # no thresholds any more: their suspensions end at once, not step by step
            for task in tasks:
                if task.threshold_suspended and _master(task) == inst.name:
                    out.suspend.append((task.job_id, task.task, "threshold", False))
            continue
        if not _thresholds_on(inst):
            continue
        alarm = bool(exceeded(inst.suspend_thresholds, view.loads.get(inst.host), view.complexes,
                              view.global_load, inst.values))
        if alarm:
            _add(out.derived, inst.name, QState.SUSPEND_ALARM)
        if inst.host in view.unknown:
            continue                    # (its execution daemon gets no orders: nothing changes)
        if alarm:
            waiting = [t for t in tasks if not (t.threshold_suspended or t.job_suspended or t.key in picked
                                                 or _queue_suspended(t, view, out.derived))]
        else:
            waiting = [t for t in tasks if t.threshold_suspended and _master(t) == inst.name]
        last = view.threshold_at.get(inst.name)
        if not waiting:
            if alarm and last is not None:
                out.threshold_at[inst.name] = last
            continue
        if last is not None and now < last + inst.interval:
            out.threshold_at[inst.name] = last
            wakes.append(last + inst.interval)
            continue
        waiting.sort(key=lambda t: t.start_time, reverse=alarm)
        for task in waiting[:inst.nsuspend]:
            out.suspend.append((task.job_id, task.task, "threshold", alarm))
        out.threshold_at[inst.name] = now
        if len(waiting) > inst.nsuspend:
            wakes.append(now + inst.interval)


def _queue_suspended(task, view, derived):
    for queue, host, _slots in task.granted:
        name = f"{queue}@{host}"
        states = view.admin.get(name, QState.NONE) | derived.get(name, QState.NONE)
        if states & SUSPENDING or view.hosts.get(host) is HostState.SUSPEND:
            return True
    return False


def _unknown(view, now, out, wakes):
    """UNKNOWN instances of the hosts not heard from, and the tasks to reschedule."""
    for inst in view.instances:
        if inst.host in view.unknown:
            _add(out.derived, inst.name, QState.UNKNOWN)
    due = set()
    for host, since in view.unknown.items():
        after = view.reschedule_after.get(host, 0)
        if after <= 0:
            continue
        if now >= since + after:
            due.add(host)
        else:
            wakes.append(since + after)
    for task in view.tasks:
        if task.reschedulable and task.granted and task.granted[0][1] in due:
            out.reschedule.append(task.key)


def derive(view, now):
    """The Outcome of the queue states at ``now``."""
    out = Outcome()
    wakes = []
    known = {inst.name for inst in view.instances}
    for inst in view.instances:
        if inst.ambiguous:
            _add(out.derived, inst.name, QState.AMBIGUOUS)
    used, here = _used(view)
    for name in (set(here) | view.reserved) - known:
        _add(out.derived, name, QState.ORPHANED)
    _calendars(view, now, out, wakes)
    _unknown(view, now, out, wakes)
    picked = _subordinates(view, used, here, out.derived)
    _thresholds(view, here, picked, now, out, wakes)
    out.alarms = frozenset(i.name for i in view.instances
                           if exceeded(i.load_thresholds, view.loads.get(i.host), view.complexes,
                                       view.global_load, i.values))
    for task in view.tasks:
        want = task.key in picked or _queue_suspended(task, view, out.derived)
        if want != task.queue_suspended:
            out.suspend.append((task.job_id, task.task, "queue", want))
    out.watch_load = any(_thresholds_on(i) for i in view.instances)
    out.next_wake = min(wakes) if wakes else None
    return out
