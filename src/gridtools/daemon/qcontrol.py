"""Queue instance and host states that change by themselves, and what they do to tasks.

Besides the letters administrators set with qmod (``state.queue_states``:
``d``, ``s``, ``E``), a queue instance carries letters the daemon derives
on every pass (``state.derived_states``):

- ``D`` / ``C``: its calendar (calendar_conf(5)) disables or suspends it now;
- ``S``: a superior queue instance on the same host is full, or holds as
  many slots as its ``subordinate_list`` threshold says;
- ``A``: the host's load crosses one of its ``suspend_thresholds``; every
  ``suspend_interval`` another ``nsuspend`` of its running tasks are
  suspended (``T``), and resumed the same way once the load falls.

Hosts get the state qhost ``-st`` shows (``state.host_display``): Idle,
Running, Busy, Draining, Drained, Flush, Suspend, Down or None, from the
administrator's drain/flush/suspend (``state.host_states``) and slot use.

Queue suspension reaches the tasks through ``suspension.change`` with the
reason ``S``: a task is queue-suspended while any queue instance it runs in
is ``s``, ``S`` or ``C``, its host is suspended, or slot-wise subordination
picked it. Nothing here polls: ``next_wake`` is the next calendar change,
threshold step or load sample that matters, and the loop sleeps until then.
"""

import os
from dataclasses import dataclass

from gridtools.daemon import execd, faults, suspension, view
from gridtools.errors import GridError, SpoolError
from gridtools.formats import values
from gridtools.formats.sge.calendar import CalState, calendar_state
from gridtools.formats.sge.queue import subordinate_queues
from gridtools.model.job import TaskState
from gridtools.sched import resources as res
from gridtools.spool import qstates as store

#: seconds between load samples (the daemon's LOAD_REFRESH); a threshold looks no finer
LOAD_STEP = 2.0
#: calendar words -> the letter the queue instance gets
CALENDAR_LETTERS = {CalState.OFF: "D", CalState.SUSPENDED: "C"}
#: queue instance letters that suspend the tasks running in it
SUSPENDING = frozenset("sSC")
#: host states an administrator sets -> what qhost -st shows
HOST_SHOWN = {"flush": "Flush", "suspend": "Suspend"}


@dataclass(frozen=True)
class Inst:
    """The queue attributes of one queue instance that change its state by themselves."""
    name: str
    queue: str
    host: str
    slots: int
    calendar: str
    subordinates: tuple          # raw subordinate_list entries
    suspend_thresholds: tuple    # (name, value)
    load_thresholds: tuple
    nsuspend: int
    interval: float
    ambiguous: str = ""          # why the configuration is ambiguous on this host ('' if it is not)


def ambiguity(queue, host, groups):
    """Why a queue's configuration is ambiguous on ``host`` (host groups holding it give
    an attribute different values), or ''."""
    for attr, value in queue.items():
        overrides = getattr(value, "overrides", None)
        if not overrides or any(k.lower() == host.lower() for k in overrides if not k.startswith("@")):
            continue
        found = {repr(v): v for k, v in overrides.items() if k.startswith("@") and host in groups.get(k, ())}
        if len(found) > 1:
            shown = ", ".join(f'"{_text(v)}"' for v in found.values())
            return f'attribute "{attr}" has ambiguous value ({shown})'
    return ""


def _text(value):
    if isinstance(value, (list, tuple)):
        return " ".join(str(v) for v in value) or "NONE"
    if isinstance(value, dict):
        return ",".join(f"{k}={v}" for k, v in value.items()) or "NONE"
    return str(value)


def _inst(qname, queue, host, groups):
    def v(attr):
        return view.qvalue(queue, attr, host, groups)
    try:
        interval = values.parse_time(str(v("suspend_interval") or "0:5:0"))
    except GridError:
        interval = 300.0
    return Inst(name=f"{qname}@{host}", queue=qname, host=host, slots=int(v("slots") or 0),
                calendar=str(v("calendar") or ""), subordinates=tuple(v("subordinate_list") or ()),
                suspend_thresholds=view._pairs(v("suspend_thresholds")),
                load_thresholds=view._pairs(v("load_thresholds")),
                nsuspend=max(1, int(v("nsuspend") or 1)), interval=max(0.0, float(interval)),
                ambiguous=ambiguity(queue, host, groups))


def instances(state):
    """Every queue instance of the configuration, cached per configuration."""
    return _instance_table(state)[0]


def instance_map(state):
    """``queue@host`` -> Inst of every configured queue instance, cached per configuration."""
    return _instance_table(state)[1]


def _instance_table(state):
    cached = state.view_cache.get("control")
    if cached is not None and cached[0] == state.config_generation:
        return cached[1]
    conf = state.config
    groups = view.hostgroups(conf)
    known = set(view.exec_hosts(conf))
    found = tuple(_inst(qname, queue, host, groups)
                  for qname, queue in sorted(conf.objects["queue"].items())
                  for host in view.queue_hosts(queue, groups, known))
    table = (found, {i.name: i for i in found})
    state.view_cache["control"] = (state.config_generation, table)
    return table


# ---------------------------------------------------------------- persistence

def restore(state):
    """Daemon start: the stored qmod and host states, then ``initial_state`` of every instance.
    An unreadable state file is set aside (the states start afresh)."""
    try:
        data = store.load(strict=True)
    except SpoolError as exc:
        faults.set_aside(state, store.path(), "the queue state file", faults.describe(exc, store.path()))
        data = store.empty()
    state.queue_states = {str(k): str(v) for k, v in data["queues"].items() if v}
    state.host_states = {str(k): str(v) for k, v in data["hosts"].items() if v}
    state.queue_messages = {str(k): dict(v) for k, v in data["messages"].items()
                            if isinstance(v, dict)}
    state.known_queues = {str(n) for n in data["known"]}
    apply_initial_states(state, startup=True)


def apply_initial_states(state, startup=False):
    """``initial_state`` for queue instances new to the daemon (all of them at start-up).

    ``disabled`` disables, ``enabled`` enables, ``default`` keeps what was
    stored. Instances that left the configuration lose their stored state.
    """
    conf = state.config
    groups = view.hostgroups(conf)
    current = set()
    for inst in instances(state):
        current.add(inst.name)
        if inst.name in state.known_queues and not startup:
            continue
        initial = str(view.qvalue(conf.objects["queue"][inst.queue], "initial_state", inst.host, groups))
        if initial == "disabled":
            set_letter(state, inst.name, "d", True)
        elif initial == "enabled":
            set_letter(state, inst.name, "d", False)
    for gone in state.known_queues - current:
        state.queue_states.pop(gone, None)
        state.queue_messages.pop(gone, None)
    if current != state.known_queues:
        state.known_queues = current
        state.qstates_dirty = True


def set_letter(state, name, letter, on):
    """Set or clear one qmod letter of a queue instance; True when it changed."""
    letters = state.queue_states.get(name, "")
    if (letter in letters) == on:
        return False
    letters = letters + letter if on else letters.replace(letter, "")
    if letters:
        state.queue_states[name] = letters
    else:
        state.queue_states.pop(name, None)
    if letter == "E" and not on:
        state.queue_messages.pop(name, None)
    state.qstates_dirty = True
    state.need_schedule = True
    state.need_publish = True
    return True


def mark_error(state, name, job_id, host):
    """Put a queue instance into the error state E because a job failed in it."""
    set_letter(state, name, "E", True)
    line = f"queue {name} marked QERROR as result of job {job_id}'s failure at host {host}"
    state.queue_messages[name] = {"E": [line]}
    state.log(f"W|{line}")


def persist(state):
    """Write the queue and host states when they changed."""
    if not state.qstates_dirty:
        return
    try:
        store.save({"queues": dict(sorted(state.queue_states.items())),
                    "hosts": dict(sorted(state.host_states.items())),
                    "known": sorted(state.known_queues),
                    "messages": {k: {letter: list(lines) for letter, lines in v.items()}
                                 for k, v in sorted(state.queue_messages.items())}})
    except SpoolError as exc:
        faults.note(state, (faults.WRITE, "qstates"), faults.WRITE,
                    f"cannot write the queue states, retrying: {exc}")
        return
    faults.clear(state, (faults.WRITE, "qstates"))
    state.qstates_dirty = False


# ---------------------------------------------------------------- the pass

def used_slots(state):
    """``queue@host`` -> slots held by running tasks, and ``queue@host`` -> [(job, task)]."""
    used, tasks = {}, {}
    for job, task in state.running_tasks():
        for queue, host, slots in task.granted:
            name = f"{queue}@{host}"
            used[name] = used.get(name, 0) + slots
            tasks.setdefault(name, []).append((job, task))
    return used, tasks


class Control:
    """Derives queue instance and host states each pass and carries them out on the tasks."""

    def __init__(self, state, dispatcher):
        self.state = state
        self.dispatcher = dispatcher
        self.next_wake = None
        self.calendars = (None, None, {})     # (config generation, valid until, letters)
        self.threshold_at = {}                # instance -> time of its last threshold step
        self.alarms = frozenset()             # instances whose load crosses a load threshold
        self.applied = None                   # inputs of the last reconciliation
        self.down = (0.0, frozenset(), frozenset())   # (time checked, execd gone, execd seen)
        self.load_blocked = False             # the last pass left jobs waiting for a load alarm
        self.generation = None                # configuration whose new instances got initial_state

    def due(self, now):
        """True when a calendar change, threshold step or load sample is due."""
        return self.next_wake is not None and now >= self.next_wake

    def update(self, now, loads, load_due=None):
        """One pass: derive the letters, apply them to tasks, compute the next wake-up."""
        state = self.state
        if self.generation != state.config_generation:
            if self.generation is not None:
                apply_initial_states(state)   # however the configuration was reloaded
            self.generation = state.config_generation
        insts = instances(state)
        used, tasks = used_slots(state)
        wakes = []
        derived = {i.name: "c" for i in insts if i.ambiguous}
        derived.update(dict.fromkeys(set(tasks).difference(instance_map(state)), "o"))
        self._calendar(insts, now, derived, wakes)
        picked = self._subordinates(insts, used, tasks, derived)
        self._thresholds(insts, loads, tasks, now, derived, wakes)
        self._load_alarms(insts, loads)
        if derived != state.derived_states:
            state.derived_states = derived
            state.need_schedule = True
            state.need_publish = True
        self._reconcile(tasks, picked)
        self._host_states(insts, used, now)
        if self._watch_load(insts):
            wakes.append(max(load_due or now + LOAD_STEP, now + 0.05))
        self.next_wake = min(wakes) if wakes else None
        persist(state)

    # ------------------------------------------------------------ calendars
    def _calendar(self, insts, now, derived, wakes):
        generation, until, letters = self.calendars
        if generation != self.state.config_generation or (until is not None and now >= until):
            letters, until = self._evaluate_calendars(insts, now)
            self.calendars = (self.state.config_generation, until, letters)
        for name, letter in letters.items():
            derived[name] = derived.get(name, "") + letter
        if until is not None:
            wakes.append(until)

    def _evaluate_calendars(self, insts, now):
        letters, changes = {}, []
        calendars = self.state.config.objects["calendar"]
        for inst in insts:
            cal = calendars.get(inst.calendar) if inst.calendar and inst.calendar != "None" else None
            if cal is None:
                continue
            try:
                current, change = calendar_state(cal, now)
            except Exception as exc:  # noqa: BLE001 - a bad calendar must not stop the daemon
                self.state.log(f"E|calendar {inst.calendar} of {inst.name} not evaluated: {exc}")
                continue
            if current in CALENDAR_LETTERS:
                letters[inst.name] = CALENDAR_LETTERS[current]
            if change is not None:
                changes.append(change)
        return letters, (min(changes) if changes else None)

    # ------------------------------------------------------------ subordinates
    def _subordinates(self, insts, used, tasks, derived):
        """Letter S for subordinated instances; returns tasks picked by slot-wise subordination."""
        picked = set()
        for inst in insts:
            if not inst.subordinates:
                continue
            if inst.subordinates[0].startswith("slots="):
                picked |= _slotwise(inst, used, tasks)
                continue
            for sub, threshold in subordinate_queues(inst.subordinates):
                limit = threshold or inst.slots
                if limit and used.get(inst.name, 0) >= limit:
                    name = f"{sub}@{inst.host}"
                    if "S" not in derived.get(name, ""):
                        derived[name] = derived.get(name, "") + "S"
        return picked

    # ------------------------------------------------------------ thresholds
    def _thresholds(self, insts, loads, tasks, now, derived, wakes):
        for inst in insts:
            if not inst.suspend_thresholds and inst.name not in self.threshold_at:
                continue
            alarm = bool(inst.suspend_thresholds) and bool(
                exceeded(inst.suspend_thresholds, loads.get(inst.host), self.state))
            if alarm:
                derived[inst.name] = derived.get(inst.name, "") + "A"
            here = tasks.get(inst.name, [])
            waiting = [(j, t) for j, t in here if ("T" in t.suspended) != alarm]
            last = self.threshold_at.get(inst.name)
            if not waiting:
                if not alarm:
                    self.threshold_at.pop(inst.name, None)
                continue
            if last is not None and now < last + inst.interval:
                wakes.append(last + inst.interval)
                continue
            self._step(waiting, alarm, inst.nsuspend)
            self.threshold_at[inst.name] = now
            if len(waiting) > inst.nsuspend:
                wakes.append(now + inst.interval)

    def _step(self, waiting, alarm, count):
        """Suspend the newest (alarm) or resume the oldest ``count`` tasks."""
        waiting.sort(key=lambda jt: jt[1].start_time, reverse=alarm)
        for job, task in waiting[:count]:
            suspension.change(self.state, self.dispatcher, job, task, "T", alarm)
            verb = "suspended" if alarm else "unsuspended"
            self.state.log(f"I|job {job.id}.{task.number} {verb} by suspend threshold")

    def _load_alarms(self, insts, loads):
        alarms = frozenset(i.name for i in insts
                           if i.load_thresholds and exceeded(i.load_thresholds, loads.get(i.host), self.state))
        if alarms != self.alarms:
            self.alarms = alarms
            self.state.need_schedule = True
            self.state.need_publish = True

    def _watch_load(self, insts):
        """True when a load sample may change what happens: running jobs under suspend
        thresholds, jobs waiting for a load alarm to end, execution daemons to watch."""
        return self.load_blocked or bool(self.down[2]) or any(i.suspend_thresholds for i in insts)

    # ------------------------------------------------------------ tasks
    def _reconcile(self, tasks, picked):
        state = self.state
        inputs = (tuple(sorted(state.derived_states.items())), tuple(sorted(state.queue_states.items())),
                  tuple(sorted(state.host_states.items())), frozenset(picked))
        if inputs == self.applied and not picked:
            return
        self.applied = inputs
        seen = set()
        for name, here in tasks.items():
            for job, task in here:
                if (job.id, task.number) in seen:
                    continue
                seen.add((job.id, task.number))
                want = (job.id, task.number) in picked or self._queue_suspended(task)
                if want != ("S" in task.suspended):
                    suspension.change(state, self.dispatcher, job, task, "S", want)

    def _queue_suspended(self, task):
        state = self.state
        for queue, host, _slots in task.granted:
            name = f"{queue}@{host}"
            letters = state.queue_states.get(name, "") + state.derived_states.get(name, "")
            if SUSPENDING.intersection(letters) or state.host_states.get(host) == "suspend":
                return True
        return False

    # ------------------------------------------------------------ hosts
    def _down_hosts(self, now):
        """Hosts an execution daemon served that is gone now (checked once per load step)."""
        checked, down, served = self.down
        if now - checked >= LOAD_STEP:
            served = frozenset(h for h in view.exec_hosts(self.state.config)
                               if os.path.isdir(execd.host_dir(h)))
            down = frozenset(h for h in served if not execd.registered(h))
            self.down = (now, down, served)
        return down

    def _host_states(self, insts, used, now):
        state = self.state
        down = self._down_hosts(now)
        slots, busy = {}, {}
        for inst in insts:
            slots[inst.host] = slots.get(inst.host, 0) + inst.slots
            busy[inst.host] = busy.get(inst.host, 0) + used.get(inst.name, 0)
        shown = {}
        for host in view.exec_hosts(state.config):
            shown[host] = host_state(state.host_states.get(host, ""), slots.get(host, 0),
                                     busy.get(host, 0), host in down)
        if shown != state.host_display:
            state.host_display = shown
            state.need_publish = True


def host_state(admin, total, used, down):
    """The LoadLeveler-style state of a host (see the module docstring)."""
    if down:
        return "Down"
    if admin == "drain":
        return "Draining" if used else "Drained"
    if admin in HOST_SHOWN:
        return HOST_SHOWN[admin]
    if total <= 0:
        return "None"
    if used <= 0:
        return "Idle"
    return "Busy" if used >= total else "Running"


def exceeded(thresholds, load, state):
    """``[(name, value text, threshold)]`` of the thresholds the host's load crosses."""
    if not load:
        return []
    table = _complex_table(state)
    found = []
    for name, limit in thresholds:
        cx = table.get(name)
        raw = load.get(cx.name if cx else name)
        if cx is None or raw is None:
            continue
        try:
            value = float(raw)
        except (TypeError, ValueError):
            continue
        if res.threshold_exceeded(cx, value, limit):
            found.append((cx.name, value, limit))
    return found


def _complex_table(state):
    """The complex table by name and shortcut, cached per configuration."""
    cached = state.view_cache.get("complexes")
    if cached is None or cached[0] != state.config_generation:
        cached = (state.config_generation, view.complexes(state.config))
        state.view_cache["complexes"] = cached
    return cached[1]


def _slotwise(inst, used, tasks):
    """Tasks of the subordinates to suspend so that at most N slots run on the host."""
    head, _, tail = inst.subordinates[0].partition("(")
    limit = int(head[len("slots="):])
    order = []
    for item in tail.rstrip(")").split(","):
        parts = item.strip().split(":")
        order.append((parts[0], int(parts[1]), parts[2] if len(parts) > 2 else "sr"))
    total = used.get(inst.name, 0)
    candidates = []
    for sub, seq, action in order:
        for job, task in tasks.get(f"{sub}@{inst.host}", []):
            if task.state is TaskState.RUNNING:
                total += task.slots
                age = task.start_time if action == "sr" else -task.start_time
                candidates.append((-seq, -age, job, task))
    candidates.sort(key=lambda c: (c[0], c[1]))
    picked = set()
    for _seq, _age, job, task in candidates:
        if total <= limit:
            break
        picked.add((job.id, task.number))
        total -= task.slots
    return picked
