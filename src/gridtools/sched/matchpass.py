"""The pass in HTCondor's negotiator order: ``match_pass(snapshot, inputs) -> Decisions``.

A cell whose scheduler configuration says ``params NEGOTIATOR=1``
(sched_conf(5)) orders and matches its pending jobs, of both dialects, as
HTCondor's negotiator does, and Grid Engine's checks still decide where
a matched job fits:

1. filter -- what keeps a job or task from running at all (error state,
   holds, start time, dependencies, advance reservation, -tc, maxujobs,
   max_aj_instances: ``cycle.Pass``) is checked first; those jobs wait
   with their Grid Engine reasons. Slot-less jobs (``sched.local``) start.
2. match  -- every other pending task (at most max_pending_tasks_per_job
   per job) is offered as a job ad to ``negotiator.negotiate``: submitters
   by effective user priority (those below their floor first, none past
   its ceiling: ``Inputs.floors``, ``Inputs.ceilings``), groups by quota
   first, a symmetric match of
   the job's Requirements with each slot's (START), on the hosts where
   Grid Engine's placement could put the job (its hard queue list,
   -l hostname, access lists: ``_Gate``), ranked by
   NEGOTIATOR_PRE_JOB_RANK, the job's Rank, NEGOTIATOR_POST_JOB_RANK, and
   preemption under PREEMPTION_REQUIREMENTS.
3. place  -- in the order of the matches, each task is placed on the
   matched slot's host by Grid Engine's own placement (``sched.place``:
   queue instances of the category, free slots, consumables, resource
   quotas, PE allocation), with the matched proc's own request
   (``cycle.Pass.task_job``). A match that does not fit there waits, with
   Grid Engine's reasons. The slot a start (``Decisions.slots``) or a
   preemption (``Preempt.slot``) is given is a ``negotiator.MatchedSlot``:
   its name with the group round the match was made in, which the claim
   keeps (RemoteNegotiatingGroup, RemoteAutoregroup, RemoteGroup).
4. preempt -- a match that takes a claimed slot becomes a ``Preempt``
   decision: the daemon evicts the slot's job and claims the slot for the
   matched proc (not its cluster). While the victim leaves, that proc waits
   (``Inputs.waiting``); once the slot is free (``Inputs.claims``), the
   proc starts there in the next pass before anything is negotiated,
   whatever its submitter's limit (the match was made in the cycle that
   preempted), and no other job is matched to the slot. A proc that cannot
   start there keeps waiting with Grid Engine's reasons until the daemon
   releases the claim (the job left the queue, was held, or MATCH_TIMEOUT
   passed). The daemon lets a pass preempt only NEGOTIATOR_INTERVAL seconds
   after the last that did (``daemon.condor``); the others are given
   NEGOTIATOR_CONSIDER_PREEMPTION false.

Jobs the negotiator did not match get its reason (``Why.NEGOTIATOR``). What
matching each owner's jobs may take of the pass is bounded in evaluation steps
(``sched.evalbudget``, sched_conf params OWNER_MATCH_STEPS; the owner is the
job's ``PendingJob.owner``, never its accounting group): the procs it puts
off wait with ``Why.OWNER_STEPS`` and are named in ``Decisions.put_off``, which
the caller gives back to the next pass (``Inputs.put_off``) to take them first.
What the caller's own evaluations for this pass took of each owner's steps comes
in ``Inputs.spent``, and the jobs it put off itself in ``Snapshot.put_off``.
Pure: job ads come from the ``job_ad(job id, task)`` function in the inputs.
"""

from dataclasses import dataclass, field

from gridtools.sched import ar as ar_mod
from gridtools.sched import category as category_mod
from gridtools.sched import groups as grp
from gridtools.sched import local
from gridtools.sched import negotiator as N
from gridtools.sched import pe as pe_stage
from gridtools.sched import place as place_stage
from gridtools.sched.evalbudget import Budget
from gridtools.sched.cycle import Pass
from gridtools.sched.reasons import Reason, Why, capped
from gridtools.sched.snapshot import Decisions, Preempt, Start

#: the sched_conf params key that selects this pass
PARAM = "NEGOTIATOR"
#: why a job waits while a preemption clears a slot for it
WAITING = "waiting for a preempted slot to be vacated"


def enabled(config):
    """True when a SchedConfig selects the negotiator's order."""
    value = str(config.params.get(PARAM, "")).strip().lower()
    return value in ("1", "true", "yes", "t", "y", "on")


@dataclass(frozen=True)
class Inputs:
    """What the negotiator needs besides the snapshot."""
    slots: tuple = ()                          # negotiator.Slot of every slot
    job_ad: object = None                      # job_ad(job id, task) -> ClassAd
    priorities: dict = field(default_factory=dict)   # accounting name -> effective priority
    config: N.NegotiatorConfig = N.NegotiatorConfig()
    waiting: frozenset = frozenset()           # (job id, task) a preemption clears a slot for
    claims: dict = field(default_factory=dict)  # (job id, task) -> the free slot claimed for it
    put_off: tuple = ()                        # procs the last pass put off (Decisions.put_off)
    spent: dict = field(default_factory=dict)  # owner -> steps its jobs took before this pass
    floors: dict = field(default_factory=dict)    # accounting name -> its floor (condor_userprio)
    ceilings: dict = field(default_factory=dict)  # accounting name -> its ceiling (-1: none)


def _proc(job_id, task):
    return f"{job_id}.{task - 1}"


def _unproc(text):
    cluster, _, proc = text.partition(".")
    return int(cluster), int(proc) + 1


def _offer(p, job, limit, idle, reasons, inp):
    """The job's pending tasks that may run now, as (proc id, ad) pairs added to ``idle``
    (not those a preemption clears or claimed a slot for)."""
    offered = 0
    for task in job.tasks:
        if (job.id, task) in inp.waiting:
            reasons.setdefault(job.id, []).append(Reason(Why.NEGOTIATOR, (WAITING,)))
            continue
        if (job.id, task) in inp.claims:
            continue
        why = p.task_blocked(job, task)
        if why is not None:
            reasons.setdefault(job.id, []).append(why)
            if why.why in (Why.TASK_LIMIT, Why.MAXUJOBS, Why.MAX_AJ_INSTANCES, Why.MAX_JOBS_RUNNING,
                           Why.CONCURRENCY):
                break
            continue
        idle.append((_proc(job.id, task), inp.job_ad(job.id, task), job.owner))
        offered += 1
        if offered >= limit:
            break


def _filter(p, snap, inp, decisions, reasons):
    """The idle (proc id, ad, owner) triples to negotiate for; jobs kept back get their
    reasons."""
    limit = max(1, snap.config.max_pending_tasks_per_job)
    idle = []
    for job in sorted(snap.jobs, key=lambda j: (j.submit_time, j.id)):
        blocked = p.job_blocked(job)
        if blocked is not None:
            reasons[job.id] = [blocked]
        elif job.universe:
            found = local.start(p, job, decisions)
            if found:
                reasons[job.id] = list(found)
        else:
            _offer(p, job, limit, idle, reasons, inp)
    return idle


def _place_on(p, job, host, mine):
    """(pe name, granted) of the job's next task on ``host`` by Grid Engine's placement."""
    if p.open_instances <= 0 and not job.request.ar:
        mine.extend(p.full_reasons())
        return None
    cat = p.category(job)
    mine.extend(cat.static)
    cands = p.throttled([qi for qi in place_stage.candidates(p, job, cat, mine) if qi.host == host], mine)
    pool = place_stage.pool_of(p, job)
    if job.request.pe is not None:
        found = pe_stage.place(job, cands, pool, p.snap, mine)
    else:
        found = place_stage.place_serial(pool, job, cands, mine)
    if found is not None:
        pool.take(job, found[0], found[1])
    return found


def _claimed(p, inp, jobs, decisions, reasons):
    """Starts of the procs on the free slots preemptions claimed for them (see the
    module docstring), placed before any match of this pass."""
    for (job_id, task), slot in sorted(inp.claims.items()):
        job = jobs.get(job_id)
        if job is None or task not in job.tasks or job.universe:
            continue
        why = p.job_blocked(job) or p.task_blocked(job, task)
        if why is not None:
            reasons.setdefault(job_id, []).append(why)
            continue
        mine = []
        found = _place_on(p, p.task_job(job, task), slot.rpartition("@")[2], mine)
        if found is None:
            reasons.setdefault(job_id, []).extend(mine)
            continue
        decisions.starts.append(Start(job_id, task, found[1], found[0]))
        decisions.slots[(job_id, task)] = slot


class _Gate:
    """What the negotiator asks before it matches a proc to a slot: that Grid Engine's
    placement has a queue instance for the proc on the slot's host as the configuration
    stands (its hard queue list, -l hostname, access lists:
    ``category.possible_hosts``), so that a match is never one the placement must
    always refuse; and, with ``limited``, that the concurrency
    limits that need the machine allow it: its limits on the slot's host counted with
    those in use and those of the matches so far (its own count: the starts count again
    in ``_carry``)."""

    def __init__(self, p, jobs, limited=False):
        self.p, self.jobs, self.use, self.limited = p, jobs, dict(p.limit_use), limited
        self.refused = {}               # proc -> (name, capacity) of the last limit that kept it off a slot
        self.hosts = {}                 # proc -> the hosts it may be placed on
        self.by_request = {}            # (request, owner) -> the same

    def _hosts(self, proc):
        found = self.hosts.get(proc)
        if found is None:
            job_id, task = _unproc(proc)
            job = self.jobs.get(job_id)
            if job is None:
                found = frozenset()
            else:
                job = self.p.task_job(job, task)
                key = (job.request, job.owner)
                found = self.by_request.get(key)
                if found is None:
                    found = self.by_request[key] = category_mod.possible_hosts(self.p, job)
            self.hosts[proc] = found
        return found

    def _limits(self, proc, slot):
        job = self.jobs.get(_unproc(proc)[0])
        if job is None or not job.machine_limits:
            return ()
        return self.p.limits_on(job, slot.rpartition("@")[2])

    def kind(self, proc):
        """What tells procs apart for the gate: the hosts they may be placed on."""
        return self._hosts(proc)

    def allows(self, proc, slot):
        if slot.rpartition("@")[2] not in self._hosts(proc):
            return False
        if not self.limited:
            return True
        caps = self.p.capacities
        for name, amount in self._limits(proc, slot):
            if caps.get(name) is not None and self.use.get(name, 0.0) + amount > caps[name] + 1e-9:
                self.refused[proc] = (name, caps[name])
                return False
        return True

    def take(self, proc, slot):
        if not self.limited:
            return
        for name, amount in self._limits(proc, slot):
            self.use[name] = self.use.get(name, 0.0) + amount


def _carry(p, outcome, jobs, decisions, reasons):
    """Starts and preemptions from the negotiator's matches, in its order, but for the
    matches of the tasks whose start set their owner's hold that has just ended
    (``cycle.Pass.passed_over``): those come last, so that the owner's other matched
    jobs start first and the next hold is theirs."""
    matches = outcome.matches
    if p.passed_over:
        matches = sorted(matches, key=lambda match: _unproc(match.job) in p.passed_over)
    for match in matches:
        job_id, task = _unproc(match.job)
        job = p.task_job(jobs[job_id], task)        # the proc's own requests
        host = match.slot.rpartition("@")[2]
        if match.victim is not None:
            victim, victim_task = _unproc(match.victim.job)
            kind = "rank" if match.kind is N.Kind.RANK else "priority"
            decisions.preempts.append(Preempt(victim, victim_task, N.MatchedSlot.of(match), job_id, kind, task))
            reasons.setdefault(job_id, []).append(Reason(Why.NEGOTIATOR, (WAITING,)))
            continue
        limit = (p.shadow_limit() or p.concurrency_limit(job) or p.host_limit(job, host)) if job.shadow else None
        limit = p.start_held(job) or limit
        if limit is not None:               # (the schedd runs as many as it may, or a limit is full)
            reasons.setdefault(job_id, []).append(limit)
            continue
        mine = []
        found = _place_on(p, job, host, mine)
        if found is None:
            reasons.setdefault(job_id, []).extend(mine)
            continue
        decisions.starts.append(Start(job_id, task, found[1], found[0]))
        decisions.slots[(job_id, task)] = N.MatchedSlot.of(match)     # (the round it was made in too)
    for proc, why in outcome.rejected.items():
        job_id, _task = _unproc(proc)
        reasons.setdefault(job_id, []).append(Reason(Why.NEGOTIATOR, (why.value,)))


def _put_off(procs, submitters, budget, reasons):
    """The reasons of the procs whose matching the cycle put off: their owner's
    matching took its steps of the pass."""
    owner_of = {job.id: job.owner or sub.name for sub in submitters for job in sub.jobs}
    for proc in procs:
        reasons.setdefault(_unproc(proc)[0], []).append(budget.reason(owner_of[proc]))


def match_pass(snap, inp):
    """Decide in the negotiator's order (see the module docstring)."""
    decisions = Decisions()
    p = Pass(snap)
    decisions.kills = ar_mod.kills(snap)
    reasons = {}
    jobs = {job.id: job for job in snap.jobs}
    _claimed(p, inp, jobs, decisions, reasons)
    idle = _filter(p, snap, inp, decisions, reasons)
    gate = _Gate(p, jobs, bool(p.capacities) and any(j.machine_limits for j in jobs.values()))
    submitters = N.submitters_from(idle)
    budget = Budget.of(snap.config, inp.put_off, inp.spent)
    outcome = N.negotiate(submitters, inp.slots, inp.priorities, inp.config, snap.now, gate, budget,
                          inp.floors, inp.ceilings)
    if outcome.put_off:
        _put_off(outcome.put_off, submitters, budget, reasons)
        decisions.put_off = tuple(outcome.put_off)
    if gate.limited:                        # (no match: a limit kept it off a machine, as HTCondor says)
        for proc in [proc for proc in outcome.rejected if proc in gate.refused]:
            del outcome.rejected[proc]
            reasons.setdefault(_unproc(proc)[0], []).append(Reason(Why.CONCURRENCY, gate.refused[proc]))
    _carry(p, outcome, jobs, decisions, reasons)
    decisions.submitters = dict(outcome.submitters)
    decisions.groups = {g.name: grp.report(g) for g in outcome.groups}
    for job_id, found in reasons.items():
        if found:
            decisions.reasons[job_id] = capped(found)
    decisions.load_alarms = p.load_alarms
    return decisions
