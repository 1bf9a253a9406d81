"""Which queue instances may take a job, and in which order they are tried.

``why_not(job, qi, ...)`` returns None when the queue instance is suitable
for the job apart from free capacity, or the reason line Grid Engine's
scheduler would give. ``sort_key`` orders suitable instances by the
scheduler configuration's ``queue_sort_method``: ``load`` (the host's load
formula value, then sequence number) or ``seqno`` (sequence number, then
load).
"""

import fnmatch

# state letters that keep a queue instance from receiving jobs
BLOCKING = {"d": "disabled", "D": "disabled", "s": "suspended", "S": "suspended",
            "a": "overloaded", "A": "overloaded", "u": "temporarily not available",
            "E": "in error state", "C": "suspended", "c": "in configuration ambiguous state",
            "o": "orphaned"}

#: host states (set by drain, flush, suspend) that keep a host from receiving jobs
HOST_CLOSED = {"drain": "draining", "drained": "drained", "flush": "flushed",
               "suspend": "suspended", "down": "down"}


def spec_matches(spec, qi):
    """True when a queue spec (``q``, ``q@host``, ``q@@group``, wildcards) names ``qi``."""
    qpart, at, hpart = spec.partition("@")
    if not fnmatch.fnmatchcase(qi.queue, qpart or "*"):
        return False
    if not at:
        return True
    if hpart.startswith("@"):
        return any(fnmatch.fnmatchcase(g, hpart) for g in qi.hostgroups)
    return fnmatch.fnmatchcase(qi.host.lower(), hpart.lower())


def access_denied(job, qi):
    """Reason the job's owner or project may not use the queue instance, or None."""
    if qi.user_lists and not job.userlists.intersection(qi.user_lists):
        return f'cannot run in queue instance "{qi.name}" because job owner "{job.owner}" is not in any user list of the queue'
    if qi.xuser_lists and job.userlists.intersection(qi.xuser_lists):
        return f'cannot run in queue instance "{qi.name}" because job owner "{job.owner}" is in an excluded user list of the queue'
    if qi.projects and job.project not in qi.projects:
        return f'cannot run in queue instance "{qi.name}" because it is not contained in its project list'
    if qi.xprojects and job.project and job.project in qi.xprojects:
        return f'cannot run in queue instance "{qi.name}" because it is contained in its excluded project list'
    return None


def why_not(job, qi, host):
    """None if ``qi`` could serve ``job`` (capacity aside), else the reason line."""
    for letter in qi.states:
        if letter in BLOCKING:
            return f'queue instance "{qi.name}" dropped because it is {BLOCKING[letter]}'
    if host is not None and host.state in HOST_CLOSED:
        return f'queue instance "{qi.name}" dropped because host "{qi.host}" is {HOST_CLOSED[host.state]}'
    wanted = "INTERACTIVE" if job.interactive else "BATCH"
    if wanted not in qi.qtype:
        return f'cannot run in queue instance "{qi.name}" because it is not of type {wanted.lower()}'
    if job.hard_queues and not any(spec_matches(s, qi) for s in job.hard_queues):
        return f'cannot run in queue "{qi.name}" because it is not contained in its hard queue list (-q)'
    if job.pe and not any(fnmatch.fnmatchcase(pe, job.pe[0]) for pe in qi.pe_list):
        return f'cannot run in queue "{qi.name}" because PE "{job.pe[0]}" is not in pe list'
    if job.ckpt and job.ckpt not in qi.ckpt_list:
        return f'cannot run in queue "{qi.name}" because checkpointing environment "{job.ckpt}" is not in ckpt list'
    return access_denied(job, qi)


def host_load(host, formula_name="np_load_avg"):
    value = host.load_value(formula_name) if host is not None else None
    try:
        return float(value)
    except (TypeError, ValueError):
        return 0.0


def sort_key(qi, job, host, method, adjust):
    """Key ordering suitable queue instances for ``job`` (lower is better)."""
    soft = 0 if not job.soft_queues or any(spec_matches(s, qi) for s in job.soft_queues) else 1
    load = host_load(host) + adjust.get(qi.host, 0.0)
    if method == "seqno":
        return (soft, qi.seq_no, load, qi.host, qi.queue)
    return (soft, load, qi.seq_no, qi.host, qi.queue)
