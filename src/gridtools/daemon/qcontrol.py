"""Queue instance and host states that change by themselves: the daemon's side.

What the states are and what they do to tasks is decided by the pure
``sched.queue_state.derive``; this module feeds it (queue instances from
the configuration, running tasks, administrators' states, load samples and
what earlier passes remembered), carries out its answer (the derived state
letters, ``suspension.change`` of tasks with the reasons ``S`` and ``T``)
and keeps the stored qmod and host states. Hosts get the state qhost
``-st`` shows (``state.host_display``): Idle, Running, Busy (every slot in
use, or its MAX_STARTERS jobs running), Draining, Drained, Flush, Suspend,
Down or None. A host whose execution daemon is
gone (it no longer holds its lock) is Down, its queue instances get the
derived state ``u`` (they take no jobs), and once it has been so for its
``reschedule_unknown`` time the tasks ``derive`` picks there are rescheduled
through ``apply.reschedule_lost``. Nothing here polls: ``next_wake`` is
the next calendar change, threshold step or load sample that matters, and
the loop sleeps until then.
"""

import os

from gridtools.daemon import apply, arreq, execd, faults, hostreport, suspension, view
from gridtools.errors import GridError, SpoolError
from gridtools.formats import values
from gridtools.formats.sge import calendar as calendar_format
from gridtools.formats.sge import states as letters
from gridtools.formats.sge.queue import subordinate_queues
from gridtools.sched import inputs
from gridtools.sched import queue_state
from gridtools.spool import qstates as store

#: seconds between load samples (the daemon's LOAD_REFRESH); a threshold looks no finer
LOAD_STEP = 2.0
#: host states an administrator sets -> what qhost -st shows
HOST_SHOWN = {"flush": "Flush", "suspend": "Suspend"}


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


def _calendar(state, name):
    """(year entries, week entries) of a named calendar, or () without one."""
    cal = state.config.objects["calendar"].get(name) if name and name != "None" else None
    if cal is None:
        return ()
    try:
        return calendar_format.entries(cal)
    except GridError as exc:
        state.log(f"E|calendar {name} not evaluated: {exc}")
        return ()


def _slotwise(entries):
    """(limit, ((queue, seq_no, action), ...)) of a slot-wise subordinate_list, or ()."""
    if not entries or not entries[0].startswith("slots="):
        return ()
    head, _, tail = entries[0].partition("(")
    order = []
    for item in tail.rstrip(")").split(","):
        parts = item.strip().split(":")
        order.append((parts[0], int(parts[1]), parts[2] if len(parts) > 2 else "sr"))
    return (int(head[len("slots="):]), tuple(order))


def _nsuspend(value):
    """queue_conf(5) ``nsuspend`` as a number: 1 when unset; 0 (no threshold
    suspension at all) stays 0."""
    if value is None or str(value).strip() == "":
        return 1
    try:
        return max(0, int(value))
    except ValueError:
        return 1


def _inst(state, qname, queue, host, groups, table):
    def v(attr):
        return view.qvalue(queue, attr, host, groups)
    try:
        interval = values.parse_time(str(v("suspend_interval") or "0:5:0"))
    except GridError:
        interval = 300.0
    subs = tuple(v("subordinate_list") or ())
    slotwise = _slotwise(subs)
    return queue_state.Instance(
        name=f"{qname}@{host}", queue=qname, host=host, slots=int(v("slots") or 0),
        calendar=_calendar(state, str(v("calendar") or "")),
        subordinates=() if slotwise else tuple(subordinate_queues(subs)), slotwise=slotwise,
        suspend_thresholds=inputs.parsed_pairs(v("suspend_thresholds"), table),
        load_thresholds=inputs.parsed_pairs(v("load_thresholds"), table),
        nsuspend=_nsuspend(v("nsuspend")), interval=max(0.0, float(interval)),
        ambiguous=ambiguity(queue, host, groups),
        values=tuple(inputs.parsed_pairs(v("complex_values"), table)))


def instances(state):
    """Every queue instance of the configuration, cached per configuration."""
    return _instance_table(state)[0]


def instance_map(state):
    """``queue@host`` -> Inst of every configured queue instance, cached per configuration."""
    return _instance_table(state)[1]


def calendars(state):
    """``queue@host`` -> the (year, week) entries of its calendar, of every configured
    queue instance that has one."""
    return {name: inst.calendar for name, inst in instance_map(state).items() if inst.calendar}


def _instance_table(state):
    cached = state.view_cache.get("control")
    if cached is not None and cached[0] == state.config_generation:
        return cached[1]
    conf = state.config
    groups = view.hostgroups(conf)
    known = set(view.exec_hosts(conf))
    table = view.config_parts(state)["complexes"]
    found = tuple(_inst(state, qname, queue, host, groups, table)
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
        self.calendars = (None, {})           # (config generation, remembered calendar states)
        self.threshold_at = {}                # instance -> time of its last threshold step
        self.alarms = frozenset()             # instances whose load crosses a load threshold
        self.down = (0.0, frozenset(), frozenset())   # (time checked, execd gone, execd seen)
        self.unknown = {}                     # host -> since when its execd is gone
        self.rescheduled = set()              # (job, task) whose lost run is being ended
        self.load_blocked = False             # the last pass left jobs waiting for a load alarm
        self.generation = None                # configuration whose new instances got initial_state
        self.parsed_loads = None              # ((load sample, configuration), numeric loads by host)

    def due(self, now):
        """True when a calendar change, threshold step or load sample is due."""
        return self.next_wake is not None and now >= self.next_wake

    def update(self, now, loads, load_due=None):
        """One pass: derive the states, apply them to tasks, compute the next wake-up."""
        state = self.state
        if self.generation != state.config_generation:
            if self.generation is not None:
                apply_initial_states(state)   # however the configuration was reloaded
            self.generation = state.config_generation
        self._track_unknown(now)
        out = queue_state.derive(self._view(loads), now)
        self.calendars = (state.config_generation, out.calendars)
        self.threshold_at = out.threshold_at
        derived = {name: letters.to_letters(flags) for name, flags in out.derived.items() if flags}
        if derived != state.derived_states:
            state.derived_states = derived
            state.need_schedule = True
            state.need_publish = True
        if out.alarms != self.alarms:
            self.alarms = out.alarms
            state.need_schedule = True
            state.need_publish = True
        self._carry_out(out.suspend)
        self._reschedule(out.reschedule, now)
        used, _ = used_slots(state)
        self._host_states(instances(state), used, now)
        wakes = [out.next_wake] if out.next_wake is not None else []
        if self.load_blocked or bool(self.down[2]) or out.watch_load:
            wakes.append(max(load_due or now + LOAD_STEP, now + 0.05))
        self.next_wake = min(wakes) if wakes else None
        persist(state)

    def _view(self, loads):
        state = self.state
        table = view.config_parts(state)["complexes"]
        tasks = tuple(queue_state.Task(job.id, task.number, tuple(tuple(g) for g in task.granted),
                                       task.start_time, "S" in task.suspended, "T" in task.suspended,
                                       self._reschedulable(job, task), "s" in task.suspended)
                      for job, task in state.running_tasks())
        generation, remembered = self.calendars
        return queue_state.View(
            instances=instances(state), tasks=tasks,
            admin={name: letters.from_letters(v) for name, v in state.queue_states.items()},
            hosts={h: inputs.HOST_STATES.get(v) for h, v in state.host_states.items()},
            loads=self._numeric_loads(loads, table),
            complexes=table, threshold_at=self.threshold_at,
            calendars=remembered if generation == state.config_generation else {},
            unknown=dict(self.unknown),
            reschedule_after={h: reschedule_unknown(state.config, h) for h in self.unknown},
            global_load=inputs.numeric_load(state.global_load, table),
            reserved=arreq.reserved_instances(state))

    def _numeric_loads(self, loads, table):
        """Each host's load values as numbers, worked out once per sample and configuration."""
        key = (loads, self.state.config_generation)
        if self.parsed_loads is None or self.parsed_loads[0][0] is not loads or self.parsed_loads[0][1] != key[1]:
            self.parsed_loads = (key, {h: inputs.numeric_load(load, table) for h, load in loads.items()})
        return self.parsed_loads[1]

    # ------------------------------------------------------------ unknown hosts
    def _track_unknown(self, now):
        """Since when each host whose execution daemon is gone has been unknown."""
        down = self._down_hosts(now)
        self.unknown = {h: self.unknown.get(h, now) for h in down}
        self.state.unknown_hosts = frozenset(self.unknown)
        if self.rescheduled:
            running = {(job.id, task.number) for job, task in self.state.running_tasks()}
            self.rescheduled &= running

    def _reschedulable(self, job, task):
        """May the task run again elsewhere once its host is lost (sge_conf(5)
        reschedule_unknown)? Not when it is interactive, being deleted, or asked
        ``-r n``; a checkpointing job when its ``when`` holds ``r``; any other when
        it is rerunnable (``-r y``, or the queue's ``rerun``)."""
        from gridtools.daemon import qmodreq
        from gridtools.exec import ckpt
        spec = job.spec
        if task.host not in self.unknown or (job.id, task.number) in self.rescheduled:
            return False
        if spec.get("interactive") or task.deleting or spec.get("rerun") is False:
            return False
        if spec.get("ckpt"):
            return "r" in ckpt.letters(self.state.config.objects["ckpt"], spec)
        return qmodreq.rerunnable(self.state, job, task)

    def _reschedule(self, keys, now):
        state = self.state
        for job_id, number in keys:
            job = state.jobs.get(job_id)
            task = job.tasks.get(number) if job is not None else None
            if task is not None and apply.reschedule_lost(state, self.dispatcher, job, task, task.host, now):
                self.rescheduled.add((job_id, number))

    def _carry_out(self, suspends):
        state = self.state
        for job_id, number, why, on in suspends:
            job = state.jobs.get(job_id)
            task = job.tasks.get(number) if job is not None else None
            if task is None:
                continue
            if on and migrates_on_suspend(state, job):
                suspension.requeue(state, self.dispatcher, job, task)     # checkpoint(5) "x"
                continue
            suspension.change(state, self.dispatcher, job, task, "T" if why == "threshold" else "S", on)
            if why == "threshold":
                verb = "suspended" if on else "unsuspended"
                state.log(f"I|job {job_id}.{number} {verb} by suspend threshold")

    # ------------------------------------------------------------ hosts
    def _down_hosts(self, now):
        """Hosts an execution daemon served that is gone now (checked once per load step,
        and at once after qconf -ke stopped one: Grid Engine marks the host unheard then)."""
        checked, down, served = self.down
        if now - checked >= LOAD_STEP or self.state.execd_stopped:
            self.state.execd_stopped = False
            served = frozenset(h for h in view.exec_hosts(self.state.config)
                               if os.path.isdir(execd.host_dir(h)))
            conf = self.state.config
            down = frozenset(h for h in served
                             if not execd.registered(h)
                             or hostreport.unheard(conf, h, self.state.heard.get(h), now))
            self.down = (now, down, served)
        return down

    def _host_states(self, insts, used, now):
        state = self.state
        down = self._down_hosts(now)
        slots, busy = {}, {}
        for inst in insts:
            slots[inst.host] = slots.get(inst.host, 0) + inst.slots
            busy[inst.host] = busy.get(inst.host, 0) + used.get(inst.name, 0)
        limits = state.condor.max_starters(state) if state.condor is not None else {}
        starters = _starters(state) if limits else {}
        shown = {}
        for host in view.exec_hosts(state.config):
            shown[host] = host_state(state.host_states.get(host, ""), slots.get(host, 0),
                                     busy.get(host, 0), host in down)
            if shown[host] == "Running" and starters.get(host, 0) >= limits.get(host, 0) > 0:
                shown[host] = "Busy"        # it runs its MAX_STARTERS jobs (LoadLeveler's startd)
        if shown != state.host_display:
            state.host_display = shown
            state.need_publish = True


def _starters(state):
    """host -> jobs running on it (a parallel job once on each of its hosts; the jobs
    of the scheduler and local universes run beside the daemon, on none)."""
    from gridtools.sched.local import SLOTLESS
    found = {}
    for job, task in state.running_tasks():
        if job.spec.get("universe") in SLOTLESS:
            continue
        for host in {g[1] for g in task.granted}:
            found[host] = found.get(host, 0) + 1
    return found


def reschedule_unknown(conf, host):
    """Seconds a host may stay unknown before its jobs are rescheduled (its own
    configuration's ``reschedule_unknown`` over the global one); 0: never."""
    return hostreport.setting(conf, host, "reschedule_unknown")


def migrates_on_suspend(state, job):
    """A job whose checkpointing environment says ``x``: suspending it migrates it instead."""
    from gridtools.exec import ckpt
    return "x" in ckpt.letters(state.config.objects["ckpt"], job.spec)


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
