"""One scheduling pass: ``cycle(snapshot) -> Decisions``. Pure: no I/O, no clock.

The pass runs in stages:

1. order   -- pending jobs best first (``sched.order``: priority, urgency, tickets);
2. filter  -- what keeps a job or task from running at all now: error state,
              holds, start time, dependencies, its advance reservation, the
              task concurrency limit, maxujobs, max_aj_instances;
3. place   -- queue instances that suit the job's requests, best first by soft
              requests and the queue sort method, with free slots, consumables,
              resource quota room and no load alarm; parallel jobs through
              their PE's allocation rule (``sched.place``, ``sched.pe``);
4. reserve -- a ``-R y`` job that found no room gets the earliest start its
              resources allow (at most ``max_reservation`` per pass), and from
              then on lower-priority jobs only start where they do not delay a
              reservation (``sched.reserve``); advance reservations' windows are
              respected the same way (``sched.ar``), and so are the coming
              periods in which queue calendars close instances.

Two start throttles hold across the stages: a host runs at most its
MAX_STARTERS jobs at once (``Host.max_starters``; its instances are passed
over once it does, ``Why.MAX_STARTERS``), and a task started with
NextJobStartDelay holds back the next start of its owner's HTCondor jobs for
that long (``PendingJob.start_delay``, capped by
``SchedConfig.max_start_delay``; the owner's time is in
``SchedConfig.start_hold`` for the passes after it), as HTCondor's schedd
delays its next start (``Why.START_DELAY``). The hold is the owner's alone:
the jobs of other owners, Grid Engine's jobs and the scheduler universe do not
wait for it. In the first pass after an owner's hold, the task whose start set
it (``SchedConfig.start_holders``) is looked at after every other job of the
pass, so that the owner's other jobs that waited go first, as they would from
the schedd's queue of matched jobs: a task requeued at once after each run
does not take every start of its owner.

A *quick* pass (``quick_cycle``) follows a full one while no pending job's own
facts changed and the full pass's order was stable (every eligible job got the
same numbers: only submission order told them apart). It takes the jobs in the
memorised order and stops once every queue instance is full; the jobs after
that keep the reasons the full pass gave them. Ends and starts alone never
change such an order, so a stream of short jobs is dispatched without sorting
the whole pending list again for every free slot.

A job whose matching the daemon put off (``Snapshot.put_off``: its owner's matching
took the evaluation steps a pass gives one owner, ``sched.evalbudget``) waits with
that reason; so does each put-off task.

Jobs with equal requests form a *category* (``sched.category``): which queue
instances could ever serve it is worked out once per pass, and once a job of
a category found no room, the later jobs of the category share its reasons
without being placed again (room only shrinks during a pass). With resource
quotas the owner is part of the category. Reasons are structured
(``sched.reasons``) and capped per kind.

The tasks of a job ask alike, but for an HTCondor cluster whose procs ask
for other resources (``PendingJob.task_requests``) or whose ads refuse other
hosts (``Snapshot.task_refusals``): each of its tasks is placed and booked
as a view of the job with its own request and refusals (``Pass.task_job``),
and a task that finds no room does not end the look at the later ones that
ask otherwise. Its place in the order is the job's (proc 0's request).
"""

from dataclasses import dataclass, replace

from gridtools.sched import ar as ar_mod
from gridtools.sched import category as category_mod
from gridtools.sched import local
from gridtools.sched import order as order_stage
from gridtools.sched import place as place_stage
from gridtools.sched import queues as qsel
from gridtools.sched.reasons import Reason, Why, capped
from gridtools.sched.reserve import Planner, asks_of
from gridtools.sched.resources import Capacity
from gridtools.sched.rqs import QuotaBook, who_of_job, who_of_running
from gridtools.sched.snapshot import ARState, Decisions, Reject, Start
from gridtools.model.resources import Relop, Requestable

#: relations of load values that grow with load (np_load_avg >=); the others shrink (mem_free <=)
_RISING = frozenset({Relop.GE, Relop.GT})
#: reasons that end the look at a job's further tasks in this pass
_JOB_WIDE = frozenset({Why.TASK_LIMIT, Why.MAXUJOBS, Why.MAX_AJ_INSTANCES, Why.MAX_JOBS_RUNNING, Why.CONCURRENCY,
                       Why.START_DELAY})
#: the reasons of a job blocked as a whole for a reason without arguments (an error state,
#: a hold, a dependency): one tuple for all such jobs, which the published status holds
#: and writes once however many jobs wait for it
_ALONE = {why: (Reason(why),) for why in (Why.ERROR_STATE, Why.HOLD, Why.DEPENDENCY)}


def _held_back(job):
    """True for a job a start with NextJobStartDelay holds back (and whose own start with
    it sets the hold): an HTCondor job of a universe the schedd starts through its
    throttle (not the scheduler universe, not a Grid Engine job)."""
    return job.shadow or job.universe == "local"


def _blocked_reasons(blocked):
    """The reasons of a job that ``blocked`` (a Reason) keeps from starting."""
    return _ALONE.get(blocked.why, (blocked,)) if not blocked.args else (blocked,)


class Pass:
    """The bookkeeping of one pass over an immutable snapshot: the cell's pool of room."""

    def __init__(self, snap):
        self.snap = snap
        self.table = snap.complexes
        self.instances = {qi.name: qi for qi in snap.queues}
        self.free = {qi.name: qi.slots for qi in snap.queues}
        self.open_instances = sum(1 for qi in snap.queues if qi.slots > 0)
        self.configured = Capacity.of(snap, ()).left
        self.cap = Capacity.of(snap, ar_mod.holders(snap))
        counted = any(s.enabled for s in snap.quotas)
        self.quotas = QuotaBook(snap, [(who_of_running(r), asks_of(r.amounts), r.granted)
                                       for r in snap.running if counted and not self.inside(r)])
        self.offers = category_mod.Offers(snap)
        self.forced = any(cx.requestable is Requestable.FORCED for cx in self.table.values())
        self.formula = qsel.compiled(snap.config.load_formula)
        self.adjust = {}              # (host, load value name) -> load added by recent starts
        self.lc = {}                  # host -> slots of recent starts, each fading with its age
        self.user_running, self.job_running, self.pe_used = {}, {}, {}
        # HTCondor jobs running on execute hosts, this pass's starts counted (MAX_JOBS_RUNNING)
        self.shadows = None if snap.config.max_jobs_running is None else \
            sum(1 for r in snap.running if r.shadow)
        # amounts of HTCondor's concurrency limits in use, this pass's starts counted
        self.capacities = dict(snap.config.concurrency)
        self.limit_use = {}
        if self.capacities:
            for r in snap.running:
                self._use_limits(r.limits)
        # jobs running on each host whose MAX_STARTERS limits them, this pass's starts
        # counted (a parallel job once on each of its hosts); None: no host has a limit
        self.starters = self._count_starters()
        # owner -> time: none of the owner's HTCondor jobs (but the scheduler universe)
        # starts before it (a start with NextJobStartDelay in this pass or before it holds
        # back the owner's next one)
        self.holds = dict(snap.config.start_hold)
        # (job id, task) whose start set a hold whose time has come: looked at after the
        # pass's other jobs (``defer``), views of their jobs with that task alone in
        # ``deferred``
        self.passed_over = frozenset(
            holder for owner, holder in snap.config.start_holders.items()
            if self.holds.get(owner, 0.0) <= snap.now) if snap.config.start_holders else frozenset()
        self.deferred = []
        self.categories, self.ar_pools = {}, {}
        self._task_requests = {}      # job id -> {task: Request} of the jobs whose tasks differ
        self.started = []             # (job, pe name, granted) of this pass's starts
        self.planner = None
        self.reserved = 0             # reservations made in this pass
        self.last_candidates = (None, ())   # (job id, instances) of the last placement
        self.load_alarms = False
        self._full = None
        self.open, self.closed = self._split_closed()
        self._count_running()
        if snap.closings or any(ar.start > snap.now and ar.state is not ARState.DELETED
                                for ar in snap.ars.values()):
            self.planner = Planner(self)

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

    def inside(self, run):
        return ar_mod.inside(self.snap, run)

    # ------------------------------------------------------------ start throttles
    def _count_starters(self):
        snap = self.snap
        if not any(h.max_starters > 0 for h in snap.hosts.values()):
            return None
        counts = {}
        for run in snap.running:
            if not run.universe:                  # (slot-less jobs run beside the daemon)
                for host in {g[1] for g in run.granted}:
                    counts[host] = counts.get(host, 0) + 1
        return counts

    def starters_full(self, qi):
        """The reason ``qi`` takes no job now because its host runs MAX_STARTERS jobs
        already (LoadLeveler's startd is Busy then), or None."""
        if self.starters is None:
            return None
        host = self.snap.hosts.get(qi.host)
        limit = host.max_starters if host is not None else 0
        if limit > 0 and self.starters.get(qi.host, 0) >= limit:
            return Reason(Why.MAX_STARTERS, (qi.name, qi.host, limit))
        return None

    def throttled(self, cands, reasons):
        """``cands`` without the queue instances whose host runs MAX_STARTERS jobs (their
        reasons added to ``reasons``)."""
        if self.starters is None:
            return cands
        kept = []
        for qi in cands:
            why = self.starters_full(qi)
            if why is None:
                kept.append(qi)
            else:
                reasons.append(why)
        return kept

    def start_held(self, job):
        """The reason no task of the job starts now: a start of one of its owner's
        HTCondor jobs with NextJobStartDelay holds back the owner's next start, or None.
        Grid Engine's jobs, other owners' jobs and the scheduler universe (which
        HTCondor's schedd starts on its own) do not wait for it."""
        if not self.holds or not _held_back(job):
            return None
        until = self.holds.get(job.owner, 0.0)
        if until > self.snap.now:
            return Reason(Why.START_DELAY, (until,))
        return None

    def defer(self, job):
        """The job as this pass looks at it in its order: without the task whose start
        set its owner's hold that has just ended (that task is kept in ``deferred``, to
        be looked at after the pass's other jobs), or None when that was its only
        pending task."""
        held = [task for task in job.tasks if (job.id, task) in self.passed_over]
        if not held:
            return job
        self.deferred.extend(replace(job, tasks=(task,)) for task in held)
        rest = tuple(task for task in job.tasks if (job.id, task) not in self.passed_over)
        return replace(job, tasks=rest) if rest else None

    # ------------------------------------------------------------ running tasks
    def _count_running(self):
        snap = self.snap
        decay = snap.config.load_adjustment_decay
        for run in snap.running:
            inside = self.inside(run)
            self._hold(run.owner, run.job_id, "" if inside else run.pe, () if inside else run.granted,
                       run.slots)
            age = snap.now - run.start_time
            if decay > 0 and age < decay:
                self._add_load(run.granted, 1.0 - age / decay)
        for ar in snap.ars.values():
            if ar.active(snap.now):
                self._hold_slots(ar.granted)
                if ar.pe:
                    self.pe_used[ar.pe] = self.pe_used.get(ar.pe, 0) + ar.slots

    def _hold_slots(self, granted):
        for queue, host, n in granted:
            name = f"{queue}@{host}"
            if name in self.free:
                before = self.free[name]
                self.free[name] = before - n
                if before > 0 >= self.free[name]:
                    self.open_instances -= 1

    def _hold(self, owner, job_id, pe_name, granted, slots):
        self._hold_slots(granted)
        self.user_running[owner] = self.user_running.get(owner, 0) + 1
        self.job_running[job_id] = self.job_running.get(job_id, 0) + 1
        if pe_name:
            self.pe_used[pe_name] = self.pe_used.get(pe_name, 0) + slots

    def _add_load(self, granted, factor):
        """Job load adjustments: what a start adds to its hosts' load values (per slot, per
        processor for np_* values, fading with age; values compared with <= or == such
        as mem_free go down instead)."""
        for _queue, host_name, slots in granted:
            host = self.snap.hosts.get(host_name)
            nproc = max(1, host.num_proc if host else 1)
            self.lc[host_name] = self.lc.get(host_name, 0.0) + factor * slots
            for name, amount, _text in self.snap.config.job_load_adjustments:
                per = amount * factor * slots / (nproc if name.startswith("np_") else 1)
                cx = self.table.get(name)
                if cx is not None and cx.relop not in _RISING:
                    per = -per
                key = (host_name, name)
                self.adjust[key] = self.adjust.get(key, 0.0) + per

    # ------------------------------------------------------------ the cell's pool
    def pe_room(self, pe_name):
        return self.snap.pes[pe_name].slots - self.pe_used.get(pe_name, 0)

    def short(self, job, qi, slots, master=True, pe_name=""):
        """Why ``slots`` slots of the job do not fit on ``qi`` (consumables, quotas, plans)."""
        req = job.request
        if job.machine_limits:
            why = self.host_limit(job, qi.host)
            if why is not None:
                return why
        why = self.cap.short(self.table, req.consumed, qi.queue, qi.host, slots, master, job.id)
        if why is None and self.quotas and not req.ar:
            why = self.quotas.short(who_of_job(job, pe_name), req.consumed, qi.queue, qi.host, slots, master)
        if why is None and self.planner is not None:
            why = self.planner.conflict(job, pe_name, ((qi.queue, qi.host, slots),))
        return why

    def room(self, job, qi, pe_name):
        """Most slots of a PE job ``qi`` could take by its consumables, quotas and plans."""
        req = job.request
        bounds = [self.cap.room(self.table, req.consumed, qi.queue, qi.host, owner=job.id)]
        if self.quotas:
            bounds.append(self.quotas.room(who_of_job(job, pe_name), req.consumed, qi.queue, qi.host))
        if self.planner is not None:
            bounds.append(self.planner.qi_room(job, qi))
        bounds = [b for b in bounds if b is not None]
        return min(bounds) if bounds else None

    def grant_short(self, job, pe_name, granted):
        """Why a whole PE grant does not fit (hosts and counters shared by its instances)."""
        trial = self.cap.copy()
        consumed = self.job_amounts(job)
        for i, (queue, host, n) in enumerate(granted):
            why = trial.short(self.table, job.request.consumed, queue, host, n, (i == 0), job.id)
            if why is not None:
                return why
            trial.take_at(self.table, consumed, queue, host, n, (i == 0), job.id)
        if self.quotas:
            why = self.quotas.grant_short(who_of_job(job, pe_name), job.request.consumed, granted)
            if why is not None:
                return why
        return self.planner.conflict(job, pe_name, granted) if self.planner is not None else None

    def take(self, job, pe_name, granted):
        self.cap.take(self.table, self.job_amounts(job), granted, job.id)
        if self.quotas:
            self.quotas.take(who_of_job(job, pe_name), job.request.consumed, granted)
        self.count_start(job, pe_name, granted)
        if self.planner is not None:
            self.planner.add(who_of_job(job, pe_name), job.request.consumed, pe_name, granted,
                             self.snap.now, self.snap.now + self.planner.duration(job))

    def count_start(self, job, pe_name, granted, in_ar=False):
        """Count a start: slots of the cell (not those of an advance reservation), the
        owner's and job's running tasks, load adjustments."""
        if job.shadow and self.shadows is not None:
            self.shadows += 1
        if self.starters is not None and not job.universe:
            for host in {g[1] for g in granted}:
                self.starters[host] = self.starters.get(host, 0) + 1
        if job.start_delay > 0 and _held_back(job):
            cap = self.snap.config.max_start_delay
            delay = min(job.start_delay, cap) if cap > 0 else job.start_delay
            self.holds[job.owner] = max(self.holds.get(job.owner, 0.0), self.snap.now + delay)
        if job.limits and self.capacities:
            self._use_limits(job.limits)
        elif job.machine_limits and granted:
            self._use_limits(self.limits_on(job, granted[0][1]))
        if in_ar:
            self._hold(job.owner, job.id, "", (), 0)
        else:
            self._hold(job.owner, job.id, pe_name, granted, sum(g[2] for g in granted))
            self.started.append((job, pe_name, granted))
        self._add_load(granted, 1.0)

    def job_amounts(self, job):
        """(name, amount) of the consumables a job holds while it runs (defaults included)."""
        found = []
        for ask in job.request.consumed:
            cx = self.table.get(ask.name)
            if cx is not None and cx.counted and isinstance(ask.value, (int, float)):
                found.append((cx.name, ask.value))
        return tuple(found)

    def ar_pool(self, ar_id):
        pool = self.ar_pools.get(ar_id)
        if pool is None:
            pool = self.ar_pools[ar_id] = ar_mod.ARPool(self, self.snap.ars[ar_id])
        return pool

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
        if job.request.ar:
            why = ar_mod.job_problem(snap, job)
            if why is not None:
                return why
        if snap.put_off and job.id in snap.put_off and snap.put_off[job.id] is None:
            return self.put_off(job)
        return self.limit_reached(job)

    def put_off(self, job):
        """The reason of a job (or task) whose matching this pass put off: its owner's
        matching took the evaluation steps a pass gives one owner (``sched.evalbudget``)."""
        return Reason(Why.OWNER_STEPS, (job.owner, self.snap.config.owner_steps))

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
        if self.holds:
            why = self.start_held(job)
            if why is not None:
                return why
        if job.shadow:
            return self.shadow_limit() or self.concurrency_limit(job)
        return None

    def _use_limits(self, limits):
        for name, amount in limits:
            self.limit_use[name] = self.limit_use.get(name, 0.0) + amount

    def concurrency_limit(self, job):
        """The reason an HTCondor job may not start now: one of the concurrency limits it
        uses would go over its capacity (the amounts of the jobs running and started in
        this pass counted), or None."""
        if not (job.limits and self.capacities):
            return None
        for name, amount in job.limits:
            capacity = self.capacities.get(name)
            if capacity is not None and self.limit_use.get(name, 0.0) + amount > capacity + 1e-9:
                return Reason(Why.CONCURRENCY, (name, capacity))
        return None

    def limits_on(self, job, host):
        """The concurrency limits a job whose limits need the machine uses on ``host``."""
        return self.snap.host_limits.get(job.id, {}).get(host, ())

    def host_limit(self, job, host):
        """The reason an HTCondor job whose concurrency limits need the machine may not
        start on ``host`` now (as ``concurrency_limit``, with its limits there), or None."""
        if not (job.machine_limits and self.capacities):
            return None
        for name, amount in self.limits_on(job, host):
            capacity = self.capacities.get(name)
            if capacity is not None and self.limit_use.get(name, 0.0) + amount > capacity + 1e-9:
                return Reason(Why.CONCURRENCY, (name, capacity))
        return None

    def shadow_limit(self):
        """The reason an HTCondor job on execute hosts may not start now: the schedd runs
        MAX_JOBS_RUNNING such jobs (those running and those this pass starts), or None."""
        limit = self.snap.config.max_jobs_running
        if limit is not None and self.shadows >= limit:
            return Reason(Why.MAX_JOBS_RUNNING, (limit,))
        return None

    def task_blocked(self, job, task):
        if task in job.held:
            return Reason(Why.HOLD)
        if job.resting:
            until = dict(job.resting).get(task, 0.0)
            if until > self.snap.now:
                return Reason(Why.START_TIME, (until,))
        if self.snap.put_off:
            tasks = self.snap.put_off.get(job.id)
            if tasks and task in tasks:
                return self.put_off(job)
        if job.ad_predecessors and order_stage.waits_for_array(self.snap, job, task):
            return Reason(Why.DEPENDENCY)
        return self.limit_reached(job)

    # ------------------------------------------------------------ tasks that differ
    def split(self, job):
        """True when the job's tasks do not all ask alike: an HTCondor cluster whose procs
        request other resources, or whose ads refuse other hosts (``task_job``)."""
        return bool(job.task_requests) or job.id in self.snap.task_refusals

    def task_job(self, job, task):
        """The job as the placement sees its task ``task``: with the task's own request and
        refused hosts when they differ from the job's (``split``), else the job itself."""
        if not job.task_requests and job.id not in self.snap.task_refusals:
            return job
        return replace(job, request=self.task_request(job, task), task=task)

    def task_request(self, job, task):
        """The Request of task ``task`` of the job (``PendingJob.task_requests``)."""
        if not job.task_requests:
            return job.request
        own = self._task_requests.get(job.id)
        if own is None:
            own = self._task_requests[job.id] = dict(job.task_requests)
        return own.get(task, job.request)

    def refusals(self, job, task=0):
        """(hosts whose START refuses the job, hosts its own Requirements refuse): those of
        its first pending task, or of task ``task`` (by default the one a ``task_job`` view
        stands for)."""
        snap = self.snap
        task = task or job.task
        if task:
            own = snap.task_refusals.get(job.id)
            if own and task in own:
                return own[task]
        return snap.refused.get(job.id, ()), snap.unwanted.get(job.id, ())

    # ------------------------------------------------------------ categories
    def category(self, job):
        key = (job.request, job.owner) if self.quotas else job.request
        refused, unwanted = self.refusals(job)
        if refused:                       # hosts whose START refuses this job (HTCondor's policy)
            key = (key, refused)
        if unwanted:                      # hosts this job's own Requirements refuse
            key = (key, "unwanted", unwanted)
        if job.machine_limits:            # the concurrency limits it would use on each host
            key = (key, "limits", tuple(sorted(self.snap.host_limits.get(job.id, {}).items())))
        cat = self.categories.get(key)
        if cat is None:
            cat = self.categories[key] = category_mod.build(self, job)
        return cat

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
        if self.open_instances <= 0 and not job.request.ar:
            return self.full_reasons()
        return self.category(job).shared

    # ------------------------------------------------------------ reserve
    def maybe_reserve(self, job, task, decisions):
        """Give a ``-R y`` job that found no room a reservation, while any are left."""
        req = job.request
        if not req.reserve or req.ar or job.now_only or self.reserved >= self.snap.config.max_reservation:
            return
        if self.planner is None:
            self.planner = Planner(self)
        job_id, cands = self.last_candidates
        if job_id != job.id:
            cands = place_stage.candidates(self, job, self.category(job), [])
        found = self.planner.reserve(job, task, cands)
        if found is not None:
            self.reserved += 1
            decisions.reserves.append(found)


def _consider(p, job, decisions):
    """Filter and place the pending tasks of one job; returns its reasons."""
    blocked = p.job_blocked(job)
    if blocked is not None:
        if job.now_only and blocked.why is not Why.OWNER_STEPS:     # (a put-off job is looked at next pass)
            decisions.rejects.append(Reject(job.id))
        return _blocked_reasons(blocked)
    if job.universe:
        return local.start(p, job, decisions)
    if p.split(job):
        return _consider_tasks(p, job, decisions)
    first = next(iter(job.tasks), None)
    shared = p.shared_reasons(job) if first is not None and first not in job.held else None
    if shared is not None and not job.ad_predecessors:
        if job.now_only:
            decisions.rejects.append(Reject(job.id))
        p.maybe_reserve(job, first, decisions)
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
        found = place_stage.place(p, job, reasons)
        if found is None:
            if not started and len(reasons) == len(p.category(job).failed or ()):
                reasons = p.category(job).shared or reasons     # nothing else to say: share
            p.maybe_reserve(job, task, decisions)
            break
        pe_name, granted = found
        place_stage.pool_of(p, job).take(job, pe_name, granted)
        decisions.starts.append(Start(job.id, task, granted, pe_name))
        started = True
    if job.now_only and not started:
        decisions.rejects.append(Reject(job.id))
    return reasons


def _consider_tasks(p, job, decisions):
    """``_consider`` for a job whose tasks ask differently (``Pass.split``): each task is
    placed with its own request and refusals. Once a task found no room, the later tasks
    that ask as it does wait with it (room only shrinks in a pass), and the others are
    still looked at: HTCondor matches each proc of a cluster on its own ad."""
    reasons, failed, started, reserved = [], set(), False, False
    for task in job.tasks:
        why = p.task_blocked(job, task)
        if why is not None:
            reasons.append(why)
            if why.why in _JOB_WIDE:
                break
            continue
        key = (p.task_request(job, task),) + p.refusals(job, task)
        if key in failed:
            continue
        view = p.task_job(job, task)
        if p.open_instances <= 0 and not view.request.ar:
            reasons.extend(p.full_reasons())
            if not reserved:
                p.maybe_reserve(view, task, decisions)
            break
        found = place_stage.place(p, view, reasons)
        if found is None:
            failed.add(key)
            if not reserved:
                p.maybe_reserve(view, task, decisions)
                reserved = True
            continue
        pe_name, granted = found
        place_stage.pool_of(p, view).take(view, pe_name, granted)
        decisions.starts.append(Start(job.id, task, granted, pe_name))
        started = True
    if job.now_only and not started:
        decisions.rejects.append(Reject(job.id))
    return reasons


def _when_full(p, ordered, start, found, decisions):
    """The jobs from ``start`` on, once every queue instance is full (room only shrinks
    in a pass): what ``_consider`` would say, without looking at each job's tasks
    unless it needs more than the shared reasons (reservations, -now, held tasks) or
    runs without a slot (``sched.local``)."""
    full = p.full_reasons()
    for job in ordered[start:]:
        if p.passed_over:
            job = p.defer(job)
            if job is None:
                continue
        req = job.request
        if req.ar or req.reserve or job.now_only or job.held or job.ad_predecessors or job.universe:
            reasons = _consider(p, job, decisions)
            if reasons:
                found[job.id] = reasons if type(reasons) is tuple else capped(reasons)
            continue
        blocked = p.job_blocked(job)
        found[job.id] = full if blocked is None else _blocked_reasons(blocked)


def _consider_deferred(p, decisions):
    """The tasks whose start set their owner's hold that has just ended, after the
    pass's other jobs (``Pass.defer``): each starts now unless another of its owner's
    HTCondor jobs started in this pass with NextJobStartDelay, or no room is left. Their
    reasons join those of their jobs' other tasks."""
    found = decisions.reasons
    for job in p.deferred:
        reasons = _consider(p, job, decisions)
        if not reasons:
            continue
        earlier = found.get(job.id)
        found[job.id] = capped(list(earlier) + list(reasons)) if earlier else \
            reasons if type(reasons) is tuple else capped(reasons)
    p.deferred = []


@dataclass
class Memo:
    """What a full pass leaves for the quick passes after it."""
    ids: list                  # the pending jobs' ids, best first
    waits_for: frozenset       # live jobs some pending job waits for: their end changes the order
    next_time: float           # the earliest start time (-a) still ahead, when one changes it too
    at: float                  # the full pass's time
    condor_jobs: bool = True   # an HTCondor job is pending (set by the caller that knows)
    start: int = 0             # ids before this index have all left the pending list

    def valid(self, snap, most_age):
        """True while the order still holds at ``snap`` (the caller checks that no pending
        job's own facts changed), for at most ``most_age`` seconds after the full pass."""
        return snap.now < self.next_time and snap.now - self.at < most_age and \
            all(j in snap.live for j in self.waits_for)


def _memo_of(snap, ordered, stable, p):
    """The Memo of a full pass, or None when a quick pass could not stand in for one:
    an order that is not stable, advance reservations ahead, renicing by tickets, or
    jobs that a full queue does not end the look at (reservations, -now, held tasks,
    array dependencies, jobs that run without a slot)."""
    if not stable or p.planner is not None or (snap.policy.config is not None
                                               and snap.policy.config.reprioritize_interval > 0):
        return None
    waits, next_time = set(), float("inf")
    for job in ordered:
        req = job.request
        if req.reserve or req.ar or job.now_only or job.held or job.ad_predecessors or job.universe \
                or job.resting:
            return None
        if job.predecessors:
            waits.update(j for j in job.predecessors if j in snap.live)
        if job.start_at and snap.now < job.start_at < next_time:
            next_time = job.start_at
    return Memo([job.id for job in ordered], frozenset(waits), next_time, snap.now)


def quick_cycle(snap, memo, pending_of):
    """A pass in ``memo``'s order (``pending_of``: job id -> PendingJob of ``snap``) that
    stops once every queue instance is full; ``examined`` names the jobs it looked at.
    None when a full pass is needed after all."""
    p = Pass(snap)
    if p.planner is not None:
        return None
    decisions = Decisions(kills=ar_mod.kills(snap))
    ids, found, examined = memo.ids, decisions.reasons, []
    while memo.start < len(ids) and ids[memo.start] not in pending_of:
        memo.start += 1
    for index in range(memo.start, len(ids)):
        if p.open_instances <= 0:
            break
        job = pending_of.get(ids[index])
        if job is None:
            continue
        examined.append(job.id)
        if p.passed_over:
            job = p.defer(job)
            if job is None:
                continue
        reasons = _consider(p, job, decisions)
        if reasons:
            found[job.id] = reasons if type(reasons) is tuple else capped(reasons)
    _consider_deferred(p, decisions)
    decisions.examined = tuple(examined)
    decisions.load_alarms = p.load_alarms
    return decisions


def cycle(snap):
    """Decide which pending tasks start now, which get a reservation, and why the others wait."""
    decisions = Decisions()
    p = Pass(snap)
    decisions.kills = ar_mod.kills(snap)
    ordered, decisions.order, decisions.share_tree, stable = order_stage.ordered_pass(snap)
    decisions.memo = _memo_of(snap, ordered, stable, p)
    found = decisions.reasons
    for index, job in enumerate(ordered):
        if p.open_instances <= 0 and p.planner is None:
            _when_full(p, ordered, index, found, decisions)
            break
        if p.passed_over:
            job = p.defer(job)
            if job is None:
                continue
        reasons = _consider(p, job, decisions)
        if reasons:
            found[job.id] = reasons if type(reasons) is tuple else capped(reasons)
    _consider_deferred(p, decisions)
    decisions.load_alarms = p.load_alarms
    decisions.reprioritize = reprioritized(snap, decisions.order)
    return decisions


def reprioritized(snap, numbers):
    """With ``reprioritize_interval`` set, the nice value of every running task from its
    job's tickets, host by host (``sched.policy.renice``)."""
    config = snap.policy.config
    if config is None or config.reprioritize_interval <= 0 or not snap.running:
        return []
    from gridtools.sched.policy.renice import nice_values
    from gridtools.sched.snapshot import Reprioritize
    by_host = {}
    for run in snap.running:
        order = numbers.get(run.job_id)
        by_host.setdefault(run.granted[0][1], {})[(run.job_id, run.task)] = \
            order.tickets[0] if order is not None else 0.0
    return [Reprioritize(job_id, task, nice) for tickets in by_host.values()
            for (job_id, task), nice in sorted(nice_values(tickets).items())]
