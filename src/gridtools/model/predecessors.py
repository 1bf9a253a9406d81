"""The jobs a ``-hold_jid`` (or ``-hold_jid_ad``) list names, as the daemon resolves
them when it takes a job in, and as qstat shows them for a job it has not taken yet.

An item of digits is that job's id, when the job is still in the system; any other item
is a job name or a name pattern (``fnmatch``, case kept) and names the jobs of the same
owner whose names match. The job itself is never its own predecessor.
"""

from gridtools import wildcards


def resolve(items, owner, exclude, live, names, owner_of):
    """The sorted ids ``items`` name among the ``live`` ids (``names``: job name -> ids;
    ``owner_of(id)``: a job's owner; ``exclude``: the job being resolved)."""
    if not items:
        return []
    found, patterns = set(), []

    def add(named):
        found.update(j for j in named if j in live and j != exclude and owner_of(j) == owner)
    for item in items:
        if item.isdigit():
            jid = int(item)
            if jid in live and jid != exclude:
                found.add(jid)
        elif item == "*" or not wildcards.WILDCARDS.isdisjoint(item):
            patterns.append(item)
        else:
            add(names.get(item, ()))
    if patterns:
        # (one expression for all of them, matched with each name of the owner's jobs once)
        import fnmatch
        import re
        matches = re.compile("|".join(f"(?:{fnmatch.translate(p)})" for p in patterns)).match
        for name, named in names.items():
            if matches(name) and any(owner_of(j) == owner for j in named):
                add(named)
    return sorted(found)


#: Grid Engine's refusals of a -hold_jid_ad request, word for word
AD_NOT_ARRAY = 'Can only specify "-hold_jid_ad" option with an array job (using "-t" option)'
AD_OTHER_RANGE = ("This array job must have the same range of sub-tasks as the dependent "
                  "array job specified with -hold_jid_ad")


def ad_refusal(items, tasks, predecessor_tasks):
    """Why a job with the task range ``tasks`` ([first, last, step]; None for a job that
    is no array) may not wait with ``-hold_jid_ad items`` for the jobs those items name
    (``predecessor_tasks``: their task ranges, None for a job that is no array); None
    when it may. Each must be an array with the same first and last task; their steps
    may differ (``ad_block``)."""
    if not items:
        return None
    if not tasks:
        return AD_NOT_ARRAY
    for other in predecessor_tasks:
        if not other:
            return AD_NOT_ARRAY
        if list(other[:2]) != list(tasks[:2]):
            return AD_OTHER_RANGE
    return None


def ad_block(task, own, other):
    """The tasks of array job ``other`` that task ``task`` of an array job waits for with
    -hold_jid_ad (``own`` and ``other``: the two task ranges, [first, last, step], of one
    first and last task). With one step, the task of the same number. Else, as Grid
    Engine maps them, the other's tasks from the one at or below ``task`` to the one at
    or below ``task`` + its own step - 1: a job of step 3 waiting for one of step 1 runs
    its task 4 once tasks 4, 5 and 6 have finished, and a job of step 1 waiting for one
    of step 3 its tasks 4, 5 and 6 once task 4 has. The block ends at the other's last
    task (Grid Engine would hold a task whose block goes past it for ever)."""
    first, last, step = other
    if step == own[2]:
        return (task,)
    low = first + (task - first) // step * step
    high = min(first + (task + own[2] - 1 - first) // step * step, last)
    return range(low, high + 1, step)


def ad_waits(task, own, other, done):
    """True when task ``task`` of an array job with the task range ``own`` waits for the
    array job of range ``other`` whose finished tasks are ``done`` (``ad_block``; with
    either range unknown, for its task of the same number)."""
    if not own or not other or own[2] == other[2]:
        return task not in done
    return any(number not in done for number in ad_block(task, own, other))
