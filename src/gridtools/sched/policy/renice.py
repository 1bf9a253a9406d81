"""Nice values of running jobs from their tickets (reprioritize_interval).

Grid Engine lets the running jobs on a host compete for the CPU by their
tickets: the job with the most tickets on the host runs at the highest
priority (nice ``highest``, 0 by default), the others lower in proportion
to how far their tickets fall short of it, down to ``lowest`` (19) for a
job without tickets. When no job on the host has tickets, all run at
``highest``. Unlike Grid Engine's execution daemon, which steers towards
the ticket shares by feeding back measured CPU usage, this is a direct
mapping: the same tickets always give the same nice values.
"""

#: nice value of the job with the most tickets on a host
HIGHEST = 0
#: nice value of a job without tickets
LOWEST = 19


def nice_values(tickets, highest=HIGHEST, lowest=LOWEST):
    """key -> nice value for ``tickets`` (key -> tickets) of the jobs on one host."""
    top = max(tickets.values(), default=0.0)
    if top <= 0:
        return {key: highest for key in tickets}
    span = lowest - highest
    return {key: highest + round(span * (1.0 - max(0.0, value) / top))
            for key, value in tickets.items()}


def due(last, now, interval):
    """Whether running jobs are to be reniced at ``now`` (last: when they were, or None)."""
    if interval <= 0:
        return False
    return last is None or now - last >= interval
