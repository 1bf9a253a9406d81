"""Jobs that run beside the daemon without a slot: HTCondor's scheduler and local universes.

A DAGMan job (``condor_submit_dag``) or a ``universe = local`` job waits
for nothing but its holds, start time and dependencies: it starts on its
submit host (the first queue instance there, or the cell's first queue
instance when the submit host executes no jobs) holding no slot, no
consumable and no quota, and takes part in neither Grid Engine's order nor
the negotiator's.
"""

from gridtools.sched.snapshot import Start

#: the universes of jobs that run without a slot: the job description's "universe"
#: (HTCondor's JobUniverse number) -> its name
SLOTLESS = {7: "scheduler", 12: "local"}


def home_instance(snap, job):
    """The queue instance a slot-less job runs in, or None when the cell has none."""
    queues = sorted(snap.queues, key=lambda qi: qi.name)
    mine = [qi for qi in queues if qi.host == job.submit_host]
    return (mine or queues or [None])[0]


def start(p, job, decisions):
    """Start every pending task of a slot-less job that nothing holds; its reasons."""
    qi = home_instance(p.snap, job)
    if qi is None:
        return p.full_reasons()
    reasons = []
    for task in job.tasks:
        why = p.task_blocked(job, task)
        if why is not None:
            reasons.append(why)
            continue
        granted = ((qi.queue, qi.host, 0),)
        p.count_start(job, "", granted, in_ar=True)
        decisions.starts.append(Start(job.id, task, granted))
    return reasons
