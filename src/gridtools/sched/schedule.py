"""The records of Grid Engine's scheduler monitoring file (``params MONITOR=1``).

For one pass, every resource use the pass took into account, one line each::

    jobid:taskid:STATE:start:duration:level:object:resource:usage

STATE is RUNNING or SUSPENDED for tasks that ran before the pass, STARTING
for the pass's starts and RESERVING for its reservations; ``start`` is in
seconds since the epoch and ``duration`` the assumed run time (a task
without one lasts until the end of 32-bit time). Per task the levels come
as Grid Engine writes them: P (the PE's slots), G (global consumables),
then for each granted queue instance H (host consumables), Q (the queue
instance's slots and consumables) and L (one line per counting limit of
the resource quota rule that applies: the set's name and the counter key).
``block`` adds the line of eight colons that separates passes. Pure: the
daemon appends the text to the file.
"""

from gridtools.sched import ar as ar_mod
from gridtools.sched.reserve import running_end
from gridtools.sched.resources import per_grant
from gridtools.sched.rqs import QuotaBook, Who, counted, debit, matching
from gridtools.sched.snapshot import Ask
from gridtools.sched.timeline import INFINITY

#: the end of 32-bit time, where a task without a run time "ends"
END_OF_TIME = 4294967295
SEPARATOR = "::::::::"


class _Use:
    """One task's use: who, what, where, from when and for how long."""

    __slots__ = ("job_id", "task", "state", "start", "duration", "who", "asks", "pe", "granted")

    def __init__(self, job_id, task, state, start, end, who, asks, pe, granted):
        self.job_id, self.task, self.state = job_id, task, state
        self.start = int(start)
        self.duration = int(min(end, END_OF_TIME) - self.start) if end != INFINITY \
            else END_OF_TIME - self.start
        self.who, self.asks, self.pe, self.granted = who, asks, pe, granted


def _line(use, level, obj, resource, amount):
    return (f"{use.job_id}:{use.task}:{use.state}:{use.start}:{use.duration}:{level}:{obj}:"
            f"{resource}:{float(amount):f}")


def _capacities(snap):
    """Names with a capacity per level: global, host name -> names, queue instance -> names."""
    table = snap.complexes
    glob = [n for n, _v, _t in snap.global_values if table[n].counted or n == "slots"]
    hosts = {h.name: [n for n, _v, _t in h.values if table[n].counted or n == "slots"]
             for h in snap.hosts.values()}
    queues = {qi.name: [n for n, _v, _t in qi.values if table[n].counted and n != "slots"]
              for qi in snap.queues}
    return glob, hosts, queues


def _amount(table, name, asks, slots, master):
    if name == "slots":
        return float(slots)
    cx = table[name]
    for ask in asks:
        if ask.name == name and isinstance(ask.value, (int, float)):
            return per_grant(cx, ask.value, slots, master)
    return 0.0


def _records(snap, use, caps, quotas):
    table, (glob, hosts, queues) = snap.complexes, caps
    lines = []
    total = sum(g[2] for g in use.granted)
    if use.pe:
        lines.append(_line(use, "P", use.pe, "slots", total))
    for name in glob:
        amount = _amount(table, name, use.asks, total, True)
        if amount:
            lines.append(_line(use, "G", "global", name, amount))
    for i, (queue, host, slots) in enumerate(use.granted):
        lines += _instance_records(table, use, queue, host, slots, i == 0, hosts, queues)
        if use.who is not None:
            lines += _quota_records(use, quotas, queue, host, slots, i == 0)
    return lines


def _instance_records(table, use, queue, host, slots, master, hosts, queues):
    lines = []
    for name in hosts.get(host, ()):
        amount = _amount(table, name, use.asks, slots, master)
        if amount:
            lines.append(_line(use, "H", host, name, amount))
    qi_name = f"{queue}@{host}"
    lines.append(_line(use, "Q", qi_name, "slots", slots))
    for name in queues.get(qi_name, ()):
        amount = _amount(table, name, use.asks, slots, master)
        if amount:
            lines.append(_line(use, "Q", qi_name, name, amount))
    return lines


def _quota_records(use, quotas, queue, host, slots, master):
    lines = []
    groups = quotas.groups_of(host)
    for qset in quotas.sets:
        found = matching(qset, use.who, queue, host, groups)
        if found is None:
            continue
        rule, key = found
        for limit in rule.limits:
            cx = quotas.table[limit.name]
            amount = debit(cx, limit.name, use.asks, slots, master) if counted(cx) else 0.0
            if amount:
                lines.append(_line(use, "L", qset.name, key, amount))
    return lines


def _uses(snap, decisions):
    config, now = snap.config, snap.now
    jobs = {job.id: job for job in snap.jobs}
    for run in snap.running:
        who = None if ar_mod.inside(snap, run) else Who(run.owner, run.userlists, run.project, run.pe)
        asks = tuple(Ask(n, a, "") for n, a in run.amounts)
        yield _Use(run.job_id, run.task, "SUSPENDED" if run.suspended else "RUNNING", run.start_time,
                   running_end(run, config, now), who, asks, run.pe, run.granted)
    for kind, items in (("STARTING", decisions.starts), ("RESERVING", decisions.reserves)):
        for item in items:
            job = jobs.get(item.job_id)
            if job is None:
                continue
            start = now if kind == "STARTING" else item.start
            req = job.request_of(item.task)
            runtime = req.runtime if req.runtime != INFINITY else config.default_duration
            who = None if req.ar else Who(job.owner, req.userlists, req.project, item.pe)
            yield _Use(job.id, item.task, kind, start, start + runtime, who, req.consumed,
                       item.pe, item.granted)


def records(snap, decisions):
    """The monitoring lines of one pass, without the separator."""
    caps = _capacities(snap)
    quotas = QuotaBook(snap)
    lines = []
    for use in _uses(snap, decisions):
        lines += _records(snap, use, caps, quotas)
    return lines


def block(snap, decisions):
    """The text the monitoring file gets for one pass: its records, then the separator."""
    return "".join(line + "\n" for line in records(snap, decisions)) + SEPARATOR + "\n"
