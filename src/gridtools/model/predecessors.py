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
    found = set()
    for item in items:
        if item.isdigit():
            jid = int(item)
            if jid in live and jid != exclude:
                found.add(jid)
            continue
        for name, named in names.items():
            if wildcards.match(name, item):
                found.update(j for j in named if j in live and j != exclude and owner_of(j) == owner)
    return sorted(found)


#: Grid Engine's refusals of a -hold_jid_ad request, word for word
AD_NOT_ARRAY = 'Can only specify "-hold_jid_ad" option with an array job (using "-t" option)'
AD_OTHER_RANGE = ("This array job must have the same range of sub-tasks as the dependent "
                  "array job specified with -hold_jid_ad")


def ad_refusal(items, tasks, predecessor_tasks):
    """Why a job with the task range ``tasks`` ([first, last, step]; None for a job that
    is no array) may not wait with ``-hold_jid_ad items`` for the jobs those items name
    (``predecessor_tasks``: their task ranges, None for a job that is no array); None
    when it may. Task n of the job waits for task n of each of them, so each must be
    an array with the very same range."""
    if not items:
        return None
    if not tasks:
        return AD_NOT_ARRAY
    for other in predecessor_tasks:
        if not other:
            return AD_NOT_ARRAY
        if list(other) != list(tasks):
            return AD_OTHER_RANGE
    return None
