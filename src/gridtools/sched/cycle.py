"""One scheduling pass: ``cycle(snapshot) -> Decisions``. Pure: no I/O, no clock.

Pending jobs are taken in priority order (see ``priority``); for each pending
task the pass checks what keeps it from running at all (holds, start time,
dependencies, task concurrency limit, error state), then looks for queue
instances with free slots that satisfy the job's queue, PE and resource
requests, best first by the configured queue sort method. A job that cannot
be placed gets the reasons, one line each, that ``qstat -j`` shows under
"scheduling info".
"""

from gridtools.sched import priority as prio_mod
from gridtools.sched import queues as qmod
from gridtools.sched import resources as res
from gridtools.sched.snapshot import Decisions, Start


class _Pass:
    """The mutable bookkeeping of one pass over an immutable snapshot."""

    def __init__(self, snap):
        self.snap = snap
        self.free = {qi.name: qi.slots for qi in snap.queues}
        self.cap = res.Capacity()
        self.adjust = {}
        self.user_running = {}
        self.job_running = {}
        self.pe_used = {}
        self.load_alarms = False
        self._init_capacity()
        self._init_usage()

    def all_full(self):
        """True when no queue instance has a free slot left (the rest of the pass is cheap)."""
        return not any(v > 0 for v in self.free.values())

    def full_reasons(self):
        lines = [f'queue instance "{name}" dropped because it is full' for name in sorted(self.free)]
        return lines + ["All queues dropped because of overload or full"]

    def _consumable(self, name):
        cx = self.snap.complexes.get(name)
        return cx if cx is not None and cx.consumable in ("YES", "JOB") and cx.name != "slots" else None

    def _init_capacity(self):
        snap = self.snap
        for name, value in snap.global_values:
            cx = self._consumable(name)
            if cx:
                self.cap.set(("global",), cx.name, res.amount(cx, value))
        for host in snap.hosts.values():
            for name, value in host.complex_values:
                cx = self._consumable(name)
                if cx:
                    self.cap.set(("host", host.name), cx.name, res.amount(cx, value))
        for qi in snap.queues:
            for name, value in qi.values:
                cx = self._consumable(name)
                if cx:
                    self.cap.set(("queue", qi.queue, qi.host), cx.name, res.amount(cx, value))

    def _init_usage(self):
        snap = self.snap
        decay = float(snap.params.get("load_adjustment_decay_seconds", 450))
        for run in snap.running:
            self.user_running[run.owner] = self.user_running.get(run.owner, 0) + 1
            self.job_running[run.job_id] = self.job_running.get(run.job_id, 0) + 1
            for i, (queue, host, slots) in enumerate(run.granted):
                name = f"{queue}@{host}"
                if name in self.free:
                    self.free[name] -= slots
                self._take_consumables(run.resources, queue, host, slots, i == 0)
                age = snap.now - run.start_time
                if decay > 0 and age < decay:
                    self._add_load(host, slots, 1.0 - age / decay)

    def _add_load(self, host_name, slots, factor):
        host = self.snap.hosts.get(host_name)
        nproc = max(1, host.num_proc if host else 1)
        per = float(self.snap.params.get("np_load_adjustment", 0.5))
        self.adjust[host_name] = self.adjust.get(host_name, 0.0) + per * factor * slots / nproc

    def _take_consumables(self, requests, queue, host, slots, master):
        for name, value in requests:
            cx = self._consumable(name)
            if cx is None or (cx.consumable == "JOB" and not master):
                continue
            amount = res.amount(cx, value) * (1 if cx.consumable == "JOB" else slots)
            for level in (("global",), ("host", host), ("queue", queue, host)):
                self.cap.take(level, cx.name, amount)


def _blocked(job, task, snap, state):
    """Reason a pending task may not start at all now, or None."""
    if job.error:
        return "Job is in error state"
    if job.holds.get(task):
        return "job dropped because of hold state"
    if job.start_at and job.start_at > snap.now:
        return "execution time not reached"
    if any(p in snap.live for p in job.predecessors):
        return "job dropped because of job dependencies"
    for pred in job.ad_predecessors:
        if pred in snap.live and task not in snap.ad_done.get(pred, frozenset()):
            return "job dropped because of job dependencies"
    if job.tc and state.job_running.get(job.id, 0) >= job.tc:
        return "job dropped because of task concurrency limit (-tc)"
    maxu = int(snap.params.get("maxujobs", 0) or 0)
    if maxu and state.user_running.get(job.owner, 0) >= maxu:
        return f'job dropped because user "{job.owner}" already has {maxu} running jobs (maxujobs)'
    return None


def _resource_problem(job, qi, snap, state, slots, master=True):
    """Reason the job's hard resource requests do not fit ``qi`` with ``slots``, or None."""
    host = snap.hosts.get(qi.host)
    for name, value in job.hard_resources:
        cx = snap.complexes.get(name)
        if cx is None:
            continue                      # unknown resources are accepted and ignored
        if cx.name == "slots":
            continue
        offered = _offered(cx, qi, host, snap)
        if cx.consumable in ("YES", "JOB"):
            need = res.amount(cx, value) * (1 if cx.consumable == "JOB" else slots)
            for level in (("global",), ("host", qi.host), ("queue", qi.queue, qi.host)):
                if not state.cap.fits(level, cx.name, need):
                    left = state.cap.get(level, cx.name)
                    where = {"global": "global host", "host": f'host "{qi.host}"',
                             "queue": f'queue instance "{qi.name}"'}[level[0]]
                    return f'(-l {name}={value}) cannot run at {where} because it offers only {level[0][0]}c:{cx.name}={_fmt(left)}'
            continue
        if not offered and (cx.type not in res.NUMERIC or cx.type == "BOOL"):
            return (f'(-l {name}={value}) cannot run in queue instance "{qi.name}" '
                    f'because it does not offer {cx.name}')
        for where, off in offered:
            if not res.satisfies(cx, value, off):
                return f'(-l {name}={value}) cannot run in queue instance "{qi.name}" because it offers only {where}:{cx.name}={off}'
    return None


def _fmt(value):
    if isinstance(value, float) and value.is_integer():
        return f"{value:.6f}"
    return f"{value:.6f}" if isinstance(value, float) else str(value)


def _offered(cx, qi, host, snap):
    """[(level letters, value text)] the queue instance offers for complex ``cx``."""
    found = []
    if cx.name == "qname":
        return [("qf", qi.queue)]
    if cx.name == "hostname":
        return [("hf", qi.host)]
    for name, value in qi.values:
        if name == cx.name:
            found.append(("qf", value))
    if host is not None:
        for name, value in host.complex_values:
            if name == cx.name:
                found.append(("hf", value))
        for name, value in host.load:
            if name == cx.name:
                found.append(("hl", value))
    for name, value in snap.global_values:
        if name == cx.name:
            found.append(("gf", value))
    return found


def _crossed(qi, thresholds, snap, state):
    """The first threshold the host's (adjusted) load crosses: text for a reason line, or None."""
    host = snap.hosts.get(qi.host)
    for name, threshold in thresholds:
        cx = snap.complexes.get(name)
        if cx is None or host is None:
            continue
        raw = host.load_value(cx.name)
        if raw is None:
            continue
        try:
            value = float(raw)
        except (TypeError, ValueError):
            continue
        adj = state.adjust.get(qi.host, 0.0) if cx.name.startswith("np_load") else 0.0
        if res.threshold_exceeded(cx, value + adj, threshold):
            return f'{cx.name}={value + adj:.6f} (= {value:.6f} + {adj:.6f}) {cx.relop} {threshold}'
    return None


def _overload_reason(qi, snap, state):
    """Why a queue instance in suspend or load alarm takes no job now, or None."""
    crossed = _crossed(qi, qi.suspend_thresholds, snap, state)
    if crossed:
        return f'queue instance "{qi.name}" is in suspend alarm: {crossed}'
    crossed = _crossed(qi, qi.load_thresholds, snap, state)
    if crossed:
        return f'queue instance "{qi.name}" dropped because it is overloaded: {crossed}'
    return None


def _candidates(job, snap, state, reasons):
    """Suitable queue instances for ``job`` ignoring capacity, best first."""
    found = []
    for qi in snap.queues:
        host = snap.hosts.get(qi.host)
        why = qmod.why_not(job, qi, host)
        if why is None:
            why = _overload_reason(qi, snap, state)
            state.load_alarms = state.load_alarms or why is not None
        if why:
            reasons.append(why)
            continue
        found.append(qi)
    method = snap.params.get("queue_sort_method", "load")
    found.sort(key=lambda qi: qmod.sort_key(qi, job, snap.hosts.get(qi.host), method, state.adjust))
    return found


def _place_serial(job, cands, snap, state, reasons):
    for qi in cands:
        if state.free.get(qi.name, 0) < 1:
            reasons.append(f'queue instance "{qi.name}" dropped because it is full')
            continue
        why = _resource_problem(job, qi, snap, state, 1)
        if why:
            reasons.append(why)
            continue
        return [[qi.queue, qi.host, 1]]
    return None


def _take(job, granted, state):
    for i, (queue, host, slots) in enumerate(granted):
        state.free[f"{queue}@{host}"] -= slots
        state._take_consumables(job.hard_resources, queue, host, slots, i == 0)
        state._add_load(host, slots, 1.0)
    state.user_running[job.owner] = state.user_running.get(job.owner, 0) + 1
    state.job_running[job.id] = state.job_running.get(job.id, 0) + 1


def cycle(snap):
    """Decide which pending tasks start now and why the others wait."""
    from gridtools.sched import pe as pe_mod
    decisions = Decisions()
    state = _Pass(snap)
    prios = prio_mod.priorities(snap.jobs, snap.complexes, snap.params, snap.now)
    for job_id, (prio, urg) in prios.items():
        decisions.priorities[job_id] = prio
        decisions.urgencies[job_id] = urg
    full_lines = None
    for job in prio_mod.order(snap.jobs, prios):
        if full_lines is not None and _plain_waiting(job, snap):
            decisions.reasons[job.id] = full_lines
            continue
        reasons = []
        for task in job.tasks:
            blocked = _blocked(job, task, snap, state)
            if blocked:
                if blocked not in reasons:
                    reasons.append(blocked)
                if _later_tasks_may_differ(job, task):
                    continue
                break
            if state.all_full():
                full_lines = full_lines or state.full_reasons()
                reasons.extend(full_lines)
                break
            cands = _candidates(job, snap, state, reasons)
            if job.pe:
                granted = pe_mod.place(job, cands, snap, state, reasons)
            else:
                granted = _place_serial(job, cands, snap, state, reasons)
            if granted is None:
                if not cands or all("full" in r for r in reasons):
                    reasons.append("All queues dropped because of overload or full")
                break
            _take(job, granted, state)
            decisions.starts.append(Start(job.id, task, granted))
        if reasons:
            decisions.reasons[job.id] = _dedupe(reasons)
    decisions.load_alarms = state.load_alarms
    return decisions


def _later_tasks_may_differ(job, task):
    """Whether a later task of ``job`` may start although ``task`` may not: only a hold of
    the task's own and array dependencies differ between tasks. A job-level hold, a start
    time, job dependencies, the -tc limit and maxujobs block every later task alike, so the
    pass stops there (a held array of a million tasks costs one step)."""
    letters = job.holds.get(task)
    return bool(letters and letters != getattr(job.holds, "common", None)) or bool(job.ad_predecessors)


def _plain_waiting(job, snap):
    """True for a job that only waits for free slots (no hold, start time, dependency, limit)."""
    return not (job.error or job.start_at > snap.now or job.predecessors or job.ad_predecessors
                or job.tc or any(job.holds.values()))


def _dedupe(lines):
    seen = []
    for line in lines:
        if line not in seen:
            seen.append(line)
    return seen
