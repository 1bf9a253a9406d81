"""Which queue instances may take a job, and in which order they are tried.

``unsuitable(request, owner, qi, host)`` gives the reason a queue instance
can never serve a request in this pass (its state, its host's state, its
type, the job's queue list, PE and checkpointing lists, access lists), or
None; it depends on the request and the configuration only, so jobs of one
category share its answer. ``sort_key`` orders suitable instances by the
queue sort method: ``load`` (the host's load formula value with the load
adjustments of this pass, then sequence number) or ``seqno`` (sequence
number, then load).
"""

import fnmatch

from gridtools.sched.reasons import Reason, Why
from gridtools.sched.snapshot import QState, SortMethod


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


def access_denied(req, owner, qi):
    """Reason the job's owner or project may not use the queue instance, or None."""
    if qi.user_lists and not req.userlists.intersection(qi.user_lists):
        return Reason(Why.USER_LIST, (qi.name, owner))
    if qi.xuser_lists and req.userlists.intersection(qi.xuser_lists):
        return Reason(Why.XUSER_LIST, (qi.name, owner))
    if qi.projects and req.project not in qi.projects:
        return Reason(Why.PROJECT_LIST, (qi.name,))
    if qi.xprojects and req.project and req.project in qi.xprojects:
        return Reason(Why.XPROJECT_LIST, (qi.name,))
    return None


#: queue states that are judged per pass from the load (not by ``unsuitable``)
_ALARMS = QState.LOAD_ALARM | QState.SUSPEND_ALARM


def closed(qi, host):
    """Reason a queue instance takes no jobs at all now (its or its host's state), or None."""
    blocking = (qi.states & ~_ALARMS).blocking()
    if blocking is not None:
        return Reason(Why.QI_STATE, (qi.name, blocking.name))
    if host is not None and host.state.closed:
        return Reason(Why.HOST_CLOSED, (qi.name, qi.host, host.state.name))
    return None


def unsuitable(req, owner, qi, host=None):
    """None if ``qi`` could serve the request (capacity and load aside), else the reason.

    With ``host``, the instance's own state and its host's are looked at too
    (the pass checks those once for all jobs, and passes None).
    """
    if host is not None:
        why = closed(qi, host)
        if why is not None:
            return why
    if not (qi.interactive if req.interactive else qi.batch):
        return Reason(Why.NOT_TYPE, (qi.name, "interactive" if req.interactive else "batch"))
    if req.hard_queues and not any(spec_matches(s, qi) for s in req.hard_queues):
        return Reason(Why.NOT_HARD_QUEUE, (qi.name,))
    if req.pe is not None and not any(fnmatch.fnmatchcase(pe, req.pe.pattern) for pe in qi.pe_list):
        return Reason(Why.NOT_IN_PE_LIST, (qi.name, req.pe.pattern))
    if req.ckpt and req.ckpt not in qi.ckpt_list:
        return Reason(Why.NOT_IN_CKPT_LIST, (qi.name, req.ckpt))
    return access_denied(req, owner, qi)


def load_of(host, formula, adjust):
    """The host's load formula value (a load value name) plus this pass's adjustment."""
    if host is None:
        return 0.0
    value = host.load.get(formula)
    base = float(value) if isinstance(value, (int, float)) else 0.0
    return base + adjust.get((host.name, formula), 0.0)


def sort_key(qi, req, host, method, formula, adjust):
    """Key ordering suitable queue instances for a request (lower is better)."""
    soft = 0 if not req.soft_queues or any(spec_matches(s, qi) for s in req.soft_queues) else 1
    load = load_of(host, formula, adjust)
    if method is SortMethod.SEQNO:
        return (soft, qi.seq_no, load, qi.host, qi.queue)
    return (soft, load, qi.seq_no, qi.host, qi.queue)
