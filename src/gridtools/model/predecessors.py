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
