"""Jobs that run beside the daemon without a slot: HTCondor's scheduler and local universes.

A DAGMan job (``condor_submit_dag``) or a ``universe = local`` job waits
for nothing but its holds, start time and dependencies: it starts on its
submit host (the first queue instance there, or the cell's first queue
instance when the submit host executes no jobs) holding no slot, no
consumable and no quota, and takes part in neither Grid Engine's order nor
the negotiator's. How many run at once is HTCondor's rule: a task starts
while its universe's START_LOCAL_UNIVERSE / START_SCHEDULER_UNIVERSE
(``SchedConfig.slotless_start``; by default fewer than 200 local and 500
scheduler universe tasks running) is true, evaluated with
TotalLocalJobsRunning and TotalSchedulerJobsRunning counting the tasks that
run and those this pass starts.

The home instance must still be open to the job: none starts while it, or
its host, takes no new jobs (disabled, suspended, in error, closed by its
calendar, its host drained or unknown) or while its access lists keep the
job's owner or project out (the queue's ``user_lists``/``xuser_lists``,
``projects``/``xprojects`` and those of its host), with the reason the slot
path gives for that instance (``queues.closed``, ``queues.access_denied``).
"""

from gridtools.sched import queues as qsel
from gridtools.sched.reasons import Reason, Why
from gridtools.sched.snapshot import Start

#: the universes of jobs that run without a slot: the job description's "universe"
#: (HTCondor's JobUniverse number) -> its name
SLOTLESS = {7: "scheduler", 12: "local"}


def home_instance(snap, job):
    """The queue instance a slot-less job runs in, or None when the cell has none."""
    queues = sorted(snap.queues, key=lambda qi: qi.name)
    mine = [qi for qi in queues if qi.host == job.submit_host]
    return (mine or queues or [None])[0]


#: condor_config's name of each universe's start rule
KNOBS = {"local": "START_LOCAL_UNIVERSE", "scheduler": "START_SCHEDULER_UNIVERSE"}
#: the ad attribute counting each universe's running tasks
COUNTERS = {"local": "TotalLocalJobsRunning", "scheduler": "TotalSchedulerJobsRunning"}
_PARSED = {}


def start(p, job, decisions):
    """Start the pending tasks of a slot-less job that nothing holds, while its
    universe's start rule allows; its reasons."""
    qi = home_instance(p.snap, job)
    if qi is None:
        return p.full_reasons()
    running = _running(p)
    reasons = []
    for task in job.tasks:
        why = p.task_blocked(job, task)
        if why is not None:
            reasons.append(why)
            continue
        refusal = home_refusal(p.snap, job, qi) or _limit(p.snap.config, job.universe, running)
        if refusal is not None:
            reasons.append(refusal)
            break
        granted = ((qi.queue, qi.host, 0),)
        p.count_start(job, "", granted, in_ar=True)
        decisions.starts.append(Start(job.id, task, granted))
        running[job.universe] = running.get(job.universe, 0) + 1
    return reasons


def home_refusal(snap, job, qi):
    """Why the home instance ``qi`` takes no task of the job now, or None: its state or
    its host's, then its access lists, judged as for a job that asks for a slot there
    (capacity, load, queue type and resource requests aside: the job holds none)."""
    why = qsel.closed(qi, snap.hosts.get(qi.host))
    return why if why is not None else qsel.access_denied(job.request, job.owner, qi)


def _running(p):
    """Slot-less tasks running per universe, this pass's starts included (kept on the pass)."""
    counts = getattr(p, "slotless_running", None)
    if counts is None:
        counts = {}
        for r in p.snap.running:
            if r.universe:
                counts[r.universe] = counts.get(r.universe, 0) + 1
        p.slotless_running = counts
    return counts


def _limit(config, universe, running):
    """None when the universe's start rule is true with ``running``, else the reason."""
    text = dict(config.slotless_start).get(universe)
    if not text:
        return None
    from gridtools.classad import ClassAd, parse
    expr = _PARSED.get(text)
    if expr is None:
        try:
            expr = _PARSED[text] = parse(text)
        except Exception:  # noqa: BLE001 - a rule that is no expression allows nothing
            return Reason(Why.SLOTLESS_LIMIT, (KNOBS.get(universe, universe), text))
    ad = ClassAd({name: running.get(u, 0) for u, name in COUNTERS.items()})
    ad["TotalJobsRunning"] = sum(running.values())
    ad["Rule"] = expr
    if ad.eval("Rule") is True:
        return None
    return Reason(Why.SLOTLESS_LIMIT, (KNOBS.get(universe, universe), text))
