"""One scheduling pass: ``cycle(snapshot) -> Decisions``. Pure: no I/O, no clock.

The pass runs in stages:

1. order   -- pending jobs best first (``sched.order``: priority, urgency, tickets);
2. filter  -- what keeps a job or task from running at all now: error state,
              holds, start time, dependencies, the task concurrency limit,
              maxujobs, max_aj_instances;
3. place   -- queue instances that suit the job's requests, best first by the
              queue sort method, with free slots, consumables and no load
              alarm; parallel jobs through their PE's allocation rule.

Jobs with equal requests form a *category*: which queue instances could
ever serve it is worked out once per pass, and once a job of a category
found no room, the later jobs of the category share its reasons without
being placed again (room only shrinks during a pass). Reasons are
structured (``sched.reasons``) and capped per kind.
"""

from gridtools.sched import order as order_stage
from gridtools.sched import pe as pe_stage
from gridtools.sched import queues as qsel
from gridtools.sched.reasons import Reason, Why, capped
from gridtools.sched.resources import Capacity, check_fixed, offered
from gridtools.sched.snapshot import Decisions, Reject, Start

_FULL_OR_LOADED = frozenset({Why.QI_FULL, Why.QI_OVERLOADED, Why.QI_SUSPEND_ALARM})
#: reasons that end the look at a job's further tasks in this pass
_JOB_WIDE = frozenset({Why.TASK_LIMIT, Why.MAXUJOBS, Why.MAX_AJ_INSTANCES})


class Category:
    """What jobs with one request share during a pass."""

    __slots__ = ("suitable", "static", "failed", "shared", "fixed_rejects")

    def __init__(self, suitable, static, fixed_rejects=0):
        self.suitable = suitable      # queue instances that could serve it, in configuration order
        self.static = static          # reasons for the others
        self.fixed_rejects = fixed_rejects   # instances that lack a requested fixed value
        self.failed = None            # reasons of the job of this category that found no room
        self.shared = None            # the same, capped: what later jobs of the category get


class Pass:
    """The bookkeeping of one pass over an immutable snapshot."""

    def __init__(self, snap):
        self.snap = snap
        self.table = snap.complexes
        self.free = {qi.name: qi.slots for qi in snap.queues}
        self.open_instances = sum(1 for qi in snap.queues if qi.slots > 0)
        self.cap = Capacity.of(snap)
        self.adjust = {}              # (host, load value name) -> load added by recent starts
        self.user_running = {}
        self.job_running = {}
        self.pe_used = {}
        self.categories = {}
        self.load_alarms = False
        self._full = None
        self._offers = {}             # (queue instance name, complex) -> what it offers
        self.open, self.closed = self._split_closed()
        self._count_running()

    def _split_closed(self):
        """Queue instances that take jobs at all now, and the reasons of those that do not."""
        hosts = self.snap.hosts
        open_, closed = [], []
        for qi in self.snap.queues:
            why = qsel.closed(qi, hosts.get(qi.host))
            if why is None:
                open_.append(qi)
            else:
                closed.append(why)
        return tuple(open_), tuple(closed)

    # ------------------------------------------------------------ running tasks
    def _count_running(self):
        snap = self.snap
        decay = snap.config.load_adjustment_decay
        for run in snap.running:
            self._hold(run.owner, run.job_id, run.pe, run.granted, run.slots)
            age = snap.now - run.start_time
            if decay > 0 and age < decay:
                self._add_load(run.granted, 1.0 - age / decay)

    def _hold(self, owner, job_id, pe_name, granted, slots):
        for queue, host, n in granted:
            name = f"{queue}@{host}"
            if name in self.free:
                before = self.free[name]
                self.free[name] = before - n
                if before > 0 >= self.free[name]:
                    self.open_instances -= 1
        self.user_running[owner] = self.user_running.get(owner, 0) + 1
        self.job_running[job_id] = self.job_running.get(job_id, 0) + 1
        if pe_name:
            self.pe_used[pe_name] = self.pe_used.get(pe_name, 0) + slots

    def _add_load(self, granted, factor):
        for _queue, host_name, slots in granted:
            host = self.snap.hosts.get(host_name)
            nproc = max(1, host.num_proc if host else 1)
            for name, amount in self.snap.config.job_load_adjustments:
                per = amount * factor * slots / (nproc if name.startswith("np_") else 1)
                key = (host_name, name)
                self.adjust[key] = self.adjust.get(key, 0.0) + per

    def take(self, job, pe_name, granted):
        self.cap.take(self.table, job_amounts(job, self.table), granted)
        self._hold(job.owner, job.id, pe_name, granted, sum(g[2] for g in granted))
        self._add_load(granted, 1.0)

    def fits(self, job, grant):
        """True when the consumables of a PE job fit a proposed {name: (qi, slots)} grant."""
        trial = self.cap.copy()
        amounts = job_amounts(job, self.table)
        for i, (qi, n) in enumerate(grant.values()):
            if trial.short(self.table, job.request.hard, qi.queue, qi.host, n, master=(i == 0)):
                return False
            trial.take_at(self.table, amounts, qi.queue, qi.host, n, master=(i == 0))
        return True

    # ------------------------------------------------------------ filter
    def job_blocked(self, job):
        """A reason that keeps every pending task of the job from starting now, or None."""
        snap = self.snap
        if job.error:
            return Reason(Why.ERROR_STATE)
        if job.held_all:
            return Reason(Why.HOLD)
        if job.start_at and job.start_at > snap.now:
            return Reason(Why.START_TIME, (job.start_at,))
        if any(p in snap.live for p in job.predecessors):
            return Reason(Why.DEPENDENCY)
        return self.limit_reached(job)

    def limit_reached(self, job):
        running = self.job_running.get(job.id, 0)
        if job.tc and running >= job.tc:
            return Reason(Why.TASK_LIMIT, (job.tc,))
        limit = self.snap.config.max_aj_instances
        if limit and len(job.tasks) + running > 1 and running >= limit:
            return Reason(Why.MAX_AJ_INSTANCES, (limit,))
        maxu = self.snap.config.maxujobs
        if maxu and self.user_running.get(job.owner, 0) >= maxu:
            return Reason(Why.MAXUJOBS, (job.owner, maxu))
        return None

    def task_blocked(self, job, task):
        if task in job.held:
            return Reason(Why.HOLD)
        for pred in job.ad_predecessors:
            if pred in self.snap.live and task not in self.snap.ad_done.get(pred, frozenset()):
                return Reason(Why.DEPENDENCY)
        return self.limit_reached(job)

    # ------------------------------------------------------------ place
    def category(self, job):
        req = job.request
        cat = self.categories.get(req)
        if cat is None:
            cat = self.categories[req] = self._new_category(job)
        return cat

    def _new_category(self, job):
        suitable, static = [], list(self.closed)
        fixed = [(ask, self.table[ask.name]) for ask in job.request.hard
                 if ask.name in self.table and not self.table[ask.name].counted
                 and ask.name != "slots"]
        rejects = 0
        for qi in self.open:
            why = qsel.unsuitable(job.request, job.owner, qi, None)
            if why is None and fixed:
                why = self._fixed_problem(fixed, qi)
                rejects += why is not None
            if why is None:
                suitable.append(qi)
            else:
                static.append(why)
        return Category(tuple(suitable), tuple(static), rejects)

    def _fixed_problem(self, fixed, qi):
        for ask, cx in fixed:
            key = (qi.name, cx.name)
            found = self._offers.get(key)
            if found is None:
                found = self._offers[key] = offered(cx, qi, self.snap.hosts.get(qi.host), self.snap)
            why = check_fixed(ask, cx, qi, found)
            if why is not None:
                return why
        return None

    def alarm(self, qi):
        """The suspend or load alarm a queue instance is in now (with adjustments), or None."""
        host = self.snap.hosts.get(qi.host)
        if host is None:
            return None
        for kind, thresholds in ((Why.QI_SUSPEND_ALARM, qi.suspend_thresholds),
                                 (Why.QI_OVERLOADED, qi.load_thresholds)):
            for name, threshold, text in thresholds:
                cx = self.table.get(name)
                raw = host.load.get(cx.name) if cx is not None else None
                if not isinstance(raw, (int, float)):
                    continue
                adj = self.adjust.get((qi.host, cx.name), 0.0)
                if cx.relop.holds(raw + adj, threshold):
                    return Reason(kind, (qi.name, cx.name, raw + adj, raw, adj, cx.relop.value, text))
        return None

    def candidates(self, job, cat, reasons):
        """Suitable queue instances without a load alarm, best first."""
        snap = self.snap
        found = []
        for qi in cat.suitable:
            why = self.alarm(qi) if (qi.load_thresholds or qi.suspend_thresholds) else None
            if why is not None:
                self.load_alarms = True
                reasons.append(why)
            else:
                found.append(qi)
        conf = snap.config
        hosts = snap.hosts
        found.sort(key=lambda qi: qsel.sort_key(qi, job.request, hosts.get(qi.host), conf.sort_method,
                                                conf.load_formula, self.adjust))
        return found

    def place_serial(self, job, cands, reasons):
        for qi in cands:
            if self.free.get(qi.name, 0) < 1:
                reasons.append(Reason(Why.QI_FULL, (qi.name,)))
                continue
            why = self.cap.short(self.table, job.request.hard, qi.queue, qi.host, 1)
            if why is not None:
                reasons.append(why)
                continue
            return "", ((qi.queue, qi.host, 1),)
        return None

    def place(self, job, reasons):
        """(pe name, granted) for the job's next task, or None with reasons added."""
        if self.open_instances <= 0:
            reasons.extend(self.full_reasons())
            return None
        cat = self.category(job)
        if cat.failed is not None:
            reasons.extend(cat.failed)
            return None
        mine = list(cat.static)
        cands = self.candidates(job, cat, mine)
        if job.request.pe is not None:
            found = pe_stage.place(job, cands, self, mine)
        else:
            found = self.place_serial(job, cands, mine)
        if found is None:
            # Grid Engine's summary when every instance that could serve was full or overloaded
            if not cat.fixed_rejects and all(r.why in _FULL_OR_LOADED for r in mine[len(cat.static):]):
                mine.append(Reason(Why.ALL_DROPPED))
            cat.failed = tuple(mine)
            cat.shared = capped(mine)
            reasons.extend(mine)
        return found

    def full_reasons(self):
        """Every queue instance is full: the reasons, capped, the same for every job."""
        if self._full is None:
            lines = [Reason(Why.QI_FULL, (qi.name,))
                     for qi in sorted(self.snap.queues, key=lambda q: q.name)]
            self._full = capped(lines + [Reason(Why.ALL_DROPPED)])
        return self._full

    def shared_reasons(self, job):
        """The capped reasons a job gets without being placed (every instance full, or its
        category found no room), or None when it must be looked at."""
        if self.open_instances <= 0:
            return self.full_reasons()
        return self.category(job).shared


def job_amounts(job, table):
    """(name, amount) of the consumables a job holds while it runs."""
    found = []
    for ask in job.request.hard:
        cx = table.get(ask.name)
        if cx is not None and cx.counted and isinstance(ask.value, (int, float)):
            found.append((cx.name, ask.value))
    return tuple(found)


def _consider(p, job, decisions):
    """Filter and place the pending tasks of one job; returns its reasons."""
    blocked = p.job_blocked(job)
    if blocked is not None:
        return (blocked,)
    shared = p.shared_reasons(job) if job.tasks and job.tasks[0] not in job.held else None
    if shared is not None and not job.ad_predecessors:
        if job.now_only:
            decisions.rejects.append(Reject(job.id))
        return shared
    reasons = []
    started = False
    for task in job.tasks:
        why = p.task_blocked(job, task)
        if why is not None:
            reasons.append(why)
            if why.why in _JOB_WIDE:
                break
            continue
        found = p.place(job, reasons)
        if found is None:
            if not started and len(reasons) == len(p.category(job).failed or ()):
                reasons = p.category(job).shared or reasons     # nothing else to say: share
            break
        pe_name, granted = found
        p.take(job, pe_name, granted)
        decisions.starts.append(Start(job.id, task, granted, pe_name))
        started = True
    if job.now_only and not started:
        decisions.rejects.append(Reject(job.id))
    return reasons


def cycle(snap):
    """Decide which pending tasks start now, and why the others wait."""
    decisions = Decisions()
    p = Pass(snap)
    ordered, decisions.order, decisions.share_tree = order_stage.order(snap)
    for job in ordered:
        reasons = _consider(p, job, decisions)
        if reasons:
            decisions.reasons[job.id] = reasons if type(reasons) is tuple else capped(reasons)
    decisions.load_alarms = p.load_alarms
    return decisions
