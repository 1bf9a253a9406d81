"""Placing parallel jobs: slot ranges and the PE allocation rules (sge_pe(5)).

A job asks ``-pe NAME MIN-MAX``; NAME may be a wildcard matching several
parallel environments. The pass grants the largest slot count in the range
that fits, distributed over the suitable queue instances by the PE's
``allocation_rule``: ``$pe_slots`` (all slots on one host), ``$fill_up``
(fill the best hosts first), ``$round_robin`` (one slot per host in turn)
or a fixed number of slots per host. The PE's own ``slots`` bounds the
total it has in use across the cluster.
"""

import fnmatch


def _matching_pes(job, snap):
    return [name for name in sorted(snap.pes) if fnmatch.fnmatchcase(name, job.pe[0])]


def _free_by_host(cands, state, pe_name):
    """Ordered [(host, [(qi, free)])] of instances that list the PE and have free slots."""
    hosts = {}
    order = []
    for qi in cands:
        if pe_name not in qi.pe_list:
            continue
        free = state.free.get(qi.name, 0)
        if free <= 0:
            continue
        if qi.host not in hosts:
            hosts[qi.host] = []
            order.append(qi.host)
        hosts[qi.host].append((qi, free))
    return [(h, hosts[h]) for h in order]


def _distribute(rule, want, by_host):
    """{(queue, host): slots} for ``want`` slots under ``rule``, or None."""
    grant = {}
    if rule == "$pe_slots":
        for host, items in by_host:
            if sum(f for _, f in items) >= want:
                return _fill(items, want, grant)
        return None
    if rule == "$round_robin":
        left = {id(qi): f for _, items in by_host for qi, f in items}
        got = 0
        while got < want:
            progressed = False
            for _host, items in by_host:
                for qi, _f in items:
                    if left[id(qi)] > 0 and got < want:
                        left[id(qi)] -= 1
                        grant[(qi.queue, qi.host)] = grant.get((qi.queue, qi.host), 0) + 1
                        got += 1
                        progressed = True
                        break
            if not progressed:
                return None
        return grant
    per_host = int(rule) if str(rule).isdigit() else None
    got = 0
    for _host, items in by_host:
        cap = sum(f for _, f in items)
        take = min(cap, want - got) if per_host is None else (per_host if cap >= per_host else 0)
        if per_host is not None and want - got < per_host:
            take = 0
        if take:
            _fill(items, take, grant)
            got += take
        if got >= want:
            return grant
    return None


def _fill(items, want, grant):
    for qi, free in items:
        take = min(free, want)
        if take:
            grant[(qi.queue, qi.host)] = grant.get((qi.queue, qi.host), 0) + take
            want -= take
        if not want:
            break
    return grant


def place(job, cands, snap, state, reasons):
    """Granted [[queue, host, slots], ...] (master first) for a PE job, or None."""
    lo, hi = job.pe[1], job.pe[2]
    for pe_name in _matching_pes(job, snap):
        pe = snap.pes[pe_name]
        rule = str(pe.get("allocation_rule", "$pe_slots"))
        room = int(pe.get("slots", 0)) - state.pe_used.get(pe_name, 0)
        by_host = _free_by_host(cands, state, pe_name)
        total = sum(f for _, items in by_host for _, f in items)
        top = min(hi or total, total, room)
        for want in range(top, lo - 1, -1):
            grant = _distribute(rule, want, by_host)
            if grant:
                state.pe_used[pe_name] = state.pe_used.get(pe_name, 0) + want
                return [[q, h, n] for (q, h), n in grant.items()]
        reasons.append(f'cannot run in PE "{pe_name}" because it only offers {max(0, min(total, room))} slots')
    if not _matching_pes(job, snap):
        reasons.append(f'cannot run because parallel environment "{job.pe[0]}" does not exist')
    return None
