"""The cell's cluster queues and host groups, as qacct -q needs them for a queue domain.

Grid Engine's qacct asks qmaster for its queue and host group lists when a -q
argument names a queue domain (``queue@@hostgroup``); gridtools reads the same
objects from the cell's configuration files (etc/queues, etc/hostgroups). Only
that path imports this module.
"""

from gridtools.errors import GridError


def _parsed(config, kind):
    found = {}
    for name in config.names(kind):
        text = config.read_raw(kind, name)
        if text is None:
            continue
        try:
            found[name] = config.parse(kind, text)
        except (GridError, ValueError):
            continue            # a file that does not parse names nothing
    return found


def cell_queues():
    """({cluster queue: [host, ...]}, {@group: (host, ...)}): each queue's hosts (its
    hostlist with host groups resolved) and each host group's hosts."""
    from gridtools.formats.sge.hostgroup import resolve_hostgroups
    from gridtools.spool import config
    raw_groups = {name: obj["hostlist"] for name, obj in _parsed(config, "hostgroup").items()}
    try:
        groups = resolve_hostgroups(raw_groups)
    except GridError:
        groups = {name: tuple(h for h in hosts if not h.startswith("@"))
                  for name, hosts in raw_groups.items()}
    cqueues = {}
    for name, obj in _parsed(config, "queue").items():
        hosts = []
        for member in obj.get("hostlist") or []:
            for host in groups.get(member, ()) if member.startswith("@") else (member,):
                if host.lower() not in {h.lower() for h in hosts} and host.upper() != "NONE":
                    hosts.append(host)
        cqueues[name] = hosts
    return cqueues, groups
